//! What the live surface painted (#31): beside the network figures, when the first answer token
//! arrived and when it was painted, what painting added, the arrival-to-paint lag, and the
//! frames while streaming ([`ttft_core::report::painted::paint_headline`]); nothing when the
//! surface was off.

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::report::Report;
use ttft_core::report::painted::paint_headline;
use ttft_core::uncertainty::Estimate;

use crate::components::schedule_lag::estimate_text;

/// The confidence level of the figures' intervals.
const LEVEL: f64 = 0.95;

/// The headline of the painted answers (`data-testid="paint-headline"`).
#[component]
pub fn PaintHeadline(
    /// The report.
    report: Arc<Report>,
) -> impl IntoView {
    let h = paint_headline(&report, LEVEL)?;
    let text = |e: &Option<Estimate>| {
        e.as_ref()
            .map_or("—".to_owned(), |e| estimate_text(e, 1.0, " ms"))
    };
    let value = |e: &Option<Estimate>| {
        e.as_ref()
            .map_or(String::new(), |e| format!("{:.3}", e.value))
    };
    let lag = h.lag.as_ref().map_or("no chunk painted".to_owned(), |l| {
        format!(
            "P50 {}, P99 {} over {} chunks",
            estimate_text(&l.p50_ms, 1.0, " ms"),
            estimate_text(&l.p99_ms, 1.0, " ms"),
            l.chunks
        )
    });
    let source = match h.source {
        ttft_core::paint::PaintSource::ElementTiming => "paint times from Element Timing",
        ttft_core::paint::PaintSource::FrameEstimate => {
            "paint times estimated from animation frames (this browser's Element Timing did not time these updates)"
        }
    };
    Some(view! {
        <section class="paint-headline" data-testid="paint-headline"
            data-strategy=h.strategy.clone()
            data-drawn=h.drawn.to_string()
            data-source=h.source.label()
            data-arrived-ms=value(&h.arrived)
            data-painted-ms=value(&h.painted)
            data-delay-ms=value(&h.first_paint_delay)
            data-lag-p50-ms=h.lag.as_ref().map_or(String::new(), |l| format!("{:.3}", l.p50_ms.value))
            data-lag-p99-ms=h.lag.as_ref().map_or(String::new(), |l| format!("{:.3}", l.p99_ms.value))>
            <h3>"What the screen showed"</h3>
            <p>{format!(
                "Drawn as a chat UI draws ({}, {} of {} answers): first answer token arrived {}, painted {} (P50s, {} % intervals); painting added {} to the first token.",
                h.strategy, h.drawn, report.requests.iter().filter(|r| !r.warmup).count(),
                text(&h.arrived), text(&h.painted), LEVEL * 100.0, text(&h.first_paint_delay)
            )}</p>
            <p>{format!("First meaningful token painted {}; arrival-to-paint lag {lag}.", text(&h.meaningful_painted))}</p>
            <p class="muted">{format!(
                "{} frames while streaming, {} dropped, {} over 50 ms{}; {}.",
                h.frames, h.dropped_frames, h.long_frames,
                h.busy_share.map_or(String::new(), |b| format!("; drawing kept the main thread busy {:.1} % of the time", b * 100.0)),
                source
            )}</p>
        </section>
    })
}
