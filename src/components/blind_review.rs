//! Blind review: one recorded stream of each of two compared runs, played side by side at
//! their true timing in panes labelled only "Left" and "Right" (which run plays where is
//! random, [`ttft_core::review::pair_for_review`]). The reviewer says which felt faster and
//! only then learns which run was which; the vote is kept with both runs
//! ([`crate::actions::votes::record_blind_vote`]) and the comparison sets the votes beside the
//! reading QoE.

use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;
use ttft_core::naming::distinguishing_names;
use ttft_core::report::ReplayPiece;
use ttft_core::review::{
    Choice, ReviewPair, Run, VOTE_LEVEL, pair_for_review, tally_both, vote_test,
};

use crate::browser::clock::now_ms;
use crate::components::replay::{as_drawn, drawn_note, release_lag_bound, visible};
use crate::format::ms;
use crate::state::{RunId, use_studio};

/// A random seed from two 32-bit draws (one `Math.random()` scaled to 2^64 would leave its
/// low bits, which choose the sides, empty).
fn random_seed() -> u64 {
    let draw = || (js_sys::Math::random() * 4_294_967_296.0) as u64;
    (draw() << 32) | draw()
}

/// One pane: the stream as it arrived, with nothing that names its run.
#[component]
fn Pane(
    /// `Left` or `Right`: all the pane says about itself.
    side: &'static str,
    /// The stream (times from the request's send).
    pieces: Vec<ReplayPiece>,
    /// Replay clock (ms since both requests were sent).
    clock: ReadSignal<f64>,
) -> impl IntoView {
    let first = pieces.first().map(|p| p.at_ms);
    let typed = move || visible(&pieces, 0, clock.get());
    view! {
        <div class="lane blind-pane" data-testid=format!("blind-{}", side.to_lowercase())>
            <div class="lane-head">{side}</div>
            {move || match first {
                Some(f) if clock.get() < f => Some(view! { <div class="waiting">"waiting for the first token…"</div> }),
                _ => None,
            }}
            <div class="typed">
                {move || {
                    let (opener, rest, reasoning) = typed();
                    view! {
                        {(!reasoning.is_empty()).then(|| view! { <span class="reasoning">{reasoning}</span> })}
                        {opener}{rest}
                    }
                }}
            </div>
        </div>
    }
}

/// The two unnamed streams side by side, playing at `clock`; a line when one run has none.
#[component]
fn Lanes(
    /// The streams to play.
    pair: Memo<Option<ReviewPair>>,
    /// Time since the play started (ms).
    clock: ReadSignal<f64>,
) -> impl IntoView {
    let strategy = crate::state::use_studio().surface.get_untracked();
    move || {
        match pair.get() {
        None => view! {
            <p class="muted" data-testid="blind-nothing">
                "One of the runs has no recorded stream to play (a share link keeps only a few)."
            </p>
        }
        .into_any(),
        Some(p) => view! {
            <p class="muted">
                {if p.same_index {
                    "Both requests were sent at the same moment, with the same place in their runs. Watch for the first word and the pace."
                } else {
                    "Both requests were sent at the same moment. Watch for the first word and the pace."
                }}
            </p>
            <div class="lanes">
                <p class="muted" data-testid="blind-drawn">{drawn_note(strategy)}</p>
                <Pane side="Left" pieces=as_drawn(&p.left.replay, strategy) clock=clock />
                <Pane side="Right" pieces=as_drawn(&p.right.replay, strategy) clock=clock />
            </div>
        }
        .into_any(),
    }
    }
}

