//! The three file formats read into [`Trace`] rows: Mooncake's JSONL line by line, Azure's and
//! BurstGPT's CSVs through the `csv` crate (RFC 4180 records from bytes), columns found by
//! their header names. Every error names its line (and column), never a panic.

use serde_json::{Map, Value};

use super::time::ticks;
use super::{Trace, TraceError, TraceFormat, TraceRow};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The longest input or output a row may have: ten times today's longest contexts, and a
/// prompt a tab can still build (about 50 MB of text); a larger count is a damaged value.
const MAX_TOKENS: u32 = 10_000_000;

/// What a token count must be.
const TOKENS: &str = "a whole number of tokens (0 to 10,000,000)";

fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM).unwrap_or(bytes)
}

/// The first line with more than white space, 1-based, trimmed.
pub(super) fn first_line(bytes: &[u8]) -> Option<(usize, &[u8])> {
    strip_bom(bytes)
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_ascii()))
        .find(|(_, l)| !l.is_empty())
}

/// A CSV header cell as compared: unquoted, trimmed, lower case.
fn header_name(cell: &str) -> String {
    cell.trim().trim_matches('"').trim().to_ascii_lowercase()
}

/// The format a first line starts.
pub(super) fn detect_line(line: &[u8]) -> Option<TraceFormat> {
    if line.starts_with(b"{") {
        return Some(TraceFormat::Mooncake);
    }
    let text = String::from_utf8_lossy(line);
    let names: Vec<String> = text.split(',').map(header_name).collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    if has("contexttokens") && has("generatedtokens") {
        Some(TraceFormat::Azure)
    } else if has("request tokens") && has("response tokens") {
        Some(TraceFormat::BurstGpt)
    } else {
        None
    }
}

/// `s` cut to `max` characters, with an ellipsis when cut.
pub(super) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

// ---- Mooncake JSONL ----

/// The 1-based character column where `key`'s value starts in a JSON line (1 if not found).
fn value_column(line: &str, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    let Some(at) = line.find(&quoted) else {
        return 1;
    };
    let after = &line[at + quoted.len()..];
    let skipped = after.len() - after.trim_start().len();
    let rest = after.trim_start();
    let Some(value) = rest.strip_prefix(':') else {
        return 1;
    };
    let start = at + quoted.len() + skipped + 1 + (value.len() - value.trim_start().len());
    line[..start].chars().count() + 1
}

/// A count written as a float (`512.0`), when whole and in range.
fn whole_count(f: f64) -> Option<u32> {
    (f.fract() == 0.0 && (0.0..=f64::from(MAX_TOKENS)).contains(&f)).then_some(f as u32)
}

/// A whole number of tokens from a JSON value (`512` or `512.0`).
fn json_count(v: &Value) -> Option<u32> {
    if let Some(n) = v.as_u64() {
        return u32::try_from(n).ok().filter(|n| *n <= MAX_TOKENS);
    }
    whole_count(v.as_f64()?)
}

struct JsonLine<'a> {
    no: usize,
    text: &'a str,
    obj: &'a Map<String, Value>,
}

