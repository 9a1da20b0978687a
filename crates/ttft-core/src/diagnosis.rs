//! Diagnosis: rules that turn a run's statistics into plain-language findings with evidence.

pub use crate::finding::{Finding, Severity};
use crate::report::{Aggregates, GroupStats, Report, RequestRecord};
use crate::run_stats::RunStats;
use crate::scenario::ScenarioKind;
use crate::stats::Thresholds;

mod told;

/// A successful request carries "several tokens per chunk" from this many on average.
pub const COALESCE_MIN_TOKENS_PER_CHUNK: f64 = 1.5;
/// The P50 chunk gap must be at least this multiple of the P50 per-token ITL to show coalescing…
pub const COALESCE_MIN_GAP_RATIO: f64 = 1.2;
/// …and larger by at least this much (ms), so that clock noise on tiny gaps does not count.
pub const COALESCE_MIN_GAP_DIFF_MS: f64 = 0.5;
/// ITL whose P95 stays under this multiple of its P50 is stable.
pub const STABLE_ITL_SPREAD: f64 = 1.5;
/// Openers that cost less than this on average (ms) waste no measurable time.
pub const OPENER_MIN_COST_MS: f64 = 1.0;
/// Browser queueing above this P95 (ms) is worth a finding.
pub const BROWSER_QUEUE_P95_MS: f64 = 5.0;
/// A probe's median TTFT in the highest third of load at least this multiple of the lowest
/// third's means the load slows the user down.
pub const PROBE_RISE_FACTOR: f64 = 1.5;

/// Later rounds of a conversation whose prompts the prefix cache served below this share (of
/// their prompt tokens) were mostly prefilled again.
pub const CACHE_LOW_HIT_RATE: f64 = 0.5;
/// TTFT "grows with the prompt" when the fitted TTFT at the longest prompt is at least this
/// multiple of the fitted TTFT at the shortest (a long shared prefix makes the growth of a
/// conversation a small share of its prompt, so a small multiple)…
pub const PROMPT_GROWTH_FACTOR: f64 = 1.05;
/// …at least this many ms above it, so that clock noise on fast servers does not count…
pub const PROMPT_GROWTH_MIN_MS: f64 = 10.0;
/// …and the line explains at least this share of TTFT's variance (r²): scattered TTFTs with a
/// slope by chance are not growth.
pub const PROMPT_GROWTH_MIN_R2: f64 = 0.5;

fn finding(id: &str, severity: Severity, title: &str, evidence: String, advice: &str) -> Finding {
    Finding {
        id: id.into(),
        severity,
        title: title.into(),
        evidence,
        advice: advice.into(),
    }
}

/// Applies every rule to a report. Each finding fires only when the numbers it quotes as
/// evidence support its statement; statistics about latency come from successful requests,
/// as in [`Aggregates`]. Reads the report's server scrapes; a caller that has its
/// [`ServerSeries`](crate::server_metrics::ServerSeries) already calls [`diagnose_with`].
pub fn diagnose(report: &Report, agg: &Aggregates) -> Vec<Finding> {
    diagnose_with(report, agg, report.server_series().as_ref())
}

/// [`diagnose`] with the report's server series
/// ([`RunStats::server_series`]) computed once
/// by the caller (`None`: the run has no scrapes).
pub fn diagnose_with(
    report: &Report,
    agg: &Aggregates,
    server: Option<&crate::server_metrics::ServerSeries>,
) -> Vec<Finding> {
    // The headline's requests: in a probe under load, the probe's.
    let ok: Vec<&RequestRecord> = report
        .headline_requests()
        .filter(|r| r.outcome.is_ok())
        .collect();
    let mut out = Vec::new();
    out.extend(probe_finding(report));
    out.extend(prompt_cache_finding(report, &ok));
    out.extend(crate::first_token::report_findings(report, agg, server));
    out.extend(latency_finding(agg, report.thresholds));
    out.extend(reasoning_first_finding(&ok));
    out.extend(hidden_reasoning_finding(&ok));
    out.extend(coalescing_finding(agg, &ok));
    out.extend(openers_finding(agg, ok.len()));
    out.extend(stalls_finding(&ok));
    out.extend(knee_finding(report, agg));
    out.extend(browser_queue_finding(agg));
    out.extend(crate::schedule::report_finding(report));
    out.extend(errors_finding(agg));
    out.extend(cut_by_client_finding(agg));
    out.extend(not_streamed_finding(agg));
    out.extend(estimated_tokens_finding(agg, ok.len()));
    out
}

