//! Agent scenarios: when the answer became usable (valid JSON) against the first token and the
//! end of the stream, as CDFs.

use ttft_core::report::{Aggregates, RequestRecord};

use super::latency::{banded_cdf, cdf_chart, cdf_note};
use crate::ChartSpec;
use crate::style::{band_caption, ms};

/// Agent JSON: when the answer became usable, against first token and end of stream, each
/// with its DKW band at `level`.
pub(super) fn json_valid(ok: &[&RequestRecord], agg: &Aggregates, level: f64) -> Option<ChartSpec> {
    let s = agg.json_valid?;
    let valid: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.metrics.json_valid_ms())
        .collect();
    let ttft: Vec<f64> = ok.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    let e2e: Vec<f64> = ok.iter().filter_map(|r| r.metrics.e2e_ms).collect();
    let counts = [ttft.len(), valid.len(), e2e.len()];
    let (chart, _) = banded_cdf(
        cdf_chart("Agent: time to valid JSON"),
        &[
            ("first token", ttft),
            ("valid JSON", valid.clone()),
            ("end of stream", e2e),
        ],
        level,
    );
    Some(ChartSpec {
        id: "json-valid",
        title: "Agent: time to valid JSON".into(),
        caption: format!(
            "An agent can act at valid JSON, not at the first token: P50 {} after the request ({} of {} requests produced valid JSON).{}{}",
            ms(s.p50),
            valid.len(),
            ok.len(),
            band_caption(level),
            cdf_note(counts)
        ),
        chart,
    })
}
