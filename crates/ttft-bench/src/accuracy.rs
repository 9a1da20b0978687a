//! The one comparison every client gets: what a client stamped for each chunk of a request
//! against the reference endpoint's record of when it wrote that chunk (its ground truth),
//! whichever client recorded it (the studio, the floor probe, a peer benchmark tool).

use anyhow::{Context, Result};
use serde_json::{Value, json};
use ttft_core::stats::Summary;

/// What one client recorded of one request, in its own clock.
#[derive(Debug, Clone)]
pub struct ClientRequest {
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

/// Client-observed minus ground truth for every chunk of every request.
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
    /// Requests whose chunk count differs from the server's (or with no id).
    pub mismatched: usize,
    /// Requests that failed.
    pub failed: usize,
    /// Chunks per second over the run, as the client saw them.
    pub chunks_per_s: f64,
}

impl Agreement {
    /// The figures `results.json` keeps.
    pub fn to_json(&self) -> Value {
        json!({
            "chunks": self.chunks, "mismatched_requests": self.mismatched,
            "failed_requests": self.failed, "chunks_per_s": self.chunks_per_s,
            "itl_error": errors(&self.gap_errors), "ttft_error": errors(&self.ttft_errors),
            "first_chunk_delay": errors(&self.first_chunk_delay),
            "request_send": errors(&self.request_send),
        })
    }
}

/// |error| percentiles of one measurement.
pub fn errors(v: &[f64]) -> Value {
    let abs: Vec<f64> = v.iter().map(|x| x.abs()).collect();
    match Summary::of(&abs) {
        Some(s) => json!({ "n": s.count, "p50_ms": s.p50, "p99_ms": s.p99, "max_ms": s.max }),
        None => json!({ "n": 0 }),
    }
}

/// The client's requests compared with the ground truth of the server on `port`.
///
/// `start_ms` of each request (for the chunk rate) is taken as its wall-clock t0 when known.
pub async fn agreement(port: u16, requests: &[ClientRequest]) -> Result<Agreement> {
    let mut gap_errors = Vec::new();
    let mut offsets = Vec::new();
    let mut first_chunk_delay = Vec::new();
    let mut request_send = Vec::new();
    let (mut chunks, mut mismatched, mut failed) = (0, 0, 0);
    let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in requests {
        if !r.ok {
            failed += 1;
            continue;
        }
        let Some(id) = &r.request_id else {
            mismatched += 1;
            continue;
        };
        let truth: Value = serde_json::from_str(
            &ttft_e2e::http_get(port, &format!("/v1/ground-truth/{id}")).await?,
        )?;
        let server: Vec<f64> = truth["chunks"]
            .as_array()
            .context("no chunks")?
            .iter()
            .filter_map(|c| c["written_ms"].as_f64())
            .collect();
        let client = &r.chunk_ms;
        if client.len() != server.len() || client.is_empty() {
            mismatched += 1;
            continue;
        }
        chunks += client.len();
        // On one wall clock (client t0 vs the server's receipt time) the offset is the first
        // chunk's delivery and stamping delay alone; without it, it also holds the time the
        // request took to reach the server.
        match (r.sent_epoch_ms, truth["received_unix_ms"].as_f64()) {
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
                if let Some(received) = truth["received_unix_ms"].as_f64() {
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
    Ok(Agreement {
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
    })
}
