//! The server's view beside the client's: what the run's `/metrics` scrapes say (server-side
//! TTFT, ITL and E2E percentiles from the histograms' deltas beside the browser's, queue and
//! prefill time) and the first token taken apart. It formats what `ttft_core::server_metrics`
//! and `ttft_core::first_token` computed, and says which requests the server's figures cover
//! (the warm-ups are left out when a scrape was taken after them). When the server counts its
//! own work (llama.cpp), its mean prefill rate, time per output token and tokens per decode
//! call over the run are shown too ([`ServerWork`]), so a slow run can be told apart from a
//! slow server.

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::first_token::{Basis, RunFirstToken};
use ttft_core::report::{Aggregates, Report};
use ttft_core::server_metrics::{Concept, Coverage, ServerLatency, ServerSeries, ServerWork};
use ttft_core::stats::Summary;

use crate::format::ms;

/// The server panel of a report; nothing when the run has no scrapes and no decomposition.
#[component]
pub fn ServerView(
    /// The run.
    report: Arc<Report>,
    /// Its aggregates.
    agg: Aggregates,
    /// What its scrapes say (`RunStats::server_series`, read once for the whole report;
    /// `None`: fewer than two scrapes).
    series: Option<Arc<ServerSeries>>,
) -> impl IntoView {
    let first_token = ttft_core::first_token::of_report_with(&report, &agg, series.as_deref());
    // On the built-in reference endpoint, the server's record of each request, asked for once
    // the finished run is shown.
    let truth = crate::actions::ground_truth::has_ground_truth(&report).then(|| {
        let r = Arc::clone(&report);
        LocalResource::new(move || crate::actions::ground_truth::first_token_truth(Arc::clone(&r)))
    });
    if series.is_none() && first_token.is_none() && truth.is_none() {
        return None;
    }
    let client = |c: Concept| -> Option<Summary> {
        match c {
            Concept::Ttft => agg.ttft,
            Concept::Itl => agg.itl,
            Concept::E2e => agg.e2e,
            _ => None,
        }
    };
    let rows = series.as_ref().map(|s| {
        Concept::LATENCIES
            .iter()
            .filter_map(|c| s.latency(*c).map(|l| (*c, l.clone(), client(*c))))
            .collect::<Vec<_>>()
    });
    let heading = series.as_ref().map(|s| {
        format!(
            "{} · {} scrapes of {}",
            s.server.map_or("server", |k| k.name()),
            s.scrapes,
            report.metrics_url.clone().unwrap_or_default()
        )
    });
    let notes = series.as_ref().map(|s| s.notes.clone()).unwrap_or_default();
    let coverage = series.as_ref().map(|s| s.coverage);
    let work = series.as_ref().and_then(|s| s.work);
    Some(view! {
        <section class="server-view" data-testid="server-view">
            <h3>"The server's view"</h3>
            {heading.map(|h| view! { <p class="muted" data-testid="server-heading">{h}</p> })}
            {notes.into_iter().map(|n| view! { <p class="warn">{n}</p> }).collect_view()}
            {rows.filter(|r| !r.is_empty()).map(|rows| view! {
                <table class="server-latency" data-testid="server-latency">
                    <thead><tr>
                        <th>""</th><th>"server P50"</th><th>"P90"</th><th>"P99"</th><th>"observations"</th>
                        <th>"browser P50"</th><th>"P90"</th><th>"P99"</th>
                    </tr></thead>
                    <tbody>
                        {rows.into_iter().map(|(c, l, mine)| latency_row(c, &l, mine)).collect_view()}
                    </tbody>
                </table>
                <p class="muted">"Server percentiles come from its histograms' growth over the run, interpolated within buckets (as Prometheus' histogram_quantile does): the true value lies in the same bucket."</p>
                {coverage.map(|c| {
                    let id = match c {
                        Coverage::WholeRun => "whole-run",
                        Coverage::Measured { .. } => "measured",
                        Coverage::WithWarmups { .. } => "with-warmups",
                    };
                    let warn = matches!(c, Coverage::WithWarmups { .. });
                    view! { <p class:muted=!warn class:warn=warn data-testid="server-coverage" data-coverage=id>{c.sentence()}</p> }
                })}
            })}
            {work.map(|w| view! { <WorkFigures work=w /> })}
            {first_token.map(|f| view! { <FirstTokenParts run=f /> })}
            {truth.map(|t| move || t.get().flatten().map(|f| view! {
                <div class="first-token-truth" data-testid="first-token-truth">
                    <p class="muted">"Request by request, from the reference endpoint's own record of each (its ground truth: when it received the request, queued, prefilled and wrote the first chunk):"</p>
                    <FirstTokenParts run=f />
                </div>
            }))}
        </section>
    })
}

