//! The trace replay's part of the scenario form (#32): the trace file (read into memory by
//! [`crate::actions::trace::load_trace_file`]), the window, speed and lanes
//! ([`ttft_core::scenario::TraceReplay`]), and the plan the core makes of them: its format,
//! requests, duration, notes and expected prefix-cache reuse, or the error naming the line.

use leptos::prelude::*;
use ttft_core::scenario::TraceReplay;
use ttft_core::trace::{TracePlan, eos_note, plan, plan_options};

use crate::state::{StudioStateStoreFields, use_studio};

/// A number field of the replay's options; an empty or bad entry is written as `put` says.
#[component]
fn OptionField(
    /// Label text.
    label: &'static str,
    /// `data-testid`.
    testid: &'static str,
    /// Reads the field (`None`: empty).
    get: fn(&TraceReplay) -> Option<f64>,
    /// Writes what was typed (`None`: empty or not a number).
    put: fn(&mut TraceReplay, Option<f64>),
) -> impl IntoView {
    let sc = use_studio().scenario;
    view! {
        <label>{label}
            <input type="number" step="any" data-testid=testid
                prop:value=move || sc.with(|c| get(&c.trace).map(|v| v.to_string()).unwrap_or_default())
                on:change=move |ev| {
                    let v = event_target_value(&ev).trim().parse::<f64>().ok();
                    sc.update(|c| put(&mut c.trace, v));
                } />
        </label>
    }
}

/// The plan's summary line: format, requests, duration, expected reuse.
fn summary(file: &str, p: &TracePlan) -> String {
    let reuse = p.prefix_reuse();
    let share = reuse
        .share()
        .map_or("none (no prompt tokens)".to_owned(), |s| {
            format!("{:.1} %", s * 100.0)
        });
    format!(
        "{file}: {}, {} requests over {:.1} s; expected prefix-cache reuse {share} ({} of {} input tokens in blocks an earlier request sent)",
        p.format.name(),
        p.jobs.len(),
        p.duration_ms / 1e3,
        reuse.reused_tokens,
        reuse.prompt_tokens,
    )
}

/// The trace file, the replay's options and the plan (`trace-plan`) or error (`trace-error`).
#[component]
pub fn TraceReplayFields() -> impl IntoView {
    let studio = use_studio();
    let sc = studio.scenario;
    let loaded = studio.state.trace();
    let chosen = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(files) = input.files() {
            crate::actions::trace::load_trace_file(studio, crate::browser::files::chosen(&files));
        }
        input.set_value("");
    };
    // The plan as the run would make it (its seed aside, which moves only a sample's offset).
    let planned = Memo::new(move |_| {
        let options = sc.with(|c| plan_options(&c.trace, c.seed.unwrap_or(0)));
        loaded.with(|l| {
            l.as_ref().map(|l| match &l.parsed {
                Ok(t) => plan(t, &options)
                    .map(|p| (summary(&l.file, &p), p.notes))
                    .map_err(|e| format!("trace replay: {e}")),
                Err(e) => Err(e.clone()),
            })
        })
    });
    let eos = move || studio.endpoint.with(|e| eos_note(e.dialect));
    view! {
        <div class="trace-replay" data-testid="trace-replay">
            <label>"Trace file (Mooncake JSONL, Azure LLM inference CSV, BurstGPT CSV)"
                <input type="file" accept=".jsonl,.json,.csv,text/csv" data-testid="trace-file" on:change=chosen />
            </label>
            <div class="grid">
                <OptionField label="Window start (s)" testid="trace-window-start"
                    get=|t| Some(t.window_start_s) put=|t, v| t.window_start_s = v.unwrap_or(f64::NAN) />
                <OptionField label="Window (s, empty = to the end)" testid="trace-window"
                    get=|t| t.window_s put=|t, v| t.window_s = v />
                <OptionField label="Speed (×)" testid="trace-speed"
                    get=|t| Some(t.speed) put=|t, v| t.speed = v.unwrap_or(f64::NAN) />
                <OptionField label="Most requests in flight" testid="trace-max-concurrency"
                    get=|t| Some(f64::from(t.max_concurrency)) put=|t, v| t.max_concurrency = v.map_or(0, |v| v.max(0.0) as u32) />
            </div>
            {move || match planned.get() {
                None => view! { <p class="muted" data-testid="trace-none">"Choose a trace file: its requests are sent at their arrival times (divided by the speed), with prompts and output lengths as the trace's."</p> }.into_any(),
                Some(Err(e)) => view! { <p class="warning" data-testid="trace-error">{e}</p> }.into_any(),
                Some(Ok((line, notes))) => view! {
                    <div data-testid="trace-plan">
                        <p>{line}</p>
                        <ul>{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                    </div>
                }.into_any(),
            }}
            {move || eos().map(|n| view! { <p class="warning" data-testid="trace-eos">{n}</p> })}
        </div>
    }
}
