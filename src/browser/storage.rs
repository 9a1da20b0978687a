//! Persistence in `localStorage`: runs (with their ids) survive a reload. When the quota is
//! hit, replay text of the oldest runs is dropped first, then the oldest runs, and the user is
//! told. Every report is read through the core's report format ([`ttft_core::report::read_value`]).

use ttft_core::report::Report;
use ttft_core::scenario::ScenarioConfig;

use crate::state::{EndpointConfig, RunId, SavedRun};

const RUNS: &str = "ttft-studio.runs";
const ENDPOINT: &str = "ttft-studio.endpoint";
const KEY: &str = "ttft-studio.key";
const SCENARIO: &str = "ttft-studio.scenario";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// One stored run: `{"id": n, "report": {…}}`, or a bare report (stored before runs had ids,
/// given the next free id).
fn read_entry(v: serde_json::Value, next_id: &mut u64) -> Option<SavedRun> {
    let (id, report) = match v {
        serde_json::Value::Object(mut o) if o.contains_key("report") => {
            let id = o.get("id").and_then(serde_json::Value::as_u64);
            (id, o.remove("report")?)
        }
        other => (None, other),
    };
    let report: Report = ttft_core::report::read_value(report).ok()?;
    let id = id.unwrap_or_else(|| {
        *next_id += 1;
        *next_id - 1
    });
    Some(SavedRun {
        id: RunId(id),
        report,
    })
}

/// Saved runs (newest first) and a warning when some could not be read (they are reported,
/// not lost silently).
pub fn load_runs() -> (Vec<SavedRun>, Option<String>) {
    let Some(s) = storage() else {
        return (
            Vec::new(),
            Some("this browser blocks local storage: runs will not survive a reload".into()),
        );
    };
    let Ok(Some(text)) = s.get_item(RUNS) else {
        return (Vec::new(), None);
    };
    match serde_json::from_str::<Vec<serde_json::Value>>(&text) {
        Ok(values) => {
            let mut bad = 0;
            // Ids of runs stored without one start above every stored id.
            let mut next_id = values
                .iter()
                .filter_map(|v| v.get("id").and_then(serde_json::Value::as_u64))
                .max()
                .map_or(0, |m| m + 1);
            let runs: Vec<SavedRun> = values
                .into_iter()
                .filter_map(|v| {
                    let run = read_entry(v, &mut next_id);
                    if run.is_none() {
                        bad += 1;
                    }
                    run
                })
                .collect();
            (
                runs,
                (bad > 0).then(|| format!("{bad} saved run(s) could not be read and were skipped")),
            )
        }
        Err(e) => (
            Vec::new(),
            Some(format!(
                "saved runs are damaged ({e}); they were not loaded"
            )),
        ),
    }
}

/// Saves runs; returns a warning when something had to be dropped.
pub fn save_runs(runs: &[SavedRun]) -> Option<String> {
    let s = storage()?;
    let mut runs = runs.to_vec();
    let mut dropped_replays = false;
    for attempt in 0..=runs.len() * 2 {
        let text = serde_json::to_string(&runs).unwrap_or_default();
        if s.set_item(RUNS, &text).is_ok() {
            return match (attempt, dropped_replays) {
                (0, _) => None,
                (_, true) if !runs.is_empty() => Some(
                    "storage is full: replay text of older runs was dropped to make room".into(),
                ),
                _ => Some("storage is full: the oldest runs were removed".into()),
            };
        }
        // Oldest last: first strip replays from the oldest run that still has them, then drop it.
        if let Some(r) = runs
            .iter_mut()
            .rev()
            .find(|r| r.report.requests.iter().any(|q| !q.replay.is_empty()))
        {
            r.report = ttft_core::share::compact_for_share(&r.report, 1);
            dropped_replays = true;
        } else if runs.len() > 1 {
            runs.pop();
        } else {
            break;
        }
    }
    Some("this run is too large for the browser's storage: export it as JSON to keep it".into())
}

/// Saved endpoint settings (and the key, only if the user opted in).
pub fn load_endpoint() -> Option<EndpointConfig> {
    let s = storage()?;
    let mut e: EndpointConfig = serde_json::from_str(&s.get_item(ENDPOINT).ok()??).ok()?;
    if e.remember_key {
        e.api_key = s.get_item(KEY).ok().flatten().unwrap_or_default();
    }
    Some(e)
}

/// Saves endpoint settings; the key only when `remember_key`.
pub fn save_endpoint(e: &EndpointConfig) {
    if let Some(s) = storage() {
        let _ = s.set_item(ENDPOINT, &serde_json::to_string(e).unwrap_or_default());
        if e.remember_key && !e.api_key.is_empty() {
            let _ = s.set_item(KEY, &e.api_key);
        } else {
            let _ = s.remove_item(KEY);
        }
    }
}

/// Saved scenario settings.
pub fn load_scenario() -> Option<ScenarioConfig> {
    serde_json::from_str(&storage()?.get_item(SCENARIO).ok()??).ok()
}

/// Saves scenario settings.
pub fn save_scenario(c: &ScenarioConfig) {
    if let Some(s) = storage() {
        let _ = s.set_item(SCENARIO, &serde_json::to_string(c).unwrap_or_default());
    }
}