fn latency_row(
    concept: Concept,
    l: &ServerLatency,
    mine: Option<Summary>,
) -> impl IntoView + use<> {
    view! {
        <tr data-testid="server-row" data-concept=concept.label()>
            <th>{concept.label()}</th>
            <td data-testid="server-p50">{ms(l.p50_ms)}</td>
            <td>{ms(l.p90_ms)}</td>
            <td>{ms(l.p99_ms)}</td>
            <td data-testid="server-count">{format!("{:.0}", l.count)}</td>
            <td data-testid="client-p50">{ms(mine.map(|s| s.p50))}</td>
            <td>{ms(mine.map(|s| s.p90))}</td>
            <td>{ms(mine.map(|s| s.p99))}</td>
        </tr>
    }
}

/// What the server's work counters say about the run (llama.cpp): its mean prefill rate,
/// time per output token and tokens per decode call, and the core's sentence about them.
/// Nothing when no rate can be given (the counters did not grow).
#[component]
fn WorkFigures(
    /// The counters' growth over the run.
    work: ServerWork,
) -> impl IntoView {
    let sentence = work.sentence()?;
    let figure = |v: Option<f64>, unit: &str, decimals: usize| {
        v.map_or_else(
            || "—".to_owned(),
            |x| format!("{x:.decimals$} {unit}").trim_end().to_owned(),
        )
    };
    Some(view! {
        <div class="server-work" data-testid="server-work">
            <table class="server-work-figures">
                <tbody>
                    <tr>
                        <th>"mean prefill"</th>
                        <td data-testid="server-work-prefill">{figure(work.prefill_tokens_per_s(), "tokens/s", 0)}</td>
                    </tr>
                    <tr>
                        <th>"per output token"</th>
                        <td data-testid="server-work-decode">{figure(work.decode_ms_per_token(), "ms", 1)}</td>
                    </tr>
                    <tr>
                        <th>"tokens per decode call"</th>
                        <td data-testid="server-work-per-decode">{figure(work.tokens_per_decode(), "", 1)}</td>
                    </tr>
                </tbody>
            </table>
            <p class="muted" data-testid="server-work-sentence">{sentence}</p>
        </div>
    })
}

/// The first token's parts (medians) and the dominant one.
#[component]
fn FirstTokenParts(
    /// The decomposition.
    run: RunFirstToken,
) -> impl IntoView {
    let basis = match run.basis {
        Basis::PerRequest { requests, .. } => format!("per request ({requests} with server data)"),
        Basis::Histograms => "from the server's histograms".to_owned(),
    };
    let total = run
        .parts
        .iter()
        .map(|(_, v)| v)
        .sum::<f64>()
        .max(f64::EPSILON);
    view! {
        <div class="first-token-parts" data-testid="first-token-parts">
            <p>{format!("Time to first token {} (median), taken apart {basis}:", ms(Some(run.client_ttft_p50_ms)))}</p>
            <ul>
                {run.parts.iter().map(|(part, v)| {
                    let dominant = run.dominant == Some(*part);
                    view! {
                        <li class:dominant=dominant data-testid="first-token-part">
                            {format!("{} {} ({:.0} %){}", part.label(), ms(Some(*v)), 100.0 * v / total, if dominant { " — the largest part" } else { "" })}
                        </li>
                    }
                }).collect_view()}
            </ul>
        </div>
    }
}
