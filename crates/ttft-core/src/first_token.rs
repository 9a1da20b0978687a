//! The first token, taken apart: client TTFT = time to reach the server + the server's queue
//! + prefill + the rest of the server's path to its first write + first-chunk delivery.
//!
//! **Per request** ([`decompose`]), where the server says what it did ([`ServerSide`]):
//! - the reference endpoint's ground truth (`GET /v1/ground-truth/{id}`,
//!   [`ServerSide::from_truth_json`]): receipt on the wall clock, queue, prefill and the first
//!   chunk's write (ms after receipt). With the client's t0 on the wall clock too
//!   (`sent_epoch_ms`), **reach** = receipt − t0 and **delivery** = TTFT − reach − first write,
//!   both measured. Without it, reach + delivery = TTFT − first write is known only as a sum:
//!   each is given as half of it and [`FirstTokenParts::split_estimated`] says so.
//!   **Server other** = first write − queue − prefill (the first decode step, framing, the
//!   stream interval).
//! - llama.cpp's `timings` ([`ServerSide::from_timings`]): `prompt_ms` is the prefill; its
//!   queue and first write are unknown, so the rest of TTFT (network, queue, delivery) is
//!   [`FirstTokenParts::rest_ms`].
//!
//! **Per run** ([`RunFirstToken`]): the median of each part over the requests that have it
//! (medians of parts need not add up to the median TTFT), or, with only the server's
//! `/metrics` ([`RunFirstToken::from_histograms`]), the server's P50s from the run's histogram
//! deltas ([`crate::server_metrics`]): queue P50 and prefill P50, server other = server TTFT P50
//! − both (left out when negative), network + delivery = client TTFT P50 − server TTFT P50 (or, without a server TTFT
//! histogram, rest = client P50 − queue P50 − prefill P50). The **dominant** part is the
//! largest.
//!
//! **Disagreement.** The client's P50 TTFT minus the server's, the *gap*, is what the network
//! and the client's own path added. What the network explains, the *allowance*, is one round
//! trip: with per-request first writes, the smallest TTFT − first write of any request (the
//! fastest trip there and back the run saw); with histograms, the client's smallest TTFB
//! (headers back take at least a round trip; a server that sends headers only with its first
//! token makes this generous, never strict). With histograms the server's P50 is known only
//! to lie in its bucket, so the gap is taken against the bucket's **upper bound** (the largest
//! the server's median can be). The flag fires when
//! `gap > allowance + max(DISAGREE_MIN_MS, DISAGREE_SHARE × client P50)`; equality does not
//! fire. A server's histogram holds every request it served (other clients' too).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::dialect::ServerTimings;
use crate::finding::{Finding, Severity};
use crate::report::{Aggregates, Report, RequestRecord};
use crate::run_stats::RunStats;
use crate::server_metrics::{Concept, ServerSeries};
use crate::stats::percentile;

/// The disagreement margin's floor (ms): clock resolution and scheduling noise.
pub const DISAGREE_MIN_MS: f64 = 20.0;
/// The disagreement margin as a share of the client's P50 TTFT.
pub const DISAGREE_SHARE: f64 = 0.10;

/// What the server said about one request's first token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSide {
    /// When it received the request (ms since the Unix epoch).
    pub received_unix_ms: Option<f64>,
    /// Time in its queue (ms).
    pub queue_ms: Option<f64>,
    /// Prefill (ms).
    pub prefill_ms: Option<f64>,
    /// When it wrote the first chunk, ms after receipt.
    pub first_write_ms: Option<f64>,
}

/// The ground truth could not be read.
#[derive(Debug, Error)]
pub enum FirstTokenError {
    /// Not the reference endpoint's ground-truth JSON.
    #[error("not the reference endpoint's ground truth: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(Deserialize)]
struct TruthRecord {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    received_unix_ms: Option<f64>,
    #[serde(default)]
    queue_ms: Option<f64>,
    #[serde(default)]
    prefill_ms: Option<f64>,
    #[serde(default)]
    chunks: Vec<TruthChunk>,
}

#[derive(Deserialize)]
struct TruthChunk {
    #[serde(default)]
    written_ms: Option<f64>,
}

#[derive(Deserialize)]
struct TruthList {
    data: Vec<TruthRecord>,
}

impl From<TruthRecord> for ServerSide {
    fn from(t: TruthRecord) -> Self {
        Self {
            received_unix_ms: t.received_unix_ms,
            queue_ms: t.queue_ms,
            prefill_ms: t.prefill_ms,
            first_write_ms: t.chunks.first().and_then(|c| c.written_ms),
        }
    }
}

impl ServerSide {
    /// One ground-truth record of the reference endpoint (`GET /v1/ground-truth/{id}`).
    pub fn from_truth_json(text: &str) -> Result<Self, FirstTokenError> {
        Ok(serde_json::from_str::<TruthRecord>(text)?.into())
    }

