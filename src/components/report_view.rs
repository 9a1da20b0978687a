//! A run's report: headline figures, diagnosis, groups, requests, and export/share.

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::diagnosis::{Severity, diagnose_with};
use ttft_core::experience::{DeadlineConfig, ExperienceSummary, ReadingConfig};
use ttft_core::report::{Aggregates, Report};
use ttft_core::run_intervals::{Figure as Statistic, RunSamples};
use ttft_core::server_metrics::ServerSeries;
use ttft_core::stats::Summary;
use ttft_core::summary_file::{SummaryRow, SummaryUnit, summary_rows};

use crate::actions::export;
use crate::actions::links::{SharedLink, share_link};
use crate::format::{ms, pct, per_s, score};
use crate::lazy::PartError;
use crate::state::{Shown, ShownReport, StudioStateStoreFields, use_studio};
use ttft_core::run_stats::RunStats;

/// The report shown (a saved run, or the live one). A saved run's report is shared, not
/// copied, and counts as changed only when it is another one; the live run's counts as changed
/// at each batch, by its revision, and is not held here (so a batch appends in place). State
/// that changes beside them (storage, notices) never re-renders the report or compares its
/// megabytes.
fn shown_report() -> Memo<Option<ShownReport>> {
    let state = use_studio().state;
    Memo::new(move |_| match state.shown().get() {
        Shown::Nothing => None,
        Shown::Live => state
            .live()
            .with(|l| l.as_ref().map(|l| ShownReport::Live(l.revision))),
        Shown::Run(id) => state.runs().with(|runs| {
            runs.iter()
                .find(|r| r.id == id)
                .map(|r| ShownReport::Run(Arc::clone(&r.report)))
        }),
    })
}

/// Each headline figure's interval at the user's level, once the run's samples are read (a
/// complete run's, after paint): what the tiles' tooltips and small ranges say.
#[derive(Clone, Copy)]
struct Tiles(Signal<Option<Arc<Vec<SummaryRow>>>>);

/// A tile's interval in words: `95 % interval 780–845 ms from 120 requests`, or why it has
/// none.
fn tile_sentence(row: &SummaryRow) -> Option<String> {
    if let Some((e, i)) = row.estimate.and_then(|e| Some((e, e.interval?))) {
        let gaps = matches!(row.figure, Some(Statistic::Itl { .. }));
        return Some(format!(
            "{:.0} % interval {} from {}{} requests",
            i.level * 100.0,
            tile_range(row.unit, i.lo, i.hi),
            if gaps { "the gaps of " } else { "" },
            e.n
        ));
    }
    row.no_interval.map(|w| w.describe())
}

/// An interval in the tile's unit.
fn tile_range(unit: SummaryUnit, lo: f64, hi: f64) -> String {
    use ttft_core::compare::Unit;
    let unit = match unit {
        SummaryUnit::Ms => Unit::Ms,
        SummaryUnit::TokensPerS => Unit::TokensPerS,
        SummaryUnit::Fraction => Unit::Fraction,
        SummaryUnit::Score => Unit::Score,
    };
    crate::components::compare_table::range(unit, lo, hi)
}

/// One headline figure; with `summary` (a [`SummaryRow`] key) and `tiles`, its interval: in the
/// tooltip, as `data-lo`/`data-hi`/`data-needs` and, small under the value, `[lo–hi]`.
#[component]
fn Figure(
    /// What it is.
    #[prop(into)]
    label: String,
    /// The value, formatted.
    value: String,
    /// `data-testid`.
    testid: &'static str,
    /// What it means, in one plain sentence (the tooltip).
    #[prop(optional, into)]
    hint: Option<String>,
    /// Its row of the run's summary (`ttft_p50`), when it is one of the summary's figures.
    #[prop(optional)]
    summary: Option<&'static str>,
    /// The run's intervals, once read.
    #[prop(optional)]
    tiles: Option<Tiles>,
) -> impl IntoView {
    let row = move || {
        let (key, tiles) = (summary?, tiles?);
        tiles
            .0
            .with(|rows| rows.as_ref()?.iter().find(|r| r.key == key).cloned())
            .filter(|r| r.value.is_some())
    };
    let interval = move || row().and_then(|r| r.estimate?.interval.map(|i| (r.unit, i)));
    let title = move || {
        let sure = row().as_ref().and_then(tile_sentence);
        match (hint.clone(), sure) {
            (Some(h), Some(s)) => Some(format!("{h}\n{s}")),
            (h, s) => h.or(s),
        }
    };
    let needs = move || match row()?.no_interval? {
        ttft_core::summary_file::NoInterval::Needs(n) => Some(n.to_string()),
        _ => None,
    };
    view! {
        <div class="figure" title=title data-lo=move || interval().map(|(_, i)| i.lo.to_string())
            data-hi=move || interval().map(|(_, i)| i.hi.to_string()) data-needs=needs>
            <div class="label">{label}</div>
            <div class="value" data-testid=testid>{value}</div>
            {move || interval().map(|(unit, i)| view! {
                <div class="interval" data-testid="tile-interval" data-lo=i.lo.to_string() data-hi=i.hi.to_string()>
                    {format!("[{}]", tile_range(unit, i.lo, i.hi))}
                </div>
            })}
        </div>
    }
}

