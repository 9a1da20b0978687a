//! Diagnosis: rules that turn a run's statistics into plain-language findings with evidence.

use serde::{Deserialize, Serialize};

use crate::report::{Aggregates, Report};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Users will feel it.
    Warning,
    /// Numbers are unusable or users suffer.
    Problem,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id (`queueing`, `bandwidth`, …).
    pub id: String,
    /// Severity.
    pub severity: Severity,
    /// One-line statement.
    pub title: String,
    /// The numbers behind it.
    pub evidence: String,
    /// What to do.
    pub advice: String,
}

fn finding(id: &str, severity: Severity, title: &str, evidence: String, advice: &str) -> Finding {
    Finding {
        id: id.into(),
        severity,
        title: title.into(),
        evidence,
        advice: advice.into(),
    }
}

/// Applies every rule to a report.
pub fn diagnose(report: &Report, agg: &Aggregates) -> Vec<Finding> {
    let th = report.thresholds;
    let mut out = Vec::new();
    let ttft_bad = agg.ttft.is_some_and(|t| t.p95 > th.p95_ttft_ms);
    let itl_bad = agg.itl.is_some_and(|i| i.p95 > th.itl_ms);
    // TTFT spread: P95 far above P50 while ITL stays flat means waiting, not computing.
    let ttft_spread = agg
        .ttft
        .map(|t| if t.p50 > 0.0 { t.p95 / t.p50 } else { 1.0 })
        .unwrap_or(1.0);
    let itl_spread = agg
        .itl
        .map(|i| if i.p50 > 0.0 { i.p95 / i.p50 } else { 1.0 })
        .unwrap_or(1.0);
    if let (Some(t), Some(i)) = (agg.ttft, agg.itl) {
        if ttft_bad && itl_bad {
            out.push(finding(
                "prompt_or_batch",
                Severity::Problem,
                "Both TTFT and ITL are high: the prompt is too long or the batch too big",
                format!("P95 TTFT {:.0} ms (> {:.0}), P95 ITL {:.1} ms (> {:.0})", t.p95, th.p95_ttft_ms, i.p95, th.itl_ms),
                "Shorten the prompt (system prompt, few-shot, history), lower max concurrency / batch size, or add capacity.",
            ));
        } else if ttft_bad || (ttft_spread > 2.0 && itl_spread < 1.5 && t.p95 > 500.0) {
            out.push(finding(
                "queueing",
                if ttft_bad { Severity::Problem } else { Severity::Warning },
                "TTFT is high or spread while ITL is stable: requests wait in a queue",
                format!("P50 TTFT {:.0} ms, P95 {:.0} ms (×{:.1}); P50 ITL {:.1} ms, P95 {:.1} ms (×{:.1})", t.p50, t.p95, ttft_spread, i.p50, i.p95, itl_spread),
                "Scale out replicas, cap output length so long answers do not hold slots, use chunked prefill or prefill/decode disaggregation.",
            ));
        } else if itl_bad {
            out.push(finding(
                "bandwidth",
                Severity::Problem,
                "ITL is high while TTFT is fine: decoding is memory-bandwidth bound",
                format!("P95 ITL {:.1} ms (> {:.0}); P95 TTFT {:.0} ms", i.p95, th.itl_ms, t.p95),
                "Quantize weights or the KV cache (FP8/INT8/INT4), lower the batch size, or use a GPU with more bandwidth.",
            ));
        }
    }
    if agg.reasoning_first > 0 {
        out.push(finding(
            "reasoning_first",
            Severity::Info,
            "The first token is reasoning, not answer",
            format!("{} of {} requests streamed reasoning before the answer", agg.reasoning_first, agg.count),
            "Compare time to first answer token, not TTFT, with non-reasoning models; users may not see reasoning text.",
        ));
    }
    let hidden: Vec<u64> = report
        .measured()
        .filter_map(|r| r.metrics.reasoning_tokens.filter(|n| *n > 0))
        .collect();
    if !hidden.is_empty() && agg.reasoning_first == 0 {
        out.push(finding(
            "hidden_reasoning",
            Severity::Warning,
            "TTFT includes hidden reasoning",
            format!("{} requests report reasoning tokens (up to {}) but streamed no reasoning text", hidden.len(), hidden.iter().max().unwrap_or(&0)),
            "The wait before the first visible token is reasoning time: lower the reasoning effort or stream a reasoning summary.",
        ));
    }
    if agg.coalesced > 0 {
        let chunk = agg.chunk_gaps.map(|g| g.p50).unwrap_or(f64::NAN);
        let tok = agg.itl.map(|g| g.p50).unwrap_or(f64::NAN);
        out.push(finding(
            "coalescing",
            Severity::Warning,
            "Chunks carry several tokens: per-chunk gaps overstate ITL",
            format!("{} of {} requests coalesce; P50 chunk gap {:.1} ms vs P50 per-token ITL {:.1} ms", agg.coalesced, agg.count, chunk, tok),
            "Check the server's stream interval (vLLM/SGLang --stream-interval, TRT-LLM stream_interval) or speculative decoding; enable continuous_usage_stats for exact token counts.",
        ));
    }
    if let (Some(cost), n) = (agg.opener_cost_ms, agg.with_openers)
        && n > 0
    {
        out.push(finding(
                "openers",
                if cost > 200.0 { Severity::Warning } else { Severity::Info },
                "Boilerplate openers waste the first tokens",
                format!("{n} of {} answers start with an opener; it costs {cost:.0} ms on average before meaningful text", agg.count),
                "Tell the model in the system prompt to answer directly, or judge by the meaningful first token.",
            ));
    }
    if agg.with_stalls > 0 {
        out.push(finding(
            "stalls",
            Severity::Warning,
            "Streams stall",
            format!(
                "{} of {} requests had a gap above the stall threshold; max gap {:.0} ms",
                agg.with_stalls,
                agg.count,
                agg.chunk_gaps.map(|g| g.max).unwrap_or(0.0)
            ),
            "Look for preemption (KV cache full), GC pauses, or a proxy buffering the stream.",
        ));
    }
    if let Some(level) = agg.knee_level {
        out.push(finding(
            "knee",
            Severity::Info,
            "Latency bends under load",
            format!(
                "at level {level} P50 ITL or TTFT exceeds {:.1}× the single-stream value",
                agg.knee_factor
            ),
            "Keep production concurrency below the knee, or add capacity there.",
        ));
    }
    if let Some(q) = agg.browser_queue.filter(|q| q.p95 > 5.0) {
        out.push(finding(
            "browser_queue",
            Severity::Warning,
            "Requests waited in the browser before being sent",
            format!("browser queue P50 {:.1} ms, P95 {:.1} ms, max {:.0} ms (included in TTFT)", q.p50, q.p95, q.max),
            "Browsers open at most 6 HTTP/1.1 connections per origin: lower concurrency to 6, add shard URLs, or serve over HTTP/2.",
        ));
    }
    if !agg.errors.is_empty() {
        let total: usize = agg.errors.values().sum();
        out.push(finding(
            "errors",
            Severity::Problem,
            "Requests failed",
            format!("{total} of {} failed: {}", agg.count, agg.errors.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")),
            "Open the failed requests to see each message; errors are excluded from latency statistics.",
        ));
    }
    if agg.count > 0 && agg.tokens_from_server == 0 {
        out.push(finding(
            "estimated_tokens",
            Severity::Info,
            "Token counts are estimated",
            "the server sent no usage; tokens were counted one per chunk".into(),
            "Ask for usage (stream_options.include_usage, continuous_usage_stats) so TPOT is exact.",
        ));
    }
    out
}
