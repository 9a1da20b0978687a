//! A run's house openers: the recurring leading clauses its answers offer as boilerplate
//! ([`offers`], by the rule of [`crate::openers::learn()`]), and the run scored again with its
//! opener list changed ([`accept`], [`rescore`]).
//!
//! Scoring again recomputes each request from its raw capture (the bytes and times the studio
//! kept, [`crate::report::RequestRecord::raw`]) through the core, exactly as the run first
//! computed it, with the report's list ([`Report::openers`]); only the opener text and the
//! meaningful first token change. A request without a raw capture (a run opened from a share
//! link, another tool's results) keeps the figures it came with.

use crate::metrics::{MetricsConfig, RequestMetrics};
use crate::openers::{Learned, OpenerEditError, learn};
use crate::report::Report;

/// What scoring a run again did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rescored {
    /// Requests computed again from their raw capture.
    pub rescored: usize,
    /// Requests that kept their figures (no raw capture, or one that no longer reads).
    pub kept: usize,
    /// Requests whose meaningful first token moved.
    pub moved: usize,
}

impl Rescored {
    /// In words: `meaningful first token recomputed for 20 requests (14 moved)`.
    pub fn sentence(&self) -> String {
        let mut s = format!(
            "meaningful first token recomputed for {} request{} ({} moved)",
            self.rescored,
            if self.rescored == 1 { "" } else { "s" },
            self.moved
        );
        if self.kept > 0 {
            s.push_str(&format!(
                "; {} kept their figures (no raw capture to recompute from)",
                self.kept
            ));
        }
        s
    }
}

/// The house openers the run's answers suggest, with their evidence: over the measured
/// requests that succeeded, read with the run's list; a default phrase the team removed is
/// not offered again.
pub fn offers(report: &Report) -> Vec<Learned> {
    let answers: Vec<&str> = report
        .headline_requests()
        .filter(|r| r.outcome.is_ok())
        .map(|r| r.metrics.text.as_str())
        .collect();
    let removed: Vec<String> = report
        .openers
        .removed
        .iter()
        .filter_map(|p| crate::openers::edits::canonical(p))
        .collect();
    learn(&answers, &report.openers.openers())
        .into_iter()
        .filter(|l| !removed.contains(&l.phrase))
        .collect()
}

/// Whether the run can be scored again: some request kept its raw capture.
pub fn can_rescore(report: &Report) -> bool {
    report.requests.iter().any(|r| r.raw.is_some())
}

/// Adds `phrase` to the run's list and scores the run again.
pub fn accept(report: &mut Report, phrase: &str) -> Result<Rescored, OpenerEditError> {
    report.openers.add(phrase)?;
    Ok(rescore(report))
}

/// Recomputes every request's opener and meaningful first token from its raw capture with the
/// run's list (see the module doc).
pub fn rescore(report: &mut Report) -> Rescored {
    let config = MetricsConfig {
        openers: report.openers.openers(),
        ..MetricsConfig::default()
    };
    let dialect = report.endpoint.dialect;
    let mut done = Rescored::default();
    for r in &mut report.requests {
        let api = r.origin.as_ref().map_or(dialect, |o| o.request.api);
        let timeline = r
            .raw
            .as_ref()
            .and_then(|raw| raw.to_capture().ok())
            .and_then(|c| c.record(api).ok());
        let Some(timeline) = timeline else {
            done.kept += 1;
            continue;
        };
        let m = RequestMetrics::compute(&timeline, &config);
        if m.meaningful_ms != r.metrics.meaningful_ms {
            done.moved += 1;
        }
        r.metrics.meaningful_ms = m.meaningful_ms;
        r.metrics.opener_text = m.opener_text;
        done.rescored += 1;
    }
    done
}
