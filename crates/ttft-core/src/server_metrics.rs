//! A server's own `/metrics` during a run: what the metric names of each server mean, the
//! scrapes a run keeps, and the time series and server-side latency percentiles they give.
//!
//! **Names.** [`DICTIONARY`] maps each server's Prometheus names to a studio [`Concept`]
//! (queue depth, running requests, KV-cache use, TTFT/ITL/E2E/queue/prefill histograms,
//! preemptions, prefix-cache hits). They were read from each server's source: vLLM
//! `vllm/v1/metrics/loggers.py`, SGLang `python/sglang/srt/metrics/collector.py`, TGI
//! `router/src/server.rs` and `backends/v3/src/{queue,backend}.rs`, llama.cpp
//! `tools/server/server.cpp` (`--metrics`), and our reference endpoint
//! (`ttft-server`'s `sim/truth.rs`, vLLM's names). Renamed metrics are listed under both
//! names, the current one first (vLLM 0.9 renamed `gpu_cache_usage_perc` →
//! `kv_cache_usage_perc` and `gpu_prefix_cache_{hits,queries}` → `prefix_cache_{hits,queries}`;
//! `time_per_output_token_seconds` became `inter_token_latency_seconds`; SGLang did the same
//! for its ITL): the first name a scrape holds is the one used. Counters are listed by their
//! sample name (`prometheus_client` appends `_total`), histograms by their family name.
//!
//! **Models.** Several models may share a server: samples with a `model_name` (vLLM, SGLang,
//! the reference endpoint) or `model` label of another model are left out when a model is
//! given; samples without such a label (TGI, llama.cpp: one model per server) are kept.
//! Samples of one name left after that (several engines, finish reasons) are summed, except
//! ratios, which are averaged.
//!
//! **Scrapes.** A [`Scrape`] is what one `GET /metrics` returned at a time on the page's clock,
//! kept raw ([`Scrape::new`] keeps only the lines of families the dictionary knows, so a run's
//! scrapes stay small). [`ServerSeries::from_scrapes`] recomputes everything from them:
//! - per concept a time series: gauges as read, counters as rates (per second, between
//!   consecutive scrapes, at the later one's time), the prefix-cache hit rate as hits over
//!   queries between consecutive scrapes;
//! - per latency histogram, the **delta** between the baseline and the last scrape (after the
//!   run): the observations the server made during the run, and their P50/P90/
//!   P99 by linear interpolation within the bucket that holds the rank, **the way Prometheus'
//!   `histogram_quantile` does** ([`histogram_quantile`]): the lower bound of the first bucket
//!   is 0, a rank in the `+Inf` bucket gives the highest finite bound. A histogram absent from
//!   the baseline (a server that creates it at its first request) counts from 0. The baseline
//!   is the scrape taken once the warm-ups were over ([`Scrape::after_warmups`]), so the
//!   server's figures cover the measured requests as the client's do; without one, the first
//!   scrape, and [`ServerSeries::coverage`] says the warm-ups are in ([`Coverage`]).
//! - the **work counters** (llama.cpp's prompt and generated tokens, the seconds spent on
//!   each, its decode calls), over the same scrapes, as [`ServerWork`]: the run's mean
//!   prefill rate and time per output token as the server timed them;
//! - a **counter reset** (a counter, a bucket or a `_count` lower than in the scrape before:
//!   the server restarted) is said in [`ServerSeries::reset_at_ms`]; the run's percentiles are
//!   then left out (a delta across a restart is garbage) and no rate is drawn across it.
//!
//! The server's histograms hold every request it served in that time, other clients' too.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::prometheus::{Exposition, MetricType, Sample, parse};

/// What a metric means to the studio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Concept {
    /// Requests waiting for a slot (gauge).
    QueueDepth,
    /// Requests in the running batch (gauge).
    Running,
    /// KV cache in use, 0–1 (gauge).
    KvCacheRatio,
    /// KV-cache tokens in use (gauge).
    KvCacheTokens,
    /// Requests preempted (counter; SGLang calls it retraction).
    Preemptions,
    /// Prompt tokens served by the prefix cache (counter).
    PrefixCacheHits,
    /// Prompt tokens looked up in the prefix cache (counter).
    PrefixCacheQueries,
    /// Prefix-cache hit rate 0–1 (a server's own gauge, or hits over queries).
    PrefixCacheHitRate,
    /// Server-side time to first token (histogram, s).
    Ttft,
    /// Server-side inter-token latency (histogram, s; TGI: each request's mean time per token).
    Itl,
    /// Server-side request latency (histogram, s).
    E2e,
    /// Time in the server's queue (histogram, s).
    QueueTime,
    /// Prefill time (histogram, s).
    PrefillTime,
    /// Prompt tokens processed (counter).
    PromptTokens,
    /// Seconds spent processing prompts, summed over the server's slots (counter, s).
    PromptSeconds,
    /// Output tokens generated (counter).
    GeneratedTokens,
    /// Seconds spent generating output tokens, summed over the server's slots (counter, s).
    GenerationSeconds,
    /// Forward passes (`llama_decode()` calls, prompt batches included; counter).
    Decodes,
}

