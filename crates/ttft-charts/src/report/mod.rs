//! Charts of one run.
//!
//! [`report_charts`] is the entry point: it picks the charts that have data and returns them in
//! reading order. The charts themselves live by group: `latency` (TTFT and ITL histograms and
//! CDFs), `timeline` (the per-request waterfall and ITL against output position), `reading`
//! (delivered against read text of the median request, with the reader waits), `load` (TTFT
//! against prompt length, latency and throughput against load, multi-turn rounds) and `agent`
//! (time to valid JSON), `probe` (a browser probe's TTFT against the load client's requests in
//! flight, only in a run that holds both), `server` (the server's gauges from its `/metrics`)
//! and `cache` (prompt-cache hit rate per group, only when the server reported cached tokens).
//! [`rate_chart`] draws an open-loop run's planned vs achieved send rate, apart.
//! [`time_slices_charts`] draws a run over time from its time slices, apart: the caller
//! chooses the windows and whether the steady state is asked for.

mod agent;
mod cache;
mod latency;
mod load;
mod probe;
mod rate;
mod reading;
mod server;
mod slices;
mod timeline;

use ttft_core::report::{Aggregates, Report, RequestRecord};
use ttft_core::server_metrics::ServerSeries;

use crate::ChartSpec;

use agent::json_valid;
use latency::{first_token_cdf, itl_cdf, latency_histogram};
use load::{SloState, levels, rounds, ttft_vs_prompt};
use reading::reading;
use timeline::{itl_by_position, waterfall};
use ttft_core::run_stats::RunStats;

pub use rate::rate_chart;
pub use slices::time_slices_charts;

/// Every chart that has data in this run, in reading order; CDF bands at the default level
/// ([`ttft_core::uncertainty::DEFAULT_LEVEL`]).
pub fn report_charts(report: &Report, agg: &Aggregates) -> Vec<ChartSpec> {
    report_charts_with_slo(
        report,
        agg,
        None,
        report.server_series().as_ref(),
        ttft_core::uncertainty::DEFAULT_LEVEL,
    )
}

/// The load charts alone (latency and throughput per level; none for a conversation, a prompt
/// sweep or fewer than two levels), marked where the run meets its SLO: for drawing them again
/// once the SLO is scored, after [`report_charts_before_slo`]'s first drawing.
pub fn load_charts(
    report: &Report,
    agg: &Aggregates,
    slo: &ttft_core::slo::SloReport,
) -> Vec<ChartSpec> {
    load(report, agg, SloState::Scored(slo))
}

fn load(report: &Report, agg: &Aggregates, slo: SloState) -> Vec<ChartSpec> {
    use ttft_core::scenario::{ScenarioKind, is_conversation_id};
    if is_conversation_id(&report.scenario)
        || ScenarioKind::from_id(&report.scenario) == Some(ScenarioKind::PromptSweep)
    {
        return Vec::new();
    }
    levels(report, agg, slo)
}

/// [`report_charts_with_slo`] before the SLO is scored (it scores every stream, the slowest part
/// of a large run's statistics): the load charts come without the SLO's mark and goodput, which
/// [`load_charts`] adds once it is. CDF bands are at `level` (the user's confidence level).
pub fn report_charts_before_slo(
    report: &Report,
    agg: &Aggregates,
    server: Option<&ServerSeries>,
    level: f64,
) -> Vec<ChartSpec> {
    charts(report, agg, SloState::Pending, server, level)
}

/// [`report_charts`], with the run already held to its SLO set (`ttft_core::slo::evaluate`) when
/// the caller has it, so the load chart does not score every stream again, and with the run's
/// server series (`ServerSeries::of_report`, `None` without scrapes) computed once by the
/// caller, who shows it elsewhere too; CDF bands at `level`.
pub fn report_charts_with_slo(
    report: &Report,
    agg: &Aggregates,
    slo: Option<&ttft_core::slo::SloReport>,
    server: Option<&ServerSeries>,
    level: f64,
) -> Vec<ChartSpec> {
    let slo = slo.map_or(SloState::Score, SloState::Scored);
    charts(report, agg, slo, server, level)
}

fn charts(
    report: &Report,
    agg: &Aggregates,
    slo: SloState,
    server: Option<&ServerSeries>,
    level: f64,
) -> Vec<ChartSpec> {
    // The headline's requests: in a probe under load, the probe's (the load is drawn against
    // it in the first chart).
    let ok: Vec<&RequestRecord> = report
        .headline_requests()
        .filter(|r| r.outcome.is_ok())
        .collect();
    let ttft: Vec<f64> = ok.iter().filter_map(|r| r.metrics.ttft_ms).collect();
    // Per-token gaps per request (ITL against position) and all together, computed once.
    let per_req_itl: Vec<Vec<f64>> = ok.iter().map(|r| r.metrics.per_token_itl()).collect();
    let itl = per_req_itl.concat();
    let mut out = Vec::new();
    if let Some(p) = ttft_core::probe::probe_under_load(report) {
        out.extend(probe::probe_under_load(&p));
    }
    if !ttft.is_empty() {
        out.push(latency_histogram(
            "ttft-hist",
            "TTFT distribution",
            &ttft,
            agg.ttft,
            Some(report.thresholds.ttft_ms),
            "requests",
        ));
        out.push(first_token_cdf(&ok, agg, level));
    }
    if !itl.is_empty() {
        out.push(latency_histogram(
            "itl-hist",
            "Inter-token latency distribution (per token)",
            &itl,
            agg.itl,
            Some(report.thresholds.itl_ms),
            "token gaps",
        ));
        out.push(itl_cdf(&ok, &itl));
    }
    if !report.requests.is_empty() {
        out.push(waterfall(report));
    }
    out.extend(server.and_then(server::server_metrics));
    out.extend(reading(report));
    out.extend(itl_by_position(&per_req_itl, agg));
    out.extend(ttft_vs_prompt(&ok, agg));
    if ttft_core::scenario::is_conversation_id(&report.scenario) {
        out.extend(rounds(report, agg));
    }
    out.extend(load(report, agg, slo));
    out.extend(cache::prompt_cache(agg));
    out.extend(json_valid(&ok, agg, level));
    out
}
