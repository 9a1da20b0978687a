//! Compare 2–4 runs side by side: the core's comparison (best per metric, by how much, each
//! figure's interval and each run's difference from the first at the user's confidence level,
//! and the article's lesson: total latency against TTFT and ITL) and the overlaid charts.

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::client_health::compare_flag;
use ttft_core::compare::{compare_reports, vantage_note, vote_summary};
use ttft_core::differences::Confidence;
use ttft_core::naming::distinguishing_names;
use ttft_core::report::Report;

use crate::browser::clock::now_ms;
use crate::components::blind_review::BlindReview;
use crate::components::charts::ChartGrid;
use crate::components::compare_table::row_view;
use crate::state::{RunId, StudioStateStoreFields, use_studio};
use ttft_core::run_stats::RunStats;

/// The reports compared, shared (never copied): another set only when one of them is another
/// report, so a change beside them (a notice, a save) draws nothing again.
#[derive(Clone)]
struct Picked(Vec<Arc<Report>>);

impl PartialEq for Picked {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

lazy_part! {
    /// The comparison of `picked` (two or more runs): the core's table, the votes, one replay per
    /// run and the overlaid charts. Lazy: its code loads when runs are first compared.
    async fn comparison_of(
        picked: Vec<Arc<Report>>,
        reviewing: RwSignal<bool>,
        confidence: Confidence,
    ) -> AnyView {
        comparison_view(picked, reviewing, confidence)
    }
}

/// [`comparison_of`]'s view (apart, so that rustfmt formats it).
fn comparison_view(
    picked: Vec<Arc<Report>>,
    reviewing: RwSignal<bool>,
    confidence: Confidence,
) -> AnyView {
    let started = now_ms();
    let picked: Vec<&Report> = picked.iter().map(Arc::as_ref).collect();
    let titles: Vec<&str> = picked.iter().map(|r| r.title.as_str()).collect();
    // Sentences name the runs by what differs between them, not by their full titles.
    let names = distinguishing_names(&picked);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (aggs, samples, cmp) = compare_reports(&names, &picked, confidence);
    let vantages: Vec<(&str, Option<&str>)> = picked
        .iter()
        .zip(&names)
        .map(|(r, name)| (*name, r.vantage.as_deref()))
        .collect();
    let vantage = vantage_note(&vantages);
    // Runs whose tab may have added time to their figures (hidden, busy, queueing).
    let health: Vec<String> = picked
        .iter()
        .zip(&names)
        .filter_map(|(r, name)| {
            let flag = compare_flag(r.client_health.as_ref()?)?;
            Some(format!("{name}: {flag}"))
        })
        .collect();
    let votes = vote_summary(&names, &picked, &cmp);
    let vote_row = votes.as_ref().map(|v| {
        // A run's votes are marked best only when they show a preference.
        let (winner, total) = (v.winner.filter(|_| v.conclusive), v.total);
        let cells = v
            .wins
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let best = winner == Some(i);
                view! { <td class:best=best>{format!("{w} of {total}")}</td> }
            })
            .collect_view();
        view! {
            <tr data-metric="Blind review votes" data-testid="compare-votes-row">
                <td title="votes won in blind reviews: higher is better">"Blind review votes"</td>
                {cells}
            </tr>
        }
    });
    let two_runs = picked.len() == 2;
    // The reader the compared runs are scored with (the first run's settings).
    let reading = picked[0].experience.reading;
    let specs = ttft_charts::compare_charts(&titles, &picked, &aggs, &cmp);
    // One recorded stream per run, the one with the median TTFT, side by side.
    let (replays, replay_names): (Vec<_>, Vec<_>) = picked
        .iter()
        .zip(&names)
        .filter_map(|(r, name)| r.median_replay().map(|q| (q.clone(), (*name).to_owned())))
        .unzip();
    view! {
        <article class="report compare" data-testid="compare">
            <h2>"Compare"</h2>
            <p class="lesson" data-testid="compare-lesson">{cmp.lesson.clone()}</p>
            {vantage.map(|v| view! { <p class="warning" data-testid="compare-vantage">{v}</p> })}
            {(!health.is_empty()).then(|| view! {
                <p class="warning" data-testid="compare-health">{format!(
                    "The measuring tab may have added time to these runs' figures: {}. Compare them with care, or measure again in a visible, idle tab.",
                    health.join("; ")
                )}</p>
            })}
            {votes.map(|v| view! { <p class="votes" data-testid="compare-votes" data-agrees=v.agrees.map(|a| a.to_string()) data-conclusive=v.conclusive.to_string()>{v.sentence}</p> })}
            {two_runs.then(|| view! {
                <p>
                    <button data-testid="blind-review" on:click=move |_| reviewing.set(true)>"Blind review"</button>
                    " Play one stream of each run side by side, unnamed, and vote on which felt faster."
                </p>
            })}
            <table data-testid="compare-table">
                <thead><tr><th>"Metric"</th>{names.iter().zip(&titles).map(|(n, t)| view! { <th title=t.to_string()>{n.to_string()}<br/><span class="muted">{t.to_string()}</span></th> }).collect_view()}</tr></thead>
                <tbody>
                    {cmp.rows.iter().filter(|r| r.values.iter().any(Option::is_some)).map(|row| {
                        row_view(row, &samples, names[0], cmp.confidence)
                    }).collect_view()}
                    {vote_row}
                </tbody>
            </table>
            <p class="muted" data-testid="compare-table-note">{cmp.table_note.clone()}</p>
            <crate::components::replay::Replay records=replays names=replay_names reading=reading />
            <ChartGrid specs=specs file_stem="compare".to_owned() testid="compare-charts" started_ms=started />
        </article>
    }
    .into_any()
}