    /// The list of `GET /v1/ground-truth?since=`, keyed by request id (records without one
    /// are left out).
    pub fn list_from_truth_json(text: &str) -> Result<HashMap<String, Self>, FirstTokenError> {
        Ok(serde_json::from_str::<TruthList>(text)?
            .data
            .into_iter()
            .filter_map(|t| Some((t.id.clone()?, t.into())))
            .collect())
    }

    /// llama.cpp's `timings`: `prompt_ms` is the prefill; nothing else is known.
    pub fn from_timings(t: &ServerTimings) -> Self {
        Self {
            prefill_ms: t.prompt_ms,
            ..Self::default()
        }
    }
}

/// One part of the first token's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// Client t0 → server receipt.
    Reach,
    /// The server's queue.
    Queue,
    /// Prefill.
    Prefill,
    /// The server's path from prefill to its first write.
    ServerOther,
    /// Server write → client stamp of the first chunk.
    Delivery,
    /// Reach + delivery, when only their sum is known.
    Network,
    /// What the known parts leave unexplained (network, queue, delivery where unknown).
    Rest,
}

impl Part {
    /// In words.
    pub fn label(self) -> &'static str {
        match self {
            Self::Reach => "reaching the server",
            Self::Queue => "the server's queue",
            Self::Prefill => "prefill",
            Self::ServerOther => "the server's first decode step and framing",
            Self::Delivery => "first-chunk delivery",
            Self::Network => "the network there and back",
            Self::Rest => "what the server does not account for (network, queue, delivery)",
        }
    }

    /// What to do when this part dominates.
    pub fn advice(self) -> &'static str {
        match self {
            Self::Reach | Self::Delivery | Self::Network => {
                "Measure from closer to the server (same region), reuse connections (HTTP keep-alive, HTTP/2), and check proxies and gateways on the path for buffering."
            }
            Self::Queue => {
                "Requests wait for a slot: lower the concurrency, add replicas, or raise the server's batch limits (vLLM --max-num-seqs, SGLang --max-running-requests)."
            }
            Self::Prefill => {
                "The prompt's compute dominates: shorten the prompt, turn on prefix caching for shared prefixes, or use chunked prefill / faster hardware."
            }
            Self::ServerOther => {
                "The server spends time after prefill before writing: check its stream interval, detokenization and any post-processing."
            }
            Self::Rest => {
                "The server's own figures do not cover it: scrape its /metrics (queue time) or measure from closer to it."
            }
        }
    }
}

/// One request's first token, taken apart (ms).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FirstTokenParts {
    /// The client's TTFT.
    pub ttft_ms: f64,
    /// The server's first write (after receipt), when known.
    pub server_first_write_ms: Option<f64>,
    /// Client t0 → receipt.
    pub reach_ms: Option<f64>,
    /// The server's queue.
    pub queue_ms: Option<f64>,
    /// Prefill.
    pub prefill_ms: Option<f64>,
    /// First write − queue − prefill.
    pub server_other_ms: Option<f64>,
    /// Write → client stamp.
    pub delivery_ms: Option<f64>,
    /// TTFT minus the known parts, when the server's figures do not reach its first write.
    pub rest_ms: Option<f64>,
    /// `reach_ms` and `delivery_ms` are each half of TTFT − first write (no shared clock).
    pub split_estimated: bool,
}

impl FirstTokenParts {
    /// The parts that are known, reach and delivery as one `Network` part when only their sum
    /// is.
    pub fn parts(&self) -> Vec<(Part, f64)> {
        let mut out = Vec::new();
        if self.split_estimated {
            if let (Some(r), Some(d)) = (self.reach_ms, self.delivery_ms) {
                out.push((Part::Network, r + d));
            }
        } else if let Some(r) = self.reach_ms {
            out.push((Part::Reach, r));
        }
        for (p, v) in [
            (Part::Queue, self.queue_ms),
            (Part::Prefill, self.prefill_ms),
            (Part::ServerOther, self.server_other_ms),
        ] {
            if let Some(v) = v {
                out.push((p, v));
            }
        }
        if !self.split_estimated
            && let Some(d) = self.delivery_ms
        {
            out.push((Part::Delivery, d));
        }
        if let Some(r) = self.rest_ms {
            out.push((Part::Rest, r));
        }
        out
    }
}

