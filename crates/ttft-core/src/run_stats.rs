//! A run's statistics from its report: the aggregates the headline and charts show (also
//! while it streams), the experience scores on their own, the transports used, the stream a
//! comparison replays and what the server's scrapes say. The analysis layer's entry point:
//! the report ([`crate::report`]) is data, and this reads it.

use std::collections::BTreeMap;

use crate::experience::ExperienceSummary;
use crate::metrics::{RequestMetrics, TtftKind};
use crate::record_experience::summarize;
use crate::report::{Aggregates, GroupStats, PromptCache, Report, RequestRecord};
use crate::server_metrics::ServerSeries;
use crate::stats::{
    LinearFit, Summary, Thresholds, knee, linear_fit, linear_fit_iter, percentile_select,
};

/// What every analysis reads of a run ([`Report`]). `use ttft_core::run_stats::RunStats` to
/// call them as methods.
pub trait RunStats {
    /// The transports the measured requests used, as `(name, requests)` most used first
    /// (`HTTP/2`, `HTTP/1.1`, …; `unknown` when the browser did not say): one entry means the
    /// whole run used one transport.
    fn transports(&self) -> Vec<(String, usize)>;

    /// The stream a comparison replays for this run: among successful measured requests that
    /// carry replay text, the one with the median TTFT (the upper one of an even count).
    fn median_replay(&self) -> Option<&RequestRecord>;

    /// Computes the run's statistics (a share link that left out per-gap timings carries the
    /// original run's, [`crate::report::SharedFrom::headline`]).
    fn aggregates(&self) -> Aggregates;

    /// The statistics of a run still streaming: everything but the experience scores (left
    /// empty), whose per-request searches would compete with the reads' stamps for the cores.
    fn live_aggregates(&self) -> Aggregates;

    /// The experience scores [`Report::aggregates`] holds, on their own: with
    /// [`Report::live_aggregates`] they make the same [`Aggregates`], so a view can show the
    /// rest first and score the streams (the slowest part of a large run's statistics) after.
    fn experience_summary(&self) -> ExperienceSummary;

    /// What the report's scrapes say, for its model; `None` with fewer than two scrapes. Its
    /// warm-ups are left out of the percentiles when a scrape was marked after them, and
    /// [`ServerSeries::coverage`] says so either way. Compute it once per report and pass it on.
    fn server_series(&self) -> Option<ServerSeries>;
}

impl RunStats for Report {
    fn transports(&self) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for r in self.measured() {
            let name = match r.protocol.as_deref() {
                Some("h2") => "HTTP/2".to_owned(),
                Some("h3") => "HTTP/3".to_owned(),
                Some("http/1.1") => "HTTP/1.1".to_owned(),
                Some("http/1.0") => "HTTP/1.0".to_owned(),
                Some(p) if !p.is_empty() => p.to_owned(),
                _ => "unknown".to_owned(),
            };
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, c)) => *c += 1,
                None => counts.push((name, 1)),
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        counts
    }

    fn median_replay(&self) -> Option<&RequestRecord> {
        let mut ok: Vec<&RequestRecord> = self
            .measured()
            .filter(|q| q.outcome.is_ok() && !q.replay.is_empty())
            .collect();
        ok.sort_by(|a, b| {
            a.metrics
                .ttft_ms
                .unwrap_or(f64::MAX)
                .total_cmp(&b.metrics.ttft_ms.unwrap_or(f64::MAX))
        });
        ok.get(ok.len() / 2).copied()
    }

    fn aggregates(&self) -> Aggregates {
        match self.shared.as_ref().and_then(|s| s.headline.as_deref()) {
            Some(headline) => with_derived_figures(headline.clone(), self),
            None => statistics(self, true),
        }
    }

    fn live_aggregates(&self) -> Aggregates {
        statistics(self, false)
    }

    fn experience_summary(&self) -> ExperienceSummary {
        match self.shared.as_ref().and_then(|s| s.headline.as_deref()) {
            Some(headline) => headline.experience.clone(),
            None => summarize(self.headline_requests(), &self.experience),
        }
    }

    fn server_series(&self) -> Option<ServerSeries> {
        (self.server_scrapes.len() >= 2).then(|| {
            let warmups = self.requests.iter().filter(|r| r.warmup).count();
            ServerSeries::with_warmups(&self.server_scrapes, Some(&self.endpoint.model), warmups)
        })
    }
}

