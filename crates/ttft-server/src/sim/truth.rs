//! Ground truth (what the server did, per request) and Prometheus metrics.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write;
use std::sync::{Arc, Mutex};

use serde::Serialize;

/// One written chunk.
#[derive(Debug, Clone, Serialize)]
pub struct TruthChunk {
    /// When it was handed to the connection, ms after the request was received.
    pub written_ms: f64,
    /// When the step that produced its last token was due, ms after the request was received.
    pub scheduled_ms: f64,
    /// Text it carried.
    pub text: String,
    /// Tokens it carried.
    pub tokens: u32,
}

/// What the server did for one request.
#[derive(Debug, Clone, Serialize)]
pub struct Truth {
    /// Request id (also in the `x-request-id` response header).
    pub id: String,
    /// Wall-clock time the request was received (ms since the Unix epoch, µs precision): with
    /// the browser's `performance.timeOrigin` it places both sides on one clock.
    pub received_unix_ms: f64,
    /// Model.
    pub model: String,
    /// Flavour.
    pub flavour: String,
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Prompt tokens the model's prefix cache served (prefill computed only the rest); absent
    /// for models without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u32>,
    /// Planned output tokens.
    pub planned_tokens: u32,
    /// Time in the queue before its first prefill step (ms).
    pub queue_ms: Option<f64>,
    /// First prefill step (ms).
    pub prefill_ms: Option<f64>,
    /// Batch size when each token was produced.
    pub batch_sizes: Vec<usize>,
    /// Times it was preempted.
    pub preemptions: u32,
    /// Chunks as written.
    pub chunks: Vec<TruthChunk>,
    /// How it ended: `ok`, `error`, `dropped`, `cancelled`.
    pub outcome: String,
}

/// Prometheus histogram.
#[derive(Debug, Clone)]
struct Histogram {
    bounds: &'static [f64],
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: vec![0; bounds.len()],
            sum: 0.0,
            count: 0,
        }
    }
    fn observe(&mut self, v: f64) {
        for (i, b) in self.bounds.iter().enumerate() {
            if v <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += v;
        self.count += 1;
    }
    fn render(&self, out: &mut String, name: &str, help: &str, model: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            let _ = writeln!(
                out,
                "{name}_bucket{{model_name=\"{model}\",le=\"{b}\"}} {c}"
            );
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{model_name=\"{model}\",le=\"+Inf\"}} {}",
            self.count
        );
        let _ = writeln!(out, "{name}_sum{{model_name=\"{model}\"}} {}", self.sum);
        let _ = writeln!(out, "{name}_count{{model_name=\"{model}\"}} {}", self.count);
    }
}

// vLLM's bucket boundaries.
const TTFT_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];
const ITL_BUCKETS: &[f64] = &[
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
    40.0, 80.0,
];
const E2E_BUCKETS: &[f64] = &[
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
    480.0, 960.0, 1920.0, 7680.0,
];

#[derive(Debug, Clone)]
struct ModelMetrics {
    ttft: Histogram,
    itl: Histogram,
    e2e: Histogram,
    success: HashMap<String, u64>,
    prompt_tokens: u64,
    generation_tokens: u64,
    preemptions: u64,
    /// Prompt tokens looked up in the prefix cache and served by it (vLLM's
    /// `prefix_cache_queries` / `prefix_cache_hits`, in tokens); `None` for a model without one.
    prefix_cache: Option<PrefixCounts>,
}

/// A model's prefix-cache counters, in tokens.
#[derive(Debug, Clone, Copy, Default)]
struct PrefixCounts {
    queries: u64,
    hits: u64,
}

/// Ground-truth records (the latest [`TruthStore::CAPACITY`]) and metrics.
#[derive(Clone, Default)]
pub struct TruthStore {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    records: HashMap<String, Truth>,
    order: VecDeque<String>,
    metrics: HashMap<String, ModelMetrics>,
}

impl TruthStore {
    /// Records kept.
    pub const CAPACITY: usize = 20_000;