/// What TTFT and ITL against their thresholds and their spreads say, at most one of:
/// `prompt_or_batch` (both high), `queueing` (TTFT high or spread, ITL stable), `bandwidth`
/// (ITL high, TTFT fine) or `slow_first_token` (TTFT high, ITL unsteady).
fn latency_finding(agg: &Aggregates, th: Thresholds) -> Option<Finding> {
    let (t, i) = (agg.ttft?, agg.itl?);
    let ttft_bad = t.p95 > th.p95_ttft_ms;
    let itl_bad = i.p95 > th.itl_ms;
    // TTFT spread: P95 far above P50 while ITL stays flat means waiting, not computing.
    let ttft_spread = if t.p50 > 0.0 { t.p95 / t.p50 } else { 1.0 };
    let itl_spread = if i.p50 > 0.0 { i.p95 / i.p50 } else { 1.0 };
    if ttft_bad && itl_bad {
        Some(finding(
            "prompt_or_batch",
            Severity::Problem,
            "Both TTFT and ITL are high: the prompt is too long or the batch too big",
            format!(
                "P95 TTFT {:.0} ms (> {:.0}), P95 ITL {:.1} ms (> {:.0})",
                t.p95, th.p95_ttft_ms, i.p95, th.itl_ms
            ),
            "Shorten the prompt (system prompt, few-shot, history), lower max concurrency / batch size, or add capacity.",
        ))
    } else if itl_spread < STABLE_ITL_SPREAD && (ttft_bad || (ttft_spread > 2.0 && t.p95 > 500.0)) {
        // The statement says ITL is stable: an unstable ITL is not evidence of queueing.
        Some(finding(
            "queueing",
            if ttft_bad {
                Severity::Problem
            } else {
                Severity::Warning
            },
            "TTFT is high or spread while ITL is stable: requests wait in a queue",
            format!(
                "P50 TTFT {:.0} ms, P95 {:.0} ms (×{:.1}); P50 ITL {:.1} ms, P95 {:.1} ms (×{:.1})",
                t.p50, t.p95, ttft_spread, i.p50, i.p95, itl_spread
            ),
            "Scale out replicas, cap output length so long answers do not hold slots, use chunked prefill or prefill/decode disaggregation.",
        ))
    } else if itl_bad {
        Some(finding(
            "bandwidth",
            Severity::Problem,
            "ITL is high while TTFT is fine: decoding is memory-bandwidth bound",
            format!(
                "P95 ITL {:.1} ms (> {:.0}); P95 TTFT {:.0} ms",
                i.p95, th.itl_ms, t.p95
            ),
            "Quantize weights or the KV cache (FP8/INT8/INT4), lower the batch size, or use a GPU with more bandwidth.",
        ))
    } else if ttft_bad {
        // TTFT over its threshold while ITL is unsteady (but under its own): the wait is
        // real, its cause is not one the numbers single out.
        Some(finding(
            "slow_first_token",
            Severity::Problem,
            "The first token is slow",
            format!(
                "P95 TTFT {:.0} ms (> {:.0}); ITL is unsteady: P50 {:.1} ms, P95 {:.1} ms (×{:.1})",
                t.p95, th.p95_ttft_ms, i.p50, i.p95, itl_spread
            ),
            "Compare a run at lower concurrency (queueing) and a shorter prompt (prefill); look at the stalls in the request table.",
        ))
    } else {
        None
    }
}