fn p(s: Option<Summary>, f: fn(&Summary) -> f64) -> Option<f64> {
    s.as_ref().map(f)
}

/// Headline figures of a run.
#[component]
fn Headline(
    /// The statistics (their experience scores are `experience`).
    agg: Aggregates,
    /// The experience scores, once computed (a large run's come just after its charts).
    experience: Signal<Option<ExperienceSummary>>,
    /// The reader the experience figures assume.
    reading: ReadingConfig,
    /// The deadlines the fluidity figures use.
    deadlines: DeadlineConfig,
    /// Each figure's interval, once read.
    tiles: Tiles,
) -> impl IntoView {
    let errors = agg.failed();
    // Requests the client cut at its own end of run are not the server's failures: apart.
    let errors_value = match agg.cut_by_client {
        0 => format!("{errors} / {}", agg.judged()),
        cut => format!("{errors} / {} ({cut} cut by the run's end)", agg.judged()),
    };
    let first_token_hint = match agg.tool_call_first {
        0 => "When the first output of any kind arrived: reasoning, a tool call or answer text."
            .to_owned(),
        n => format!(
            "When the first output of any kind arrived: reasoning, a tool call or answer text ({n} requests began with a tool call)."
        ),
    };
    let scored_of = agg.judged().saturating_sub(errors);
    let prefill_hint = match agg.prefill_tokens_per_s {
        Some(s) => format!(
            "Prompt tokens the server reported over TTFT, per request ({} requests; prefix-cache hits count as read).",
            s.count
        ),
        None => "The server reported no prompt tokens in its usage, so there is no prefill rate: the prompt's length is not guessed.".to_owned(),
    };
    view! {
        <div class="figures" data-testid="headline">
            <Figure label="First byte P50" value=ms(p(agg.ttfb, |s| s.p50)) testid="ttfb-p50" summary="ttfb_p50" tiles=tiles
                hint="When the response headers arrived: the server took the request, no text yet." />
            <Figure label="First token P50 (any kind)" value=ms(p(agg.ttft, |s| s.p50)) testid="ttft-p50" summary="ttft_p50" tiles=tiles hint=first_token_hint />
            <Figure label="First answer token P50" value=ms(p(agg.first_answer, |s| s.p50)) testid="first-answer-p50" summary="first_answer_p50" tiles=tiles
                hint="When the first answer text arrived, after any reasoning (a turn that only calls tools has none)." />
            <Figure label="Meaningful first token P50" value=ms(p(agg.meaningful, |s| s.p50)) testid="meaningful-p50" summary="meaningful_p50" tiles=tiles
                hint="When the first answer text past openers like “Sure! Here's” arrived: the first word that says something." />
            <Figure label="TTFT P95" value=ms(p(agg.ttft, |s| s.p95)) testid="ttft-p95" summary="ttft_p95" tiles=tiles />
            <Figure label="Second token P50" value=ms(p(agg.ttst, |s| s.p50)) testid="ttst-p50" summary="ttst_p50" tiles=tiles
                hint="When the output arriving after the first token's came in (TTFT + the first gap): when the text starts to move." />
            <Figure label="ITL P50" value=ms(p(agg.itl, |s| s.p50)) testid="itl-p50" summary="itl_p50" tiles=tiles />
            <Figure label="ITL P95" value=ms(p(agg.itl, |s| s.p95)) testid="itl-p95" summary="itl_p95" tiles=tiles />
            <Figure label="ITL P99" value=ms(p(agg.itl, |s| s.p99)) testid="itl-p99" summary="itl_p99" tiles=tiles />
            <Figure label="TPOT P50" value=ms(p(agg.tpot, |s| s.p50)) testid="tpot-p50" summary="tpot_p50" tiles=tiles />
            <Figure label="E2E P50" value=ms(p(agg.e2e, |s| s.p50)) testid="e2e-p50" summary="e2e_p50" tiles=tiles />
            <Figure label="Decode rate P50" value=per_s(p(agg.tokens_per_s, |s| s.p50)) testid="tokens-per-s" summary="decode_rate_p50" tiles=tiles
                hint="Output tokens after the first over the time from the first token to the end of the stream: what benchmark tools call output throughput per user." />
            <Figure label="Per-user output P50" value=per_s(p(agg.user_output_tokens_per_s, |s| s.p50)) testid="output-per-user-p50" summary="output_per_user_p50" tiles=tiles
                hint="Tokens one user receives per second once the answer streams: tokens after the first arrival over the time from the first to the last output arrival (1 / the request's mean per-token ITL)." />
            <Figure label="Per-user prefill P50" value=per_s(p(agg.prefill_tokens_per_s, |s| s.p50)) testid="prefill-per-user-p50" summary="prefill_per_user_p50" tiles=tiles
                hint=prefill_hint />
            <Figure label="Time to valid JSON P50" value=ms(p(agg.json_valid, |s| s.p50)) testid="json-valid-p50" summary="json_valid_p50" tiles=tiles />
            <Figure label="Goodput" value=pct(agg.goodput) testid="goodput" summary="goodput" tiles=tiles />
            <Figure label="Errors" value=errors_value testid="errors" summary="error_rate" tiles=tiles
                hint="The server's failures over the requests it is judged on; requests the client cut at its own end of run (a time limit, a stop) are counted apart." />
            {agg.server_per_token.map(|s| view! { <Figure label="Server decode/token P50 (reported)" value=ms(Some(s.p50)) testid="server-per-token" /> })}
            {agg.server_prefill.map(|s| view! { <Figure label="Server prefill P50 (reported)" value=ms(Some(s.p50)) testid="server-prefill" /> })}
            {move || view! { <ExperienceFigures experience=experience.get() scored_of=scored_of reading=reading deadlines=deadlines tiles=tiles /> }}
        </div>
    }
}

