//! Roofline for decoding: the lowest ITL memory bandwidth allows.
//!
//! Each decode step of a single stream reads every weight once and the KV cache of the context:
//! `bound = (params × bytes_per_weight + kv_bytes_per_token × context) / bandwidth`.
//! 7B parameters in FP16 on 2.0 TB/s: 14 GB / 2 TB/s = 7 ms/token (≈ 143 tokens/s).

use serde::{Deserialize, Serialize};

/// Weight precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Precision {
    /// 2 bytes.
    Fp16,
    /// 1 byte.
    Fp8,
    /// 1 byte.
    Int8,
    /// 0.5 byte.
    Int4,
}

impl Precision {
    /// Every precision with its stable id and label, for pickers.
    pub const ALL: [(Precision, &'static str, &'static str); 4] = [
        (Precision::Fp16, "fp16", "FP16 / BF16 (2 bytes)"),
        (Precision::Fp8, "fp8", "FP8 (1 byte)"),
        (Precision::Int8, "int8", "INT8 (1 byte)"),
        (Precision::Int4, "int4", "INT4 (0.5 byte)"),
    ];

    /// Stable id (`fp16`, `fp8`, `int8`, `int4`).
    pub fn id(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(p, _, _)| *p == self)
            .map_or("fp16", |(_, id, _)| id)
    }

    /// The precision of an id; `None` for an unknown id.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, i, _)| *i == id)
            .map(|(p, _, _)| *p)
    }

    /// Bytes per weight.
    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp16 => 2.0,
            Precision::Fp8 | Precision::Int8 => 1.0,
            Precision::Int4 => 0.5,
        }
    }
}

/// GPU presets: name and memory bandwidth in TB/s (editable in the UI).
pub const GPU_PRESETS: &[(&str, f64)] = &[
    ("A100 80GB", 2.0),
    ("H100 SXM", 3.35),
    ("H200", 4.8),
    ("RTX 4090", 1.0),
    ("L40S", 0.864),
];

/// Inputs of the bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RooflineInput {
    /// Parameters, in billions.
    pub params_billion: f64,
    /// Weight precision.
    pub precision: Precision,
    /// KV-cache bytes per token of context (0 to ignore).
    pub kv_bytes_per_token: f64,
    /// Context length in tokens.
    pub context_tokens: f64,
    /// Memory bandwidth in TB/s.
    pub bandwidth_tb_s: f64,
}

/// The bound and how a measurement compares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Roofline {
    /// Lowest possible ITL (ms/token).
    pub bound_ms: f64,
    /// Highest possible single-stream decode rate (tokens/s).
    pub max_tokens_per_s: f64,
    /// bound / measured, when a measurement is given (1.0 = at the roofline).
    pub efficiency: Option<f64>,
}

impl RooflineInput {
    /// Computes the bound and, given a measured ITL, the efficiency.
    pub fn evaluate(&self, measured_itl_ms: Option<f64>) -> Roofline {
        let bytes = self.params_billion * 1e9 * self.precision.bytes()
            + self.kv_bytes_per_token * self.context_tokens;
        let bound_ms = bytes / (self.bandwidth_tb_s * 1e12) * 1e3;
        Roofline {
            bound_ms,
            max_tokens_per_s: 1e3 / bound_ms,
            efficiency: measured_itl_ms.filter(|m| *m > 0.0).map(|m| bound_ms / m),
        }
    }
}

impl Roofline {
    /// The bound and, given the measured per-token time, what it means, in one sentence.
    pub fn verdict(&self, measured_ms: Option<f64>) -> String {
        let mut text = format!(
            "Lowest possible ITL: {} per token ({:.0} tokens/s) for one stream.",
            crate::format::ms(self.bound_ms),
            self.max_tokens_per_s
        );
        match (measured_ms, self.efficiency) {
            (Some(m), Some(e)) => text.push_str(&format!(
                " Measured {} per token: {:.0} % of the roofline{}",
                crate::format::ms(m),
                e * 100.0,
                if e > 1.0 {
                    " — faster than the bound, so the inputs are wrong (smaller model, quantized, or speculative decoding)."
                } else if e > 0.7 {
                    ": decoding is bandwidth-bound, as it should be."
                } else {
                    ": well below the bound (batching, overheads, network or a slower GPU)."
                }
            )),
            _ => text.push_str(" No per-token time measured in this run."),
        }
        text
    }
}

/// Mean context a run's decode steps read: prompt tokens plus half the output, over requests
/// that reported prompt tokens (the default context of the roofline panel).
pub fn mean_decode_context(report: &crate::report::Report) -> Option<f64> {
    let v: Vec<f64> = report
        .measured()
        .filter_map(|r| {
            Some(r.metrics.prompt_tokens? as f64 + r.metrics.output_tokens as f64 / 2.0)
        })
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}