impl Concept {
    /// A short name for charts and sentences.
    pub fn label(self) -> &'static str {
        match self {
            Self::QueueDepth => "queue depth",
            Self::Running => "running requests",
            Self::KvCacheRatio => "KV cache use",
            Self::KvCacheTokens => "KV-cache tokens",
            Self::Preemptions => "preemptions",
            Self::PrefixCacheHits => "prefix-cache hit tokens",
            Self::PrefixCacheQueries => "prefix-cache queried tokens",
            Self::PrefixCacheHitRate => "prefix-cache hit rate",
            Self::Ttft => "TTFT",
            Self::Itl => "ITL",
            Self::E2e => "E2E latency",
            Self::QueueTime => "queue time",
            Self::PrefillTime => "prefill time",
            Self::PromptTokens => "prompt tokens",
            Self::PromptSeconds => "prompt-processing seconds",
            Self::GeneratedTokens => "generated tokens",
            Self::GenerationSeconds => "generation seconds",
            Self::Decodes => "decode calls",
        }
    }

    /// The histogram concepts, in the order [`ServerSeries::latency`] lists them.
    pub const LATENCIES: [Concept; 5] = [
        Self::Ttft,
        Self::Itl,
        Self::E2e,
        Self::QueueTime,
        Self::PrefillTime,
    ];
}

/// Which server a name belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    /// vLLM (and the reference endpoint, which uses its names).
    Vllm,
    /// SGLang.
    Sglang,
    /// Hugging Face TGI.
    Tgi,
    /// llama.cpp `llama-server --metrics`.
    LlamaCpp,
    /// The studio's reference endpoint (`ttft-server`): vLLM's names plus its own.
    Reference,
}

impl ServerKind {
    /// Its name for people.
    pub fn name(self) -> &'static str {
        match self {
            Self::Vllm => "vLLM",
            Self::Sglang => "SGLang",
            Self::Tgi => "TGI",
            Self::LlamaCpp => "llama.cpp",
            Self::Reference => "the reference endpoint",
        }
    }
}

/// How a metric is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Read as is.
    Gauge,
    /// Cumulative: read as a rate.
    Counter,
    /// `_bucket`/`_sum`/`_count` of seconds.
    Histogram,
}

/// One name of the dictionary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricName {
    /// The server that writes it.
    pub server: ServerKind,
    /// What it means.
    pub concept: Concept,
    /// The sample name (gauges, counters) or family name (histograms).
    pub name: &'static str,
    /// How it is read.
    pub kind: Kind,
}

const fn m(server: ServerKind, concept: Concept, name: &'static str, kind: Kind) -> MetricName {
    MetricName {
        server,
        concept,
        name,
        kind,
    }
}

use Concept as C;
use Kind as K;
use ServerKind as S;