/// Takes one request's TTFT apart (see the module doc). `sent_epoch_ms` is the client's t0 on
/// the wall clock, when known.
pub fn decompose(ttft_ms: f64, sent_epoch_ms: Option<f64>, server: &ServerSide) -> FirstTokenParts {
    let mut p = FirstTokenParts {
        ttft_ms,
        server_first_write_ms: server.first_write_ms,
        reach_ms: None,
        queue_ms: server.queue_ms,
        prefill_ms: server.prefill_ms,
        server_other_ms: None,
        delivery_ms: None,
        rest_ms: None,
        split_estimated: false,
    };
    match server.first_write_ms {
        Some(w) => {
            if let (Some(q), Some(pf)) = (server.queue_ms, server.prefill_ms) {
                p.server_other_ms = Some(w - q - pf);
            }
            match (sent_epoch_ms, server.received_unix_ms) {
                (Some(s), Some(r)) => {
                    p.reach_ms = Some(r - s);
                    p.delivery_ms = Some(ttft_ms - (r - s) - w);
                }
                _ => {
                    let half = (ttft_ms - w) / 2.0;
                    p.reach_ms = Some(half);
                    p.delivery_ms = Some(half);
                    p.split_estimated = true;
                }
            }
            // Without queue and prefill the server's part is its first write as a whole.
            if p.queue_ms.is_none() && p.prefill_ms.is_none() {
                p.server_other_ms = Some(w);
            } else if p.server_other_ms.is_none() {
                let known = p.queue_ms.unwrap_or(0.0) + p.prefill_ms.unwrap_or(0.0);
                p.server_other_ms = Some(w - known);
            }
        }
        None => {
            let known = server.queue_ms.unwrap_or(0.0) + server.prefill_ms.unwrap_or(0.0);
            if server.queue_ms.is_some() || server.prefill_ms.is_some() {
                p.rest_ms = Some(ttft_ms - known);
            }
        }
    }
    p
}

/// One request of a report, with the server's record of it when there is one (else its
/// llama.cpp `timings`); `None` without a TTFT or anything from the server.
pub fn decompose_record(r: &RequestRecord, server: Option<&ServerSide>) -> Option<FirstTokenParts> {
    let ttft = r.metrics.ttft_ms?;
    let side = match server {
        Some(s) => *s,
        None => ServerSide::from_timings(r.metrics.server_timings.as_ref()?),
    };
    (side != ServerSide::default()).then(|| decompose(ttft, r.sent_epoch_ms, &side))
}

/// Where a run's decomposition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Per-request server data (ground truth, llama.cpp timings).
    PerRequest {
        /// Requests decomposed.
        requests: usize,
        /// Of which reach and delivery were measured on one wall clock.
        shared_clock: usize,
    },
    /// The server's histograms over the run.
    Histograms,
}

/// A run's first token, taken apart (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFirstToken {
    /// Where the figures came from.
    pub basis: Basis,
    /// The client's median TTFT (ms).
    pub client_ttft_p50_ms: f64,
    /// The server's median time to first token (ms), when known.
    pub server_ttft_p50_ms: Option<f64>,
    /// The largest the server's median can be (its bucket's upper bound; per request, the
    /// median itself).
    pub server_ttft_p50_upper_ms: Option<f64>,
    /// Median of each part (ms).
    pub parts: Vec<(Part, f64)>,
    /// The largest part.
    pub dominant: Option<Part>,
    /// What the network explains (one round trip, ms), and how it was measured.
    pub allowance_ms: Option<f64>,
    /// How the allowance was measured, in words.
    pub allowance_source: String,
    /// Client P50 − server P50 (upper bound) − allowance − margin (ms): above 0 the two disagree.
    pub excess_ms: Option<f64>,
}

fn median(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
    percentile(&v, 50.0)
}

/// The margin the gap may exceed the allowance by (ms).
pub fn margin_ms(client_p50_ms: f64) -> f64 {
    DISAGREE_MIN_MS.max(DISAGREE_SHARE * client_p50_ms)
}

fn dominant(parts: &[(Part, f64)]) -> Option<Part> {
    parts
        .iter()
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(p, _)| *p)
}

