//! Runs saved by the localStorage format of earlier studios (`ttft-studio.runs`) move into
//! IndexedDB once: they are written in one transaction, read back (every id present) and only
//! then removed from localStorage. Entries that cannot be read stay there (with the reason); on
//! any failure localStorage is untouched. Lazy: the old format's reader loads only where runs
//! were saved in it.

use std::collections::HashSet;

use ttft_core::report::Report;

use super::studio::notify;
use crate::browser::storage::{self, RunMeta, StorageError};
use crate::state::Studio;

/// What moving the localStorage runs did.
#[derive(Debug, Clone, PartialEq)]
pub struct Migration {
    /// Runs moved into IndexedDB (with their ids; runs without one, or whose id was taken, got
    /// new ones).
    pub moved: usize,
    /// Entries that could not be read: they stay in localStorage, nothing else does.
    pub kept: Vec<String>,
}

/// Moves the localStorage runs, if there are any, and says what it did.
pub(crate) async fn move_once(studio: Studio) {
    match migrate_local_storage().await {
        Ok(Some(m)) if m.kept.is_empty() => notify(
            studio,
            format!(
                "moved {} saved run(s) from localStorage into IndexedDB",
                m.moved
            ),
        ),
        Ok(Some(m)) => notify(
            studio,
            format!(
                "moved {} saved run(s) into IndexedDB; {} could not be read and stay in localStorage ({})",
                m.moved,
                m.kept.len(),
                m.kept.join("; ")
            ),
        ),
        Ok(None) => {}
        Err(e) => notify(studio, e.to_string()),
    }
}

/// Moves runs saved by the localStorage format into IndexedDB, once (see the module). `None`
/// when there was nothing to move.
pub async fn migrate_local_storage() -> Result<Option<Migration>, StorageError> {
    let Some(text) = storage::legacy_runs() else {
        return Ok(None);
    };
    move_legacy_runs(text)
        .await
        .map_err(|e| StorageError::Migration(e.to_string()))?
}

/// One entry of the localStorage format: `{"id": n, "report": {…}}`, or a bare report (stored
/// before runs had ids). The id, if it had one, and the report.
fn read_legacy_entry(v: serde_json::Value) -> Result<(Option<u64>, Report), String> {
    let (id, report) = match v {
        serde_json::Value::Object(mut o) if o.contains_key("report") => {
            let id = o.get("id").and_then(serde_json::Value::as_u64);
            (id, o.remove("report").unwrap_or_default())
        }
        other => (None, other),
    };
    let report = ttft_core::report::read_value(report).map_err(|e| e.to_string())?;
    Ok((id, report))
}

/// The old list read: the runs to move (each with its id and place), how many an earlier start
/// moved already, and the entries that could not be read, with why.
struct Plan {
    runs: Vec<(u64, Report, i64)>,
    already: usize,
    kept: Vec<String>,
    kept_entries: Vec<serde_json::Value>,
    next_id: u64,
}

/// Reads the old list against the stored index: a run keeps its id unless it is taken; runs
/// moved by an earlier start whose clean-up did not happen are not moved again.
fn plan(entries: Vec<serde_json::Value>, index: &storage::Index) -> Plan {
    let mut taken: HashSet<u64> = index.runs.iter().map(|m| m.id).collect();
    let legacy_top = entries
        .iter()
        .filter_map(|v| v.get("id").and_then(serde_json::Value::as_u64))
        .map(|id| id + 1)
        .max()
        .unwrap_or(0);
    let mut plan = Plan {
        runs: Vec::new(),
        already: 0,
        kept: Vec::new(),
        kept_entries: Vec::new(),
        next_id: index.next_id.max(legacy_top),
    };
    for (i, entry) in entries.into_iter().enumerate() {
        let (id, report) = match read_legacy_entry(entry.clone()) {
            Ok(read) => read,
            Err(reason) => {
                plan.kept.push(reason);
                plan.kept_entries.push(entry);
                continue;
            }
        };
        let same = |m: &RunMeta| {
            Some(m.id) == id
                && m.created_unix_ms == report.created_unix_ms
                && m.requests == report.requests.len()
        };
        if index.runs.iter().any(same) {
            plan.already += 1;
            continue;
        }
        let id = match id {
            Some(id) if taken.insert(id) => id,
            _ => {
                while !taken.insert(plan.next_id) {
                    plan.next_id += 1;
                }
                plan.next_id += 1;
                plan.next_id - 1
            }
        };
        // Below every run saved by this studio, in the old list's order.
        plan.runs.push((id, report, -(i as i64) - 1));
    }
    plan
}

lazy_part! {
    /// [`migrate_local_storage`] once there is something to move (`text`, the old list).
    async fn move_legacy_runs(text: String) -> Result<Option<Migration>, StorageError> {
        let entries: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| {
            StorageError::Migration(format!("localStorage's ttft-studio.runs is damaged: {e}"))
        })?;
        let index = storage::load_index().await?;
        let plan = plan(entries, &index);
        if !plan.runs.is_empty() {
            let mut records = Vec::new();
            for (id, report, order) in &plan.runs {
                let json = storage::report_json(report)?;
                records.push((RunMeta::of(*id, report, *order, json.len() as u64), json));
            }
            storage::save_moved_runs(&records, plan.next_id).await?;
            // Read back: every moved run must be listed before localStorage lets go of it.
            let back = storage::load_index()
                .await
                .map_err(|e| StorageError::Migration(e.to_string()))?;
            let missing = plan
                .runs
                .iter()
                .filter(|(id, _, _)| !back.runs.iter().any(|m| m.id == *id))
                .count();
            if missing > 0 {
                return Err(StorageError::Migration(format!(
                    "{missing} of {} runs were not found after writing them",
                    plan.runs.len()
                )));
            }
        }
        // Moved and verified. Should localStorage refuse to let go, the next start finds them
        // already moved (same id, time and size) and does not move them twice.
        let kept = (!plan.kept_entries.is_empty())
            .then(|| serde_json::to_string(&plan.kept_entries).unwrap_or_default());
        storage::keep_legacy_runs(kept.as_deref());
        Ok(Some(Migration {
            moved: plan.runs.len() + plan.already,
            kept: plan.kept,
        }))
    }
}