/// Every name the studio understands; within a concept the first name a scrape holds wins
/// (current names before their deprecated ones).
pub const DICTIONARY: &[MetricName] = &[
    // vLLM (v1 loggers.py; V0 used the same names for these).
    m(
        S::Vllm,
        C::QueueDepth,
        "vllm:num_requests_waiting",
        K::Gauge,
    ),
    m(S::Vllm, C::Running, "vllm:num_requests_running", K::Gauge),
    m(
        S::Vllm,
        C::KvCacheRatio,
        "vllm:kv_cache_usage_perc",
        K::Gauge,
    ),
    m(
        S::Vllm,
        C::KvCacheRatio,
        "vllm:gpu_cache_usage_perc",
        K::Gauge,
    ),
    m(
        S::Reference,
        C::KvCacheTokens,
        "vllm:kv_cache_usage_tokens",
        K::Gauge,
    ),
    m(
        S::Vllm,
        C::Preemptions,
        "vllm:num_preemptions_total",
        K::Counter,
    ),
    m(
        S::Vllm,
        C::PrefixCacheHits,
        "vllm:prefix_cache_hits_total",
        K::Counter,
    ),
    m(
        S::Vllm,
        C::PrefixCacheHits,
        "vllm:gpu_prefix_cache_hits_total",
        K::Counter,
    ),
    m(
        S::Vllm,
        C::PrefixCacheQueries,
        "vllm:prefix_cache_queries_total",
        K::Counter,
    ),
    m(
        S::Vllm,
        C::PrefixCacheQueries,
        "vllm:gpu_prefix_cache_queries_total",
        K::Counter,
    ),
    m(
        S::Vllm,
        C::PrefixCacheHitRate,
        "vllm:gpu_prefix_cache_hit_rate",
        K::Gauge,
    ),
    m(
        S::Vllm,
        C::Ttft,
        "vllm:time_to_first_token_seconds",
        K::Histogram,
    ),
    m(
        S::Vllm,
        C::Itl,
        "vllm:inter_token_latency_seconds",
        K::Histogram,
    ),
    m(
        S::Vllm,
        C::Itl,
        "vllm:time_per_output_token_seconds",
        K::Histogram,
    ),
    m(
        S::Vllm,
        C::E2e,
        "vllm:e2e_request_latency_seconds",
        K::Histogram,
    ),
    m(
        S::Vllm,
        C::QueueTime,
        "vllm:request_queue_time_seconds",
        K::Histogram,
    ),
    m(
        S::Vllm,
        C::PrefillTime,
        "vllm:request_prefill_time_seconds",
        K::Histogram,
    ),
    // SGLang (collector.py).
    m(S::Sglang, C::QueueDepth, "sglang:num_queue_reqs", K::Gauge),
    m(S::Sglang, C::Running, "sglang:num_running_reqs", K::Gauge),
    m(S::Sglang, C::KvCacheRatio, "sglang:token_usage", K::Gauge),
    m(
        S::Sglang,
        C::KvCacheTokens,
        "sglang:num_used_tokens",
        K::Gauge,
    ),
    m(
        S::Sglang,
        C::Preemptions,
        "sglang:num_retracted_requests_total",
        K::Counter,
    ),
    m(
        S::Sglang,
        C::PrefixCacheHitRate,
        "sglang:cache_hit_rate",
        K::Gauge,
    ),
    m(
        S::Sglang,
        C::Ttft,
        "sglang:time_to_first_token_seconds",
        K::Histogram,
    ),
    m(
        S::Sglang,
        C::Itl,
        "sglang:inter_token_latency_seconds",
        K::Histogram,
    ),
    m(
        S::Sglang,
        C::Itl,
        "sglang:time_per_output_token_seconds",
        K::Histogram,
    ),
    m(
        S::Sglang,
        C::E2e,
        "sglang:e2e_request_latency_seconds",
        K::Histogram,
    ),
    m(
        S::Sglang,
        C::QueueTime,
        "sglang:queue_time_seconds",
        K::Histogram,
    ),
    // TGI (router/src/server.rs, backends/v3): no TTFT histogram; its per-request mean time
    // per token stands for ITL.
    m(S::Tgi, C::QueueDepth, "tgi_queue_size", K::Gauge),
    m(S::Tgi, C::Running, "tgi_batch_current_size", K::Gauge),
    m(
        S::Tgi,
        C::Itl,
        "tgi_request_mean_time_per_token_duration",
        K::Histogram,
    ),
    m(S::Tgi, C::E2e, "tgi_request_duration", K::Histogram),
    m(
        S::Tgi,
        C::QueueTime,
        "tgi_request_queue_duration",
        K::Histogram,
    ),
    // llama.cpp (server.cpp, --metrics): gauges and counters, no histograms; the KV gauges
    // were dropped in later builds. Its work counters (prompt tokens and seconds, generated
    // tokens and seconds, decode calls) give the run's mean prefill rate and time per output
    // token ([`ServerWork`]).
    m(
        S::LlamaCpp,
        C::PromptTokens,
        "llamacpp:prompt_tokens_total",
        K::Counter,
    ),
    m(
        S::LlamaCpp,
        C::PromptSeconds,
        "llamacpp:prompt_seconds_total",
        K::Counter,
    ),
    m(
        S::LlamaCpp,
        C::GeneratedTokens,
        "llamacpp:tokens_predicted_total",
        K::Counter,
    ),
    m(
        S::LlamaCpp,
        C::GenerationSeconds,
        "llamacpp:tokens_predicted_seconds_total",
        K::Counter,
    ),
    m(
        S::LlamaCpp,
        C::Decodes,
        "llamacpp:n_decode_total",
        K::Counter,
    ),
    m(
        S::LlamaCpp,
        C::QueueDepth,
        "llamacpp:requests_deferred",
        K::Gauge,
    ),
    m(
        S::LlamaCpp,
        C::Running,
        "llamacpp:requests_processing",
        K::Gauge,
    ),
    m(
        S::LlamaCpp,
        C::KvCacheRatio,
        "llamacpp:kv_cache_usage_ratio",
        K::Gauge,
    ),
    m(
        S::LlamaCpp,
        C::KvCacheTokens,
        "llamacpp:kv_cache_tokens",
        K::Gauge,
    ),
];

/// The dictionary entry whose sample or family name `sample_name` is (`_bucket`, `_sum`,
/// `_count` of a histogram included).
pub fn lookup(sample_name: &str) -> Option<&'static MetricName> {
    DICTIONARY.iter().find(|d| match d.kind {
        K::Histogram => {
            sample_name == d.name
                || ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|s| sample_name.strip_suffix(s) == Some(d.name))
        }
        _ => sample_name == d.name,
    })
}

/// The server a scrape comes from, from the names it holds (the reference endpoint: vLLM's
/// names with its own `vllm:kv_cache_usage_tokens`); `None` when it holds none of them.
pub fn detect_server(e: &Exposition) -> Option<ServerKind> {
    let mut found = None;
    for s in &e.samples {
        if let Some(d) = lookup(&s.name) {
            if d.server == S::Reference {
                return Some(S::Reference);
            }
            found.get_or_insert(d.server);
        }
    }
    found
}