impl RunFirstToken {
    /// From per-request decompositions; `None` when there are none.
    pub fn from_parts(parts: &[FirstTokenParts]) -> Option<Self> {
        let client = median(parts.iter().map(|p| p.ttft_ms))?;
        let order = [
            Part::Reach,
            Part::Network,
            Part::Queue,
            Part::Prefill,
            Part::ServerOther,
            Part::Delivery,
            Part::Rest,
        ];
        let all: Vec<Vec<(Part, f64)>> = parts.iter().map(FirstTokenParts::parts).collect();
        let medians: Vec<(Part, f64)> = order
            .iter()
            .filter_map(|part| {
                let m = median(all.iter().flatten().filter(|(p, _)| p == part).map(|x| x.1))?;
                Some((*part, m))
            })
            .collect();
        let server = median(parts.iter().filter_map(|p| p.server_first_write_ms));
        let allowance = parts
            .iter()
            .filter_map(|p| Some(p.ttft_ms - p.server_first_write_ms?))
            .filter(|x| x.is_finite())
            .reduce(f64::min);
        let excess = match (server, allowance) {
            (Some(s), Some(a)) => Some(client - s - a - margin_ms(client)),
            _ => None,
        };
        Some(Self {
            basis: Basis::PerRequest {
                requests: parts.len(),
                shared_clock: parts
                    .iter()
                    .filter(|p| p.reach_ms.is_some() && !p.split_estimated)
                    .count(),
            },
            client_ttft_p50_ms: client,
            server_ttft_p50_ms: server,
            server_ttft_p50_upper_ms: server,
            dominant: dominant(&medians),
            parts: medians,
            allowance_ms: allowance,
            allowance_source: "the smallest TTFT − server first write of any request (the fastest round trip the run saw)".into(),
            excess_ms: excess,
        })
    }

    /// From the server's histograms over the run, the client's median TTFT and smallest TTFB
    /// (ms, the allowance); `None` when the histograms give neither queue, prefill nor TTFT.
    pub fn from_histograms(
        client_ttft_p50_ms: f64,
        client_ttfb_min_ms: Option<f64>,
        series: &ServerSeries,
    ) -> Option<Self> {
        let p50 = |c| series.latency(c).and_then(|l| l.p50_ms);
        let (queue, prefill, ttft) = (
            p50(Concept::QueueTime),
            p50(Concept::PrefillTime),
            p50(Concept::Ttft),
        );
        if queue.is_none() && prefill.is_none() && ttft.is_none() {
            return None;
        }
        let upper = series
            .latency(Concept::Ttft)
            .and_then(|l| l.p50_bucket_ms)
            .map(|b| b.1);
        let mut parts = Vec::new();
        if let Some(q) = queue {
            parts.push((Part::Queue, q));
        }
        if let Some(p) = prefill {
            parts.push((Part::Prefill, p));
        }
        match ttft {
            Some(t) => {
                // Medians of parts do not add up: a negative remainder says nothing.
                let other = t - queue.unwrap_or(0.0) - prefill.unwrap_or(0.0);
                if other >= 0.0 {
                    parts.push((Part::ServerOther, other));
                }
                parts.push((Part::Network, client_ttft_p50_ms - t));
            }
            None => parts.push((
                Part::Rest,
                client_ttft_p50_ms - queue.unwrap_or(0.0) - prefill.unwrap_or(0.0),
            )),
        }
        let excess = match (upper, client_ttfb_min_ms) {
            (Some(u), Some(a)) if u.is_finite() => {
                Some(client_ttft_p50_ms - u - a - margin_ms(client_ttft_p50_ms))
            }
            _ => None,
        };
        Some(Self {
            basis: Basis::Histograms,
            client_ttft_p50_ms,
            server_ttft_p50_ms: ttft,
            server_ttft_p50_upper_ms: upper,
            dominant: dominant(&parts),
            parts,
            allowance_ms: client_ttfb_min_ms,
            allowance_source:
                "the client's smallest TTFB (response headers take at least one round trip)".into(),
            excess_ms: excess,
        })
    }

    /// Whether client and server disagree beyond what the network explains.
    pub fn disagrees(&self) -> bool {
        self.excess_ms.is_some_and(|e| e > 0.0)
    }

