//! Blind review votes: which of two unnamed streams felt faster, kept in both runs' reports
//! ([`ttft_core::review`]).

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::review::{Choice, ReviewPair};

use super::studio::notify;
use crate::state::{RunId, Studio, StudioStateStoreFields};

/// Records a blind review's vote in both runs' reports, each from its own side, and saves the
/// runs that are stored or being stored (the whole report: the votes are in it). A run not
/// saved yet (opened from a link, waiting for storage, or whose save failed) keeps the vote in
/// memory and its next save carries it.
pub fn record_blind_vote(studio: Studio, a: RunId, b: RunId, pair: &ReviewPair, choice: Choice) {
    let at = crate::browser::clock::unix_now_ms();
    let Some((va, vb)) = studio
        .state
        .with_untracked(|s| Some(pair.votes(choice, &s.run(a)?.report, &s.run(b)?.report, at)))
    else {
        return notify(
            studio,
            "the vote was not kept: one of the two runs was deleted",
        );
    };
    studio.state.runs().update(|runs| {
        for r in runs.iter_mut() {
            let vote = if r.id == a {
                &va
            } else if r.id == b {
                &vb
            } else {
                continue;
            };
            // Copies the report only while a view still holds it.
            Arc::make_mut(&mut r.report).votes.push(vote.clone());
        }
    });
    for id in [a, b] {
        super::storage::save_if_stored(studio, id);
    }
}