/// The metrics URL of an endpoint: its base URL without a trailing `/v1` (and `/`), plus
/// `/metrics` (`http://h:8000/v1` → `http://h:8000/metrics`). The user can edit it.
pub fn metrics_url(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let base = base.strip_suffix("/v1").unwrap_or(base);
    format!("{}/metrics", base.trim_end_matches('/'))
}

/// The origin of a URL (`scheme://host:port`, lower-cased), for comparing where requests go.
fn origin_of(url: &str) -> String {
    let url = url.trim();
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let end = url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| after_scheme + i);
    url[..end].to_ascii_lowercase()
}

/// Whether scraping `metrics_url` during a run would take one of the browser's HTTP/1.1
/// connections to an origin the run already fills: the metrics URL shares a plain-`http://`
/// origin with one of `bases`, and the run's `max_concurrency` spread over the bases gives
/// that origin all [`crate::scenario::HTTP1_CONNECTIONS_PER_ORIGIN`] connections. Then a
/// benchmark request could wait behind a scrape, so the studio scrapes only before and after.
pub fn scrape_would_share_connections(
    metrics_url: &str,
    bases: &[String],
    max_concurrency: usize,
) -> bool {
    let metrics = origin_of(metrics_url);
    if !metrics.starts_with("http://") || bases.is_empty() {
        return false;
    }
    let per_origin = max_concurrency.div_ceil(bases.len());
    per_origin >= crate::scenario::HTTP1_CONNECTIONS_PER_ORIGIN
        && bases.iter().any(|b| origin_of(b) == metrics)
}

/// What to do when the browser is refused the metrics URL (CORS, or it is not served), in
/// one paragraph naming each server's switch.
pub fn scrape_refused_advice(metrics_url: &str, page_origin: &str) -> String {
    format!(
        "The browser could not read {metrics_url}: the server is not reachable there, does not serve metrics, or does not allow this page's origin {page_origin} (CORS). \
         vLLM and SGLang serve /metrics on the API port (vLLM's --allowed-origins covers it); TGI serves it on its port with --cors-allow-origin {page_origin}; \
         llama.cpp serves it only when started with --metrics. \
         Otherwise put a proxy in front that adds Access-Control-Allow-Origin: {page_origin}, or turn server metrics off for this endpoint."
    )
}

/// One `GET /metrics` during a run, kept raw: the rest is recomputed from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scrape {
    /// When the answer was read, ms on the page's clock (the run's timeline clock).
    pub at_ms: f64,
    /// The exposition text (see [`Scrape::new`] for what is kept).
    pub text: String,
    /// Taken once the run's warm-ups were over and before its first measured request: the
    /// baseline of the server's percentiles, which then leave the warm-ups out as the
    /// client's figures do. Absent from the file when `false` (and from runs saved before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_warmups: bool,
}

impl Scrape {
    /// A scrape of `text` at `at_ms`, keeping only the lines of families the dictionary knows
    /// (their samples, HELP and TYPE lines); a vLLM scrape shrinks from ~60 kB to ~10 kB.
    pub fn new(at_ms: f64, text: &str) -> Self {
        let mut kept = String::new();
        for line in text.lines() {
            let t = line.trim_start();
            let name = if let Some(c) = t.strip_prefix('#') {
                let mut w = c.split_whitespace();
                match w.next() {
                    Some("HELP" | "TYPE") => w.next().unwrap_or(""),
                    _ => continue,
                }
            } else {
                t.split(['{', ' ', '\t']).next().unwrap_or("")
            };
            if lookup(name).is_some() {
                kept.push_str(line);
                kept.push('\n');
            }
        }
        Self {
            at_ms,
            text: kept,
            after_warmups: false,
        }
    }

    /// The same scrape marked as taken between the warm-ups and the measured requests.
    pub fn marked_after_warmups(self) -> Self {
        Self {
            after_warmups: true,
            ..self
        }
    }
}

/// Which requests the server-side percentiles ([`ServerSeries::latency`]) cover: the
/// histograms' growth from the baseline scrape to the last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Coverage {
    /// From the scrape before the run to the one after: the run had no warm-ups (or none was
    /// said), so that is every request it sent.
    #[default]
    WholeRun,
    /// From the scrape taken after the warm-ups to the one after the run: the measured
    /// requests, the `warmups` warm-ups left out as in the client's figures.
    Measured {
        /// Warm-up requests left out.
        warmups: usize,
    },
    /// From the scrape before the run: the `warmups` warm-ups are in, which the client's
    /// figures leave out (no scrape was taken between them and the measured requests).
    WithWarmups {
        /// Warm-up requests included.
        warmups: usize,
    },
}