fn statistics(report: &Report, with_experience: bool) -> Aggregates {
    let reqs: Vec<&RequestRecord> = report.headline_requests().collect();
    let ok: Vec<&RequestMetrics> = reqs
        .iter()
        .filter(|r| r.outcome.is_ok())
        .map(|r| &r.metrics)
        .collect();
    let run_itl = RunItl::gather(&reqs);
    let itl = Summary::of(&run_itl.all);
    let prompt_points: Vec<(f64, f64)> = ok
        .iter()
        .filter_map(|m| Some((m.prompt_tokens? as f64, m.ttft_ms?)))
        .collect();
    let groups = group_stats(&reqs, &run_itl, itl);
    let knee_factor = 1.5;
    let knee_level = knee_level(&groups, knee_factor);
    let opener_costs: Vec<f64> = ok
        .iter()
        .filter(|m| !m.opener_text.is_empty())
        .filter_map(|m| m.opener_cost_ms())
        .collect();
    Aggregates {
        count: reqs.len(),
        errors: error_kinds(&reqs),
        cut_by_client: reqs.iter().filter(|r| r.outcome.is_cut_by_client()).count(),
        ttfb: summary(ok.iter().filter_map(|m| m.ttfb_ms)),
        ttft: summary(ok.iter().filter_map(|m| m.ttft_ms)),
        first_answer: summary(ok.iter().filter_map(|m| m.first_answer_ms)),
        meaningful: summary(ok.iter().filter_map(|m| m.meaningful_ms)),
        itl,
        // The same sample as the per-token one when no arrival carried several tokens.
        chunk_gaps: if run_itl.is_gaps {
            itl
        } else {
            summary(ok.iter().flat_map(|m| m.itl_ms.iter().copied()))
        },
        tpot: summary(ok.iter().filter_map(|m| m.tpot_ms)),
        e2e: summary(ok.iter().filter_map(|m| m.e2e_ms)),
        tokens_per_s: summary(ok.iter().filter_map(|m| m.decode_tokens_per_s)),
        ttst: summary(ok.iter().filter_map(|m| m.ttst_ms())),
        user_output_tokens_per_s: summary(ok.iter().filter_map(|m| m.user_output_tokens_per_s())),
        prefill_tokens_per_s: summary(ok.iter().filter_map(|m| m.prefill_tokens_per_s())),
        json_valid: summary(ok.iter().filter_map(|m| m.json_valid_ms())),
        goodput: goodput(&reqs, &run_itl, report.thresholds),
        reasoning_first: ok
            .iter()
            .filter(|m| m.ttft_kind == Some(TtftKind::Reasoning))
            .count(),
        tool_call_first: ok
            .iter()
            .filter(|m| m.ttft_kind == Some(TtftKind::ToolCall))
            .count(),
        coalesced: ok.iter().filter(|m| m.coalesced).count(),
        with_stalls: ok.iter().filter(|m| !m.stalls.is_empty()).count(),
        with_openers: opener_costs.len(),
        opener_cost_ms: (!opener_costs.is_empty())
            .then(|| opener_costs.iter().sum::<f64>() / opener_costs.len() as f64),
        ttft_vs_prompt: linear_fit(&prompt_points),
        itl_vs_position: run_itl.against_position(),
        groups,
        knee_level,
        knee_factor,
        browser_queue: summary(reqs.iter().filter_map(|r| r.browser_queue_ms)),
        server_prefill: summary(ok.iter().filter_map(|m| m.server_timings?.prompt_ms)),
        server_per_token: summary(
            ok.iter()
                .filter_map(|m| m.server_timings?.predicted_per_token_ms),
        ),
        tokens_from_server: ok
            .iter()
            .filter(|m| m.token_source != crate::metrics::TokenSource::Estimate)
            .count(),
        not_streamed: reqs.iter().filter(|r| !r.metrics.streamed).count(),
        prompt_cache: PromptCache::of(ok.iter().copied()),
        experience: if with_experience {
            summarize(reqs.iter().copied(), &report.experience)
        } else {
            ExperienceSummary::default()
        },
    }
}

