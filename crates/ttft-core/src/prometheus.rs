//! Prometheus text exposition format 0.0.4: the text a server's `/metrics` answers with.
//!
//! [`parse`] reads `# HELP` and `# TYPE` lines, samples `name{label="value",…} value
//! [timestamp]` with the label-value escapes `\\`, `\"` and `\n`, the values `+Inf`, `-Inf`
//! and `NaN` (any float Rust reads), and an optional integer timestamp (ms). Other comments
//! and blank lines are ignored. A line that is none of these (a bad name, an unclosed label
//! set, a value that is not a number, trailing garbage) is skipped and counted in
//! [`Exposition::skipped`]: one bad line never loses the rest of a scrape, and nothing panics.
//! Every byte is examined a bounded number of times, so the work is linear in the input.
//!
//! Histograms are not assembled here: their `_bucket{le=…}`, `_sum` and `_count` samples are
//! kept as samples, and [`crate::server_metrics`] reads them by family name. [`render`] writes
//! an [`Exposition`] back in the same format (what a round trip is tested against).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// A metric family's declared type (`# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricType {
    /// Only goes up (until the server restarts).
    Counter,
    /// Goes up and down.
    Gauge,
    /// `_bucket{le=…}` (cumulative), `_sum` and `_count`.
    Histogram,
    /// Quantiles with `_sum` and `_count`.
    Summary,
    /// Declared `untyped`, or any other word.
    Untyped,
}

impl MetricType {
    fn from_word(w: &str) -> Self {
        match w {
            "counter" => Self::Counter,
            "gauge" => Self::Gauge,
            "histogram" => Self::Histogram,
            "summary" => Self::Summary,
            _ => Self::Untyped,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
            Self::Summary => "summary",
            Self::Untyped => "untyped",
        }
    }
}

/// One sample line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// The sample's name as written (`vllm:time_to_first_token_seconds_bucket`).
    pub name: String,
    /// Labels in the order written, values unescaped.
    pub labels: Vec<(String, String)>,
    /// The value (may be infinite or NaN).
    pub value: f64,
    /// The optional timestamp (ms since the Unix epoch).
    pub timestamp_ms: Option<i64>,
}

impl Sample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A parsed exposition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    /// Samples in the order written.
    pub samples: Vec<Sample>,
    /// Declared types by family name.
    pub types: BTreeMap<String, MetricType>,
    /// Help texts by family name, unescaped.
    pub help: BTreeMap<String, String>,
    /// Lines that could not be read and were skipped.
    pub skipped: usize,
}

/// Parses exposition text (see the module doc); never fails, bad lines are counted.
pub fn parse(text: &str) -> Exposition {
    let mut out = Exposition::default();
    for line in text.lines() {
        let line = line.trim_start_matches([' ', '\t']);
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if !comment_line(comment, &mut out) {
                out.skipped += 1;
            }
            continue;
        }
        match sample_line(line) {
            Some(s) => out.samples.push(s),
            None => out.skipped += 1,
        }
    }
    out
}

/// `# HELP name text` / `# TYPE name type`; other comments are fine. False when a HELP or
/// TYPE line is malformed.
fn comment_line(comment: &str, out: &mut Exposition) -> bool {
    let rest = comment.trim_start_matches([' ', '\t']);
    let (kw, rest) = split_word(rest);
    if kw != "HELP" && kw != "TYPE" {
        return true;
    }
    let (name, rest) = split_word(rest);
    if !is_metric_name(name) {
        return false;
    }
    if kw == "TYPE" {
        let (word, tail) = split_word(rest);
        if word.is_empty() || !tail.trim().is_empty() {
            return false;
        }
        out.types
            .insert(name.to_owned(), MetricType::from_word(word));
    } else {
        out.help.insert(name.to_owned(), unescape_help(rest));
    }
    true
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start_matches([' ', '\t']);
    let end = s.find([' ', '\t']).unwrap_or(s.len());
    let (w, rest) = s.split_at(end);
    (w, rest.strip_prefix([' ', '\t']).unwrap_or(rest))
}

fn unescape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `s` is a metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
pub fn is_metric_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_' || c == b':')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
}

/// Whether `s` is a label name: `[a-zA-Z_][a-zA-Z0-9_]*`.
pub fn is_label_name(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

fn sample_line(line: &str) -> Option<Sample> {
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let name = &line[..name_end];
    if !is_metric_name(name) {
        return None;
    }
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    // Blanks may stand between the name and its labels.
    if let Some(after) = rest.trim_start_matches([' ', '\t']).strip_prefix('{') {
        rest = label_set(after, &mut labels)?;
    }
    // At least one blank between the name (or labels) and the value.
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if trimmed.len() == rest.len() {
        return None;
    }
    let (value, tail) = split_word(trimmed);
    let value = parse_value(value)?;
    let (ts, tail) = split_word(tail);
    let timestamp_ms = if ts.is_empty() {
        None
    } else {
        Some(ts.parse::<i64>().ok()?)
    };
    if !tail.trim().is_empty() {
        return None;
    }
    Some(Sample {
        name: name.to_owned(),
        labels,
        value,
        timestamp_ms,
    })
}

/// Reads `name="value",…}` (after the `{`); returns what follows the `}`.
fn label_set<'a>(mut s: &'a str, labels: &mut Vec<(String, String)>) -> Option<&'a str> {
    loop {
        s = s.trim_start_matches([' ', '\t']);
        if let Some(after) = s.strip_prefix('}') {
            return Some(after);
        }
        let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        let key = &s[..end];
        if !is_label_name(key) {
            return None;
        }
        s = s[end..].trim_start_matches([' ', '\t']).strip_prefix('=')?;
        s = s.trim_start_matches([' ', '\t']).strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = s.char_indices();
        let close = loop {
            let (i, c) = chars.next()?;
            match c {
                '"' => break i,
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    other => {
                        value.push('\\');
                        value.push(other);
                    }
                },
                c => value.push(c),
            }
        };
        labels.push((key.to_owned(), value));
        s = s[close + 1..].trim_start_matches([' ', '\t']);
        if let Some(after) = s.strip_prefix(',') {
            s = after;
        } else if !s.starts_with('}') {
            return None;
        }
    }
}

/// A sample value: a float, `+Inf`, `-Inf` or `NaN` (Rust's float syntax, which accepts
/// these case-insensitively).
pub fn parse_value(s: &str) -> Option<f64> {
    s.parse::<f64>().ok()
}

/// A value as the format writes it (`+Inf`, `-Inf`, `NaN`, else Rust's shortest round-trip
/// decimal).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

/// Writes an exposition in the text format: each family's HELP and TYPE (in name order),
/// then every sample (in order). Reading it back with [`parse`] gives the same samples.
pub fn render(e: &Exposition) -> String {
    let mut out = String::new();
    for (name, help) in &e.help {
        let escaped = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(out, "# HELP {name} {escaped}");
    }
    for (name, t) in &e.types {
        let _ = writeln!(out, "# TYPE {name} {}", t.word());
    }
    for s in &e.samples {
        out.push_str(&s.name);
        if !s.labels.is_empty() {
            out.push('{');
            for (i, (k, v)) in s.labels.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let v = v
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n");
                let _ = write!(out, "{k}=\"{v}\"");
            }
            out.push('}');
        }
        let _ = write!(out, " {}", format_value(s.value));
        if let Some(ts) = s.timestamp_ms {
            let _ = write!(out, " {ts}");
        }
        out.push('\n');
    }
    out
}