impl Coverage {
    /// What the server's figures cover, in one sentence for the page.
    pub fn sentence(self) -> String {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        match self {
            Coverage::WholeRun => "The server's figures cover every request it served from the scrape before the run to the one after it (another client's too).".into(),
            Coverage::Measured { warmups } => format!(
                "The server's figures cover the measured requests only, as the browser's do: they start from the scrape taken after the {} (and count any other client's requests meanwhile).",
                match warmups {
                    0 => "warm-ups".to_owned(),
                    n => format!("{n} warm-up{}", plural(n)),
                }
            ),
            Coverage::WithWarmups { warmups } => format!(
                "The server's figures include the run's {warmups} warm-up request{}, which the browser's leave out: no scrape was taken between the warm-ups and the measured requests.",
                plural(warmups)
            ),
        }
    }
}

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Page clock (ms).
    pub at_ms: f64,
    /// Value (gauge as read; counter per second; ratio 0–1).
    pub value: f64,
}

/// A concept's time series over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConceptSeries {
    /// What it is.
    pub concept: Concept,
    /// The server's name it was read from.
    pub metric: String,
    /// `true` when the values are per-second rates of a counter.
    pub rate: bool,
    /// The points, in time order.
    pub points: Vec<Point>,
}

/// Server-side percentiles of one histogram over the run (from its delta).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerLatency {
    /// What it is.
    pub concept: Concept,
    /// The server's family name.
    pub metric: String,
    /// Observations during the run (requests; tokens for ITL).
    pub count: f64,
    /// Mean (ms), from `_sum`/`_count`.
    pub mean_ms: Option<f64>,
    /// Median (ms), interpolated within its bucket.
    pub p50_ms: Option<f64>,
    /// 90th percentile (ms).
    pub p90_ms: Option<f64>,
    /// 99th percentile (ms).
    pub p99_ms: Option<f64>,
    /// The bucket that holds the median, `(lower, upper)` in ms: the true median lies in it
    /// (upper is infinite when it is the `+Inf` bucket).
    pub p50_bucket_ms: Option<(f64, f64)>,
}

/// What a run's scrapes say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSeries {
    /// The server the names belong to, when any was recognised.
    pub server: Option<ServerKind>,
    /// Scrapes read.
    pub scrapes: usize,
    /// Lines the parser skipped, over all scrapes.
    pub skipped_lines: usize,
    /// One series per concept the scrapes hold.
    pub series: Vec<ConceptSeries>,
    /// Server-side latencies over the run, in [`Concept::LATENCIES`] order; empty after a
    /// counter reset or with fewer than two scrapes.
    pub latency: Vec<ServerLatency>,
    /// When a counter went back (page clock, ms): the server restarted during the run.
    pub reset_at_ms: Option<f64>,
    /// Sentences for the user (a reset, too few scrapes).
    pub notes: Vec<String>,
    /// Which requests [`ServerSeries::latency`] covers.
    #[serde(default)]
    pub coverage: Coverage,
    /// The server's work over the run from its work counters (llama.cpp), over the same
    /// scrapes as [`ServerSeries::latency`]; `None` without them, after a counter reset or
    /// with fewer than two scrapes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<ServerWork>,
}

/// What a server's work counters grew by over the run (llama.cpp's `prompt_tokens_total`,
/// `prompt_seconds_total`, `tokens_predicted_total`, `tokens_predicted_seconds_total`,
/// `n_decode_total`): from the baseline scrape to the last, as the latency percentiles are.
///
/// llama.cpp adds each slot's own prompt and generation time to its seconds counters, so with
/// several requests at once the seconds overlap: the rates are what one request saw (its
/// prefill tokens per second, its time per output token), not the server's total throughput.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerWork {
    /// Prompt tokens processed (prefix-cache hits are not processed, so not counted).
    pub prompt_tokens: Option<f64>,
    /// Seconds of prompt processing, summed over slots.
    pub prompt_seconds: Option<f64>,
    /// Output tokens generated.
    pub generated_tokens: Option<f64>,
    /// Seconds of generation, summed over slots.
    pub generation_seconds: Option<f64>,
    /// `llama_decode()` calls (prompt batches and generation steps).
    pub decodes: Option<f64>,
}

impl ServerWork {
    /// Mean prefill rate, prompt tokens per second of prompt processing.
    pub fn prefill_tokens_per_s(&self) -> Option<f64> {
        ratio(self.prompt_tokens?, self.prompt_seconds?)
    }

    /// Mean time per generated token (ms), as the server timed its generation.
    pub fn decode_ms_per_token(&self) -> Option<f64> {
        ratio(self.generation_seconds? * 1e3, self.generated_tokens?)
    }

    /// Generated tokens per `llama_decode()` call: how many streams a forward pass carried on
    /// average (a lower bound, since prompt batches are calls too).
    pub fn tokens_per_decode(&self) -> Option<f64> {
        ratio(self.generated_tokens?, self.decodes?)
    }

    /// The run's work in one sentence for the page (`None` when no rate can be given).
    pub fn sentence(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let (Some(n), Some(r)) = (self.prompt_tokens, self.prefill_tokens_per_s()) {
            parts.push(format!("prefilled {n:.0} prompt tokens at {r:.0} tokens/s"));
        }
        if let (Some(n), Some(t)) = (self.generated_tokens, self.decode_ms_per_token()) {
            let per_call = self
                .tokens_per_decode()
                .map(|k| format!(", {k:.1} per decode call"))
                .unwrap_or_default();
            parts.push(format!(
                "generated {n:.0} tokens at {t:.1} ms per token{per_call}"
            ));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "Over the run the server {} (its own timing; each request's time is counted apart, so these are what one request saw).",
                parts.join(" and ")
            )
        })
    }
}

