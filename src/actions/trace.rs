//! Trace replay (#32): the trace file the user chose, read by the core into the studio's state
//! (in memory only: traces are large), and the trace planned into the run's one open-loop
//! phase with the form's options and generation settings ([`plan_trace`]), for a run and for
//! the locustfile alike.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::scenario::{Phase, ScenarioConfig};
use ttft_core::trace::{TraceReplayRecord, parse, replay_phase};

use crate::browser::files::ChosenFile;
use crate::state::{EndpointConfig, LoadedTrace, Studio, StudioStateStoreFields};

/// Reads the chosen trace file (the first, if several) into the studio's state: the trace,
/// or the error naming its line and column.
pub fn load_trace_file(studio: Studio, files: Vec<ChosenFile>) {
    let Some(file) = files.into_iter().next() else {
        return;
    };
    spawn_local(async move {
        let name = file.name();
        let parsed = match file.text().await {
            None => Err(format!(
                "{name}: the browser could not read the file; choose it again"
            )),
            Some(text) => parse(text.as_bytes(), None)
                .map(Arc::new)
                .map_err(|e| format!("{name}: {e}")),
        };
        studio
            .state
            .trace()
            .set(Some(LoadedTrace { file: name, parsed }));
    });
}

/// The trace replay's phases (one) and its record for the report, planned from the loaded
/// trace with the scenario's options, its model, sampling and stream settings as every
/// request's template, and `seed` (its own per run, so a prefix cache starts cold); or what
/// stops it, in words.
pub fn plan_trace(
    studio: Studio,
    ep: &EndpointConfig,
    sc: &ScenarioConfig,
    seed: u64,
) -> Result<(Vec<Phase>, TraceReplayRecord), String> {
    if sc.is_ab() {
        return Err(
            "a trace replay sends one configuration: turn \"Compare configurations (A/B)\" off"
                .into(),
        );
    }
    let loaded = studio.state.trace().get_untracked();
    let Some(LoadedTrace { file, parsed }) = loaded else {
        return Err(ttft_core::scenario::ScenarioError::NoTrace.to_string());
    };
    let trace = parsed.map_err(|e| format!("the trace file cannot be replayed: {e}"))?;
    let model = ep.wire_model();
    if model.trim().is_empty() {
        return Err(ttft_core::scenario::ScenarioError::NoModel.to_string());
    }
    let template = sc.params(&model, String::new(), ep.dialect);
    let (phase, plan) =
        replay_phase(&trace, &sc.trace, seed, &template, ep.dialect).map_err(|e| e.to_string())?;
    let record = TraceReplayRecord::of(&file, &plan, &sc.trace, seed);
    Ok((vec![phase], record))
}

/// The seed of a run's trace plan: the scenario's seed when set (the same prompts every run,
/// so a server's prefix cache is warm from the second), else the time (a cold cache each run).
pub fn run_seed(sc: &ScenarioConfig) -> u64 {
    sc.seed
        .unwrap_or_else(|| crate::browser::clock::unix_now_ms() as u64)
}
