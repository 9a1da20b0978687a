//! What an imported tool's file stated about its own run, each figure beside the studio's
//! value from the same requests ([`crate::import`] builds it).

use serde::{Deserialize, Serialize};

/// What a tool's file stated about its own run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceSummary {
    /// The tool and its version as the file names them (`GuideLLM 0.8.1`, `AIPerf 0.13.0`).
    pub tool: String,
    /// Each stated figure, in the file's order of metrics.
    pub figures: Vec<SummaryFigure>,
}

/// One figure of a file's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryFigure {
    /// The group the figure summarises (`c=2`: a benchmark of a sweep), `None` for the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The metric and statistic in the studio's words: `TTFT median`, `ITL p99`, `E2E mean`.
    pub metric: String,
    /// The unit both values are in (`ms`); the file's own unit is named in the explanation
    /// when it differs.
    pub unit: String,
    /// The value the file states, converted to [`Self::unit`].
    pub file_value: f64,
    /// The studio's value from the file's requests, `None` when they do not give it (the file
    /// kept no per-request value for this metric).
    pub our_value: Option<f64>,
    /// Why the two agree or differ, in a sentence for the user.
    pub explanation: String,
}
