//! A trace replay's report (#32): what was replayed (file, format, options, the plan's notes)
//! and the prefix-cache reuse the trace's shared blocks imply beside what the server's usage
//! reported ([`ttft_core::trace::TraceReplayRecord::compare_reuse`]). Nothing for other runs.

use leptos::prelude::*;
use std::sync::Arc;
use ttft_core::report::{PromptCache, Report};
use ttft_core::trace::TraceReplayRecord;

/// The trace replay's section (`data-testid="trace-replayed"`), with the reuse comparison
/// (`prefix-cache-hit`, its shares in `data-expected` and `data-measured`, %) when the server
/// reported cached tokens.
#[component]
pub fn TraceReplayed(
    /// The report.
    report: Arc<Report>,
    /// The run's prompt-cache figures, when the server reported them.
    cache: Option<PromptCache>,
) -> impl IntoView {
    let record = TraceReplayRecord::of_settings(&report.settings)?;
    let o = &record.options;
    let what = format!(
        "{} ({}): {} requests over {:.1} s, from {} s{} at {}× speed, at most {} in flight",
        record.file,
        record.format.name(),
        record.requests,
        record.duration_ms / 1e3,
        o.window_start_s,
        o.window_s
            .map_or(" to the end".to_owned(), |w| format!(" for {w} s")),
        o.speed,
        o.max_concurrency,
    );
    let compared =
        cache.and_then(|c| record.compare_reuse(c.cached_tokens, c.reporting, c.successful));
    Some(view! {
        <section data-testid="trace-replayed">
            <h3>"Trace replayed"</h3>
            <p>{what}</p>
            <ul>{record.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul>
            {compared.map(|c| view! {
                <p data-testid="prefix-cache-hit" data-expected=format!("{:.3}", c.expected * 100.0)
                    data-measured=format!("{:.3}", c.measured * 100.0)>{c.sentence}</p>
            })}
        </section>
    })
}