    /// Stores a finished record and updates the metrics.
    pub fn finish(&self, truth: Truth) {
        let mut g = self.inner.lock().expect("truth lock");
        let m = g
            .metrics
            .entry(truth.model.clone())
            .or_insert_with(|| ModelMetrics {
                ttft: Histogram::new(TTFT_BUCKETS),
                itl: Histogram::new(ITL_BUCKETS),
                e2e: Histogram::new(E2E_BUCKETS),
                success: HashMap::new(),
                prompt_tokens: 0,
                generation_tokens: 0,
                preemptions: 0,
                prefix_cache: None,
            });
        if let Some(first) = truth.chunks.first() {
            m.ttft.observe(first.written_ms / 1e3);
        }
        for w in truth.chunks.windows(2) {
            let per_token = (w[1].written_ms - w[0].written_ms) / f64::from(w[1].tokens.max(1));
            for _ in 0..w[1].tokens.max(1) {
                m.itl.observe(per_token / 1e3);
            }
        }
        if let Some(last) = truth.chunks.last() {
            m.e2e.observe(last.written_ms / 1e3);
        }
        *m.success.entry(truth.outcome.clone()).or_insert(0) += 1;
        m.prompt_tokens += u64::from(truth.prompt_tokens);
        m.generation_tokens += truth
            .chunks
            .iter()
            .map(|c| u64::from(c.tokens))
            .sum::<u64>();
        m.preemptions += u64::from(truth.preemptions);
        // A model with a prefix cache records its cached tokens (0 on a miss): every prompt
        // token was looked up, the cached ones were hits.
        if let Some(cached) = truth.cached_tokens {
            let p = m.prefix_cache.get_or_insert_with(PrefixCounts::default);
            p.queries += u64::from(truth.prompt_tokens);
            p.hits += u64::from(cached.min(truth.prompt_tokens));
        }
        g.order.push_back(truth.id.clone());
        g.records.insert(truth.id.clone(), truth);
        while g.order.len() > Self::CAPACITY {
            if let Some(old) = g.order.pop_front() {
                g.records.remove(&old);
            }
        }
    }

    /// The record of `id`.
    pub fn get(&self, id: &str) -> Option<Truth> {
        self.inner
            .lock()
            .expect("truth lock")
            .records
            .get(id)
            .cloned()
    }

    /// The kept records received at or after `since_unix_ms` (of `model` only, when given), in
    /// the order the server received them: for clients that cannot keep `x-request-id` and
    /// match their requests to the records by what they saw (text, timing).
    pub fn since(&self, since_unix_ms: f64, model: Option<&str>) -> Vec<Truth> {
        let g = self.inner.lock().expect("truth lock");
        let mut out: Vec<Truth> = g
            .records
            .values()
            .filter(|t| t.received_unix_ms >= since_unix_ms)
            .filter(|t| model.is_none_or(|m| t.model == m))
            .cloned()
            .collect();
        out.sort_by(|a, b| a.received_unix_ms.total_cmp(&b.received_unix_ms));
        out
    }

    /// Prometheus text with vLLM-compatible names; `loads` are `(model, running, waiting, kv)`.
    pub fn prometheus(&self, loads: &[(&str, usize, usize, u32)]) -> String {
        let g = self.inner.lock().expect("truth lock");
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge"
        );
        for (m, r, _, _) in loads {
            let _ = writeln!(out, "vllm:num_requests_running{{model_name=\"{m}\"}} {r}");
        }
        let _ = writeln!(
            out,
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge"
        );
        for (m, _, w, _) in loads {
            let _ = writeln!(out, "vllm:num_requests_waiting{{model_name=\"{m}\"}} {w}");
        }
        let _ = writeln!(
            out,
            "# HELP vllm:kv_cache_usage_tokens KV-cache tokens in use.\n# TYPE vllm:kv_cache_usage_tokens gauge"
        );
        for (m, _, _, kv) in loads {
            let _ = writeln!(out, "vllm:kv_cache_usage_tokens{{model_name=\"{m}\"}} {kv}");
        }
        let mut names: Vec<&String> = g.metrics.keys().collect();
        names.sort();
        for name in names {
            let m = &g.metrics[name];
            m.ttft.render(
                &mut out,
                "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.",
                name,
            );
            m.itl.render(
                &mut out,
                "vllm:inter_token_latency_seconds",
                "Histogram of inter-token latency in seconds.",
                name,
            );
            m.e2e.render(
                &mut out,
                "vllm:e2e_request_latency_seconds",
                "Histogram of end to end request latency in seconds.",
                name,
            );
            let _ = writeln!(out, "# TYPE vllm:request_success_total counter");
            let mut reasons: Vec<_> = m.success.iter().collect();
            reasons.sort();
            for (r, c) in reasons {
                let _ = writeln!(
                    out,
                    "vllm:request_success_total{{model_name=\"{name}\",finished_reason=\"{r}\"}} {c}"
                );
            }
            let _ = writeln!(
                out,
                "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{{model_name=\"{name}\"}} {}",
                m.prompt_tokens
            );
            let _ = writeln!(
                out,
                "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{{model_name=\"{name}\"}} {}",
                m.generation_tokens
            );
            let _ = writeln!(
                out,
                "# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{{model_name=\"{name}\"}} {}",
                m.preemptions
            );
            if let Some(p) = m.prefix_cache {
                let _ = writeln!(
                    out,
                    "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.\n# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total{{model_name=\"{name}\"}} {}",
                    p.queries
                );
                let _ = writeln!(
                    out,
                    "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.\n# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total{{model_name=\"{name}\"}} {}",
                    p.hits
                );
            }
        }
        out
    }
}
