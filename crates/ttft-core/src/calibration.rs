//! "Calibrate this browser": a run's chunk times against the reference endpoint's ground truth.
//!
//! The reference endpoint (`ttft-server`) records, for every request, when it received it on
//! the wall clock (`received_unix_ms`) and when it handed each chunk to the connection
//! (`chunks[k].written_ms`, ms after receipt): `GET /v1/ground-truth/{x-request-id}` gives one
//! record, `GET /v1/ground-truth?since=<unix_ms>&model=<name>` the list (`{"data": [...]}`).
//! [`GroundTruth`] reads the fields this comparison needs from either.
//!
//! What a client recorded of one request is a [`ClientChunks`]: the arrival of every answer
//! chunk in ms after its t0, t0 on the wall clock when known, the server's request id and
//! whether it completed ([`client_chunks`] takes them from a studio [`RequestRecord`]: the
//! answer pieces of its replay, so a request opened from a share link without its replay has
//! no chunks and is counted as mismatched).
//!
//! [`agreement`] is the one implementation of the comparison; the benchmark (`ttft-bench`'s
//! `accuracy`, which only fetches the JSON) and the browser both call it. With `c_k` the
//! client's stamp of chunk `k` (ms after t0), `w_k` the server's write (ms after receipt),
//! `S` the client's t0 and `R` the server's receipt on the wall clock, each request:
//!
//! - is **failed** when the client says it did not complete (counted, not compared);
//! - is **mismatched** when it has no ground truth (no id, or the server kept none), when its
//!   chunk count differs from the server's (`written_ms` of every chunk that has one), or when
//!   it has no chunk;
//! - otherwise adds its `n` chunks to **chunks** and `n − 1` **gap errors**
//!   `(c_k − c_{k−1}) − (w_k − w_{k−1})`: what the client added to or took from each ITL gap;
//! - and one **offset**: with `S` and `R` known, `(S + c_0) − (R + w_0)` (the first chunk's
//!   delivery and stamping delay on one wall clock), also kept as **first_chunk_delay**, with
//!   `R − S` as **request_send**; without `S`, `c_0 − w_0` (which also holds the time the
//!   request took to reach the server).
//!
//! The **TTFT errors** are the offsets minus their median (type-7 percentile of the finite
//! offsets): the constant part (network, stamping path) is the same for every request and is
//! not an error of the TTFT a client reports relative to its peers; what varies is.
//! **chunks_per_s** is `chunks / (last − first) × 1000` over the compared chunks on the wall
//! clock: the client's stamps `S + c_k` when `S` is known, else the server's `R + w_k` (0 when
//! the span is empty).
//!
//! [`CalibrationResult`] keeps the |error| percentiles (P50, P99; type 7 over finite values) of
//! the TTFT errors and the gap errors, as the benchmark's `results.json` does
//! ([`AbsErrors`]), and says them in one sentence.
//!
//! Nothing here panics on bad input: non-finite times give non-finite errors, which the
//! percentiles leave out.

use std::borrow::Borrow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use thiserror::Error;

use crate::report::{Report, RequestRecord};
use crate::stats::Summary;

/// What one client recorded of one request, in its own clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientChunks {
    /// The server's `x-request-id` of the request (its ground-truth key); `None` when the
    /// client lost it (counted as mismatched).
    pub request_id: Option<String>,
    /// t0 on the wall clock (ms since the Unix epoch), when the client knows it.
    pub sent_epoch_ms: Option<f64>,
    /// Arrival of every content chunk, ms after t0.
    pub chunk_ms: Vec<f64>,
    /// Whether the request completed (failed ones are counted, not compared).
    pub ok: bool,
}

/// One chunk of a [`GroundTruth`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TruthChunk {
    /// When the server handed it to the connection, ms after it received the request (`None`
    /// when the record has no number there: the chunk is then left out of the comparison).
    #[serde(default)]
    pub written_ms: Option<f64>,
}