/// `reasoning_first`: successful requests whose first token was reasoning.
fn reasoning_first_finding(ok: &[&RequestRecord]) -> Option<Finding> {
    let reasoning_first = ok
        .iter()
        .filter(|r| r.metrics.ttft_kind == Some(crate::metrics::TtftKind::Reasoning))
        .count();
    (reasoning_first > 0).then(|| finding(
        "reasoning_first",
        Severity::Info,
        "The first token is reasoning, not answer",
        format!("{reasoning_first} of {} successful requests streamed reasoning before the answer", ok.len()),
        "Compare time to first answer token, not TTFT, with non-reasoning models; users may not see reasoning text.",
    ))
}

/// `hidden_reasoning`: the server counted reasoning tokens, yet the request streamed no
/// reasoning text at all before (or after) its first token.
fn hidden_reasoning_finding(ok: &[&RequestRecord]) -> Option<Finding> {
    let hidden: Vec<u64> = ok
        .iter()
        .filter(|r| {
            r.metrics.ttft_ms.is_some()
                && r.metrics.first_reasoning_ms.is_none()
                && r.metrics.reasoning_text.is_empty()
        })
        .filter_map(|r| r.metrics.reasoning_tokens.filter(|n| *n > 0))
        .collect();
    (!hidden.is_empty()).then(|| finding(
        "hidden_reasoning",
        Severity::Warning,
        "TTFT includes hidden reasoning",
        format!("{} of {} successful requests report reasoning tokens (up to {}) but streamed no reasoning text", hidden.len(), ok.len(), hidden.iter().max().unwrap_or(&0)),
        "The wait before the first visible token is reasoning time: lower the reasoning effort or stream a reasoning summary.",
    ))
}

/// `coalescing`, which needs both halves of its evidence: successful requests whose chunks
/// clearly carry several tokens, and per-chunk gaps measurably longer than per-token gaps.
fn coalescing_finding(agg: &Aggregates, ok: &[&RequestRecord]) -> Option<Finding> {
    let several: Vec<f64> = ok
        .iter()
        .filter(|r| r.metrics.streamed)
        .filter_map(|r| tokens_per_chunk(r))
        .filter(|t| *t >= COALESCE_MIN_TOKENS_PER_CHUNK)
        .collect();
    // The per-token time: the per-token ITL where chunks carried their token counts, else TPOT
    // from the final usage (without counts the per-token ITL equals the chunk gap).
    let counts_known = ok
        .iter()
        .any(|r| r.metrics.gap_tokens.iter().any(Option::is_some));
    let per_token = if counts_known {
        agg.itl.map(|i| i.p50)
    } else {
        agg.tpot.or(agg.itl).map(|t| t.p50)
    };
    let (Some(chunk), Some(tok_p50)) = (agg.chunk_gaps, per_token) else {
        return None;
    };
    let gaps_overstate = chunk.p50 >= tok_p50 * COALESCE_MIN_GAP_RATIO
        && chunk.p50 - tok_p50 >= COALESCE_MIN_GAP_DIFF_MS;
    if several.is_empty() || !gaps_overstate {
        return None;
    }
    let most = several.iter().copied().fold(0.0, f64::max);
    Some(finding(
        "coalescing",
        Severity::Warning,
        "Chunks carry several tokens: per-chunk gaps overstate ITL",
        format!(
            "{} of {} successful requests carry {COALESCE_MIN_TOKENS_PER_CHUNK:.1} or more tokens per chunk (up to {most:.1}); P50 chunk gap {:.1} ms vs P50 per-token time {:.1} ms",
            several.len(),
            ok.len(),
            chunk.p50,
            tok_p50
        ),
        "Check the server's stream interval (vLLM/SGLang --stream-interval, TRT-LLM stream_interval) or speculative decoding; enable continuous_usage_stats for exact token counts.",
    ))
}