/// A blind review of two runs: play, vote, then the reveal; again or with another pair.
#[component]
pub fn BlindReview(
    /// The first run compared.
    a: RunId,
    /// The second run compared.
    b: RunId,
    /// Closes the review (back to the comparison).
    on_close: Callback<()>,
) -> impl IntoView {
    let studio = use_studio();
    let seed = RwSignal::new(random_seed());
    // The reports are read untracked: a vote changes them, and must not change the pair.
    let pair = Memo::new(move |_| {
        let seed = seed.get();
        let (ra, rb) = studio.state.with_untracked(|s| {
            Some((Arc::clone(&s.run(a)?.report), Arc::clone(&s.run(b)?.report)))
        })?;
        pair_for_review(&ra, &rb, seed)
    });
    let voted = RwSignal::new(None::<Choice>);
    let (clock, set_clock) = signal(0.0f64);
    let timer = StoredValue::new_local(None::<IntervalHandle>);
    let started = StoredValue::new(0.0f64);
    let stop = move || {
        if let Some(h) = timer.try_get_value().flatten() {
            h.clear();
        }
        let _ = timer.try_set_value(None);
    };
    let play = move || {
        stop();
        let end = pair.with_untracked(|p| p.as_ref().map_or(0.0, ReviewPair::end_ms))
            + release_lag_bound(studio.surface.get_untracked())
            + 200.0;
        started.set_value(now_ms());
        set_clock.set(0.0);
        let h = set_interval_with_handle(
            move || {
                let t = now_ms() - started.try_get_value().unwrap_or(0.0);
                let _ = set_clock.try_set(t.min(end));
                if t >= end {
                    stop();
                }
            },
            Duration::from_millis(30),
        );
        timer.set_value(h.ok());
    };
    on_cleanup(stop);
    play();
    let requests = move || {
        pair.with_untracked(|p| {
            p.as_ref()
                .map(|p| (p.stream(Run::A).request, p.stream(Run::B).request))
        })
    };
    let next = move || {
        let current = requests();
        // Other requests when the runs have them (a few draws; else the same two, the sides
        // drawn again).
        for _ in 0..8 {
            seed.set(random_seed());
            if requests() != current {
                break;
            }
        }
        voted.set(None);
        play();
    };
    let cast = move |choice: Choice| {
        if voted.get_untracked().is_some() {
            return;
        }
        let Some(p) = pair.get_untracked() else {
            return;
        };
        crate::actions::votes::record_blind_vote(studio, a, b, &p, choice);
        voted.set(Some(choice));
    };
    // The runs' names (by what differs between them) and, in words, what the votes cast
    // between them so far tell, with its uncertainty.
    let named = move || {
        studio.state.with_untracked(|s| {
            let (ra, rb) = (&s.run(a)?.report, &s.run(b)?.report);
            let names = distinguishing_names(&[ra.as_ref(), rb.as_ref()]);
            let t = tally_both(ra, rb);
            let so_far =
                vote_test(t.for_a, t.for_b, VOTE_LEVEL).verdict([&names[0], &names[1]], t.same);
            Some((names, so_far))
        })
    };
    // Said only once the vote is in.
    let reveal = move || {
        let choice = voted.get()?;
        let p = pair.get()?;
        let felt = match choice {
            Choice::Left => "You found the left one faster.",
            Choice::Right => "You found the right one faster.",
            Choice::Same => "You found no difference.",
        };
        let (names, so_far) = named().unwrap_or_default();
        let title = |run: Run| {
            names
                .get(usize::from(run == Run::B))
                .cloned()
                .unwrap_or_default()
        };
        Some(view! {
            <p class="reveal" data-testid="blind-reveal">
                {format!(
                    "Left was “{}” (request #{}), right was “{}” (request #{}). {felt} The vote is kept with both runs.",
                    title(p.left.run),
                    p.left.request,
                    title(p.right.run),
                    p.right.request,
                )}
            </p>
            <p class="votes" data-testid="blind-so-far">{format!("So far: {so_far}.")}</p>
        })
    };
    view! {
        <article class="report blind-review" data-testid="blind-review-panel">
            <h2>"Blind review"</h2>
            <p>"Which felt faster? The runs are not named until you vote, and the sides are drawn at random."</p>
            <div class="replay-controls">
                <button data-testid="blind-play" on:click=move |_| play()>"Play again"</button>
                <span class="muted" data-testid="blind-clock">{move || ms(Some(clock.get()))}</span>
            </div>
            <Lanes pair=pair clock=clock />
            <div class="replay-controls" role="group" aria-label="Your vote">
                <button data-testid="vote-left" disabled=move || voted.get().is_some() on:click=move |_| cast(Choice::Left)>"Left felt faster"</button>
                <button data-testid="vote-right" disabled=move || voted.get().is_some() on:click=move |_| cast(Choice::Right)>"Right felt faster"</button>
                <button data-testid="vote-same" disabled=move || voted.get().is_some() on:click=move |_| cast(Choice::Same)>"Same"</button>
            </div>
            {reveal}
            <div class="replay-controls">
                <button data-testid="blind-next" on:click=move |_| next()>"Next pair"</button>
                <button data-testid="blind-close" on:click=move |_| on_close.run(())>"Back to the comparison"</button>
            </div>
        </article>
    }
}
