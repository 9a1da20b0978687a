//! The one comparison every client gets: what a client stamped for each chunk of a request
//! against the reference endpoint's record of when it wrote that chunk (its ground truth),
//! whichever client recorded it (the studio, the floor probe, a peer benchmark tool).
//!
//! The comparison itself is the core's ([`ttft_core::calibration::agreement`], the one the
//! browser's "Calibrate this browser" runs too); this module only fetches each request's ground
//! truth over HTTP.

use anyhow::Result;
use serde_json::Value;
use ttft_core::calibration::{self, GroundTruth};

/// What one client recorded of one request, in its own clock.
pub use ttft_core::calibration::ClientChunks as ClientRequest;

/// Client-observed minus ground truth for every chunk of every request.
pub use ttft_core::calibration::Agreement;

/// |error| percentiles of one measurement.
pub fn errors(v: &[f64]) -> Value {
    calibration::errors_json(v)
}

/// A comparison with ground truth, with each request's gap errors kept apart (the requests
/// are the independent units of the per-gap intervals, `tails`).
pub struct Measured {
    pub agreement: Agreement,
    /// Per compared request, its gap errors (ms).
    pub gap_groups: Vec<Vec<f64>>,
}

impl std::ops::Deref for Measured {
    type Target = Agreement;
    fn deref(&self) -> &Agreement {
        &self.agreement
    }
}

impl Measured {
    /// The figures `results.json` keeps, with their intervals (`intervals`).
    pub fn to_json(&self) -> Value {
        let mut v = self.agreement.to_json();
        v["intervals"] =
            crate::tails::intervals_json(&self.agreement.ttft_errors, &self.gap_groups);
        v
    }
}

/// The client's requests compared with the ground truth of the server on `port`.
///
/// `start_ms` of each request (for the chunk rate) is taken as its wall-clock t0 when known.
pub async fn agreement(port: u16, requests: &[ClientRequest]) -> Result<Measured> {
    // Failed requests and requests without an id are counted, not looked up.
    let mut truths = Vec::with_capacity(requests.len());
    for r in requests {
        truths.push(match (&r.request_id, r.ok) {
            (Some(id), true) => Some(GroundTruth::from_json(
                &ttft_e2e::http_get(port, &format!("/v1/ground-truth/{id}")).await?,
            )?),
            _ => None,
        });
    }
    let pairs = || requests.iter().zip(truths.iter().map(Option::as_ref));
    // Each request alone through the same comparison: its gap errors, as a group.
    let gap_groups = pairs()
        .map(|pair| calibration::agreement(std::iter::once(pair)).gap_errors)
        .filter(|g| !g.is_empty())
        .collect();
    Ok(Measured {
        agreement: calibration::agreement(pairs()),
        gap_groups,
    })
}