/// `openers`: answers that start with boilerplate costing at least [`OPENER_MIN_COST_MS`] on
/// average (`ok_count`: the successful requests).
fn openers_finding(agg: &Aggregates, ok_count: usize) -> Option<Finding> {
    let cost = agg.opener_cost_ms.filter(|c| *c >= OPENER_MIN_COST_MS)?;
    (agg.with_openers > 0).then(|| finding(
        "openers",
        if cost > 200.0 { Severity::Warning } else { Severity::Info },
        "Boilerplate openers waste the first tokens",
        format!("{} of {ok_count} successful answers start with an opener; it costs {cost:.0} ms on average before meaningful text", agg.with_openers),
        "Tell the model in the system prompt to answer directly, or judge by the meaningful first token.",
    ))
}

/// `stalls`: successful requests with a gap above the stall threshold.
fn stalls_finding(ok: &[&RequestRecord]) -> Option<Finding> {
    let stalled: Vec<f64> = ok
        .iter()
        .filter_map(|r| r.metrics.stalls.iter().map(|s| s.gap_ms).reduce(f64::max))
        .collect();
    (!stalled.is_empty()).then(|| finding(
        "stalls",
        Severity::Warning,
        "Streams stall",
        format!(
            "{} of {} successful requests had a gap above the stall threshold; longest {:.0} ms",
            stalled.len(),
            ok.len(),
            stalled.iter().copied().fold(0.0, f64::max)
        ),
        "Look for preemption (KV cache full), GC pauses, or a proxy buffering the stream.",
    ))
}

/// `knee`: latency bends at a level of load, when the run's levels are load (those of a prompt
/// sweep or of a conversation's rounds are not). The bend is stated only when the level's
/// requests are told from the first level's ([`told::Shift`]); otherwise the finding says it
/// is not told from noise yet and how many requests per level would tell.
fn knee_finding(report: &Report, agg: &Aggregates) -> Option<Finding> {
    let load_levels = !report
        .scenario_kind()
        .is_some_and(|k| k == ScenarioKind::PromptSweep || k.is_conversation());
    let level = agg.knee_level.filter(|_| load_levels)?;
    let (evidence, told) = knee_evidence(report, agg, level)?;
    Some(if told {
        finding(
            "knee",
            Severity::Info,
            "Latency bends under load",
            evidence,
            "Keep production concurrency below the knee, or add capacity there.",
        )
    } else {
        finding(
            "knee",
            Severity::Info,
            "Latency may bend under load: not told from noise yet",
            evidence,
            "Run more requests per level to tell whether the rise is real before planning capacity around it.",
        )
    })
}

/// Whether the run's knee ([`Aggregates::knee_level`]) is told from noise: some P50 past the
/// factor there whose level's requests are told higher than the first level's, as the `knee`
/// finding states it. `None` without a knee.
pub fn knee_told(report: &Report, agg: &Aggregates) -> Option<bool> {
    knee_evidence(report, agg, agg.knee_level?).map(|(_, told)| told)
}

/// `browser_queue`: requests held in the browser, P95 above [`BROWSER_QUEUE_P95_MS`].
fn browser_queue_finding(agg: &Aggregates) -> Option<Finding> {
    let q = agg.browser_queue.filter(|q| q.p95 > BROWSER_QUEUE_P95_MS)?;
    Some(finding(
        "browser_queue",
        Severity::Warning,
        "Requests waited in the browser before being sent",
        format!(
            "browser queue P50 {:.1} ms, P95 {:.1} ms, max {:.0} ms (included in TTFT)",
            q.p50, q.p95, q.max
        ),
        "Browsers open at most 6 HTTP/1.1 connections per origin: lower concurrency to 6, add shard URLs, or serve over HTTP/2.",
    ))
}

