//! Calibrate this browser: the accuracy claim, checkable by any user. One click runs a short
//! scenario at the concurrency the user plans (the scenario panel's, or a sweep's highest
//! level) against the built-in reference endpoint, fetches the server's ground truth of every
//! request (`GET /v1/ground-truth/{id}`) and shows this browser's own TTFT and per-gap ITL error
//! on this machine, computed by the same comparison as the benchmark's
//! ([`ttft_core::calibration`]).

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::calibration::{GroundTruth, calibrate};
use ttft_core::scenario::{ScenarioConfig, ScenarioKind, parse_levels};

use super::run::run_scenario;
use super::studio::{is_busy, notify};
use crate::browser::fetch::get_from_page_origin;
use crate::state::{Calibration, EndpointConfig, Studio, StudioStateStoreFields};

/// The reference endpoint's benchmark model: one chunk per 20 ms decode step, nearly
/// independent of load, the model of the benchmark's fidelity section.
pub const CALIBRATION_MODEL: &str = "sim-bench";
/// Output tokens per request: 49 gaps each.
pub const CALIBRATION_TOKENS: u32 = 50;
/// Most streams a calibration runs.
pub const MAX_CALIBRATION_STREAMS: u32 = 256;

/// The concurrency the user plans: the scenario's, or the highest level of a sweep.
pub fn planned_streams(sc: &ScenarioConfig) -> u32 {
    let planned = match sc.kind {
        ScenarioKind::ConcurrencySweep => parse_levels(&sc.levels)
            .ok()
            .and_then(|l| l.into_iter().max())
            .unwrap_or(sc.concurrency),
        _ => sc.concurrency,
    };
    planned.clamp(1, MAX_CALIBRATION_STREAMS)
}

/// The calibration scenario at `streams`: two requests per stream (at least 8), no warm-up.
pub fn calibration_scenario(streams: u32) -> ScenarioConfig {
    ScenarioConfig {
        kind: ScenarioKind::Chat,
        max_tokens: CALIBRATION_TOKENS,
        requests: (2 * streams).max(8),
        concurrency: streams,
        warmup: 0,
        ..ScenarioConfig::default()
    }
}

/// Runs the calibration (nothing starts while another run is in progress); the result shows
/// in the run controls and the run itself is kept like any other.
pub fn calibrate_browser(studio: Studio) {
    if is_busy(studio) {
        return notify(
            studio,
            "a run is in progress: wait for it or cancel it first",
        );
    }
    let streams = planned_streams(&studio.scenario.get_untracked());
    studio
        .state
        .calibration()
        .set(Some(Calibration::Running(streams)));
    spawn_local(async move {
        let endpoint = EndpointConfig {
            base_url: String::new(),
            model: CALIBRATION_MODEL.to_owned(),
            ..EndpointConfig::default()
        };
        let outcome = match run_scenario(studio, endpoint, calibration_scenario(streams)).await {
            None => Calibration::Failed("the calibration run could not start".to_owned()),
            Some((_, true)) => Calibration::Failed("cancelled".to_owned()),
            Some((id, false)) => measure(studio, id, streams).await,
        };
        studio.state.calibration().try_set(Some(outcome));
    });
}

/// The finished calibration run against the server's ground truth.
async fn measure(studio: Studio, id: crate::state::RunId, streams: u32) -> Calibration {
    let Some(report) = studio
        .state
        .with_untracked(|s| s.run(id).map(|r| std::sync::Arc::clone(&r.report)))
    else {
        return Calibration::Failed("the calibration run was deleted".to_owned());
    };
    let mut truths = Vec::new();
    for r in report.measured() {
        let Some(rid) = r.server_request_id.as_deref() else {
            continue;
        };
        match get_from_page_origin(&format!("/v1/ground-truth/{rid}")).await {
            Some(text) => match GroundTruth::from_json(&text) {
                Ok(t) => truths.push(t),
                Err(e) => return Calibration::Failed(e.to_string()),
            },
            None => {
                return Calibration::Failed(
                    "the server gave no ground truth: calibration needs the built-in reference endpoint (this page served by `cargo xtask serve` or `ttft-server`)"
                        .to_owned(),
                );
            }
        }
    }
    let result = calibrate(&report, &truths, streams as usize);
    notify(studio, result.sentence());
    Calibration::Done(result)
}