/// `a / b` when both are finite and `b` is positive (no work, no rate).
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && a >= 0.0 && b > 0.0).then(|| a / b)
}

/// A histogram's cumulative buckets `(le, count)`, sorted by `le`, with its sum and count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Buckets {
    /// `(upper bound, cumulative count)`, `+Inf` last when present.
    pub le: Vec<(f64, f64)>,
    /// `_sum`.
    pub sum: f64,
    /// `_count`.
    pub count: f64,
}

/// The `q` quantile (0–1) of cumulative buckets, as Prometheus' `histogram_quantile`: rank
/// `q × total` (total = the `+Inf` bucket's count), the first bucket whose count reaches it,
/// linear interpolation between its lower bound (the previous bucket's bound, 0 for the
/// first) and its upper bound; a rank in the `+Inf` bucket gives the highest finite bound.
/// `None` without observations or without a `+Inf` bucket.
pub fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    quantile_bucket(q, buckets).map(|(v, _, _)| v)
}

/// [`histogram_quantile`] with the bucket it fell in: `(value, lower, upper)`.
fn quantile_bucket(q: f64, buckets: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let last = buckets.last()?;
    if last.0 != f64::INFINITY
        || buckets.len() < 2
        || last.1.is_nan()
        || last.1 <= 0.0
        || !(0.0..=1.0).contains(&q)
    {
        return None;
    }
    let rank = q * last.1;
    let b = buckets[..buckets.len() - 1]
        .iter()
        .position(|(_, c)| *c >= rank)
        .unwrap_or(buckets.len() - 1);
    if b == buckets.len() - 1 {
        let top = buckets[b - 1].0;
        return Some((top, top, f64::INFINITY));
    }
    let (end, count) = buckets[b];
    if b == 0 && end <= 0.0 {
        return Some((end, end, end));
    }
    let (start, prev) = if b == 0 { (0.0, 0.0) } else { buckets[b - 1] };
    let in_bucket = count - prev;
    let frac = if in_bucket > 0.0 {
        (rank - prev) / in_bucket
    } else {
        0.0
    };
    Some((start + (end - start) * frac, start, end))
}

/// A scrape read and filtered to one model.
struct Read {
    at_ms: f64,
    after_warmups: bool,
    samples: Vec<Sample>,
}

fn model_matches(s: &Sample, model: Option<&str>) -> bool {
    let Some(model) = model.filter(|m| !m.is_empty()) else {
        return true;
    };
    match s.label("model_name").or_else(|| s.label("model")) {
        Some(v) => v == model,
        None => true,
    }
}

impl Read {
    /// The summed (ratios: averaged) value of a gauge or counter sample name.
    fn scalar(&self, name: &str, average: bool) -> Option<f64> {
        let (mut sum, mut n) = (0.0, 0usize);
        for s in self.samples.iter().filter(|s| s.name == name) {
            sum += s.value;
            n += 1;
        }
        (n > 0).then(|| if average { sum / n as f64 } else { sum })
    }

    /// A histogram family's buckets summed by `le` (as `sum by (le)`), with sum and count.
    fn histogram(&self, family: &str) -> Option<Buckets> {
        let (bucket, sum_n, count_n) = (
            format!("{family}_bucket"),
            format!("{family}_sum"),
            format!("{family}_count"),
        );
        let mut le: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
        let mut out = Buckets::default();
        let mut any = false;
        for s in &self.samples {
            if s.name == bucket {
                let Some(bound) = s.label("le").and_then(crate::prometheus::parse_value) else {
                    continue;
                };
                if bound.is_nan() {
                    continue;
                }
                le.entry(order_key(bound)).or_insert((bound, 0.0)).1 += s.value;
                any = true;
            } else if s.name == sum_n {
                out.sum += s.value;
                any = true;
            } else if s.name == count_n {
                out.count += s.value;
                any = true;
            }
        }
        out.le = le.into_values().collect();
        any.then_some(out)
    }
}

/// A total order key of a non-NaN float (for `le` bounds).
fn order_key(v: f64) -> u64 {
    let b = v.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// The first dictionary name of `concept` that `reads` hold anywhere.
fn pick(reads: &[Read], concept: Concept) -> Option<&'static MetricName> {
    DICTIONARY
        .iter()
        .filter(|d| d.concept == concept)
        .find(|d| {
            reads.iter().any(|r| {
                r.samples.iter().any(|s| match d.kind {
                    K::Histogram => s.name.strip_suffix("_count") == Some(d.name),
                    _ => s.name == d.name,
                })
            })
        })
}

