//! A probe under load: a few streams measured in the browser (the user's experience) while
//! another client (Locust's workers) drives the endpoint, merged from their timeline files into
//! one run ([`crate::timeline_file::merge_files`] keeps each request's client, and share links
//! carry it).
//!
//! The load timeline is the load client's requests in flight over the run's time axis (each
//! from its send, `start_ms`, to its end, `start_ms + e2e`); each probe request is placed on it
//! at its send time. In such a run the headline figures ([`crate::run_stats::RunStats::aggregates`]) are the
//! probe's: the experience the run was made to measure; the load's requests are its
//! background, counted and drawn here.

use serde::{Deserialize, Serialize};

pub use crate::report::PROBE_CLIENT;
use crate::report::{Report, RequestRecord};
use crate::stats::sorted;
use crate::uncertainty::quantile::percentile_estimate;
use crate::uncertainty::{DEFAULT_LEVEL, Interval};

/// Probe requests needed (successful, with a TTFT) before TTFT is compared across load levels:
/// two in each third.
pub const MIN_PROBE_POINTS: usize = 6;

/// One probe request placed on the load timeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbePoint {
    /// When it was sent (ms, the run's time axis).
    pub start_ms: f64,
    /// Its TTFT, `None` when it failed or produced no token.
    pub ttft_ms: Option<f64>,
    /// The load client's requests in flight when it was sent.
    pub load_in_flight: u32,
}

/// Probe TTFT over the probe requests sent within a range of load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadBand {
    /// Fewest load requests in flight at a send in the band.
    pub from: u32,
    /// Most.
    pub to: u32,
    /// Probe requests in the band.
    pub count: usize,
    /// Their median TTFT (ms).
    pub ttft_p50_ms: f64,
    /// Its distribution-free interval at [`DEFAULT_LEVEL`]
    /// ([`percentile_estimate`]); `None` with too few requests in the band for one (and in
    /// reports saved before it was computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_p50_interval: Option<Interval>,
}

/// What the probe felt against the load level over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeUnderLoad {
    /// Measured probe requests.
    pub probe_count: usize,
    /// Measured load requests.
    pub load_count: usize,
    /// The load's client(s), e.g. `locust`.
    pub load_client: String,
    /// Each measured probe request, in order of sending.
    pub points: Vec<ProbePoint>,
    /// The load in flight as a step function: `(ms, requests in flight from then on)`, from
    /// the run's start to the last load request's end, one step per change.
    pub load_timeline: Vec<(f64, u32)>,
    /// Most load requests in flight at once.
    pub peak_in_flight: u32,
    /// Probe TTFT by load: the successful probe requests in order of the load at their send,
    /// split into thirds (lowest, middle, highest), when there are [`MIN_PROBE_POINTS`].
    pub ttft_by_load: Vec<LoadBand>,
}

/// The end of a request on the run's time axis: its send plus its whole duration.
fn end_of(r: &RequestRecord) -> f64 {
    r.start_ms + r.metrics.e2e_ms.unwrap_or(0.0).max(0.0)
}

/// The probe against the load, `None` unless the run is a probe under load.
pub fn probe_under_load(report: &Report) -> Option<ProbeUnderLoad> {
    if !report.is_probe_under_load() {
        return None;
    }
    let is_probe = |r: &RequestRecord| r.client.as_deref() == Some(PROBE_CLIENT);
    // Every load request adds to the load, a warm-up too; only measured ones are counted.
    let load: Vec<&RequestRecord> = report.requests.iter().filter(|r| !is_probe(r)).collect();
    let mut clients: Vec<&str> = Vec::new();
    for r in &load {
        let c = r.client.as_deref().unwrap_or("unknown");
        if !clients.contains(&c) {
            clients.push(c);
        }
    }
    // Sends (+1) and ends (−1) in time order; at one instant ends first, so a request that
    // ends as another starts does not count twice.
    let mut events: Vec<(f64, i32)> = load
        .iter()
        .flat_map(|r| [(r.start_ms, 1), (end_of(r), -1)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut load_timeline: Vec<(f64, u32)> = vec![(0.0, 0)];
    let mut level: i64 = 0;
    let mut peak = 0u32;
    for (at, d) in events {
        level += i64::from(d);
        let n = u32::try_from(level.max(0)).unwrap_or(u32::MAX);
        peak = peak.max(n);
        let last = load_timeline.len() - 1;
        if load_timeline[last].0 == at {
            load_timeline[last].1 = n;
        } else {
            load_timeline.push((at, n));
        }
    }
    load_timeline.dedup_by(|b, a| a.1 == b.1);
    let in_flight_at = |t: f64| {
        // The last step at or before t.
        let i = load_timeline.partition_point(|s| s.0 <= t);
        i.checked_sub(1).map_or(0, |i| load_timeline[i].1)
    };
    let mut probe: Vec<&RequestRecord> = report.measured().filter(|r| is_probe(r)).collect();
    probe.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    let points: Vec<ProbePoint> = probe
        .iter()
        .map(|r| ProbePoint {
            start_ms: r.start_ms,
            ttft_ms: r.metrics.ttft_ms.filter(|_| r.outcome.is_ok()),
            load_in_flight: in_flight_at(r.start_ms),
        })
        .collect();
    let ttft_by_load = thirds(&points)
        .into_iter()
        .map(|part| {
            let ttft = sorted(&part.iter().map(|p| p.1).collect::<Vec<f64>>());
            let median = percentile_estimate(&ttft, 0.5, DEFAULT_LEVEL);
            LoadBand {
                from: part[0].0,
                to: part[part.len() - 1].0,
                count: part.len(),
                ttft_p50_ms: median.map_or(f64::NAN, |m| m.value),
                ttft_p50_interval: median.and_then(|m| m.interval),
            }
        })
        .collect();
    Some(ProbeUnderLoad {
        probe_count: probe.len(),
        load_count: load.iter().filter(|r| !r.warmup).count(),
        load_client: clients.join(" + "),
        points,
        load_timeline,
        peak_in_flight: peak,
        ttft_by_load,
    })
}

/// The successful probe requests `(load in flight, TTFT)` in order of load (then TTFT), split
/// into thirds; none with fewer than [`MIN_PROBE_POINTS`].
fn thirds(points: &[ProbePoint]) -> Vec<Vec<(u32, f64)>> {
    let mut ok: Vec<(u32, f64)> = points
        .iter()
        .filter_map(|p| Some((p.load_in_flight, p.ttft_ms?)))
        .collect();
    ok.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let n = ok.len();
    if n < MIN_PROBE_POINTS {
        return Vec::new();
    }
    (0..3)
        .map(|k| ok[k * n / 3..(k + 1) * n / 3].to_vec())
        .collect()
}

impl ProbeUnderLoad {
    /// The TTFTs (ms) of the successful probe requests in each band of
    /// [`Self::ttft_by_load`], in the same order.
    pub fn band_ttfts(&self) -> Vec<Vec<f64>> {
        thirds(&self.points)
            .into_iter()
            .map(|part| part.into_iter().map(|p| p.1).collect())
            .collect()
    }
}