/// The experience figures of the headline; `…` while they are computed.
#[component]
fn ExperienceFigures(
    /// The scores, once computed.
    experience: Option<ExperienceSummary>,
    /// Successful measured requests.
    scored_of: usize,
    /// The reader the experience figures assume.
    reading: ReadingConfig,
    /// The deadlines the fluidity figures use.
    deadlines: DeadlineConfig,
    /// Each figure's interval, once read.
    tiles: Tiles,
) -> impl IntoView {
    let pending = experience.is_none();
    let e = experience.unwrap_or_default();
    let (waits, longest_wait) = match e.reading_requests {
        0 => ("—".to_owned(), "—".to_owned()),
        n => (
            format!("{} of {n}", e.with_waits),
            e.wait_longest_ms.map_or("none".to_owned(), |w| ms(Some(w))),
        ),
    };
    // A shared link keeps the text of a few requests only: say how many the scores cover.
    let qoe_label = if e.reading_requests > 0 && e.reading_requests < scored_of {
        format!(
            "Reading QoE P50 ({} of {scored_of} requests)",
            e.reading_requests
        )
    } else {
        "Reading QoE P50".to_owned()
    };
    let value = |v: String| if pending { "…".to_owned() } else { v };
    view! {
        <Figure label=qoe_label value=value(score(e.qoe_p50)) testid="qoe-p50" summary="qoe_p50" tiles=tiles
            hint=format!("How well a reader at {} words/s, expecting the first word at {}, keeps up with the expected pace: 1 is never held back, lower is more time waiting for text (median request).", reading.words_per_s, ms(Some(reading.expected_ttft_ms))) />
        <Figure label="Reading QoE P10" value=value(score(e.qoe_p10)) testid="qoe-p10" summary="qoe_p10" tiles=tiles
            hint="The same reading score for the worse requests: 90 % of requests score at least this." />
        <Figure label="Requests with reader waits" value=value(waits) testid="reader-waits" summary="reader_waits" tiles=tiles
            hint=format!("Requests where the reader caught up with the text and sat with nothing new to read for {} or more.", ms(Some(reading.min_wait_ms))) />
        <Figure label="Longest reader wait" value=value(longest_wait) testid="reader-wait-longest" summary="longest_reader_wait" tiles=tiles
            hint="The longest time a reader sat with everything read and nothing new arriving, after the first word." />
        <Figure label="Fluidity P99 miss rate" value=value(e.fluidity_p99_miss_rate.map_or("—".into(), pct)) testid="fluidity-p99" summary="fluidity_miss_p99" tiles=tiles
            hint=format!("99 % of requests miss at most this share of their token deadlines (the first token by {}, then one every {}, early tokens banking time).", ms(Some(deadlines.first_token_ms)), ms(Some(deadlines.gap_ms))) />
        <Figure label="Fluid token rate" value=value(per_s(e.fluid_token_rate)) testid="fluid-token-rate" summary="fluid_token_rate" tiles=tiles
            hint=format!("The fastest steady pace in tokens per second that {:.0} % of requests keep while missing at most {:.0} % of their deadlines.", deadlines.fluid_share * 100.0, (1.0 - deadlines.fluid_target) * 100.0) />
    }
}