const GAUGES: [Concept; 5] = [
    C::QueueDepth,
    C::Running,
    C::KvCacheRatio,
    C::KvCacheTokens,
    C::PrefixCacheHitRate,
];
const COUNTERS: [Concept; 8] = [
    C::Preemptions,
    C::PrefixCacheHits,
    C::PrefixCacheQueries,
    C::PromptTokens,
    C::PromptSeconds,
    C::GeneratedTokens,
    C::GenerationSeconds,
    C::Decodes,
];

impl ServerSeries {
    /// Everything the scrapes of a run say, for `model` (`None` or empty: every model). The
    /// scrapes may come in any order; they are sorted by time. The first should be taken
    /// before the run's first request and the last after its last; the percentiles start from
    /// the last scrape marked [`Scrape::after_warmups`] before the last, else from the first.
    pub fn from_scrapes(scrapes: &[Scrape], model: Option<&str>) -> Self {
        Self::with_warmups(scrapes, model, 0)
    }

    /// [`ServerSeries::from_scrapes`] of a run that sent `warmups` warm-up requests first:
    /// [`ServerSeries::coverage`] says whether the percentiles leave them out.
    pub fn with_warmups(scrapes: &[Scrape], model: Option<&str>, warmups: usize) -> Self {
        let mut sorted: Vec<&Scrape> = scrapes.iter().filter(|s| s.at_ms.is_finite()).collect();
        sorted.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
        let mut out = ServerSeries {
            scrapes: sorted.len(),
            ..Default::default()
        };
        let mut reads = Vec::with_capacity(sorted.len());
        let mut server = None;
        for s in sorted {
            let e = parse(&s.text);
            out.skipped_lines += e.skipped;
            match (server, detect_server(&e)) {
                (_, Some(S::Reference)) => server = Some(S::Reference),
                (None, found) => server = found,
                _ => {}
            }
            let types = e.types;
            reads.push(Read {
                at_ms: s.at_ms,
                after_warmups: s.after_warmups,
                samples: e
                    .samples
                    .into_iter()
                    .filter(|x| model_matches(x, model))
                    .filter(|x| {
                        // A declared type that contradicts the dictionary is not that metric.
                        lookup(&x.name).is_some_and(|d| {
                            let family = match d.kind {
                                K::Histogram => d.name,
                                _ => x.name.as_str(),
                            };
                            let declared = types
                                .get(family)
                                .or_else(|| types.get(x.name.trim_end_matches("_total")));
                            declared.is_none_or(|t| {
                                matches!(
                                    (d.kind, t),
                                    (K::Gauge, MetricType::Gauge | MetricType::Untyped)
                                        | (K::Counter, MetricType::Counter | MetricType::Untyped)
                                        | (K::Histogram, MetricType::Histogram)
                                )
                            })
                        })
                    })
                    .collect(),
            });
        }
        out.server = server;
        out.reset_at_ms = find_reset(&reads);
        for concept in GAUGES {
            let Some(d) = pick(&reads, concept) else {
                continue;
            };
            let average = matches!(concept, C::KvCacheRatio | C::PrefixCacheHitRate);
            let points: Vec<Point> = reads
                .iter()
                .filter_map(|r| {
                    Some(Point {
                        at_ms: r.at_ms,
                        value: r.scalar(d.name, average)?,
                    })
                })
                .collect();
            out.series.push(ConceptSeries {
                concept,
                metric: d.name.into(),
                rate: false,
                points,
            });
        }
        for concept in COUNTERS {
            let Some(d) = pick(&reads, concept) else {
                continue;
            };
            let points = pairs(&reads)
                .filter_map(|(a, b)| {
                    let dv = b.scalar(d.name, false)? - a.scalar(d.name, false).unwrap_or(0.0);
                    let dt = (b.at_ms - a.at_ms) / 1e3;
                    (dv >= 0.0 && dt > 0.0).then(|| Point {
                        at_ms: b.at_ms,
                        value: dv / dt,
                    })
                })
                .collect();
            out.series.push(ConceptSeries {
                concept,
                metric: d.name.into(),
                rate: true,
                points,
            });
        }
        // vLLM's hit rate from its counters, where it has no gauge of its own.
        if let (Some(h), Some(q)) = (
            pick(&reads, C::PrefixCacheHits),
            pick(&reads, C::PrefixCacheQueries),
        ) && !out
            .series
            .iter()
            .any(|s| s.concept == C::PrefixCacheHitRate)
        {
            let points = pairs(&reads)
                .filter_map(|(a, b)| {
                    let dh = b.scalar(h.name, false)? - a.scalar(h.name, false).unwrap_or(0.0);
                    let dq = b.scalar(q.name, false)? - a.scalar(q.name, false).unwrap_or(0.0);
                    (dq > 0.0 && dh >= 0.0).then(|| Point {
                        at_ms: b.at_ms,
                        value: dh / dq,
                    })
                })
                .collect();
            out.series.push(ConceptSeries {
                concept: C::PrefixCacheHitRate,
                metric: format!("{} / {}", h.name, q.name),
                rate: false,
                points,
            });
        }
        if out.scrapes < 2 {
            out.notes.push(format!(
                "{} scrape(s) of the server's metrics: server-side percentiles need one before and one after the run",
                out.scrapes
            ));
        } else if let Some(at) = out.reset_at_ms {
            out.notes.push(format!(
                "the server's counters went back at {} on the run's clock (it restarted?): its percentiles over the run are left out, and no rate is drawn across the restart",
                crate::format::ms(at)
            ));
        } else if let Some(last) = reads.last() {
            // The deltas start after the warm-ups when a scrape was taken there.
            let marked = reads[..reads.len() - 1]
                .iter()
                .rposition(|r| r.after_warmups);
            out.coverage = match (marked, warmups) {
                (Some(_), _) => Coverage::Measured { warmups },
                (None, 0) => Coverage::WholeRun,
                (None, n) => Coverage::WithWarmups { warmups: n },
            };
            let first = &reads[marked.unwrap_or(0)];
            for concept in Concept::LATENCIES {
                if let Some(d) = pick(&reads, concept)
                    && let Some(l) = latency(concept, d.name, first, last)
                {
                    out.latency.push(l);
                }
            }
            out.work = work(&reads, first, last);
        }
        out
    }

