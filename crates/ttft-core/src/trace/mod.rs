//! Production traces replayed as open-loop plans (#32): a published trace file (Mooncake's
//! JSONL, Azure's LLM inference CSV, BurstGPT's CSV) is read into one [`Trace`] of arrivals,
//! input and output lengths and prefix blocks; [`plan()`] turns it into the requests to send,
//! each at its planned time, with a prompt built to the trace's input length whose prefix
//! blocks share text exactly where the trace's blocks share a hash id, so a server's prefix
//! cache sees what production saw ([`prefix_reuse`] says how much it should hit).
//!
//! Sans-IO like the rest of the core: bytes in, rows, plans and text out. The formats, their
//! sources and what a replay cannot honour are documented in `docs/traces.md`.

mod parse;
mod plan;
mod prompt;
mod replay;
mod time;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use plan::{
    DEFAULT_MAX_REQUESTS, MAX_SPEED, MIN_SPEED, TraceJob, TracePlan, TracePlanError,
    TracePlanOptions, eos_note, plan,
};
pub use prompt::{BLOCK_TOKENS, BlockKey, PrefixReuse, PromptBlock, prefix_reuse};
pub use replay::{
    ReuseComparison, SETTINGS_KEY, TraceReplayError, TraceReplayRecord, plan_options, replay_phase,
};

/// A trace file format the studio reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// kvcache-ai/Mooncake `FAST25-release/traces/*.jsonl`: one JSON object a line with
    /// `timestamp` (ms), `input_length`, `output_length` and `hash_ids` (one id a 512-token
    /// prefix block).
    Mooncake,
    /// Azure/AzurePublicDataset `AzureLLMInferenceTrace_{code,conv}.csv` (2023, and the 2024
    /// week-long files): `TIMESTAMP,ContextTokens,GeneratedTokens`, a date and time a row.
    Azure,
    /// HPMLL/BurstGPT `BurstGPT_*.csv`: `Timestamp,Model,Request tokens,Response tokens,Total
    /// tokens,Log Type`, `Timestamp` in seconds from the trace's start.
    BurstGpt,
}

impl TraceFormat {
    /// Every format, with its name for people.
    pub const ALL: [(TraceFormat, &'static str); 3] = [
        (TraceFormat::Mooncake, "Mooncake JSONL"),
        (TraceFormat::Azure, "Azure LLM inference CSV"),
        (TraceFormat::BurstGpt, "BurstGPT CSV"),
    ];

    /// Its name for people ("Mooncake JSONL").
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("trace", |(_, n)| n)
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One request of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    /// When it arrived, ms after the trace's first row (0 for the first; never decreasing).
    pub arrival_ms: f64,
    /// Prompt tokens (the trace model's tokenizer).
    pub input_tokens: u32,
    /// Generated tokens.
    pub output_tokens: u32,
    /// Mooncake's prefix block ids, one a [`BLOCK_TOKENS`]-token block, in prompt order (a
    /// shorter last block holds the rest); empty for formats without them (every prompt its own).
    pub hash_ids: Vec<u64>,
}

/// A trace read from a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The file's format.
    pub format: TraceFormat,
    /// Its requests, in file order (sorted by arrival).
    pub rows: Vec<TraceRow>,
    /// Rows the trace marks as failed and that were left out: BurstGPT's rows with `Response
    /// tokens` 0 (its README: failures); 0 for the other formats.
    pub failed_rows: usize,
}

impl Trace {
    /// The time from the first arrival to the last, ms.
    pub fn span_ms(&self) -> f64 {
        self.rows.last().map_or(0.0, |r| r.arrival_ms)
    }
}