/// The reference endpoint's record of one request, as much of it as the comparison reads
/// (other fields of the server's JSON are ignored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroundTruth {
    /// The request id (`x-request-id`).
    #[serde(default)]
    pub id: Option<String>,
    /// Wall-clock time the server received the request (ms since the Unix epoch).
    #[serde(default)]
    pub received_unix_ms: Option<f64>,
    /// The chunks as written.
    pub chunks: Vec<TruthChunk>,
}

/// The ground truth could not be read.
#[derive(Debug, Error)]
pub enum CalibrationError {
    /// Not the server's ground-truth JSON.
    #[error("not the reference endpoint's ground truth: {0}")]
    Json(#[from] serde_json::Error),
}

/// The list `GET /v1/ground-truth?since=` answers with.
#[derive(Deserialize)]
struct TruthList {
    data: Vec<GroundTruth>,
}

impl GroundTruth {
    /// Reads one record (`GET /v1/ground-truth/{id}`).
    pub fn from_json(text: &str) -> Result<Self, CalibrationError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Reads the list of `GET /v1/ground-truth?since=<unix_ms>&model=<name>`
    /// (`{"object": "list", "data": [...]}`).
    pub fn list_from_json(text: &str) -> Result<Vec<Self>, CalibrationError> {
        Ok(serde_json::from_str::<TruthList>(text)?.data)
    }

    /// `written_ms` of every chunk that has one, in order.
    pub fn written_ms(&self) -> Vec<f64> {
        self.chunks.iter().filter_map(|c| c.written_ms).collect()
    }
}

/// Client-observed minus ground truth for every chunk of every request (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Per-gap ITL error (ms).
    pub gap_errors: Vec<f64>,
    /// TTFT error (ms), centred on its median (the constant network/stamping offset).
    pub ttft_errors: Vec<f64>,
    /// First chunk: client stamp minus server write on one wall clock (ms).
    pub first_chunk_delay: Vec<f64>,
    /// Request: server receipt minus client t0 on one wall clock (ms).
    pub request_send: Vec<f64>,
    /// Chunks compared.
    pub chunks: usize,
    /// Requests whose chunk count differs from the server's (or with no ground truth).
    pub mismatched: usize,
    /// Requests that failed.
    pub failed: usize,
    /// Chunks per second over the run, as the client saw them.
    pub chunks_per_s: f64,
}

/// |error| percentiles of one measurement (finite values only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AbsErrors {
    /// Values.
    pub n: usize,
    /// Median |error| (ms).
    pub p50_ms: f64,
    /// P99 |error| (ms).
    pub p99_ms: f64,
    /// Largest |error| (ms).
    pub max_ms: f64,
}

impl AbsErrors {
    /// The |error| percentiles of `v`; `None` when it holds no finite value.
    pub fn of(v: &[f64]) -> Option<Self> {
        let abs: Vec<f64> = v.iter().map(|x| x.abs()).collect();
        Summary::of(&abs).map(|s| Self {
            n: s.count,
            p50_ms: s.p50,
            p99_ms: s.p99,
            max_ms: s.max,
        })
    }
}

/// [`AbsErrors`] as the benchmark's `results.json` keeps them:
/// `{"n", "p50_ms", "p99_ms", "max_ms"}`, or `{"n": 0}`.
pub fn errors_json(v: &[f64]) -> Value {
    match AbsErrors::of(v) {
        Some(s) => json!({ "n": s.n, "p50_ms": s.p50_ms, "p99_ms": s.p99_ms, "max_ms": s.max_ms }),
        None => json!({ "n": 0 }),
    }
}

impl Agreement {
    /// The figures the benchmark's `results.json` keeps.
    pub fn to_json(&self) -> Value {
        json!({
            "chunks": self.chunks, "mismatched_requests": self.mismatched,
            "failed_requests": self.failed, "chunks_per_s": self.chunks_per_s,
            "itl_error": errors_json(&self.gap_errors), "ttft_error": errors_json(&self.ttft_errors),
            "first_chunk_delay": errors_json(&self.first_chunk_delay),
            "request_send": errors_json(&self.request_send),
        })
    }
}