    /// The series of `concept`, if the scrapes held it.
    pub fn series(&self, concept: Concept) -> Option<&ConceptSeries> {
        self.series.iter().find(|s| s.concept == concept)
    }

    /// The run's server-side latency of `concept`, if there is one.
    pub fn latency(&self, concept: Concept) -> Option<&ServerLatency> {
        self.latency.iter().find(|l| l.concept == concept)
    }
}

/// The work counters' growth from `first` to `last`; `None` when the scrapes hold none.
fn work(reads: &[Read], first: &Read, last: &Read) -> Option<ServerWork> {
    let delta = |concept: Concept| {
        let d = pick(reads, concept)?;
        let end = last.scalar(d.name, false)?;
        // A counter a server creates at its first request counts from 0.
        Some(end - first.scalar(d.name, false).unwrap_or(0.0)).filter(|v| *v >= 0.0)
    };
    let w = ServerWork {
        prompt_tokens: delta(C::PromptTokens),
        prompt_seconds: delta(C::PromptSeconds),
        generated_tokens: delta(C::GeneratedTokens),
        generation_seconds: delta(C::GenerationSeconds),
        decodes: delta(C::Decodes),
    };
    (w != ServerWork::default()).then_some(w)
}

fn pairs(reads: &[Read]) -> impl Iterator<Item = (&Read, &Read)> {
    reads.windows(2).map(|w| (&w[0], &w[1]))
}

/// The first scrape (time) where any counter, `_count`, `_sum` or bucket of a known metric is
/// lower than in the scrape before.
fn find_reset(reads: &[Read]) -> Option<f64> {
    pairs(reads).find_map(|(a, b)| {
        let before: BTreeMap<SeriesKey, f64> = a
            .samples
            .iter()
            .filter(|s| cumulative(&s.name))
            .map(|s| ((s.name.as_str(), key(s)), s.value))
            .collect();
        b.samples
            .iter()
            .filter(|s| cumulative(&s.name))
            .any(|s| {
                before
                    .get(&(s.name.as_str(), key(s)))
                    .is_some_and(|v| s.value < *v)
            })
            .then_some(b.at_ms)
    })
}

/// A sample's name and sorted labels: one series.
type SeriesKey<'a> = (&'a str, Vec<(&'a str, &'a str)>);

fn key(s: &Sample) -> Vec<(&str, &str)> {
    let mut k: Vec<(&str, &str)> = s
        .labels
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    k.sort_unstable();
    k
}

fn cumulative(name: &str) -> bool {
    lookup(name).is_some_and(|d| match d.kind {
        K::Counter => true,
        K::Histogram => name != d.name,
        K::Gauge => false,
    })
}

/// The delta of a histogram between two scrapes and its percentiles (ms).
fn latency(concept: Concept, family: &str, first: &Read, last: &Read) -> Option<ServerLatency> {
    let end = last.histogram(family)?;
    let start = first.histogram(family).unwrap_or_default();
    let before: BTreeMap<u64, f64> = start.le.iter().map(|(b, c)| (order_key(*b), *c)).collect();
    let le: Vec<(f64, f64)> = end
        .le
        .iter()
        .map(|(b, c)| (*b, c - before.get(&order_key(*b)).copied().unwrap_or(0.0)))
        .collect();
    let count = end.count - start.count;
    let q = |p| quantile_bucket(p, &le);
    let ms = |v: f64| v * 1e3;
    Some(ServerLatency {
        concept,
        metric: family.into(),
        count,
        mean_ms: (count > 0.0).then(|| ms((end.sum - start.sum) / count)),
        p50_ms: q(0.5).map(|v| ms(v.0)),
        p90_ms: q(0.9).map(|v| ms(v.0)),
        p99_ms: q(0.99).map(|v| ms(v.0)),
        p50_bucket_ms: q(0.5).map(|v| (ms(v.1), ms(v.2))),
    })
}