/// A trace file that cannot be read, with where and what to do.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TraceError {
    /// Nothing but blank lines.
    #[error(
        "the trace file is empty: choose a Mooncake JSONL, an Azure LLM inference CSV or a BurstGPT CSV file"
    )]
    Empty,
    /// The first line is none of the formats.
    #[error(
        "line {line}: '{found}' starts no trace format the studio reads: a Mooncake JSONL line is an object like {{\"timestamp\": 0, \"input_length\": 655, \"output_length\": 52, \"hash_ids\": [46, 47]}}, an Azure CSV starts with the header TIMESTAMP,ContextTokens,GeneratedTokens and a BurstGPT CSV with Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type"
    )]
    UnknownFormat {
        /// 1-based line.
        line: usize,
        /// The line's start.
        found: String,
    },
    /// A CSV header without a column the format needs.
    #[error(
        "line {line}: the {format} header has no column '{column}' (it has: {found}); the header must name {expected}"
    )]
    MissingColumn {
        /// 1-based line of the header.
        line: usize,
        /// The format read.
        format: TraceFormat,
        /// The column missing.
        column: &'static str,
        /// The header's columns as found.
        found: String,
        /// The columns the format needs.
        expected: &'static str,
    },
    /// A value that is not the number (or time) its column holds.
    #[error(
        "line {line}, column {column} ({field}): '{text}' is not {expected}; correct the value or delete the line"
    )]
    BadNumber {
        /// 1-based line.
        line: usize,
        /// 1-based column: the character where the value starts (JSONL) or the field's
        /// position in the record (CSV).
        column: usize,
        /// The field's name.
        field: String,
        /// The text found (shortened past 40 characters).
        text: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A line that is not a record of the format (bad JSON, a missing field, too few columns).
    #[error("line {line}, column {column}: {message}")]
    BadLine {
        /// 1-based line.
        line: usize,
        /// 1-based column (character) where the problem was found.
        column: usize,
        /// What is wrong and what the line should be.
        message: String,
    },
    /// A row that arrives before the row above it.
    #[error(
        "line {line}: its {field} {this} is earlier than the line above's {previous}; a trace must be sorted by time (the published Mooncake, Azure and BurstGPT files are): sort the rows by {field}, keeping the header first"
    )]
    NotMonotonic {
        /// 1-based line.
        line: usize,
        /// The time field's name.
        field: &'static str,
        /// The previous row's time as written.
        previous: String,
        /// This row's time as written.
        this: String,
    },
    /// A header, or only failed rows, and no request.
    #[error("the trace has no requests{}", failed_note(*.failed))]
    NoRequests {
        /// Rows left out as failed.
        failed: usize,
    },
}

fn failed_note(failed: usize) -> String {
    if failed == 0 {
        String::new()
    } else {
        format!(
            ": all {failed} rows are failed requests (Response tokens 0), which a replay leaves out"
        )
    }
}

/// The format of a trace file, from its first non-blank line: a JSON object is Mooncake's, a
/// CSV header naming `ContextTokens` and `GeneratedTokens` Azure's, one naming `Request
/// tokens` and `Response tokens` BurstGPT's; `None` for anything else.
pub fn detect(bytes: &[u8]) -> Option<TraceFormat> {
    let (_, line) = parse::first_line(bytes)?;
    parse::detect_line(line)
}

/// Reads a trace: `format` as given, or detected from the content ([`detect`]) when `None`.
/// A UTF-8 byte-order mark and CRLF line ends are accepted; blank lines are skipped.
pub fn parse(bytes: &[u8], format: Option<TraceFormat>) -> Result<Trace, TraceError> {
    let Some((line, first)) = parse::first_line(bytes) else {
        return Err(TraceError::Empty);
    };
    let format = match format.or_else(|| parse::detect_line(first)) {
        Some(f) => f,
        None => {
            return Err(TraceError::UnknownFormat {
                line,
                found: parse::shorten(&String::from_utf8_lossy(first), 60),
            });
        }
    };
    match format {
        TraceFormat::Mooncake => parse::mooncake(bytes),
        TraceFormat::Azure | TraceFormat::BurstGpt => parse::csv_trace(bytes, format),
    }
}
