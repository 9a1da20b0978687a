//! Service-level objectives of a run: the set it is held to (a preset or the user's own, in
//! the core's text form), the sentence that says where it holds and how sure that is, and
//! attainment (with its Wilson interval), each objective's share of requests with its verdict,
//! and goodput per level ([`ttft_core::slo`] computes every figure and word).

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::report::Report;
use ttft_core::slo::{LevelSlo, ObjectiveResult, SloReport, SloSet, Verdict};

use crate::actions;
use crate::format::{ms, pct, per_s, score};
use crate::state::use_studio;

fn objective_value(o: &ObjectiveResult) -> String {
    let v = o.value_at_percentile;
    let shown = if o.objective.metric.higher_is_better() {
        score(v)
    } else {
        ms(v)
    };
    let mark = if o.met { "✓" } else { "✗" };
    match v {
        Some(_) => format!("{shown} {mark}"),
        None if o.counted == 0 => "no requests".to_owned(),
        None => format!("failed requests {mark}"),
    }
}

/// The objective's verdict for styling and tests: `meets`, `misses` or `cannot_tell`.
fn verdict_id(o: &ObjectiveResult) -> &'static str {
    match o.verdict {
        Verdict::Meets => "meets",
        Verdict::Misses => "misses",
        Verdict::CannotTell => "cannot_tell",
    }
}

/// One row of the table: a level or the whole run.
#[component]
fn LevelRow(
    /// The level's figures.
    level: LevelSlo,
    /// The highest level that meets the SLO with every level below it.
    highest: Option<f64>,
) -> impl IntoView {
    let is_highest = level.level.is_some() && level.level == highest;
    let attainment = match level.attainment_interval {
        Some(i) => format!(
            "{} ({:.0} % interval {}–{})",
            pct(level.attainment),
            i.level * 100.0,
            pct(i.lo),
            pct(i.hi)
        ),
        None => pct(level.attainment),
    };
    view! {
        <tr class:met=level.met class:missed=!level.met class:highest=is_highest data-level=level.group.clone()>
            <td>{level.group.clone()}{is_highest.then_some(" ◀ highest meeting")}</td>
            <td>{format!("{} of {}", level.meeting, level.requests)}</td>
            <td title="Wilson interval of the share of requests that met every objective">{attainment}</td>
            <td>{per_s(level.goodput_per_s)}</td>
            {level.objectives.iter().map(|o| view! {
                <td data-verdict=verdict_id(o)>
                    {objective_value(o)}
                    <div class="slo-attainment">{o.attainment_words()}</div>
                </td>
            }).collect_view()}
        </tr>
    }
}

/// The run's SLO: the set, where it holds and per-level attainment. Changing the set re-scores
/// the run and keeps the set with it (and for new runs).
#[component]
pub fn SloPanel(
    /// The run (complete).
    report: Arc<Report>,
    /// The run held to its set, once scored (just after the page has painted: a reading-QoE
    /// objective scores every stream, the slowest statistic of a large run).
    result: Signal<Option<SloReport>>,
) -> impl IntoView {
    let studio = use_studio();
    let text = RwSignal::new(report.slo.to_string());
    let error = RwSignal::new(None::<String>);
    let apply = move || match SloSet::parse(&text.get_untracked()) {
        Ok(set) => {
            error.set(None);
            actions::settings::set_slo(studio, set);
        }
        Err(e) => error.set(Some(e.to_string())),
    };
    let pick = move |name: String| {
        if let Some(set) = SloSet::preset(&name) {
            text.set(set.to_string());
            error.set(None);
            actions::settings::set_slo(studio, set);
        }
    };
    let current = report.slo.name.clone();
    view! {
        <section class="slo" data-testid="slo">
            <h3>"Service-level objectives"</h3>
            <div class="slo-edit">
                <select data-testid="slo-preset" aria-label="objectives preset" on:change=move |ev| pick(event_target_value(&ev))>
                    {SloSet::presets().into_iter().map(|p| {
                        let selected = p.name == current;
                        view! { <option value=p.name.clone() selected=selected>{format!("{} preset", p.name)}</option> }
                    }).collect_view()}
                    <option value="" selected=SloSet::preset(&current).is_none()>"your own"</option>
                </select>
                <input data-testid="slo-input" aria-label="objectives" bind:value=text
                    title="Objectives joined by commas: metric (ttft, itl, e2e, fluidity, qoe), percentile over requests, limit; e.g. ttft p90 <= 1000ms, qoe p10 >= 0.9"
                    on:keydown=move |ev| if ev.key() == "Enter" { apply() } />
                <button data-testid="slo-apply" on:click=move |_| apply()>"Apply"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="error" data-testid="slo-error">{e}</p> })}
            {move || match result.get() {
                None => view! { <p class="muted">"Scoring…"</p> }.into_any(),
                Some(s) => {
                    let highest = s.highest_level_meeting;
                    let heads: Vec<String> = s.set.objectives.iter().map(ToString::to_string).collect();
                    let multi = s.levels.len() > 1;
                    view! {
                        <p data-testid="slo-sentence">{s.sentence()}</p>
                        <table data-testid="slo-levels">
                            <thead><tr>
                                <th>"Level"</th><th>"Requests meeting"</th><th>"Attainment"</th><th title="Requests that met the SLO per second of the level's wall time">"Goodput"</th>
                                {heads.into_iter().map(|h| view! { <th>{h}</th> }).collect_view()}
                            </tr></thead>
                            <tbody>
                                {multi.then(|| s.levels.iter().cloned().map(|l| view! { <LevelRow level=l highest=highest /> }).collect_view())}
                                <LevelRow level=s.overall.clone() highest=None />
                            </tbody>
                        </table>
                    }.into_any()
                }
            }}
        </section>
    }
}