lazy_part! {
    /// [`BlindReview`] of runs `a` and `b`. Lazy: its code loads when a review is first opened.
    async fn blind_review(a: RunId, b: RunId, on_close: Callback<()>) -> AnyView {
        view! { <BlindReview a=a b=b on_close=on_close /> }.into_any()
    }
}

/// The comparison of the runs ticked in the runs list; with exactly two, a blind review of them
/// instead while it is open.
#[component]
pub fn CompareView() -> impl IntoView {
    let studio = use_studio();
    let reviewing = RwSignal::new(false);
    // The two runs a blind review plays, when exactly two are compared: a memo, so that a vote
    // (which changes their reports) does not restart the review.
    let two = Memo::new(move |_| {
        studio.state.compare().track();
        studio.state.runs().track();
        studio
            .state
            .with_untracked(|s| match s.compared().as_slice() {
                [x, y] => Some((x.id, y.id)),
                _ => None,
            })
    });
    // Read by id: runs added or removed meanwhile never change what is compared.
    let picked = Memo::new(move |_| {
        studio.state.compare().track();
        studio.state.runs().track();
        Picked(studio.state.with_untracked(|s| {
            s.compared()
                .into_iter()
                .map(|r| Arc::clone(&r.report))
                .collect()
        }))
    });
    let review = move || {
        let (a, b) = two.get().filter(|_| reviewing.get())?;
        let on_close = Callback::new(move |()| reviewing.set(false));
        // Its code could not be fetched: said, with the way back to the comparison.
        let part = async move {
            Ok(blind_review(a, b, on_close).await.unwrap_or_else(|e| {
                view! {
                    <p class="error" data-testid="part-error">{e.to_string()}" "
                        <button on:click=move |_| on_close.run(())>"Back to the comparison"</button>
                    </p>
                }
                .into_any()
            }))
        };
        Some(view! { <crate::components::Lazily part=part what="the blind review" /> })
    };
    let comparison = move || {
        // The review hides the figures: they would tell the reviewer which run is faster.
        if reviewing.get() && two.get().is_some() {
            return None;
        }
        let Picked(picked) = picked.get();
        if picked.len() < 2 {
            return None;
        }
        // Another level or difference to detect draws the comparison again.
        let confidence = studio.confidence.get();
        Some(
            view! { <crate::components::Lazily part=comparison_of(picked, reviewing, confidence) what="the comparison" /> },
        )
    };
    view! {
        {comparison}
        {review}
    }
}
