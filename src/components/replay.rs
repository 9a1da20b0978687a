//! Typewriter replay: recorded streams played side by side at their true timing (or 0.5×, 2×),
//! with the wait before the first token visible and boilerplate openers highlighted. In the
//! reader's pace mode each lane also shows how far a reader at the report's reading speed has
//! read (the rest of the delivered text is faded) and marks the moments the reader has caught
//! up and waits ([`ttft_core::experience::ReaderPace`]). With a live-surface strategy chosen, the
//! answer appears as that strategy releases it (`as_drawn`), so a smoothed pace can be seen
//! (and voted on in the blind review) before a product adopts it.

use std::time::Duration;

use leptos::prelude::*;
use ttft_core::experience::{ReaderPace, ReadingConfig};
use ttft_core::report::{ReplayPiece, RequestRecord};

use ttft_render::{Arrival, FRAME_MS, Strategy, release};

use crate::format::ms;
use crate::state::use_studio;
use ttft_core::record_experience::reading_arrivals;

/// What one lane shows at `t` ms: (opener part, rest of the answer, reasoning).
pub(crate) fn visible(
    pieces: &[ReplayPiece],
    opener_len: usize,
    t: f64,
) -> (String, String, String) {
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

/// The pieces as `strategy` would hand the answer to the screen ([`ttft_render::release`]:
/// at once, batched per frame, or smoothed to a steady pace), reasoning as it arrived; as
/// recorded when no strategy is chosen. In time order.
pub(crate) fn as_drawn(pieces: &[ReplayPiece], strategy: Option<Strategy>) -> Vec<ReplayPiece> {
    let Some(strategy) = strategy else {
        return pieces.to_vec();
    };
    let arrivals: Vec<Arrival> = pieces
        .iter()
        .filter(|p| p.kind != 'r')
        .map(|p| Arrival {
            at_ms: p.at_ms,
            text: p.text.clone(),
        })
        .collect();
    let mut out: Vec<ReplayPiece> = pieces.iter().filter(|p| p.kind == 'r').cloned().collect();
    out.extend(
        release(&arrivals, strategy.pacing(FRAME_MS))
            .into_iter()
            .map(|r| ReplayPiece {
                at_ms: r.at_ms,
                kind: 'a',
                text: r.text,
            }),
    );
    out.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    out
}

/// How much later than its arrival `strategy` may release text (ms): the end of a replay
/// drawn with it comes at most this much after the recorded one.
pub(crate) fn release_lag_bound(strategy: Option<Strategy>) -> f64 {
    match strategy {
        None => 0.0,
        Some(Strategy::Smoothed(s)) => s.max_lag_ms.max(s.prebuffer_ms) + FRAME_MS,
        Some(_) => FRAME_MS,
    }
}

/// How the replay draws, in words (`data-testid="replay-drawn"`).
pub(crate) fn drawn_note(strategy: Option<Strategy>) -> String {
    match strategy {
        None => "Text appears as it arrived (choose how answers are drawn above the report to see it as a chat UI would show it).".to_owned(),
        Some(Strategy::Smoothed(s)) => format!(
            "Text appears as the live surface's strategy releases it: smoothed to {:.0} characters/s after a {:.0} ms buffer.",
            s.chars_per_s, s.prebuffer_ms
        ),
        Some(s) => format!("Text appears as the live surface's strategy releases it: {}.", s.label()),
    }
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
    /// The reader's pace through the answer, when it has text to read.
    pace: Option<ReaderPace>,
    /// Show the reader's pace.
    reader: RwSignal<bool>,
) -> impl IntoView {
    let pieces = as_drawn(&record.replay, use_studio().surface.get_untracked());
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
    let read_by = pace.as_ref().map(ReaderPace::read_by_ms);
    let has_pace = pace.is_some();
    let label = move || match (reader.get(), read_by) {
        (true, Some(by)) => format!("{label} · read by {}", ms(Some(by))),
        _ => label.clone(),
    };
    // The answer as a reader at the reading speed gets through it: read, delivered but not yet
    // read, and the reader's wait, if they are waiting.
    let paced = move || {
        let p = pace.as_ref()?;
        let t = clock.get();
        let (read, delivered) = (p.read_bytes_at(t), p.delivered_bytes_at(t));
        let text = p.text();
        let wait = p.wait_at(t).map(|(from, _)| t - from);
        Some(view! {
            <span class="read">{text[..read].to_owned()}</span>
            <span class="unread" title="delivered, not read yet">{text[read..delivered.max(read)].to_owned()}</span>
            {wait.map(|w| view! { <span class="reader-waiting" data-testid="replay-reader-waiting">{format!(" ⏸ the reader waits… {}", ms(Some(w)))}</span> })}
        })
    };
    view! {
        <div class="lane" data-testid="replay-lane" data-first-ms=first.map_or(String::new(), |f| format!("{f:.3}"))>
            <div class="lane-head">{label}</div>
            {move || {
                let t = clock.get();
                match first {
                    Some(f) if t < f => Some(view! { <div class="waiting" data-testid="replay-waiting">{format!("waiting for the first token… {}", ms(Some(t)))}</div> }),
                    _ => None,
                }
            }}
            {move || if reader.get() && has_pace {
                view! { <div class="typed paced">{paced.clone()}</div> }.into_any()
            } else {
                let shown = shown.clone();
                view! {
                    <div class="typed">
                        {let s = shown.clone(); move || { let r = s().2; (!r.is_empty()).then(|| view! { <span class="reasoning">{r}</span> }) }}
                        {let s = shown.clone(); move || view! { <mark class="opener" title="boilerplate opener">{s().0}</mark> }}
                        {move || shown().1}
                    </div>
                }.into_any()
            }}
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
    /// The reader the reader's pace mode follows (the report's reading settings).
    #[prop(optional)]
    reading: Option<ReadingConfig>,
) -> impl IntoView {
    let reading = reading.unwrap_or_default();
    let strategy = use_studio().surface.get_untracked();
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
    let paces: Vec<Option<ReaderPace>> = records
        .iter()
        .map(|(r, _)| ReaderPace::of(&reading_arrivals(r, &reading), &reading))
        .collect();
    let delivered_end = records
        .iter()
        .filter_map(|(r, _)| as_drawn(&r.replay, strategy).last().map(|p| p.at_ms))
        .fold(0.0, f64::max);
    let read_end = paces
        .iter()
        .flatten()
        .map(ReaderPace::read_by_ms)
        .fold(delivered_end, f64::max);
    let reader = RwSignal::new(false);
    // In the reader's pace mode the replay runs until the slowest reader has finished.
    let end = Signal::derive(move || {
        if reader.get() {
            read_end + 200.0
        } else {
            delivered_end + 200.0
        }
    });
    let (clock, set_clock) = signal(delivered_end + 200.0);
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
                let end = end.get_untracked();
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
            <p class="muted" data-testid="replay-drawn">{drawn_note(strategy)}</p>
            <div class="replay-controls">
                <button data-testid="replay-play" on:click=play>"▶ Play"</button>
                <select aria-label="replay speed" on:change=move |ev| speed.set(event_target_value(&ev).parse().unwrap_or(1.0)) prop:value=move || speed.get().to_string()>
                    <option value="0.5">"0.5×"</option>
                    <option value="1">"1× (true timing)"</option>
                    <option value="2">"2×"</option>
                </select>
                <label class="inline" title=format!("Shows how far a reader at {} words/s ({} CJK characters/s) has read, and where they sit waiting for text", reading.words_per_s, reading.cjk_chars_per_s)>
                    <input type="checkbox" data-testid="replay-reader" bind:checked=reader />
                    "at reading speed"
                </label>
                <span class="muted" data-testid="replay-clock">{move || ms(Some(clock.get()))}</span>
            </div>
            <div class="lanes">
                {records.into_iter().zip(paces).map(|((r, name), pace)| view! { <Lane record=r clock=clock name=name pace=pace reader=reader /> }).collect_view()}
            </div>
        </section>
    }.into_any()
}