/// `errors`: failed requests, by kind.
fn errors_finding(agg: &Aggregates) -> Option<Finding> {
    if agg.errors.is_empty() {
        return None;
    }
    let total = agg.failed();
    Some(finding(
        "errors",
        Severity::Problem,
        "Requests failed",
        format!(
            "{total} of {} failed: {}",
            agg.judged(),
            agg.errors
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "Open the failed requests to see each message; errors are excluded from latency statistics.",
    ))
}

/// `cut_by_client`: requests the client cut at its own end of run, told apart from failures.
fn cut_by_client_finding(agg: &Aggregates) -> Option<Finding> {
    (agg.cut_by_client > 0).then(|| {
        finding(
            "cut_by_client",
            Severity::Info,
            "Requests cut by the run's end",
            format!(
                "{} of {} cut by the client's own end of run (a time limit, a stop or a cancel): not the server's failures",
                agg.cut_by_client, agg.count
            ),
            "Their partial data is kept in the request table; they are left out of the latency statistics, the error rate and goodput.",
        )
    })
}

/// `not_streamed`: requests answered in one piece.
fn not_streamed_finding(agg: &Aggregates) -> Option<Finding> {
    (agg.not_streamed > 0).then(|| finding(
        "not_streamed",
        Severity::Problem,
        "The endpoint did not stream",
        format!(
            "{} of {} requests were answered in one piece (a JSON body, not a stream): their first token is the whole answer",
            agg.not_streamed, agg.count
        ),
        "Check that `stream: true` reaches the server: a proxy or gateway may buffer or rewrite the request; TTFT and ITL mean nothing until it streams.",
    ))
}

/// `estimated_tokens`: no successful request (of `ok_count`) carried a count from the server.
fn estimated_tokens_finding(agg: &Aggregates, ok_count: usize) -> Option<Finding> {
    (ok_count > 0 && agg.tokens_from_server == 0).then(|| finding(
        "estimated_tokens",
        Severity::Info,
        "Token counts are estimated",
        format!("none of the {ok_count} successful requests carried usage; tokens were counted one per chunk"),
        "Ask for usage (stream_options.include_usage, continuous_usage_stats) so TPOT is exact.",
    ))
}

/// A conversation's rounds share their prefix (each prompt extends the one before), so from the
/// second round on a prefix cache should serve most of each prompt and TTFT should follow the
/// new tokens, not the whole prompt. Fires in a conversation scenario with successful requests
/// in at least two rounds whose prompts grew:
/// - `prompt_cache_missed` (warning) when TTFT grows with the prompt (fitted over prompt
///   tokens: ≥ [`PROMPT_GROWTH_FACTOR`] and ≥ [`PROMPT_GROWTH_MIN_MS`] from the shortest
///   prompt to the longest, r² ≥ [`PROMPT_GROWTH_MIN_R2`]) and the later rounds' reported hit rate is under
///   [`CACHE_LOW_HIT_RATE`], or the server reported no cached tokens at all;
/// - `prompt_cache` (info) when the later rounds' hit rate is at least [`CACHE_LOW_HIT_RATE`].
fn prompt_cache_finding(report: &Report, ok: &[&RequestRecord]) -> Option<Finding> {
    if !crate::scenario::is_conversation_id(&report.scenario) {
        return None;
    }
    let points: Vec<(&RequestRecord, u64, f64)> = ok
        .iter()
        .filter_map(|r| Some((*r, r.metrics.prompt_tokens?, r.metrics.ttft_ms?)))
        .collect();
    let first_round = points
        .iter()
        .filter_map(|p| p.0.level)
        .fold(f64::INFINITY, f64::min);
    let later: Vec<&RequestRecord> = points
        .iter()
        .filter(|p| p.0.level.is_some_and(|l| l > first_round))
        .map(|p| p.0)
        .collect();
    let (min_p, max_p) = points
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    if later.is_empty() || max_p <= min_p {
        return None;
    }
    let fit =
        crate::stats::linear_fit(&points.iter().map(|p| (p.1 as f64, p.2)).collect::<Vec<_>>())?;
    let (at_min, at_max) = (
        fit.intercept + fit.slope * min_p as f64,
        fit.intercept + fit.slope * max_p as f64,
    );
    let (rounds, told) = rounds_shift(&points, first_round);
    let grows = at_max - at_min >= PROMPT_GROWTH_MIN_MS
        && at_max >= at_min.max(0.0) * PROMPT_GROWTH_FACTOR
        && fit.r2 >= PROMPT_GROWTH_MIN_R2
        && told;
    let growth = format!(
        "TTFT grows {:.2} ms per 1,000 prompt tokens: {} at {min_p} tokens, {} at {max_p} (fitted over {} requests); {rounds}",
        fit.slope * 1000.0,
        crate::format::ms(at_min),
        crate::format::ms(at_max),
        fit.n
    );
    let advice = "Turn the server's prefix cache on and keep the prompt's start byte-identical between turns: vLLM --enable-prefix-caching (on by default in V1; --enable-prompt-tokens-details to report hits), SGLang's radix cache (on unless --disable-radix-cache; --enable-cache-report to report hits), llama.cpp \"cache_prompt\": true (its default) with one slot per conversation; OpenAI and Anthropic cache only prompts from 1,024 tokens (Anthropic at its cache_control breakpoints). Anything that changes early in the prompt (a timestamp in the system prompt, reordered tools) breaks the prefix.";
    let hits = crate::report::PromptCache::of(later.iter().map(|r| &r.metrics));
    match hits {
        Some(c) if c.hit_rate() >= CACHE_LOW_HIT_RATE => Some(finding(
            "prompt_cache",
            Severity::Info,
            &format!(
                "The prefix cache served the growing conversation: {:.0} % of later rounds' prompt tokens",
                c.hit_rate() * 100.0
            ),
            format!(
                "{} of {} prompt tokens cached over {} later-round requests that reported it; {growth}",
                c.cached_tokens, c.prompt_tokens, c.reporting
            ),
            "TTFT follows the new tokens of each turn, not the whole conversation; keep the prompt's start stable to keep it so.",
        )),
        Some(c) if grows => Some(finding(
            "prompt_cache_missed",
            Severity::Warning,
            "TTFT grows with the conversation although the cache should serve its prefix",
            format!(
                "later rounds' hit rate {:.0} % ({} of {} prompt tokens cached, {} requests reporting); {growth}",
                c.hit_rate() * 100.0,
                c.cached_tokens,
                c.prompt_tokens,
                c.reporting
            ),
            advice,
        )),
        None if grows => Some(finding(
            "prompt_cache_missed",
            Severity::Warning,
            "TTFT grows with the conversation: its shared prefix seems to be prefilled again every round",
            format!("the server reported no cached prompt tokens; {growth}"),
            advice,
        )),
        _ => None,
    }
}

/// The last round's TTFT against the first round's, per request ([`told::Shift`]), in words,
/// and whether growth may be stated: when the rounds hold enough requests for an interval,
/// only if it lies above zero; one conversation (a request a round) has none, and its growth
/// rests on the fit alone, which the words say.
fn rounds_shift(points: &[(&RequestRecord, u64, f64)], first_round: f64) -> (String, bool) {
    let last_round = points
        .iter()
        .filter_map(|p| p.0.level)
        .fold(f64::NEG_INFINITY, f64::max);
    let ttft = |round: f64| -> Vec<f64> {
        points
            .iter()
            .filter(|p| p.0.level == Some(round))
            .map(|p| p.2)
            .collect()
    };
    match told::Shift::between(&ttft(first_round), &ttft(last_round)) {
        Some(s) if s.rose() => (
            format!(
                "the last round's TTFT is higher than the first's, per request {}",
                s.by()
            ),
            true,
        ),
        Some(s) if s.interval.is_some() => (
            format!(
                "the last round's TTFT is not told from the first's: {}",
                s.untold("round")
            ),
            false,
        ),
        Some(s) => (
            format!(
                "{}, so the growth rests on the fit alone",
                s.untold("round")
            ),
            true,
        ),
        None => (String::from("no round to compare with the first"), true),
    }
}

/// Output tokens per output chunk of a request whose token count came from the server (an
/// estimate is one per chunk by construction).
fn tokens_per_chunk(r: &RequestRecord) -> Option<f64> {
    let m = &r.metrics;
    (m.output_events > 0 && m.token_source != crate::metrics::TokenSource::Estimate)
        .then(|| m.output_tokens as f64 / f64::from(m.output_events))
}

/// The successful headline requests' values in a group.
fn group_values(
    report: &Report,
    group: &str,
    value: impl Fn(&RequestRecord) -> Option<f64>,
) -> Vec<f64> {
    report
        .headline_requests()
        .filter(|r| r.group == group && r.outcome.is_ok())
        .filter_map(value)
        .collect()
}

/// A request's median per-token gap: requests, not gaps, are the independent units.
fn median_gap(r: &RequestRecord) -> Option<f64> {
    crate::stats::percentile(&r.metrics.per_token_itl(), 50.0)
}

/// The numbers behind a knee at `level`, measured as [`crate::stats::knee`] does: each P50
/// against the first level that has it, and whether any rise past the factor is told from
/// noise (the shift of the level's per-request values, TTFT or median gap, from the first
/// level's). `None` when neither exceeds the factor there.
fn knee_evidence(report: &Report, agg: &Aggregates, level: f64) -> Option<(String, bool)> {
    let at = agg.groups.iter().find(|g| g.level == Some(level))?;
    type P50 = fn(&GroupStats) -> Option<f64>;
    type PerRequest = fn(&RequestRecord) -> Option<f64>;
    let metrics: [(&str, P50, PerRequest); 2] = [
        ("ITL", |g| g.itl.map(|s| s.p50), median_gap),
        ("TTFT", |g| g.ttft.map(|s| s.p50), |r| r.metrics.ttft_ms),
    ];
    let mut parts = Vec::new();
    let mut told = false;
    for (name, p50, per_request) in metrics {
        let Some((base, b)) = agg.groups.iter().find_map(|g| Some((g, p50(g)?))) else {
            continue;
        };
        let Some(v) = p50(at).filter(|v| b > 0.0 && *v > b * agg.knee_factor) else {
            continue;
        };
        let head = format!(
            "P50 {name} {v:.1} ms at {} is ×{:.1} the {b:.1} ms at {}",
            at.group,
            v / b,
            base.group
        );
        let shift = told::Shift::between(
            &group_values(report, &base.group, per_request),
            &group_values(report, &at.group, per_request),
        );
        parts.push(match shift {
            Some(s) if s.rose() => {
                told = true;
                format!("{head}: per request higher {}", s.by())
            }
            Some(s) => format!("{head}, not told from noise: {}", s.untold("level")),
            None => format!("{head}, with no per-request values to tell it from noise"),
        });
    }
    (!parts.is_empty()).then(|| {
        (
            format!(
                "{} (knee: above ×{:.1} the first level, told from noise by the Hodges–Lehmann interval)",
                parts.join("; "),
                agg.knee_factor
            ),
            told,
        )
    })
}

/// A probe under load: what the probe user felt (median TTFT) at the lowest and the highest
/// third of the load, with the load's peak and size as evidence. Fires when the run holds a
/// probe and a load client and the probe has [`crate::probe::MIN_PROBE_POINTS`] successful
/// requests. The TTFT "rose" when the highest third's median is at least
/// [`PROBE_RISE_FACTOR`] × the lowest's and the shift of its requests from the lowest's is
/// told from noise ([`told::Shift`]); it "held" when the shift's interval rules out such a
/// rise; otherwise the finding says it cannot tell yet, and how many probe requests would.
fn probe_finding(report: &Report) -> Option<Finding> {
    let p = crate::probe::probe_under_load(report)?;
    let (low, high) = (p.ttft_by_load.first()?, p.ttft_by_load.last()?);
    let bands = p.band_ttfts();
    let shift = told::Shift::between(bands.first()?, bands.last()?)?;
    let fmt = crate::format::ms;
    let band = |b: &crate::probe::LoadBand| {
        if b.from == b.to {
            format!("{} in flight", b.from)
        } else {
            format!("{}–{} in flight", b.from, b.to)
        }
    };
    let median = |b: &crate::probe::LoadBand| match b.ttft_p50_interval {
        Some(i) => format!(
            "{} ({:.0} % interval {})",
            fmt(b.ttft_p50_ms),
            i.level * 100.0,
            crate::format::ms_range(i.lo, i.hi)
        ),
        None => fmt(b.ttft_p50_ms),
    };
    let evidence = format!(
        "probe P50 TTFT {} over its {} requests sent at {} and {} over the {} sent at {} ({} {} requests, at most {} in flight; {} probe requests in all)",
        median(low),
        low.count,
        band(low),
        median(high),
        high.count,
        band(high),
        p.load_count,
        p.load_client,
        p.peak_in_flight,
        p.probe_count
    );
    let ratio = high.ttft_p50_ms / low.ttft_p50_ms;
    let rose = low.ttft_p50_ms > 0.0 && ratio >= PROBE_RISE_FACTOR && shift.rose();
    // A rise to the factor lies above the interval: the probe held.
    let held = shift
        .interval
        .is_some_and(|i| i.hi < (PROBE_RISE_FACTOR - 1.0) * low.ttft_p50_ms);
    let levels = format!(
        "{} at ≤{} in flight, {} at ≥{}",
        fmt(low.ttft_p50_ms),
        low.to,
        fmt(high.ttft_p50_ms),
        high.from
    );
    Some(if rose {
        finding(
            "probe_under_load",
            Severity::Warning,
            &format!(
                "The probe's TTFT rose from {} at ≤{} in flight to {} at ≥{} in flight (×{ratio:.1}): per request {}",
                fmt(low.ttft_p50_ms),
                low.to,
                fmt(high.ttft_p50_ms),
                high.from,
                shift.by()
            ),
            evidence,
            "A user arriving at that load waits that long: keep the load below where the probe's TTFT bends (see the probe-under-load chart), or add capacity there.",
        )
    } else if held {
        finding(
            "probe_under_load",
            Severity::Info,
            &format!(
                "The probe's TTFT held under load: {levels}; per request the difference is {}, not a ×{PROBE_RISE_FACTOR:.1} rise",
                shift.by().trim_start_matches("by ")
            ),
            evidence,
            "The endpoint absorbs this load; raise it (more Locust users) to find where a user starts to wait.",
        )
    } else if shift.rose() {
        // Told, but short of the factor and not ruled out from reaching it.
        finding(
            "probe_under_load",
            Severity::Info,
            &format!(
                "The probe's TTFT rose under load, short of ×{PROBE_RISE_FACTOR:.1}: {levels} (×{ratio:.1}); per request {}",
                shift.by()
            ),
            evidence,
            "A user arriving at that load waits a little longer; raise the load to find where the probe's TTFT bends.",
        )
    } else {
        finding(
            "probe_under_load",
            Severity::Info,
            &format!(
                "Cannot tell yet whether the probe's TTFT rises under load: {levels}; {}",
                shift.untold("band")
            ),
            evidence,
            "Send more probe requests (a longer run, or a shorter interval between them) so each third of the load holds enough to tell.",
        )
    })
}