impl JsonLine<'_> {
    fn missing(&self, key: &str) -> TraceError {
        TraceError::BadLine {
            line: self.no,
            column: 1,
            message: format!(
                "the object has no \"{key}\": every Mooncake line needs \"timestamp\" (ms), \"input_length\" and \"output_length\" (tokens); \"hash_ids\" may be left out"
            ),
        }
    }

    fn bad(&self, key: &str, field: String, v: &Value, expected: &'static str) -> TraceError {
        TraceError::BadNumber {
            line: self.no,
            column: value_column(self.text, key),
            field,
            text: shorten(&v.to_string(), 40),
            expected,
        }
    }

    fn count(&self, key: &str) -> Result<u32, TraceError> {
        let v = self.obj.get(key).ok_or_else(|| self.missing(key))?;
        json_count(v).ok_or_else(|| self.bad(key, key.to_owned(), v, TOKENS))
    }

    fn time(&self) -> Result<(f64, String), TraceError> {
        let v = self
            .obj
            .get("timestamp")
            .ok_or_else(|| self.missing("timestamp"))?;
        v.as_f64()
            .filter(|t| t.is_finite())
            .map(|t| (t, v.to_string()))
            .ok_or_else(|| {
                self.bad(
                    "timestamp",
                    "timestamp".into(),
                    v,
                    "a time in milliseconds (a number)",
                )
            })
    }

    fn hash_ids(&self) -> Result<Vec<u64>, TraceError> {
        let v = match self.obj.get("hash_ids") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(v) => v,
        };
        let items = v.as_array().ok_or_else(|| {
            self.bad(
                "hash_ids",
                "hash_ids".into(),
                v,
                "a list of block ids like [46, 47]",
            )
        })?;
        items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_u64().ok_or_else(|| {
                    self.bad(
                        "hash_ids",
                        format!("hash_ids[{i}]"),
                        x,
                        "a whole block id (0 or more)",
                    )
                })
            })
            .collect()
    }
}

fn json_error(no: usize, e: &serde_json::Error) -> TraceError {
    let text = e.to_string();
    let message = text.split(" at line ").next().unwrap_or(&text).to_owned();
    TraceError::BadLine {
        line: no,
        column: e.column().max(1),
        message: format!(
            "not a JSON object ({message}): a Mooncake line is one object like {{\"timestamp\": 0, \"input_length\": 655, \"output_length\": 52, \"hash_ids\": [46, 47]}}"
        ),
    }
}

fn utf8_line(no: usize, raw: &[u8]) -> Result<&str, TraceError> {
    std::str::from_utf8(raw).map_err(|e| TraceError::BadLine {
        line: no,
        column: String::from_utf8_lossy(&raw[..e.valid_up_to()])
            .chars()
            .count()
            + 1,
        message: "the line is not UTF-8 text; save the trace as UTF-8".into(),
    })
}

/// Mooncake's JSONL: one object a line.
pub(super) fn mooncake(bytes: &[u8]) -> Result<Trace, TraceError> {
    let mut rows = Vec::new();
    let mut first: Option<f64> = None;
    let mut previous: Option<(f64, String)> = None;
    for (i, raw) in strip_bom(bytes).split(|b| *b == b'\n').enumerate() {
        let no = i + 1;
        let raw = raw.trim_ascii();
        if raw.is_empty() {
            continue;
        }
        let text = utf8_line(no, raw)?;
        let value: Value = serde_json::from_str(text).map_err(|e| json_error(no, &e))?;
        let Some(obj) = value.as_object() else {
            return Err(TraceError::BadLine {
                line: no,
                column: 1,
                message: "not a JSON object: a Mooncake line is one object like {\"timestamp\": 0, \"input_length\": 655, \"output_length\": 52, \"hash_ids\": [46, 47]}".into(),
            });
        };
        let line = JsonLine { no, text, obj };
        let (t, t_text) = line.time()?;
        let input_tokens = line.count("input_length")?;
        let output_tokens = line.count("output_length")?;
        let hash_ids = line.hash_ids()?;
        if let Some((p, p_text)) = &previous
            && t < *p
        {
            return Err(TraceError::NotMonotonic {
                line: no,
                field: "timestamp",
                previous: p_text.clone(),
                this: t_text,
            });
        }
        let t0 = *first.get_or_insert(t);
        if !(t - t0).is_finite() {
            return Err(line.bad(
                "timestamp",
                "timestamp".into(),
                obj.get("timestamp").unwrap_or(&Value::Null),
                "a time in milliseconds within 10^300 of the first row's",
            ));
        }
        previous = Some((t, t_text));
        rows.push(TraceRow {
            arrival_ms: t - t0,
            input_tokens,
            output_tokens,
            hash_ids,
        });
    }
    if rows.is_empty() {
        return Err(TraceError::NoRequests { failed: 0 });
    }
    Ok(Trace {
        format: TraceFormat::Mooncake,
        rows,
        failed_rows: 0,
    })
}