    /// The findings: which part dominates (info), and the disagreement (warning) when it fires.
    pub fn findings(&self) -> Vec<Finding> {
        let fmt = crate::format::ms;
        let mut out = Vec::new();
        let basis = match self.basis {
            Basis::PerRequest {
                requests,
                shared_clock,
            } => format!(
                "medians over {requests} requests with the server's own figures ({shared_clock} on one wall clock)"
            ),
            Basis::Histograms => {
                "P50s from the server's /metrics histograms over the run (every request it served, interpolated within buckets)".into()
            }
        };
        let parts = self
            .parts
            .iter()
            .map(|(p, v)| format!("{} {}", p.label(), fmt(*v)))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(d) = self.dominant
            && let Some((_, v)) = self.parts.iter().find(|(p, _)| *p == d)
        {
            out.push(Finding {
                id: "first_token_parts".into(),
                severity: Severity::Info,
                title: format!(
                    "Most of the first token's wait is {}: {} of the {} median TTFT",
                    d.label(),
                    fmt(*v),
                    fmt(self.client_ttft_p50_ms)
                ),
                evidence: format!("{parts} ({basis})"),
                advice: d.advice().into(),
            });
        }
        if self.disagrees()
            && let (Some(s), Some(u), Some(a), Some(e)) = (
                self.server_ttft_p50_ms,
                self.server_ttft_p50_upper_ms,
                self.allowance_ms,
                self.excess_ms,
            )
        {
            let server = if u > s {
                format!("{} (at most {})", fmt(s), fmt(u))
            } else {
                fmt(s)
            };
            out.push(Finding {
                id: "client_server_disagree".into(),
                severity: Severity::Warning,
                title: format!(
                    "The client's first token is {} later than the network explains",
                    fmt(e)
                ),
                evidence: format!(
                    "client P50 TTFT {}, server P50 {server}; the network explains {} ({}) plus a margin of {}",
                    fmt(self.client_ttft_p50_ms),
                    fmt(a),
                    self.allowance_source,
                    fmt(margin_ms(self.client_ttft_p50_ms))
                ),
                advice: "Something between the server's write and the client adds time: a proxy or gateway buffering the stream, compression, a busy client (see client health), or a server histogram that times from a later point than receipt.".into(),
            });
        }
        out
    }
}

/// A report's first token taken apart from what it holds: its server scrapes (two or more)
/// for the server's histograms, else its requests' llama.cpp `timings`. Ground truth is not
/// part of a report: pass it to [`with_ground_truth`]. Reads the scrapes; a caller that has
/// the report's [`ServerSeries`] already passes it to [`of_report_with`].
pub fn of_report(report: &Report, agg: &Aggregates) -> Option<RunFirstToken> {
    of_report_with(report, agg, report.server_series().as_ref())
}

/// [`of_report`] with the report's server series ([`crate::run_stats::RunStats::server_series`]) computed once
/// by the caller; `None` when the run has no scrapes.
pub fn of_report_with(
    report: &Report,
    agg: &Aggregates,
    series: Option<&ServerSeries>,
) -> Option<RunFirstToken> {
    let client_p50 = agg.ttft?.p50;
    if let Some(series) = series
        && let Some(run) =
            RunFirstToken::from_histograms(client_p50, agg.ttfb.map(|s| s.min), series)
    {
        return Some(run);
    }
    let parts: Vec<FirstTokenParts> = report
        .headline_requests()
        .filter(|r| r.outcome.is_ok() && !r.warmup)
        .filter_map(|r| decompose_record(r, None))
        .collect();
    RunFirstToken::from_parts(&parts)
}

/// A report's first token taken apart with the reference endpoint's ground truth, keyed by
/// request id ([`ServerSide::list_from_truth_json`]); requests without a record fall back to
/// their llama.cpp `timings`.
pub fn with_ground_truth(
    report: &Report,
    truths: &HashMap<String, ServerSide>,
) -> Option<RunFirstToken> {
    let parts: Vec<FirstTokenParts> = report
        .headline_requests()
        .filter(|r| r.outcome.is_ok() && !r.warmup)
        .filter_map(|r| {
            let truth = r.server_request_id.as_ref().and_then(|id| truths.get(id));
            decompose_record(r, truth)
        })
        .collect();
    RunFirstToken::from_parts(&parts)
}

/// The report's first-token findings ([`of_report_with`]); what
/// the diagnosis (`diagnosis::diagnose_with`) adds.
pub fn report_findings(
    report: &Report,
    agg: &Aggregates,
    series: Option<&ServerSeries>,
) -> Vec<Finding> {
    of_report_with(report, agg, series)
        .map(|r| r.findings())
        .unwrap_or_default()
}
