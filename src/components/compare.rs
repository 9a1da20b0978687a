//! Compare 2–4 runs side by side: the core's comparison (best per metric, by how much, and the
//! article's lesson: total latency against TTFT and ITL) and the overlaid charts.

use leptos::prelude::*;
use ttft_core::compare::{Better, Unit, compare, vantage_note};
use ttft_core::report::{Aggregates, Report};

use crate::browser::clock::now_ms;
use crate::components::charts::ChartGrid;
use crate::format::{ms, pct, per_s, score};
use crate::state::use_studio;

fn value(unit: Unit, v: Option<f64>) -> String {
    match unit {
        Unit::Ms => ms(v),
        Unit::TokensPerS => per_s(v),
        Unit::Fraction => v.map_or("—".into(), pct),
        Unit::Score => score(v),
    }
}

/// The comparison of the runs ticked in the runs list.
#[component]
pub fn CompareView() -> impl IntoView {
    let studio = use_studio();
    move || {
        // Read by id: runs added or removed meanwhile never change what is compared.
        let picked: Vec<Report> = studio.state.with(|s| {
            s.compared()
                .into_iter()
                .map(|r| Report::clone(&r.report))
                .collect()
        });
        if picked.len() < 2 {
            return None;
        }
        let started = now_ms();
        let aggs: Vec<Aggregates> = picked.iter().map(Report::aggregates).collect();
        let titles: Vec<&str> = picked.iter().map(|r| r.title.as_str()).collect();
        let cmp = compare(&titles, &aggs);
        let vantages: Vec<(&str, Option<&str>)> = picked
            .iter()
            .map(|r| (r.title.as_str(), r.vantage.as_deref()))
            .collect();
        let vantage = vantage_note(&vantages);
        let specs = ttft_charts::compare_charts(&titles, &picked, &aggs, &cmp);
        // One recorded stream per run, the one with the median TTFT, side by side.
        let (replays, replay_names): (Vec<_>, Vec<_>) = picked
            .iter()
            .filter_map(|r| r.median_replay().map(|q| (q.clone(), r.title.clone())))
            .unzip();
        Some(view! {
            <article class="report compare" data-testid="compare">
                <h2>"Compare"</h2>
                <p class="lesson" data-testid="compare-lesson">{cmp.lesson.clone()}</p>
                {vantage.map(|v| view! { <p class="warning" data-testid="compare-vantage">{v}</p> })}
                <table data-testid="compare-table">
                    <thead><tr><th>"Metric"</th>{titles.iter().map(|t| view! { <th>{t.to_string()}</th> }).collect_view()}</tr></thead>
                    <tbody>
                        {cmp.rows.iter().filter(|r| r.values.iter().any(Option::is_some)).map(|row| {
                            let arrow = match row.better { Better::Lower => "lower is better", Better::Higher => "higher is better" };
                            view! {
                                <tr data-metric=row.metric.clone()>
                                    <td title=arrow>{row.metric.clone()}</td>
                                    {row.values.iter().zip(&row.worse_by).enumerate().map(|(i, (v, w))| {
                                        let is_best = row.best == Some(i);
                                        let delta = w.map(|w| format!(" ({:+.0} %)", if row.better == Better::Lower { w * 100.0 } else { -w * 100.0 })).unwrap_or_default();
                                        view! { <td class:best=is_best>{value(row.unit, *v)}{delta}</td> }
                                    }).collect_view()}
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
                <crate::components::replay::Replay records=replays names=replay_names />
                <ChartGrid specs=specs file_stem="compare".to_owned() testid="compare-charts" started_ms=started />
            </article>
        })
    }
}
