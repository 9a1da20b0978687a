//! Typewriter replay: recorded streams played side by side at their true timing (or 0.5×, 2×),
//! with the wait before the first token visible and boilerplate openers highlighted.

use std::time::Duration;

use leptos::prelude::*;
use ttft_core::report::{ReplayPiece, RequestRecord};

use crate::format::ms;

/// What one lane shows at `t` ms: (opener part, rest of the answer, reasoning).
fn visible(pieces: &[ReplayPiece], opener_len: usize, t: f64) -> (String, String, String) {
    let mut answer = String::new();
    let mut reasoning = String::new();
    for p in pieces.iter().take_while(|p| p.at_ms <= t) {
        if p.kind == 'r' {
            reasoning.push_str(&p.text)
        } else {
            answer.push_str(&p.text)
        }
    }
    let cut = opener_len.min(answer.len());
    let cut = (0..=cut)
        .rev()
        .find(|i| answer.is_char_boundary(*i))
        .unwrap_or(0);
    let rest = answer.split_off(cut);
    (answer, rest, reasoning)
}

/// One request's lane.
#[component]
fn Lane(
    /// The request.
    record: RequestRecord,
    /// Replay clock (ms of recorded time).
    clock: ReadSignal<f64>,
    /// What the lane shows (a run's title in a comparison), else the request's index and group.
    name: Option<String>,
) -> impl IntoView {
    let pieces = record.replay.clone();
    let opener_len = record.metrics.opener_text.len();
    let first = pieces.first().map(|p| p.at_ms);
    let label = format!(
        "{} · TTFT {} · E2E {}",
        name.unwrap_or_else(|| format!("#{} · {}", record.index, record.group)),
        ms(record.metrics.ttft_ms),
        ms(record.metrics.e2e_ms)
    );
    let shown = {
        let pieces = pieces.clone();
        move || visible(&pieces, opener_len, clock.get())
    };
    view! {
        <div class="lane" data-testid="replay-lane">
            <div class="lane-head">{label}</div>
            {move || {
                let t = clock.get();
                match first {
                    Some(f) if t < f => Some(view! { <div class="waiting" data-testid="replay-waiting">{format!("waiting for the first token… {}", ms(Some(t)))}</div> }),
                    _ => None,
                }
            }}
            <div class="typed">
                {let s = shown.clone(); move || { let r = s().2; (!r.is_empty()).then(|| view! { <span class="reasoning">{r}</span> }) }}
                {let s = shown.clone(); move || view! { <mark class="opener" title="boilerplate opener">{s().0}</mark> }}
                {move || shown().1}
            </div>
        </div>
    }
}

/// Replays up to four recorded requests side by side.
#[component]
pub fn Replay(
    /// Requests that carry replay data.
    records: Vec<RequestRecord>,
    /// Lane names, one per record (a comparison names lanes by run); empty for a single run.
    #[prop(optional)]
    names: Vec<String>,
) -> impl IntoView {
    let records: Vec<(RequestRecord, Option<String>)> = records
        .into_iter()
        .enumerate()
        .map(|(i, r)| (r, names.get(i).cloned()))
        .filter(|(r, _)| !r.replay.is_empty())
        .take(4)
        .collect();
    if records.is_empty() {
        return view! { <p class="muted">"No recorded streams to replay."</p> }.into_any();
    }
    let end = records
        .iter()
        .filter_map(|(r, _)| r.replay.last().map(|p| p.at_ms))
        .fold(0.0, f64::max)
        + 200.0;
    let (clock, set_clock) = signal(end);
    let speed = RwSignal::new(1.0);
    let timer = StoredValue::new_local(None::<IntervalHandle>);
    let started = StoredValue::new(0.0f64);
    let now = crate::browser::clock::now_ms;
    let stop = move || {
        if let Some(h) = timer.get_value() {
            h.clear();
        }
        timer.set_value(None);
    };
    let play = move |_| {
        stop();
        started.set_value(now());
        set_clock.set(0.0);
        let h = set_interval_with_handle(
            move || {
                let t = (now() - started.get_value()) * speed.get_untracked();
                set_clock.set(t.min(end));
                if t >= end {
                    stop();
                }
            },
            Duration::from_millis(30),
        );
        timer.set_value(h.ok());
    };
    on_cleanup(stop);
    view! {
        <section class="replay" data-testid="replay">
            <h3>"Typewriter replay"</h3>
            <div class="replay-controls">
                <button data-testid="replay-play" on:click=play>"▶ Play"</button>
                <select on:change=move |ev| speed.set(event_target_value(&ev).parse().unwrap_or(1.0)) prop:value=move || speed.get().to_string()>
                    <option value="0.5">"0.5×"</option>
                    <option value="1">"1× (true timing)"</option>
                    <option value="2">"2×"</option>
                </select>
                <span class="muted" data-testid="replay-clock">{move || ms(Some(clock.get()))}</span>
            </div>
            <div class="lanes">
                {records.into_iter().map(|(r, name)| view! { <Lane record=r clock=clock name=name /> }).collect_view()}
            </div>
        </section>
    }.into_any()
}
