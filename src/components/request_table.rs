//! The request table of a finished run: every request with its outcome and timings, one line
//! each. Virtualized, so a 10,000-request run scrolls smoothly: only the rows in view (and
//! `MARGIN_ROWS` above and below) are in the DOM, keyed by position; a sizer holds the full
//! height so the scroll bar is the whole table's. `data-rows` on the table holds the count.

use std::collections::HashMap;
use std::sync::Arc;

use leptos::html;
use leptos::prelude::*;
use ttft_core::metrics::TtftKind;
use ttft_core::report::{Report, RequestRecord};
use ttft_core::slo::SloReport;

use crate::format::{ms, per_s};

/// Row height (px) until the drawn rows are measured (`.request-table` fixes it in CSS).
const ROW_PX: f64 = 24.0;
/// Header height (px) until measured.
const HEAD_PX: f64 = 26.0;
/// Height of the scrolling area (px): `.request-scroll`'s `max-height`.
const VIEW_PX: f64 = 480.0;
/// Rows drawn above and below the visible ones, so a scroll step never shows a gap.
const MARGIN_ROWS: usize = 20;

/// The notes of one request: warm-up, errors with what to do, how its first token and chunks
/// came, openers, server timings.
fn notes(r: &RequestRecord) -> String {
    let m = &r.metrics;
    let mut notes = Vec::new();
    if r.warmup {
        notes.push("warm-up".to_owned());
    }
    if let Some(msg) = r.outcome.message() {
        notes.push(msg.to_owned());
    }
    if !m.streamed {
        notes.push("not streamed: the endpoint answered in one piece (check `stream: true` reaches the server)".to_owned());
    }
    match m.ttft_kind {
        Some(TtftKind::ToolCall) => notes.push("first token: a tool call".to_owned()),
        Some(TtftKind::Reasoning) => notes.push("first token: reasoning".to_owned()),
        _ => {}
    }
    if m.choices.len() > 1 {
        notes.push(format!("{} choices (n > 1)", m.choices.len()));
    }
    if m.coalesced {
        notes.push(format!("{:.1} tokens/chunk", m.tokens_per_arrival));
    }
    if !m.opener_text.is_empty() {
        notes.push(format!("opener: “{}”", m.opener_text.trim()));
    }
    if let Some(t) = m.server_timings {
        notes.push(format!(
            "server: prefill {} · {} /token",
            ms(t.prompt_ms),
            ms(t.predicted_per_token_ms)
        ));
    }
    notes.join(" · ")
}

/// One request's row (notes cut to one line; the full text is its tooltip); `slo` gives its
/// cell in the SLO column once the run is scored.
/// `painted` is when the live surface painted its first answer token, if it drew the request.
fn row(
    r: &RequestRecord,
    painted: Option<f64>,
    slo: Memo<HashMap<u32, String>>,
) -> impl IntoView + use<> {
    let index = r.index;
    let slo_cell = move || slo.with(|m| m.get(&index).cloned().unwrap_or_default());
    let m = &r.metrics;
    let itl = m.itl_summary().map(|s| s.p50);
    let notes = notes(r);
    let tip = notes.clone();
    let prefill_tip = match (m.prompt_tokens, m.prefill_tokens_per_s()) {
        (None, _) => "the server reported no prompt tokens",
        (Some(_), None) => "no TTFT of a streamed answer to divide by",
        (Some(_), Some(_)) => "prompt tokens the server reported over TTFT",
    };
    view! {
        <tr class=if r.outcome.is_failure() { "failed" } else if r.outcome.is_cut_by_client() { "cut" } else { "" } data-outcome=r.outcome.kind()>
            <td>{r.index}</td><td>{r.group.clone()}</td><td>{r.outcome.kind()}</td>
            <td>{ms(r.browser_queue_ms)}</td><td>{ms(m.ttfb_ms)}</td><td class="ttft">{ms(m.ttft_ms)}</td><td class="first-answer">{ms(m.first_answer_ms)}</td><td class="painted" data-testid="request-painted">{ms(painted)}</td><td>{ms(m.meaningful_ms)}</td>
            <td class="ttst" data-testid="request-ttst">{ms(m.ttst_ms())}</td>
            <td>{ms(itl)}</td><td>{format!("{} ({:?})", m.output_tokens, m.token_source)}</td><td>{ms(m.e2e_ms)}</td>
            <td class="output-per-user" data-testid="request-output-per-user">{per_s(m.user_output_tokens_per_s())}</td>
            <td class="prefill-per-user" data-testid="request-prefill-per-user" title=prefill_tip>{per_s(m.prefill_tokens_per_s())}</td>
            <td class="slo-cell">{slo_cell}</td>
            <td class="notes" title=tip>{notes}</td>
        </tr>
    }
}