/// What a studio request gives the comparison: its server id, wall-clock t0, the arrival of
/// each answer piece of its replay (ms after t0) and whether it completed.
pub fn client_chunks(record: &RequestRecord) -> ClientChunks {
    ClientChunks {
        request_id: record.server_request_id.clone(),
        sent_epoch_ms: record.sent_epoch_ms,
        chunk_ms: record
            .replay
            .iter()
            .filter(|p| p.kind == 'a')
            .map(|p| p.at_ms)
            .collect(),
        ok: record.outcome.is_ok(),
    }
}

/// Compares each client request with its ground truth (`None`: none found), as the module doc
/// states.
pub fn agreement<'a, C: Borrow<ClientChunks>>(
    pairs: impl IntoIterator<Item = (C, Option<&'a GroundTruth>)>,
) -> Agreement {
    let mut gap_errors = Vec::new();
    let mut offsets = Vec::new();
    let mut first_chunk_delay = Vec::new();
    let mut request_send = Vec::new();
    let (mut chunks, mut mismatched, mut failed) = (0, 0, 0);
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for (r, truth) in pairs {
        let r = r.borrow();
        if !r.ok {
            failed += 1;
            continue;
        }
        let Some(truth) = truth else {
            mismatched += 1;
            continue;
        };
        let server = truth.written_ms();
        let client = &r.chunk_ms;
        if client.len() != server.len() || client.is_empty() {
            mismatched += 1;
            continue;
        }
        chunks += client.len();
        // On one wall clock (client t0 vs the server's receipt time) the offset is the first
        // chunk's delivery and stamping delay alone; without it, it also holds the time the
        // request took to reach the server.
        match (r.sent_epoch_ms, truth.received_unix_ms) {
            (Some(sent), Some(received)) => {
                let delay = (sent + client[0]) - (received + server[0]);
                first_chunk_delay.push(delay);
                request_send.push(received - sent);
                offsets.push(delay);
                first = first.min(sent + client[0]);
                last = last.max(sent + client[client.len() - 1]);
            }
            _ => {
                offsets.push(client[0] - server[0]);
                if let Some(received) = truth.received_unix_ms {
                    first = first.min(received + server[0]);
                    last = last.max(received + server[server.len() - 1]);
                }
            }
        }
        for k in 1..client.len() {
            gap_errors.push((client[k] - client[k - 1]) - (server[k] - server[k - 1]));
        }
    }
    let median = Summary::of(&offsets).map_or(0.0, |s| s.p50);
    Agreement {
        gap_errors,
        ttft_errors: offsets.iter().map(|o| o - median).collect(),
        first_chunk_delay,
        request_send,
        chunks,
        mismatched,
        failed,
        chunks_per_s: if last > first {
            chunks as f64 / (last - first) * 1e3
        } else {
            0.0
        },
    }
}

/// A run's measured requests against a list of ground-truth records (the answer of
/// `GET /v1/ground-truth?since=`), paired by request id; `streams` is the run's concurrency,
/// for the sentence.
pub fn calibrate(report: &Report, truths: &[GroundTruth], streams: usize) -> CalibrationResult {
    let by_id: HashMap<&str, &GroundTruth> = truths
        .iter()
        .filter_map(|t| Some((t.id.as_deref()?, t)))
        .collect();
    let a = agreement(report.measured().map(|r| {
        let c = client_chunks(r);
        let truth = c
            .request_id
            .as_deref()
            .and_then(|id| by_id.get(id).copied());
        (c, truth)
    }));
    CalibrationResult::new(&a, streams)
}

/// How far this browser's timing is from the server's, in the figures a user reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationResult {
    /// Requests compared (one TTFT error each).
    pub requests: usize,
    /// Chunks compared.
    pub chunks: usize,
    /// Gaps compared.
    pub gaps: usize,
    /// Requests that could not be compared (no ground truth, or another chunk count).
    pub mismatched: usize,
    /// Requests that failed.
    pub failed: usize,
    /// Concurrent streams of the run.
    pub streams: usize,
    /// Median |TTFT error| after centring (ms).
    pub ttft_error_p50_ms: Option<f64>,
    /// P99 |TTFT error| after centring (ms).
    pub ttft_error_p99_ms: Option<f64>,
    /// Median |per-gap ITL error| (ms).
    pub itl_error_p50_ms: Option<f64>,
    /// P99 |per-gap ITL error| (ms).
    pub itl_error_p99_ms: Option<f64>,
}

