//! Share links: a report travels in the link itself (`#share=…`, no server storage).
//! [`open_link`] opens one from the page's URL in the reader's view; [`share_link`] makes one of
//! a report. The codec is the `ttft-share` crate's.

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::report::Report;

use super::studio::{add_runs, notify, show_run};
use crate::state::{Studio, StudioStateStoreFields};

/// Opens a report from `#share=…` in the page's URL, if there is one.
pub fn open_link(studio: Studio) {
    let Some(hash) = crate::browser::location_hash() else {
        return;
    };
    if !hash.contains("share=") {
        return;
    }
    spawn_local(async move {
        match decode_link(hash).await {
            Err(e) => notify(studio, format!("could not open the shared report: {e}")),
            Ok(Ok(mut report)) => {
                report.title = format!("{} (shared)", report.title);
                let ids = add_runs(studio.state, vec![report.into()]);
                show_run(studio, ids[0]);
                // A reader's view: the report first, the panels that configure a run folded away.
                studio.state.reader_view().set(true);
            }
            Ok(Err(e)) => notify(studio, format!("could not open the shared report: {e}")),
        }
    });
}

lazy_part! {
    /// A share link's report, recomputed by the core. Lazy: the share codec loads with the first
    /// link opened (or made, from a report).
    async fn decode_link(hash: String) -> Result<Report, ttft_share::ShareError> {
        ttft_share::decode(&hash)
    }
}

/// A share link made of a report, and what it keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedLink {
    /// The link: this page with the report in its fragment.
    pub link: String,
    /// What the link keeps, in words (its length, precision, replays; sampled when too large).
    pub kept: String,
    /// What it leaves out, in words.
    pub left_out: String,
}

/// The share link of `report` (a large run's takes a moment to encode: made on demand).
pub fn share_link(report: &Report) -> SharedLink {
    let shared = ttft_share::encode(report, &ttft_share::ShareOptions::default());
    let link = format!("{}/#share={}", crate::browser::page_origin(), shared.text);
    let partial =
        shared.requests_kept < report.requests.len() || shared.gaps_kept_for < shared.requests_kept;
    let kept = format!(
        "{} characters; times to {} ms (each time within {} ms of this run's, each gap within {}), replay of {} request(s){}",
        shared.text.len(),
        shared.precision_ms,
        shared.precision_ms / 2.0,
        shared.precision_ms,
        shared.replays,
        if partial {
            "; too large to link whole: the headline stays exact, the detail is sampled"
        } else {
            ""
        }
    );
    SharedLink {
        link,
        kept,
        left_out: shared.left_out.join("; "),
    }
}
