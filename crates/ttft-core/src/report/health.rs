//! How healthy the measuring tab was during a run, as stored with the run: the verdict and its
//! causes. [`crate::client_health::assess`] makes it from the page's samples.

use serde::{Deserialize, Serialize};

use crate::format::ms;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The client added nothing worth saying to the figures.
    Healthy,
    /// The client may have added up to this much to some request's times (ms).
    MayHaveAdded {
        /// The largest bound of the causes (ms).
        up_to_ms: f64,
    },
}

/// Which cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// The page's main thread was busy while requests streamed.
    MainThreadLag,
    /// The tab was hidden during the run.
    HiddenTab,
    /// Requests waited in the browser before being sent.
    ConnectionQueue,
}

/// One cause of the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthCause {
    /// Which.
    pub kind: CauseKind,
    /// What it may have added to a request's times, ms (0: a note, the figures are unaffected).
    pub up_to_ms: f64,
    /// For the user, in full.
    pub sentence: String,
    /// For the headline: a few words.
    pub short: String,
}

/// How healthy the client was during a run ([`crate::client_health::assess`], rules in the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientHealth {
    /// The verdict.
    pub verdict: Verdict,
    /// Lag samples that met a streaming window (outside hidden time).
    pub lag_samples: usize,
    /// Their median lateness (ms; 0 without samples).
    pub lag_p50_ms: f64,
    /// Their P99 lateness (ms; 0 without samples).
    pub lag_p99_ms: f64,
    /// Their largest lateness (ms; 0 without samples).
    pub lag_max_ms: f64,
    /// Time the tab was hidden during the run (ms).
    pub hidden_ms: f64,
    /// Measured requests that streamed while the tab was hidden.
    pub requests_while_hidden: usize,
    /// P99 of the measured requests' browser queue time (ms), when measured.
    pub queue_p99_ms: Option<f64>,
    /// The causes, in the order main-thread lag, hidden tab, connection queue.
    pub causes: Vec<HealthCause>,
}

impl ClientHealth {
    /// `healthy`, or `the client may have added up to 240 ms (main thread busy: timers fired
    /// up to 240 ms late while 12 requests streamed)`: the causes that add time, largest
    /// bound first.
    pub fn headline(&self) -> String {
        match self.verdict {
            Verdict::Healthy => "healthy".into(),
            Verdict::MayHaveAdded { up_to_ms } => {
                let mut adding: Vec<&HealthCause> =
                    self.causes.iter().filter(|c| c.up_to_ms > 0.0).collect();
                adding.sort_by(|a, b| b.up_to_ms.total_cmp(&a.up_to_ms));
                let why: Vec<&str> = adding.iter().map(|c| c.short.as_str()).collect();
                format!(
                    "the client may have added up to {} ({})",
                    ms(up_to_ms),
                    why.join("; ")
                )
            }
        }
    }
}