/// Diagnosis findings.
#[component]
fn Findings(
    /// The report.
    report: Arc<Report>,
    /// Its statistics.
    agg: Aggregates,
    /// What its `/metrics` scrapes say, read once for the report (`None`: no scrapes).
    server: Option<Arc<ServerSeries>>,
) -> impl IntoView {
    let findings = diagnose_with(&report, &agg, server.as_deref());
    view! {
        <section data-testid="findings">
            <h3>"Diagnosis"</h3>
            {if findings.is_empty() { Some(view! { <p class="muted">"No findings: latency is within the thresholds."</p> }) } else { None }}
            <ul>
                {findings.into_iter().map(|f| {
                    let class = match f.severity { Severity::Problem => "problem", Severity::Warning => "warning", Severity::Info => "info" };
                    view! { <li class=class data-finding=f.id.clone()><strong>{f.title}</strong><br/><span class="evidence">{f.evidence}</span><br/><em>{f.advice}</em></li> }
                }).collect_view()}
            </ul>
        </section>
    }
}

/// Per-group statistics (sweeps, rounds).
#[component]
fn Groups(
    /// Its statistics.
    agg: Aggregates,
) -> impl IntoView {
    let fit = agg.ttft_vs_prompt.map(|f| {
        format!(
            "TTFT ≈ {:.0} ms + {:.3} ms × prompt tokens (R² {:.2})",
            f.intercept, f.slope, f.r2
        )
    });
    let pos = agg.itl_vs_position.map(|f| {
        format!(
            "ITL changes {:+.2} ms per 1,000 output tokens",
            f.slope * 1000.0
        )
    });
    // The prefix cache's hit rate per group (a conversation's rounds), when the server said.
    let cache_column = agg.groups.iter().any(|g| g.prompt_cache.is_some());
    view! {
        <section data-testid="groups">
            <h3>"By level"</h3>
            <table>
                <thead><tr><th>"Group"</th><th>"n"</th><th>"TTFT P50"</th><th>"TTFT P95"</th><th>"ITL P50"</th><th>"ITL P95"</th><th>"E2E P50"</th><th>"Throughput"</th>{cache_column.then(|| view! { <th title="Prompt tokens served from the server's prefix cache, over the requests that reported it">"Cache hit"</th> })}</tr></thead>
                <tbody>
                    {agg.groups.iter().map(|g| view! {
                        <tr data-group=g.group.clone()>
                            <td>{g.group.clone()}</td><td>{g.count}</td>
                            <td>{ms(p(g.ttft, |s| s.p50))}</td><td>{ms(p(g.ttft, |s| s.p95))}</td>
                            <td>{ms(p(g.itl, |s| s.p50))}</td><td>{ms(p(g.itl, |s| s.p95))}</td>
                            <td>{ms(p(g.e2e, |s| s.p50))}</td><td>{per_s(g.throughput_tokens_per_s)}" tok"</td>
                            {cache_column.then(|| view! { <td data-testid="round-cache-hit-rate">{g.prompt_cache.map_or("—".into(), |c| crate::format::pct(c.hit_rate()))}</td> })}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            {agg.prompt_cache.map(|c| view! { <p data-testid="cache-hit-rate">{c.sentence()}</p> })}
            {fit.map(|f| view! { <p data-testid="prompt-fit">{f}</p> })}
            {pos.map(|f| view! { <p>{f}</p> })}
            {agg.knee_level.map(|k| view! { <p data-testid="knee">{format!("Knee: latency bends at level {k}")}</p> })}
        </section>
    }
}

/// Share link and exports.
#[component]
fn ShareBox(
    /// The report.
    report: Arc<Report>,
) -> impl IntoView {
    let studio = use_studio();
    // Made on demand: a large run's link takes a moment to encode.
    let made = RwSignal::new(None::<SharedLink>);
    let make = {
        let report = Arc::clone(&report);
        move |_| made.set(Some(share_link(&report)))
    };
    let on = |export: fn(&Report), report: &Arc<Report>| {
        let report = Arc::clone(report);
        move |_| export(&report)
    };
    // The summary at the level chosen when clicked.
    let summary = |export: fn(&Report, f64), report: &Arc<Report>| {
        let report = Arc::clone(report);
        move |_| export(&report, studio.confidence.get_untracked().level)
    };
    // llm-d Benchmark Reports v0.2, one file per load point, built on click.
    let export_llmd = {
        let report = Arc::clone(&report);
        move |_| export::export_llmd(studio, &report)
    };
    let timeline_lines = report.requests.iter().filter(|q| q.raw.is_some()).count();
    view! {
        <section class="share">
            <button data-testid="make-share-link" on:click=make>"Make a share link"</button>
            {move || made.get().map(|SharedLink { link, kept, left_out }| view! {
                <label>{format!("Share link (no server storage): {kept}")}
                    <input readonly data-testid="share-link" prop:value=link />
                </label>
                <p class="muted" data-testid="share-left-out">{format!("Left out of the link: {left_out}. For every detail, send the exported JSON (Import in the runs list opens it).")}</p>
            })}
            <button class="link" data-testid="export-json" on:click=on(export::export_json, &report)>"Export JSON"</button>
            " · "
            <button class="link" data-testid="export-csv" on:click=on(export::export_csv, &report)>"Export CSV"</button>
            " · "
            <button class="link" data-testid="export-summary-csv" on:click=summary(export::export_summary_csv, &report)
                title="Every headline figure with its interval at the chosen confidence level (or the requests it needs for one), one row">"Summary CSV"</button>
            " · "
            <button class="link" data-testid="export-summary-json" on:click=summary(export::export_summary_json, &report)
                title="Every headline figure with its interval at the chosen confidence level, in an intervals object">"Summary JSON"</button>
            " · "
            <button class="link" data-testid="export-windows" on:click=summary(export::export_windows_csv, &report)
                title="The run's figures per time window (TTFT and ITL P50/P99 with intervals, output tokens/s, requests in flight), one row a window">"Windows CSV"</button>
            " · "
            <button class="link" data-testid="export-llmd" on:click=export_llmd
                title="llm-d Benchmark Report v0.2: one file per load point (benchmark_report_v0.2,_….yaml, JSON inside), as llm-d-benchmark's analysis reads them; no API key or header">"llm-d report (v0.2)"</button>
            // The raw bytes and times of every request that kept them (runs measured here, or
            // read from timeline files), in the format Locust's workers write.
            {(timeline_lines > 0).then(|| view! {
                " · "
                <button class="link" data-testid="export-timeline" on:click=on(export::export_timeline, &report)
                    title="Every request's raw bytes and times (ttft-timeline/1 JSON Lines): Import brings it back, merged with other clients' files">"Export timeline"</button>
            })}
        </section>
    }
}

/// Sets `target` to `compute()` once the page has painted (the next frame, then a task): for
/// the statistics that score every stream, so the charts draw first. Nothing happens when
/// another run was shown meanwhile (the signal is gone).
fn fill_after_paint<T: Send + Sync + 'static>(
    target: RwSignal<Option<T>>,
    compute: impl FnOnce() -> T + 'static,
) {
    request_animation_frame(move || {
        set_timeout(
            move || {
                if !target.is_disposed() {
                    target.try_set(Some(compute()));
                }
            },
            std::time::Duration::ZERO,
        );
    });
}

lazy_part! {
    preload = preload_complete_parts;
    /// What a complete run adds to its report: the diagnosis, the server's view, the charts, the
    /// roofline, the replay, sharing, the SLO and the request table. Lazy: its code (chart options,
    /// the share codec, diagnosis, the server's series) loads with the first complete run shown.
    pub(crate) async fn complete_parts(r: Arc<Report>, agg: Aggregates, started: f64) -> AnyView {
        complete_parts_view(r, agg, started)
    }
}

/// [`complete_parts`]' views (apart, so that rustfmt formats them).
fn complete_parts_view(r: Arc<Report>, agg: Aggregates, started: f64) -> AnyView {
    // The run held to its SLO, scored as late as the experience (the same streams): with a
    // reading-QoE objective it scores every stream again, which would hold up the drawing of
    // a large run. A run of levels has its load charts drawn again then, marked where the SLO
    // holds.
    let levels = agg.groups.iter().filter(|g| g.level.is_some()).count();
    let slo = RwSignal::new(None);
    let chart_specs = RwSignal::new(Vec::<ttft_charts::ChartSpec>::new());
    let score_slo = {
        let (r, agg) = (Arc::clone(&r), agg.clone());
        Callback::new(move |()| {
            let (r, agg) = (Arc::clone(&r), agg.clone());
            fill_after_paint(slo, move || {
                let scored = ttft_core::slo::evaluate(&r, &r.slo);
                if levels >= 2 {
                    let marked = ttft_charts::load_charts(&r, &agg, &scored);
                    chart_specs.try_update(|specs| {
                        for chart in marked {
                            if let Some(old) = specs.iter_mut().find(|s| s.id == chart.id) {
                                *old = chart;
                            }
                        }
                    });
                }
                scored
            });
        })
    };
    // The server's scrapes are read once for the report's charts, diagnosis and server view
    // (they arrive with the end of the run).
    let server = r.server_series().map(Arc::new);
    // The CDF bands at the user's level when the run is drawn.
    let level = use_studio().confidence.get_untracked().level;
    chart_specs.set(ttft_charts::report_charts_before_slo(
        &r,
        &agg,
        server.as_deref(),
        level,
    ));
    let stem = r.title.replace([' ', ':', '·', '/'], "_");
    let measured = ttft_core::compare::per_token_ms(&agg);
    let context = ttft_core::roofline::mean_decode_context(&r).unwrap_or(1000.0);
    view! {
        <Findings report=r.clone() agg=agg.clone() server=server.clone() />
        <crate::components::schedule_lag::ScheduleLagFigure report=r.clone() />
        <crate::components::rate_chart::RateChart report=r.clone() />
        <crate::components::time_slices::TimeSlicesView report=r.clone() />
        <crate::components::trace_reuse::TraceReplayed report=r.clone() cache=agg.prompt_cache />
        <crate::components::server_view::ServerView report=r.clone() agg=agg.clone() series=server />
        <crate::components::charts::ChartGrid specs=chart_specs file_stem=stem testid="report-charts" started_ms=started on_all_drawn=Some(score_slo) />
        <crate::components::roofline::RooflinePanel measured_ms=measured context_tokens=context />
        // Only the (at most four) streams the replay plays are copied.
        <crate::components::replay::Replay records=r.requests.iter().filter(|q| !q.warmup && !q.replay.is_empty()).take(4).cloned().collect() reading=r.experience.reading />
        <crate::components::render_lab::OpenLab report=r.clone() />
        <crate::components::openers::HouseOpeners report=r.clone() />
        <ShareBox report=r.clone() />
        <crate::components::slo::SloPanel report=r.clone() result=slo.into() />
        <crate::components::request_table::RequestTable report=r slo=slo />
    }
    .into_any()
}

/// Builds the report of a run, live (`complete` false: headline and groups) or complete.
pub type ReportBody = fn(Arc<Report>, bool) -> AnyView;

lazy_part! {
    preload = preload_report_body;
    /// [`report_body`], once its code has loaded. Lazy: the report's views (headline, groups,
    /// experience figures, findings) load with the first run shown, live or saved.
    pub(crate) async fn load_report_body() -> ReportBody {
        report_body as ReportBody
    }
}

/// The headline's intervals: a complete run's samples are read once, after paint and after
/// its experience scores (scoring every request again for the per-request reading scores
/// takes a while on a large run), then each figure's interval follows the user's level. A
/// live run has none: nothing may delay the stamps of its reads.
fn tiles_of(
    r: &Arc<Report>,
    agg: &Aggregates,
    complete: bool,
    experience: RwSignal<Option<ExperienceSummary>>,
) -> Tiles {
    let samples = RwSignal::new(None::<Arc<(Aggregates, RunSamples)>>);
    if complete {
        let (r, agg) = (Arc::clone(r), agg.clone());
        // Queued after the experience scores, so they are in by then.
        fill_after_paint(samples, move || {
            let mut full = agg;
            full.experience = experience
                .try_get_untracked()
                .flatten()
                .unwrap_or_else(|| r.experience_summary());
            let s = RunSamples::of(&r, &full);
            Arc::new((full, s))
        });
    }
    let confidence = use_studio().confidence;
    let rows = Memo::new(move |_| {
        let level = confidence.get().level;
        samples.with(|s| {
            s.as_ref()
                .map(|s| Arc::new(summary_rows(&s.0, &s.1, level)))
        })
    });
    Tiles(rows.into())
}

/// The headline of a run restricted to its steady state (the warm-up before it left out).
fn steady_headline(r: Arc<Report>) -> AnyView {
    let agg = r.aggregates();
    let experience = RwSignal::new(Some(agg.experience.clone()));
    let tiles = tiles_of(&r, &agg, true, experience);
    view! { <Headline agg=agg experience=experience.into() reading=r.experience.reading deadlines=r.experience.deadlines tiles=tiles /> }.into_any()
}

/// The report of a run (see [`ReportBody`]).
fn report_body(r: Arc<Report>, complete: bool) -> AnyView {
    let started = crate::browser::clock::now_ms();
    // Experience scores wait for the end of the run, like the charts, and then for the
    // charts: scoring every stream is the slowest part of a large run's statistics, so
    // the page draws first and the scores follow once it has painted. A shared link
    // carries its run's scores.
    let headline = r.shared.as_ref().is_some_and(|s| s.headline.is_some());
    let defer = complete && !headline;
    let agg = if complete && !defer {
        r.aggregates()
    } else {
        r.live_aggregates()
    };
    let experience = RwSignal::new((!defer).then(|| agg.experience.clone()));
    if defer {
        let r = Arc::clone(&r);
        fill_after_paint(experience, move || r.experience_summary());
    }
    let tiles = tiles_of(&r, &agg, complete, experience);
    // The steady-state choice of this view (not saved): the headline is the steady state's
    // while it is on.
    let steady = complete.then(crate::components::time_slices::SteadyChoice::provide);
    let headline_view = {
        let (r, agg) = (Arc::clone(&r), agg.clone());
        move || {
            match steady.and_then(|s| s.headline_report(&r)) {
            Some(steady) => steady_headline(steady),
            None => view! { <Headline agg=agg.clone() experience=experience.into() reading=r.experience.reading deadlines=r.experience.deadlines tiles=tiles /> }.into_any(),
        }
        }
    };
    view! {
    <article class="report" data-testid="report">
        <h2 data-testid="report-title">{r.title.clone()}</h2>
        <span class="muted" data-testid="run-status">{if complete { "complete" } else { "running" }}</span>
        <p class="muted">{format!("{} · model {} · {} requests · ", r.endpoint.base_url, r.endpoint.model, r.requests.len())}
            // The clock's resolution and the browser whose clock it is: each engine has its own.
            <span data-testid="report-clock" title=r.user_agent.clone().unwrap_or_default()>{format!("clock {}{}", r.clock_resolution_ms.map_or("?".into(), |c| format!("{:.0} µs", c * 1000.0)), r.user_agent.as_deref().map_or(String::new(), |ua| format!(" in {}", ttft_core::report::browser_name(ua))))}</span>
        </p>
        <p class="muted" data-testid="run-transport">{crate::format::transport_line(&r.transports(), r.stamping.as_deref())}</p>
        {r.client_health.as_ref().map(|h| {
            let healthy = matches!(h.verdict, ttft_core::client_health::Verdict::Healthy);
            view! {
                <div class="client-health" class:warning=!healthy data-testid="client-health" data-healthy=healthy.to_string()>
                    <span>{format!("Client health: {}", h.headline())}</span>
                    {(!h.causes.is_empty()).then(|| view! {
                        <ul>{h.causes.iter().map(|c| view! { <li data-cause=format!("{:?}", c.kind)>{c.sentence.clone()}</li> }).collect_view()}</ul>
                    })}
                </div>
            }
        })}
        <crate::components::saturation_stop::SaturationNote report=r.clone() />
        {r.vantage.as_ref().map(|v| view! {
            <p class="muted" data-testid="run-vantage">{format!("Measured by {v}, read from timeline files: its times include that client's own delays, as the studio's include the browser's.")}</p>
        })}
        {ttft_core::probe::probe_under_load(&r).map(|p| view! {
            <p class="muted" data-testid="probe-headline">{format!(
                "A probe under load: the headline, groups and distributions are the probe's {} browser request(s), the user's experience; the {} {} request(s) are the load, drawn against the probe in “The probe under load” (at most {} in flight).",
                p.probe_count, p.load_count, p.load_client, p.peak_in_flight
            )}</p>
        })}
        {(!r.import_notes.is_empty()).then(|| view! {
            <ul class="warning" data-testid="import-notes">
                {r.import_notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}
            </ul>
        })}
        {r.shared.as_ref().map(|s| view! {
            <p class="muted" data-testid="shared-from">{format!(
                "Opened from a share link ({}): times kept to {} ms, each time within {} ms of the original run's, each gap within {}. Left out: {}.",
                s.format, s.precision_ms, s.precision_ms / 2.0, s.precision_ms, s.left_out.join("; ")
            )}</p>
        })}
        <crate::components::openers::RunOpeners report=r.clone() />
        {complete.then(|| view! { <crate::components::time_slices::SteadyStateChoice report=r.clone() /> })}
        {headline_view}
        <crate::components::painted::PaintHeadline report=r.clone() />
        {complete.then(|| view! { <crate::components::reader_settings::ReaderSettings config=r.experience carried=headline /> })}
        <Groups agg=agg.clone() />
        {r.source_summary.clone().map(|s| view! { <crate::components::source_summary::SourceSummaryTable summary=s /> })}
        {if complete {
            view! { <crate::components::Lazily part=complete_parts(r, agg, started) what="the diagnosis, charts and request table" /> }.into_any()
        } else {
            // While requests stream, the page stays light (headline and groups
            // only): rendering must not delay the timestamps of the reads.
            view! { <p class="muted" data-testid="charts-pending">"Diagnosis, charts, replay, export and the request table appear when the run completes, so rendering never delays a timestamp."</p> }.into_any()
        }}
    </article>
}.into_any()
}

/// Loads the code of a run's report views (see `actions::run::load_run_parts`): its body, then
/// what a complete run adds.
pub fn load_view_parts() -> std::pin::Pin<Box<dyn Future<Output = Result<(), PartError>>>> {
    Box::pin(async {
        preload_report_body().await?;
        preload_complete_parts().await?;
        Ok(())
    })
}

/// The report of the selected (or live) run; the first-run guide when there is none.
#[component]
pub fn ReportView() -> impl IntoView {
    let state = use_studio().state;
    let report = shown_report();
    let body = crate::components::OnDemand::new(load_report_body);
    // The report's code is asked for only once there is a report to show.
    move || match report.get().map(|shown| (shown, body.get())) {
        None => view! { <crate::components::guide::FirstRun /> }.into_any(),
        Some((ShownReport::Run(r), Some(Ok(build)))) => build(r, true),
        // Read now, not held: the next batch appends to it in place.
        Some((ShownReport::Live(_), Some(Ok(build)))) => {
            match state.with_untracked(|s| s.live_report()) {
                Some(r) => build(r, false),
                None => ().into_any(),
            }
        }
        Some((_, Some(Err(e)))) => view! {
            <p class="error" data-testid="part-error">{e.to_string()}" "
                <button on:click=move |_| body.retry()>"Try again"</button>
            </p>
        }
        .into_any(),
        Some((_, None)) => {
            view! { <p class="muted" data-testid="part-loading">"Loading the report…"</p> }
                .into_any()
        }
    }
}
