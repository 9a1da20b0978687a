//! The schedule-lag figure of an open-loop run (a load shape, a trace): how late the planned
//! requests actually went ([`ttft_core::schedule`]), P50 and P99 with their intervals and the
//! late share. Nothing for a closed-loop run.

use leptos::prelude::*;
use std::sync::Arc;
use ttft_core::report::Report;
use ttft_core::schedule::schedule_lag;
use ttft_core::uncertainty::Estimate;

/// The confidence level of the figure's intervals.
const LEVEL: f64 = 0.95;

/// `12.3 ms [10.1–15.0]`, or the requests an interval needs.
pub(crate) fn estimate_text(e: &Estimate, scale: f64, unit: &str) -> String {
    let v = |x: f64| format!("{:.1}{unit}", x * scale);
    match (&e.interval, e.needs) {
        (Some(i), _) => format!("{} [{}–{}]", v(e.value), v(i.lo), v(i.hi)),
        (None, Some(n)) => format!("{} (an interval needs {n} requests)", v(e.value)),
        (None, None) => v(e.value),
    }
}

/// The schedule-lag figure (`data-testid="schedule-lag"`), only for open-loop runs.
#[component]
pub fn ScheduleLagFigure(
    /// The report.
    report: Arc<Report>,
) -> impl IntoView {
    schedule_lag(&report, LEVEL).map(|lag| {
        view! {
            <section data-testid="schedule-lag">
                <h3>"Schedule lag"</h3>
                <p>
                    {format!(
                        "{} planned requests went late by P50 {}, P99 {} (max {:.1} ms); {} more than {} ms late ({} % intervals).",
                        lag.planned,
                        estimate_text(&lag.p50_ms, 1.0, " ms"),
                        estimate_text(&lag.p99_ms, 1.0, " ms"),
                        lag.max_ms,
                        estimate_text(&lag.late, 100.0, " %"),
                        lag.bound_ms,
                        LEVEL * 100.0,
                    )}
                </p>
            </section>
        }
    })
}
