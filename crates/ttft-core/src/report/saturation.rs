//! The saturation stop as stored with a run: whether an open-loop run was watched for a
//! server past saturation, and, when it stopped on its own, the evidence it stopped on.
//! [`crate::saturation`] decides it while the run goes on; [`crate::saturation_guard`] wires
//! it to a run's plan.

use serde::{Deserialize, Serialize};

use crate::uncertainty::Interval;

/// What the saturation stop did in an open-loop run (closed-loop runs, imported runs and runs
/// made before the stop have none: [`super::Report::saturation`] is `None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SaturationCheck {
    /// The stop was off: nothing checked whether the server kept up.
    Off,
    /// The stop was on and did not fire.
    Watched {
        /// The windows' length (ms).
        window_ms: f64,
        /// Complete windows the run lasted.
        windows: usize,
        /// Complete windows a judgement needs (the rule judges the last this many together).
        needed: usize,
    },
    /// The run stopped on its own: the server was past saturation.
    Stopped(Saturation),
}

impl SaturationCheck {
    /// The evidence, when the run stopped on it.
    pub fn stopped(&self) -> Option<&Saturation> {
        match self {
            Self::Stopped(s) => Some(s),
            _ => None,
        }
    }

    /// The line for the page; `kept` is the requests the run kept.
    pub fn sentence(&self, kept: usize) -> String {
        match self {
            Self::Off => "Saturation stop off for this run: nothing checked whether the server kept up with the planned rate.".into(),
            Self::Watched {
                window_ms,
                windows,
                needed,
            } if windows < needed => format!(
                "Saturation stop on, not judged: the run lasted {windows} complete window{} of {}, a judgement needs {needed}.",
                if *windows == 1 { "" } else { "s" },
                seconds(*window_ms)
            ),
            Self::Watched {
                window_ms, windows, ..
            } => format!(
                "Saturation stop on: {windows} windows of {} watched, the server kept up (TTFT did not rise while completions fell behind the sends).",
                seconds(*window_ms)
            ),
            Self::Stopped(s) => s.sentence(kept),
        }
    }
}

/// One judged window, in the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SaturationWindow {
    /// Its start (ms from the run's start).
    pub start_ms: f64,
    /// Its end.
    pub end_ms: f64,
    /// Median TTFT of the requests that ended in it.
    pub ttft_p50_ms: f64,
    /// That median's distribution-free 95 % interval (order statistics); `None` when the window
    /// had too few TTFTs for one (6) and in evidence kept before intervals were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p50_interval: Option<Interval>,
    /// Requests that ended in it.
    pub completed: usize,
    /// Requests the plan sent in it.
    pub planned: f64,
}

/// The evidence that a run is past saturation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// When the detector said so (ms from the run's start).
    pub at_ms: f64,
    /// The windows' length (ms).
    pub window_ms: f64,
    /// The judged windows, oldest first.
    pub windows: Vec<SaturationWindow>,
    /// Their median TTFTs' Mann–Kendall statistic.
    pub trend_s: i64,
    /// Its one-sided p-value of a rise.
    pub trend_p: f64,
    /// The mean duration of the requests completed in the windows: a server that keeps up
    /// completes what was sent this long before.
    pub duration_ms: f64,
    /// Requests the plan sent per second over the windows, one [`Saturation::duration_ms`]
    /// earlier.
    pub sent_per_s: f64,
    /// Requests completed per second over them.
    pub completed_per_s: f64,
    /// The completion rate's exact (Garwood) 95 % interval, as a Poisson count over the
    /// windows; `None` in evidence kept before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_interval: Option<Interval>,
}

/// `5 s`, `2.5 s`.
fn seconds(ms: f64) -> String {
    let w = ms / 1e3;
    if w.fract() == 0.0 {
        format!("{w:.0} s")
    } else {
        format!("{w:.1} s")
    }
}

/// Durations in one unit, joined by arrows: `0.8 → 2.1 → 4.6 s`, `120 → 180 → 260 ms`.
fn rising(values: &[f64]) -> String {
    let seconds = values.iter().any(|v| *v >= 1_000.0);
    let parts: Vec<String> = values
        .iter()
        .map(|v| {
            if seconds {
                format!("{:.1}", v / 1e3)
            } else {
                format!("{v:.0}")
            }
        })
        .collect();
    format!("{} {}", parts.join(" → "), if seconds { "s" } else { "ms" })
}

impl Saturation {
    /// The evidence for the page, with the requests the run kept: `TTFT median rose 0.8 → 2.1
    /// → 4.6 → 9.9 s over the last 4 windows of 5 s while 12.0 req/s were sent and 6.3
    /// completed: the server is past saturation; the run stopped, 214 requests kept.`
    pub fn sentence(&self, kept: usize) -> String {
        let medians: Vec<f64> = self.windows.iter().map(|w| w.ttft_p50_ms).collect();
        format!(
            "TTFT median rose {} over the last {} windows of {} while {:.1} req/s were sent and {:.1} completed: the server is past saturation; the run stopped, {kept} request{} kept.",
            rising(&medians),
            self.windows.len(),
            seconds(self.window_ms),
            self.sent_per_s,
            self.completed_per_s,
            if kept == 1 { "" } else { "s" },
        )
    }

    /// Requests completed behind the plan over the windows: the sends one duration earlier
    /// minus the completions (the shortfall the rule found).
    pub fn behind(&self) -> f64 {
        let span_s = self.windows.len() as f64 * self.window_ms / 1e3;
        (self.sent_per_s - self.completed_per_s) * span_s
    }
}
