//! What every other action shares: the store a fresh page starts from, notices, which run the
//! pane shows and which are compared, runs added to the list, whether something is running,
//! and the small choices the page's bars make (dismiss a notice or the guide, leave the
//! reader's view).

use std::sync::Arc;

use leptos::prelude::*;
use reactive_stores::Store;
use ttft_core::report::Report;

use crate::state::{
    Calibration, RunId, SavedRun, Shown, StorageStatus, Studio, StudioState, StudioStateStoreFields,
};

/// The state a fresh page starts from: no runs yet. Saved runs appear once the page is up
/// ([`super::storage::open_storage`]), so a large store never delays the first paint.
pub fn initial_state() -> StudioState {
    StudioState {
        storage: StorageStatus {
            loading: Some((0, 0)),
            ..StorageStatus::default()
        },
        ..StudioState::default()
    }
}

/// Measures the page clock for the status line (every figure depends on its resolution).
pub fn measure_clock(studio: Studio) {
    studio.state.clock().set(crate::browser::clock::measure());
}

/// Shows a message in the status line.
pub fn notify(studio: Studio, message: impl Into<String>) {
    studio.state.notice().set(Some(message.into()));
}

/// Takes the message out of the status line.
pub fn dismiss_notice(studio: Studio) {
    studio.state.notice().set(None);
}

/// The user has read the guide's sentence.
pub fn dismiss_guide(studio: Studio) {
    studio.state.guide().set(None);
}

/// Leaves the reader's view of a shared link: the studio's panels come back.
pub fn leave_reader_view(studio: Studio) {
    studio.state.reader_view().set(false);
}

/// Shows a saved run.
pub fn show_run(studio: Studio, id: RunId) {
    studio.state.shown().set(Shown::Run(id));
}

/// Ticks or unticks a run for comparison (at most four are compared).
pub fn set_compared(studio: Studio, id: RunId, on: bool) {
    studio.state.compare().update(|c| {
        c.retain(|x| *x != id);
        if on && c.len() < 4 {
            c.push(id);
        }
    });
}

/// Adds reports as the newest runs, each under a new id (the first given on top, with the
/// highest); returns the ids in the given order.
pub(crate) fn add_runs(state: Store<StudioState>, reports: Vec<Arc<Report>>) -> Vec<RunId> {
    let first = state.next_id().get_untracked();
    let n = reports.len() as u64;
    let ids: Vec<RunId> = (0..n).map(|i| RunId(first + n - 1 - i)).collect();
    state.next_id().set(first + n);
    let runs: Vec<SavedRun> = ids
        .iter()
        .zip(reports)
        .map(|(id, report)| SavedRun { id: *id, report })
        .collect();
    state.runs().write().splice(0..0, runs);
    ids
}

/// Whether a run is in progress.
pub fn is_running(studio: Studio) -> bool {
    studio.state.live().with(Option::is_some)
}

/// Whether a run is in progress or a calibration is still reading its ground truth (its
/// requests would queue behind a new run's on the same origin): nothing new starts meanwhile.
pub fn is_busy(studio: Studio) -> bool {
    is_running(studio)
        || studio
            .state
            .calibration()
            .with(|c| matches!(c, Some(Calibration::Running(_))))
}
