//! The first token taken apart request by request with the built-in reference endpoint's own
//! record of each request (`GET /v1/ground-truth?since=`): one `GET` on the page's own server
//! once a finished run is shown, never while a run streams (the report view shows the server
//! panel of complete runs only). The decomposition is the core's
//! (`ttft_core::first_token::with_ground_truth`); ground truth is not kept in the report.

use std::sync::Arc;

use ttft_core::first_token::{RunFirstToken, ServerSide, with_ground_truth};
use ttft_core::report::Report;

use crate::browser::fetch::get_from_page_origin;

/// Whether `report` was measured against the page's own server (the built-in reference
/// endpoint) and kept the server's request ids: only then is there ground truth to ask for.
pub fn has_ground_truth(report: &Report) -> bool {
    report.endpoint.base_url.trim_end_matches('/') == crate::browser::page_origin()
        && report.measured().any(|r| r.server_request_id.is_some())
}

/// The run's first token taken apart with the server's record of each measured request;
/// `None` when the run was on another server, or the server no longer has those records
/// (restarted, or evicted by later runs).
pub async fn first_token_truth(report: Arc<Report>) -> Option<RunFirstToken> {
    if !has_ground_truth(&report) {
        return None;
    }
    // The records received since the run was created (its wall clock), a second early for
    // a clock step; requests are matched by id, so earlier records are harmless.
    let since = (report.created_unix_ms - 1_000.0).max(0.0).floor();
    let text = get_from_page_origin(&format!("/v1/ground-truth?since={since}")).await?;
    let truths = ServerSide::list_from_truth_json(&text).ok()?;
    with_ground_truth(&report, &truths)
}
