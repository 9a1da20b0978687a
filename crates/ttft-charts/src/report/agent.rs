//! Agent scenarios: when the answer became usable (valid JSON) against the first token and the
//! end of the stream, as CDFs.

use ttft_core::report::{Aggregates, RequestRecord};

use super::latency::{cdf_chart, cdf_line, cdf_note};
use crate::ChartSpec;
use crate::style::ms;

/// Agent JSON: when the answer became usable, against first token and end of stream.
pub(super) fn json_valid(ok: &[&RequestRecord], agg: &Aggregates) -> Option<ChartSpec> {
    let s = agg.json_valid?;
    let valid: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.metrics.json_valid_ms())
        .collect();
    let ttft: Vec<f64> = ok.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    let e2e: Vec<f64> = ok.iter().filter_map(|r| r.metrics.e2e_ms).collect();
    let chart = cdf_chart("Agent: time to valid JSON")
        .series(cdf_line("first token", &ttft))
        .series(cdf_line("valid JSON", &valid))
        .series(cdf_line("end of stream", &e2e));
    Some(ChartSpec {
        id: "json-valid",
        title: "Agent: time to valid JSON".into(),
        caption: format!(
            "An agent can act at valid JSON, not at the first token: P50 {} after the request ({} of {} requests produced valid JSON).{}",
            ms(s.p50),
            valid.len(),
            ok.len(),
            cdf_note([ttft.len(), valid.len(), e2e.len()])
        ),
        chart,
    })
}