// ---- Azure and BurstGPT CSV ----

/// A CSV format's columns: time, input, output, as named in its header.
struct Columns {
    time: &'static str,
    input: &'static str,
    output: &'static str,
    expected: &'static str,
}

fn columns(format: TraceFormat) -> Columns {
    match format {
        TraceFormat::Azure => Columns {
            time: "TIMESTAMP",
            input: "ContextTokens",
            output: "GeneratedTokens",
            expected: "TIMESTAMP, ContextTokens and GeneratedTokens (Azure LLM inference trace)",
        },
        _ => Columns {
            time: "Timestamp",
            input: "Request tokens",
            output: "Response tokens",
            expected: "Timestamp, Request tokens and Response tokens (BurstGPT: Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type)",
        },
    }
}

fn cell(record: &csv::ByteRecord, i: usize) -> String {
    String::from_utf8_lossy(record.get(i).unwrap_or_default())
        .trim()
        .to_owned()
}

fn is_blank(record: &csv::ByteRecord) -> bool {
    record.iter().all(|f| f.trim_ascii().is_empty())
}

/// The 1-based line a record starts on. The reader's position is where it began to read, before
/// the empty lines it skips, so those are counted here.
fn record_line(record: &csv::ByteRecord, source: &[u8], fallback: usize) -> usize {
    let Some(p) = record.position() else {
        return fallback;
    };
    let start = usize::try_from(p.byte()).unwrap_or(usize::MAX);
    let skipped = source
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| matches!(b, b'\n' | b'\r'))
        .filter(|b| **b == b'\n')
        .count();
    usize::try_from(p.line())
        .unwrap_or(usize::MAX)
        .saturating_add(skipped)
}

/// A whole number of tokens from a CSV cell (`374` or `374.0`).
fn csv_count(text: &str) -> Option<u32> {
    if let Ok(n) = text.parse::<u32>() {
        return (n <= MAX_TOKENS).then_some(n);
    }
    whole_count(text.parse::<f64>().ok()?)
}

/// Where the header puts each column, 0-based: (time, input, output).
fn header_indexes(
    record: &csv::ByteRecord,
    line: usize,
    format: TraceFormat,
) -> Result<[usize; 3], TraceError> {
    let cols = columns(format);
    let names: Vec<String> = (0..record.len()).map(|i| cell(record, i)).collect();
    let find = |want: &'static str| {
        names
            .iter()
            .position(|n| header_name(n) == want.to_ascii_lowercase())
            .ok_or_else(|| TraceError::MissingColumn {
                line,
                format,
                column: want,
                found: shorten(&names.join(","), 120),
                expected: cols.expected,
            })
    };
    Ok([find(cols.time)?, find(cols.input)?, find(cols.output)?])
}

/// A CSV row's time as written: Azure's date and time (as 100-ns ticks since 1970, exact),
/// BurstGPT's seconds.
#[derive(Clone, Copy)]
enum Clock {
    /// 100-ns ticks (exact), Azure.
    Ticks(i64),
    /// Seconds, BurstGPT.
    Seconds(f64),
}

fn clock(format: TraceFormat, text: &str) -> Option<Clock> {
    match format {
        TraceFormat::Azure => ticks(text).map(Clock::Ticks),
        _ => text
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite())
            .map(Clock::Seconds),
    }
}

/// ms from `first` to `now` (same format).
fn since(first: &Clock, now: &Clock) -> f64 {
    match (first, now) {
        (Clock::Ticks(a), Clock::Ticks(b)) => b.saturating_sub(*a) as f64 / 1e4,
        (Clock::Seconds(a), Clock::Seconds(b)) => (b - a) * 1e3,
        _ => 0.0,
    }
}

/// Reads a CSV's data records into rows, once its header has placed the columns.
struct CsvReader {
    format: TraceFormat,
    idx: [usize; 3],
    header_len: usize,
    first: Option<Clock>,
    previous: Option<(f64, String)>,
}