/// Every request of a run, with its outcome.
#[component]
pub fn RequestTable(
    /// The run (its requests, in order, shared: never copied).
    report: Arc<Report>,
    /// The run held to its SLO, once scored: each judged request shows ✓ or the objectives it
    /// failed.
    #[prop(optional, into)]
    slo: Option<Signal<Option<SloReport>>>,
) -> impl IntoView {
    let n = report.requests.len();
    let slo = Memo::new(move |_| {
        slo.and_then(|s| s.get())
            .map(|s| {
                s.requests
                    .iter()
                    .map(|q| {
                        let cell = if q.met {
                            "✓".to_owned()
                        } else {
                            let failed: Vec<&str> = q.failed.iter().map(|m| m.label()).collect();
                            format!("✗ {}", failed.join(", "))
                        };
                        (q.index, cell)
                    })
                    .collect::<HashMap<u32, String>>()
            })
            .unwrap_or_default()
    });
    let report = StoredValue::new(report);
    let (scroll_top, set_scroll_top) = signal(0.0_f64);
    let (row_px, set_row_px) = signal(ROW_PX);
    let (head_px, set_head_px) = signal(HEAD_PX);
    // The rows drawn: those in view and a margin around them.
    let range = Memo::new(move |_| {
        let row = row_px.get();
        let top = (scroll_top.get() - head_px.get()).max(0.0);
        let first = ((top / row) as usize).saturating_sub(MARGIN_ROWS).min(n);
        let last = (first + (VIEW_PX / row).ceil() as usize + 2 * MARGIN_ROWS).min(n);
        (first, last)
    });
    // Once drawn, measure the real header and row heights (the average over the drawn rows,
    // so a fraction of a pixel does not add up over 10,000 rows).
    let head = NodeRef::<html::Thead>::new();
    let body = NodeRef::<html::Tbody>::new();
    Effect::new(move |_| {
        if let (Some(h), Some(b)) = (head.get(), body.get()) {
            let rows = b.child_element_count();
            let (head_h, body_h) = (h.offset_height(), b.offset_height());
            if head_h > 0 {
                set_head_px.set(f64::from(head_h));
            }
            if rows > 0 && body_h > 0 {
                set_row_px.set(f64::from(body_h) / f64::from(rows));
            }
        }
    });
    let on_scroll = move |ev: leptos::ev::Event| {
        set_scroll_top.set(f64::from(
            event_target::<web_sys::Element>(&ev).scroll_top(),
        ))
    };
    view! {
        <section>
            <h3>"Requests"</h3>
            <div class="request-scroll" tabindex="0" role="region" aria-label="requests, scrollable" on:scroll=on_scroll>
                <div class="request-sizer" style:height=move || format!("{:.0}px", head_px.get() + n as f64 * row_px.get())>
                    <table class="request-table" data-testid="requests" data-rows=n
                        style:top=move || format!("{:.0}px", range.get().0 as f64 * row_px.get())>
                        <thead node_ref=head><tr><th>"#"</th><th>"Group"</th><th>"Outcome"</th><th title="Browser queue">"Browser queue"</th><th>"TTFB"</th><th title="First token of any kind: reasoning, tool call or answer">"TTFT"</th><th title="First answer">"First answer"</th><th title="When the live surface painted the first answer token, for the answers it drew">"Painted"</th><th>"Meaningful"</th><th title="Time to second token: the output arriving after the first token's">"2nd token"</th><th>"ITL P50"</th><th>"Tokens"</th><th>"E2E"</th><th title="Per-user output tokens/s: tokens after the first arrival over the first to the last output arrival">"Out tok/s"</th><th title="Per-user prefill tokens/s: prompt tokens the server reported over TTFT">"Prefill tok/s"</th><th title="Met the run's service-level objectives, or which it failed">"SLO"</th><th>"Notes"</th></tr></thead>
                        <tbody node_ref=body>
                            <For each=move || { let (a, b) = range.get(); a..b } key=|i| *i let:i>
                                {report.with_value(|r| {
                                    let q = &r.requests[i];
                                    let painted = r.painted.as_ref().and_then(|p| p.requests.iter().find(|d| d.index == q.index)).and_then(|d| d.figures.first_painted_ms);
                                    row(q, painted, slo)
                                })}
                            </For>
                        </tbody>
                    </table>
                </div>
            </div>
        </section>
    }
}