/// A link's headline with the figures links derive on opening rather than carry (time to
/// second token, per-user rates: from TTFT, gaps and usage) computed from the requests the link
/// kept; a headline that has them (a report's own) keeps its own. A link that sampled its
/// requests or their gaps gives these figures of the requests (with gaps) it kept.
fn with_derived_figures(mut headline: Aggregates, report: &Report) -> Aggregates {
    if headline.ttst.is_none()
        && headline.user_output_tokens_per_s.is_none()
        && headline.prefill_tokens_per_s.is_none()
    {
        let ok = || {
            report
                .headline_requests()
                .filter(|r| r.outcome.is_ok())
                .map(|r| &r.metrics)
        };
        headline.ttst = summary(ok().filter_map(RequestMetrics::ttst_ms));
        headline.user_output_tokens_per_s =
            summary(ok().filter_map(RequestMetrics::user_output_tokens_per_s));
        headline.prefill_tokens_per_s =
            summary(ok().filter_map(RequestMetrics::prefill_tokens_per_s));
    }
    headline
}

/// Failed requests counted by the kind of their outcome; requests the client cut at its own
/// end of run are not the server's failures and are counted apart.
fn error_kinds(reqs: &[&RequestRecord]) -> BTreeMap<String, usize> {
    let mut errors = BTreeMap::new();
    for r in reqs.iter().filter(|r| r.outcome.is_failure()) {
        *errors.entry(r.outcome.kind().to_owned()).or_insert(0) += 1;
    }
    errors
}

/// Every successful request's per-token gaps, computed once into one buffer: in request
/// order, they are the run's ITL sample.
struct RunItl {
    all: Vec<f64>,
    /// Each request's gaps, `all[a..b]` for `Some((a, b))` (a failed request has none).
    spans: Vec<Option<(usize, usize)>>,
    /// For a request that streamed several choices, where each choice's gaps begin within
    /// its span ([`RequestMetrics::choice_gap_starts`]): positions count within each choice.
    choice_starts: Vec<(usize, Vec<usize>)>,
    /// Whether the sample is the chunk gaps' too (no arrival carried several tokens).
    is_gaps: bool,
}

impl RunItl {
    fn gather(reqs: &[&RequestRecord]) -> Self {
        let mut all: Vec<f64> = Vec::new();
        let mut is_gaps = true;
        let mut choice_starts = Vec::new();
        let spans = reqs
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.outcome.is_ok().then(|| {
                    let a = all.len();
                    is_gaps &= r.metrics.extend_per_token_itl(&mut all);
                    if let Some(starts) = r.metrics.choice_gap_starts() {
                        choice_starts.push((i, starts));
                    }
                    (a, all.len())
                })
            })
            .collect();
        Self {
            all,
            spans,
            choice_starts,
            is_gaps,
        }
    }

    /// ITL against output position, over the points in request order, positions counted within
    /// each choice of a request that streamed several; a slope needs a span of positions, so
    /// `None` unless some request (or choice) has 64 gaps or more (under that it is noise).
    fn against_position(&self) -> Option<LinearFit> {
        // Each request's gaps as one sequence, or one per choice.
        let mut sequences: Vec<(usize, usize)> = Vec::with_capacity(self.spans.len());
        let mut choices = self.choice_starts.iter().peekable();
        for (i, span) in self.spans.iter().enumerate() {
            let Some((a, b)) = *span else { continue };
            match choices.peek() {
                Some((j, starts)) if *j == i => {
                    for (k, &from) in starts.iter().enumerate() {
                        let to = starts.get(k + 1).map_or(b, |&t| (a + t).min(b));
                        sequences.push(((a + from).min(to), to));
                    }
                    choices.next();
                }
                _ => sequences.push((a, b)),
            }
        }
        let points = sequences.iter().flat_map(|&(a, b)| {
            self.all[a..b]
                .iter()
                .enumerate()
                .map(|(i, g)| ((i + 1) as f64, *g))
        });
        linear_fit_iter(points).filter(|_| sequences.iter().any(|(a, b)| b - a >= 64))
    }
}