impl CsvReader {
    fn field(&self, record: &csv::ByteRecord, line: usize, k: usize) -> Result<String, TraceError> {
        let i = self.idx[k];
        if i >= record.len() {
            let cols = columns(self.format);
            return Err(TraceError::BadLine {
                line,
                column: 1,
                message: format!(
                    "the row has {} columns and the header {}: every row needs its {}, {} and {}",
                    record.len(),
                    self.header_len,
                    cols.time,
                    cols.input,
                    cols.output
                ),
            });
        }
        Ok(cell(record, i))
    }

    fn bad(&self, line: usize, k: usize, text: &str, expected: &'static str) -> TraceError {
        let cols = columns(self.format);
        TraceError::BadNumber {
            line,
            column: self.idx[k] + 1,
            field: [cols.time, cols.input, cols.output][k].to_owned(),
            text: shorten(text, 40),
            expected,
        }
    }

    fn row(&mut self, record: &csv::ByteRecord, line: usize) -> Result<TraceRow, TraceError> {
        let t_text = self.field(record, line, 0)?;
        let expected_time = if self.format == TraceFormat::Azure {
            "a date and time like 2023-11-16 18:15:46.6805900"
        } else {
            "a time in seconds (a number)"
        };
        let now =
            clock(self.format, &t_text).ok_or_else(|| self.bad(line, 0, &t_text, expected_time))?;
        let count = |k: usize| -> Result<u32, TraceError> {
            let text = self.field(record, line, k)?;
            csv_count(&text).ok_or_else(|| self.bad(line, k, &text, TOKENS))
        };
        let input_tokens = count(1)?;
        let output_tokens = count(2)?;
        let first = self.first.get_or_insert(now);
        let arrival_ms = since(first, &now);
        if !arrival_ms.is_finite() {
            return Err(self.bad(line, 0, &t_text, expected_time));
        }
        if let Some((p, p_text)) = &self.previous
            && arrival_ms < *p
        {
            return Err(TraceError::NotMonotonic {
                line,
                field: columns(self.format).time,
                previous: p_text.clone(),
                this: t_text,
            });
        }
        self.previous = Some((arrival_ms, t_text));
        Ok(TraceRow {
            arrival_ms,
            input_tokens,
            output_tokens,
            hash_ids: Vec::new(),
        })
    }
}

/// Azure's or BurstGPT's CSV: a header, then one request a record.
pub(super) fn csv_trace(bytes: &[u8], format: TraceFormat) -> Result<Trace, TraceError> {
    let source = strip_bom(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(source);
    let mut record = csv::ByteRecord::new();
    let mut state: Option<CsvReader> = None;
    let mut rows = Vec::new();
    let mut failed_rows = 0;
    let mut last_line = 0;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                return Err(TraceError::BadLine {
                    line: e.position().map_or(last_line + 1, |p| {
                        usize::try_from(p.line()).unwrap_or(usize::MAX)
                    }),
                    column: 1,
                    message: format!("not a CSV record ({e})"),
                });
            }
        }
        let line = record_line(&record, source, last_line + 1);
        last_line = line;
        if is_blank(&record) {
            continue;
        }
        let Some(r) = state.as_mut() else {
            state = Some(CsvReader {
                format,
                idx: header_indexes(&record, line, format)?,
                header_len: record.len(),
                first: None,
                previous: None,
            });
            continue;
        };
        let row = r.row(&record, line)?;
        // BurstGPT's README: rows whose `Response tokens` are 0 are failures.
        if format == TraceFormat::BurstGpt && row.output_tokens == 0 {
            failed_rows += 1;
        } else {
            rows.push(row);
        }
    }
    if state.is_none() {
        return Err(TraceError::Empty);
    }
    if rows.is_empty() {
        return Err(TraceError::NoRequests {
            failed: failed_rows,
        });
    }
    // Arrivals count from the first request kept: a failed first row moves the origin.
    let t0 = rows[0].arrival_ms;
    if t0 != 0.0 {
        for r in &mut rows {
            r.arrival_ms -= t0;
        }
    }
    Ok(Trace {
        format,
        rows,
        failed_rows,
    })
}
