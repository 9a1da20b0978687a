//! Compare 2–4 runs side by side: headline figures, which is better on each, and the article's
//! lesson made visible — total latency against TTFT and ITL.

use leptos::prelude::*;
use ttft_core::report::{Aggregates, Report};
use ttft_core::stats::Summary;

use crate::format::ms;
use crate::state::use_studio;

type Pick = fn(&Aggregates) -> Option<f64>;

fn p50(s: Option<Summary>) -> Option<f64> {
    s.map(|s| s.p50)
}

const ROWS: &[(&str, Pick)] = &[
    ("TTFT P50", |a| p50(a.ttft)),
    ("TTFT P95", |a| a.ttft.map(|s| s.p95)),
    ("Meaningful first token P50", |a| p50(a.meaningful)),
    ("ITL P50", |a| p50(a.itl)),
    ("ITL P95", |a| a.itl.map(|s| s.p95)),
    ("TPOT P50", |a| p50(a.tpot)),
    ("E2E (total latency) P50", |a| p50(a.e2e)),
];

/// The comparison of the runs ticked in the runs list.
#[component]
pub fn CompareView() -> impl IntoView {
    let studio = use_studio();
    move || {
        let picked: Vec<Report> = studio
            .compare
            .get()
            .iter()
            .filter_map(|i| studio.runs.with(|r| r.get(*i).cloned()))
            .collect();
        if picked.len() < 2 {
            return None;
        }
        let aggs: Vec<Aggregates> = picked.iter().map(Report::aggregates).collect();
        let faster_start = (0..aggs.len()).min_by(|a, b| {
            p50(aggs[*a].ttft)
                .unwrap_or(f64::MAX)
                .total_cmp(&p50(aggs[*b].ttft).unwrap_or(f64::MAX))
        });
        let faster_end = (0..aggs.len()).min_by(|a, b| {
            p50(aggs[*a].e2e)
                .unwrap_or(f64::MAX)
                .total_cmp(&p50(aggs[*b].e2e).unwrap_or(f64::MAX))
        });
        let lesson = match (faster_start, faster_end) {
            (Some(s), Some(e)) if s != e => format!(
                "“{}” finishes first, but “{}” shows its first token {} sooner: users will feel “{}” is faster. Total latency lies.",
                picked[e].title,
                picked[s].title,
                ms(Some(
                    p50(aggs[e].ttft).unwrap_or(0.0) - p50(aggs[s].ttft).unwrap_or(0.0)
                )),
                picked[s].title
            ),
            (Some(s), _) => format!(
                "“{}” is ahead both on first token and on total latency.",
                picked[s].title
            ),
            _ => String::new(),
        };
        Some(view! {
            <article class="report compare" data-testid="compare">
                <h2>"Compare"</h2>
                <p class="lesson" data-testid="compare-lesson">{lesson}</p>
                <table>
                    <thead><tr><th>"Metric"</th>{picked.iter().map(|r| view! { <th>{r.title.clone()}</th> }).collect_view()}</tr></thead>
                    <tbody>
                        {ROWS.iter().map(|(label, pick)| {
                            let values: Vec<Option<f64>> = aggs.iter().map(pick).collect();
                            let best = values.iter().flatten().copied().fold(f64::INFINITY, f64::min);
                            view! {
                                <tr>
                                    <td>{*label}</td>
                                    {values.into_iter().map(|v| {
                                        let is_best = v == Some(best);
                                        let delta = v.map(|x| x - best).filter(|d| *d > 0.0).map(|d| format!(" (+{})", ms(Some(d)))).unwrap_or_default();
                                        view! { <td class:best=is_best>{ms(v)}{delta}</td> }
                                    }).collect_view()}
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </article>
        })
    }
}