/// `0.4`, `12.3`, `240`: one decimal, two under 0.1, none from 100.
fn num(x: f64) -> String {
    match x {
        x if !x.is_finite() => "—".into(),
        x if x.abs() >= 100.0 => format!("{x:.0}"),
        x if x.abs() >= 0.1 || x == 0.0 => format!("{x:.1}"),
        x => format!("{x:.2}"),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl CalibrationResult {
    /// The result of an agreement of a run at `streams` concurrent streams.
    pub fn new(a: &Agreement, streams: usize) -> Self {
        let ttft = AbsErrors::of(&a.ttft_errors);
        let itl = AbsErrors::of(&a.gap_errors);
        Self {
            requests: a.ttft_errors.len(),
            chunks: a.chunks,
            gaps: a.gap_errors.len(),
            mismatched: a.mismatched,
            failed: a.failed,
            streams,
            ttft_error_p50_ms: ttft.map(|e| e.p50_ms),
            ttft_error_p99_ms: ttft.map(|e| e.p99_ms),
            itl_error_p50_ms: itl.map(|e| e.p50_ms),
            itl_error_p99_ms: itl.map(|e| e.p99_ms),
        }
    }

    /// "This browser's timing error here: TTFT ±0.4 ms (P99 1.2), per-gap ITL ±0.3 ms (P99
    /// 2.1) over 256 gaps at 8 streams.", followed by what could not be compared.
    pub fn sentence(&self) -> String {
        let left_out = match (self.mismatched, self.failed) {
            (0, 0) => String::new(),
            (m, 0) => format!(
                " {} could not be matched.",
                plural(m, "request", "requests")
            ),
            (0, f) => format!(" {} failed.", plural(f, "request", "requests")),
            (m, f) => format!(
                " {} could not be matched, {f} failed.",
                plural(m, "request", "requests")
            ),
        };
        let (Some(t50), Some(t99)) = (self.ttft_error_p50_ms, self.ttft_error_p99_ms) else {
            return format!(
                "No request could be compared with the reference endpoint's ground truth.{left_out}"
            );
        };
        let ttft = format!("TTFT ±{} ms (P99 {})", num(t50), num(t99));
        let at = plural(self.streams, "stream", "streams");
        let body = match (self.itl_error_p50_ms, self.itl_error_p99_ms) {
            (Some(g50), Some(g99)) => format!(
                "{ttft}, per-gap ITL ±{} ms (P99 {}) over {} at {at}.",
                num(g50),
                num(g99),
                plural(self.gaps, "gap", "gaps")
            ),
            _ => format!(
                "{ttft} over {} at {at} (no gaps to compare).",
                plural(self.requests, "request", "requests")
            ),
        };
        format!("This browser's timing error here: {body}{left_out}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricsConfig;
    use crate::timeline::{Outcome, RequestRecorder};
    use proptest::prelude::*;

    fn client(id: &str, sent: Option<f64>, chunk_ms: &[f64]) -> ClientChunks {
        ClientChunks {
            request_id: Some(id.into()),
            sent_epoch_ms: sent,
            chunk_ms: chunk_ms.to_vec(),
            ok: true,
        }
    }

    fn truth(id: &str, received: Option<f64>, written: &[f64]) -> GroundTruth {
        GroundTruth {
            id: Some(id.into()),
            received_unix_ms: received,
            chunks: written
                .iter()
                .map(|w| TruthChunk {
                    written_ms: Some(*w),
                })
                .collect(),
        }
    }

    #[test]
    fn identical_times_give_no_error() {
        let c = client("a", None, &[5.0, 10.0, 20.0]);
        let t = truth("a", Some(1000.0), &[5.0, 10.0, 20.0]);
        let a = agreement([(&c, Some(&t))]);
        assert_eq!(a.gap_errors, vec![0.0, 0.0]);
        assert_eq!(a.ttft_errors, vec![0.0]);
        assert!(a.first_chunk_delay.is_empty() && a.request_send.is_empty());
        assert_eq!((a.chunks, a.mismatched, a.failed), (3, 0, 0));
        // Server times on the wall clock: 1005 … 1020, 3 chunks in 15 ms.
        assert_eq!(a.chunks_per_s, 200.0);
    }

    #[test]
    fn one_wall_clock_gives_delay_and_send() {
        // t0 at 1 000 000, received 10 ms later; chunk 0 stamped at +100, written at +88
        // (wall 1 000 098): 2 ms of delivery and stamping.
        let c = client("a", Some(1_000_000.0), &[100.0, 120.0, 150.0]);
        let t = truth("a", Some(1_000_010.0), &[88.0, 108.0, 138.0]);
        let a = agreement([(c, Some(&t))]);
        assert_eq!(a.first_chunk_delay, vec![2.0]);
        assert_eq!(a.request_send, vec![10.0]);
        assert_eq!(a.ttft_errors, vec![0.0]);
        assert_eq!(a.gap_errors, vec![0.0, 0.0]);
        // Client stamps 1 000 100 … 1 000 150: 3 chunks in 50 ms.
        assert_eq!(a.chunks_per_s, 60.0);
    }

    #[test]
    fn constant_offset_is_centred_away() {
        let cs = [
            client("a", None, &[17.0, 27.0]),
            client("b", None, &[37.0, 57.0]),
        ];
        let ts = [
            truth("a", None, &[10.0, 20.0]),
            truth("b", None, &[30.0, 50.0]),
        ];
        let a = agreement(cs.iter().zip(ts.iter().map(Some)));
        assert_eq!(a.ttft_errors, vec![0.0, 0.0]);
        assert_eq!(a.gap_errors, vec![0.0, 0.0]);
        // No wall clock at all: no chunk rate.
        assert_eq!(a.chunks_per_s, 0.0);
        // Offsets 7, 9, 20: median 9, errors −2, 0, 11.
        let cs = [
            client("a", None, &[17.0]),
            client("b", None, &[19.0]),
            client("c", None, &[30.0]),
        ];
        let ts = [
            truth("a", None, &[10.0]),
            truth("b", None, &[10.0]),
            truth("c", None, &[10.0]),
        ];
        let a = agreement(cs.iter().zip(ts.iter().map(Some)));
        assert_eq!(a.ttft_errors, vec![-2.0, 0.0, 11.0]);
        assert!(a.gap_errors.is_empty());
        let r = CalibrationResult::new(&a, 1);
        // |errors| 0, 2, 11: P50 2, P99 2 + 0.98 × 9.
        assert_eq!(r.ttft_error_p50_ms, Some(2.0));
        assert!((r.ttft_error_p99_ms.unwrap() - 10.82).abs() < 1e-9);
        assert_eq!((r.requests, r.chunks, r.gaps), (3, 3, 0));
        assert_eq!(r.itl_error_p50_ms, None);
        assert_eq!(
            r.sentence(),
            "This browser's timing error here: TTFT ±2.0 ms (P99 10.8) over 3 requests at 1 \
             stream (no gaps to compare)."
        );
    }

    #[test]
    fn a_shifted_chunk_gives_exact_gap_errors() {
        let c = client("a", None, &[10.0, 23.0, 30.0]);
        let t = truth("a", None, &[10.0, 20.0, 30.0]);
        let a = agreement([(&c, Some(&t))]);
        assert_eq!(a.gap_errors, vec![3.0, -3.0]);
        let r = CalibrationResult::new(&a, 4);
        assert_eq!(
            (r.itl_error_p50_ms, r.itl_error_p99_ms),
            (Some(3.0), Some(3.0))
        );
        assert_eq!(
            (r.ttft_error_p50_ms, r.ttft_error_p99_ms),
            (Some(0.0), Some(0.0))
        );
    }

    #[test]
    fn mismatches_and_failures_are_counted_not_compared() {
        let short = client("a", None, &[10.0, 20.0]);
        let empty = client("b", None, &[]);
        let no_truth = client("c", None, &[10.0]);
        let mut failed = client("d", None, &[10.0]);
        failed.ok = false;
        let t3 = truth("a", None, &[10.0, 20.0, 30.0]);
        let t0 = truth("b", None, &[]);
        let td = truth("d", None, &[10.0]);
        let a = agreement([
            (&short, Some(&t3)),
            (&empty, Some(&t0)),
            (&no_truth, None),
            (&failed, Some(&td)),
        ]);
        assert_eq!((a.chunks, a.mismatched, a.failed), (0, 3, 1));
        assert!(a.gap_errors.is_empty() && a.ttft_errors.is_empty());
        let r = CalibrationResult::new(&a, 8);
        assert_eq!(
            r.sentence(),
            "No request could be compared with the reference endpoint's ground truth. 3 \
             requests could not be matched, 1 failed."
        );
        // A chunk with no `written_ms` is left out of the server's count.
        let mut t = truth("a", None, &[10.0, 20.0]);
        t.chunks.push(TruthChunk { written_ms: None });
        assert_eq!(agreement([(&short, Some(&t))]).mismatched, 0);
    }

    #[test]
    fn the_sentence_reads_as_specified() {
        let r = CalibrationResult {
            requests: 32,
            chunks: 288,
            gaps: 256,
            mismatched: 0,
            failed: 0,
            streams: 8,
            ttft_error_p50_ms: Some(0.4),
            ttft_error_p99_ms: Some(1.2),
            itl_error_p50_ms: Some(0.3),
            itl_error_p99_ms: Some(2.1),
        };
        assert_eq!(
            r.sentence(),
            "This browser's timing error here: TTFT ±0.4 ms (P99 1.2), per-gap ITL ±0.3 ms \
             (P99 2.1) over 256 gaps at 8 streams."
        );
        let r = CalibrationResult {
            mismatched: 1,
            itl_error_p50_ms: Some(0.04),
            ..r
        };
        assert_eq!(
            r.sentence(),
            "This browser's timing error here: TTFT ±0.4 ms (P99 1.2), per-gap ITL ±0.04 ms \
             (P99 2.1) over 256 gaps at 8 streams. 1 request could not be matched."
        );
    }

    #[test]
    fn reads_the_servers_json() {
        let one = r#"{"id":"r-1","received_unix_ms":1700000000000.125,"model":"m",
            "flavour":"vllm","prompt_tokens":3,"planned_tokens":2,"queue_ms":0.1,
            "prefill_ms":1.0,"batch_sizes":[1,1],"preemptions":0,
            "chunks":[{"written_ms":5.5,"scheduled_ms":5.0,"text":"a","tokens":1},
                      {"written_ms":7.25,"scheduled_ms":7.0,"text":"b","tokens":1}],
            "outcome":"ok"}"#;
        let t = GroundTruth::from_json(one).unwrap();
        assert_eq!(t.id.as_deref(), Some("r-1"));
        assert_eq!(t.received_unix_ms, Some(1_700_000_000_000.125));
        assert_eq!(t.written_ms(), vec![5.5, 7.25]);
        let list = format!(r#"{{"object":"list","data":[{one},{one}]}}"#);
        assert_eq!(GroundTruth::list_from_json(&list).unwrap().len(), 2);
        assert!(matches!(
            GroundTruth::from_json("{\"id\":\"x\"}"),
            Err(CalibrationError::Json(_))
        ));
        assert!(GroundTruth::list_from_json("not json").is_err());
    }

    #[test]
    fn to_json_keeps_the_benchmark_figures() {
        let c = client("a", None, &[10.0, 23.0, 30.0]);
        let t = truth("a", Some(0.0), &[10.0, 20.0, 30.0]);
        let v = agreement([(&c, Some(&t))]).to_json();
        assert_eq!(v["chunks"], 3);
        assert_eq!(v["mismatched_requests"], 0);
        assert_eq!(v["failed_requests"], 0);
        assert_eq!(v["chunks_per_s"], 150.0);
        assert_eq!(
            v["itl_error"],
            json!({"n": 2, "p50_ms": 3.0, "p99_ms": 3.0, "max_ms": 3.0})
        );
        assert_eq!(v["first_chunk_delay"], json!({"n": 0}));
    }

    /// A request whose answer chunks arrive at `times` (ms after t0 = 0).
    fn record(times: &[f64]) -> RequestRecord {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(1.0, 200, Some("text/event-stream"));
        for (i, at) in times.iter().enumerate() {
            let chunk = format!(
                "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
            );
            r.on_read(*at, chunk.as_bytes());
        }
        let end = times.last().copied().unwrap_or(1.0) + 1.0;
        r.on_read(end, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        let tl = r.finish(end);
        RequestRecord::from_timeline(0, "c=1".into(), None, &tl, &MetricsConfig::default())
    }

    #[test]
    fn client_chunks_of_a_studio_request() {
        let mut rec = record(&[12.0, 20.5, 31.0]);
        rec.server_request_id = Some("r-7".into());
        rec.sent_epoch_ms = Some(1.7e12);
        let c = client_chunks(&rec);
        assert_eq!(c.chunk_ms, vec![12.0, 20.5, 31.0]);
        assert_eq!(c.request_id.as_deref(), Some("r-7"));
        assert_eq!(c.sent_epoch_ms, Some(1.7e12));
        assert!(c.ok);
        rec.outcome = Outcome::StreamError {
            message: "x".into(),
        };
        assert!(!client_chunks(&rec).ok);
    }

    #[test]
    fn calibrate_pairs_records_by_id() {
        let mut a = record(&[12.0, 20.0]);
        a.server_request_id = Some("a".into());
        let mut b = record(&[15.0, 25.0]);
        b.server_request_id = Some("b".into());
        let mut warm = record(&[1.0]);
        warm.warmup = true;
        let report = Report::new("r", Default::default(), "chat").with_requests(vec![a, b, warm]);
        // `b`'s second chunk is 2 ms later on the client than on the server.
        let truths = [
            truth("b", None, &[15.0, 23.0]),
            truth("a", None, &[12.0, 20.0]),
        ];
        let r = calibrate(&report, &truths, 2);
        assert_eq!((r.requests, r.chunks, r.gaps, r.mismatched), (2, 4, 2, 0));
        // |gap errors| 0 and 2: P50 1, P99 0.99 × 2.
        assert_eq!(r.itl_error_p50_ms, Some(1.0));
        assert!((r.itl_error_p99_ms.unwrap() - 1.98).abs() < 1e-9);
        assert_eq!(calibrate(&report, &truths[..1], 2).mismatched, 1);
    }

    proptest! {
        #[test]
        fn never_panics(
            chunks in proptest::collection::vec(
                (proptest::collection::vec(any::<f64>(), 0..5),
                 proptest::collection::vec(proptest::option::of(any::<f64>()), 0..5),
                 proptest::option::of(any::<f64>()), proptest::option::of(any::<f64>()),
                 any::<bool>()),
                0..6),
            streams in 0usize..100,
        ) {
            let pairs: Vec<(ClientChunks, GroundTruth)> = chunks
                .into_iter()
                .map(|(c, w, sent, received, ok)| {
                    (
                        ClientChunks { request_id: None, sent_epoch_ms: sent, chunk_ms: c, ok },
                        GroundTruth {
                            id: None,
                            received_unix_ms: received,
                            chunks: w.into_iter().map(|written_ms| TruthChunk { written_ms }).collect(),
                        },
                    )
                })
                .collect();
            let a = agreement(pairs.iter().map(|(c, t)| (c, Some(t))));
            let r = CalibrationResult::new(&a, streams);
            prop_assert!(!r.sentence().is_empty());
            prop_assert!(a.chunks_per_s >= 0.0 || a.chunks_per_s.is_nan());
            let _ = a.to_json();
        }
    }
}