/// The share of requests that succeeded within the thresholds: TTFT, and the request's P95
/// gap (as its `Summary` would give it), over the requests the server is judged on (those
/// the client cut at its own end of run are left out); 0 for no request.
fn goodput(reqs: &[&RequestRecord], run_itl: &RunItl, th: Thresholds) -> f64 {
    let mut scratch = Vec::new();
    let good = reqs
        .iter()
        .zip(&run_itl.spans)
        .filter(|(r, span)| {
            r.outcome.is_ok()
                && r.metrics.ttft_ms.is_some_and(|t| t <= th.ttft_ms)
                && span.is_none_or(|(a, b)| {
                    scratch.clear();
                    scratch.extend_from_slice(&run_itl.all[a..b]);
                    percentile_select(&mut scratch, 95.0).is_none_or(|p95| p95 <= th.itl_ms)
                })
        })
        .count();
    let judged = reqs
        .iter()
        .filter(|r| !r.outcome.is_cut_by_client())
        .count();
    if judged == 0 {
        0.0
    } else {
        good as f64 / judged as f64
    }
}

/// Each group's statistics, groups in order of their level (groups without one last, in
/// order of appearance); `run_itl_summary` is the whole run's ITL, which a group of every
/// request shares.
fn group_stats(
    reqs: &[&RequestRecord],
    run_itl: &RunItl,
    run_itl_summary: Option<Summary>,
) -> Vec<GroupStats> {
    let mut names: Vec<(&str, Option<f64>)> = Vec::new();
    for r in reqs {
        if !names.iter().any(|(g, _)| *g == r.group) {
            names.push((&r.group, r.level));
        }
    }
    names.sort_by(|a, b| a.1.unwrap_or(f64::MAX).total_cmp(&b.1.unwrap_or(f64::MAX)));
    let mut groups = Vec::with_capacity(names.len());
    for (g, level) in names {
        let members: Vec<&&RequestRecord> = reqs.iter().filter(|r| r.group == g).collect();
        // A group of every request has the run's sample (most runs have one group).
        let group_itl = if members.len() == reqs.len() {
            run_itl_summary
        } else {
            let mut v = Vec::new();
            for (r, span) in reqs.iter().zip(&run_itl.spans) {
                if let (true, Some((a, b))) = (r.group == g, span) {
                    v.extend_from_slice(&run_itl.all[*a..*b]);
                }
            }
            Summary::of(&v)
        };
        let okm: Vec<&RequestMetrics> = members
            .iter()
            .filter(|r| r.outcome.is_ok())
            .map(|r| &r.metrics)
            .collect();
        let (start, end) = wall_span(members.iter().map(|r| **r));
        let tokens: u64 = okm.iter().map(|m| m.output_tokens).sum();
        groups.push(GroupStats {
            group: g.to_owned(),
            level,
            count: members.len(),
            ttft: summary(okm.iter().filter_map(|m| m.ttft_ms)),
            itl: group_itl,
            e2e: summary(okm.iter().filter_map(|m| m.e2e_ms)),
            throughput_tokens_per_s: (end > start).then(|| tokens as f64 / (end - start) * 1e3),
            prompt_cache: PromptCache::of(okm.iter().copied()),
        });
    }
    groups
}

/// The first level whose median ITL or median TTFT exceeds `factor` × the first level's (see
/// [`knee`]), the lower of the two; only for a sweep, several groups each with a level.
fn knee_level(groups: &[GroupStats], factor: f64) -> Option<f64> {
    if groups.len() <= 1 || !groups.iter().all(|g| g.level.is_some()) {
        return None;
    }
    let itl: Vec<(f64, f64)> = groups
        .iter()
        .filter_map(|g| Some((g.level?, g.itl?.p50)))
        .collect();
    let ttft: Vec<(f64, f64)> = groups
        .iter()
        .filter_map(|g| Some((g.level?, g.ttft?.p50)))
        .collect();
    match (knee(&itl, factor), knee(&ttft, factor)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn summary(values: impl Iterator<Item = f64>) -> Option<Summary> {
    Summary::of(&values.collect::<Vec<_>>())
}

/// From the first send to the last end (ms from the run's start) over `requests`: `(start,
/// end)`, with `end < start` when none has ended.
pub fn wall_span<'a>(requests: impl Iterator<Item = &'a RequestRecord> + Clone) -> (f64, f64) {
    let start = requests
        .clone()
        .map(|r| r.start_ms)
        .fold(f64::INFINITY, f64::min);
    let end = requests
        .filter_map(|r| r.metrics.e2e_ms.map(|e| r.start_ms + e))
        .fold(f64::NEG_INFINITY, f64::max);
    (start, end)
}
