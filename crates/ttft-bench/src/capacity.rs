//! Client capacity: the chunk rate one tab takes at rising streams (`sim-bench-fast`, 5 ms
//! steps, one 100-token request per stream, HTTP/2), judged as the highest rate at which the
//! studio's P99 per-gap error stays within [`LIMIT`]× the floor probe's (in a worker, same
//! transport, same level, same run): what a browser can reach on this machine is the bar, not
//! a fixed millisecond figure the browser's own floor is above (#30). The raw figures and the
//! old "P99 error under 1 ms" rate are kept.

use anyhow::Result;
use fantoccini::Client;
use serde_json::{Value, json};
use ttft_e2e::Studio;

use crate::accuracy::{agreement, errors};
use crate::floor::{self, Thread, Transport};
use crate::plan::{self, Level};
use crate::{Setup, studio_requests, ui_run};

/// The studio's P99 per-gap error may be at most this many times the floor's.
pub const LIMIT: f64 = 1.2;
/// The model of the capacity runs: 200 chunks/s per stream.
const MODEL: &str = "sim-bench-fast";
/// Output tokens per request.
const TOKENS: usize = 100;

/// The highest `chunks_per_s` of `levels` whose `ratio_to_floor` is at most `limit`; `None`
/// when no level's is (or none was measured).
pub fn highest_within(levels: &[Value], limit: f64) -> Option<f64> {
    levels
        .iter()
        .filter(|l| l["ratio_to_floor"].as_f64().is_some_and(|r| r <= limit))
        .filter_map(|l| l["chunks_per_s"].as_f64())
        .reduce(f64::max)
}

/// The studio and the floor probe at each level of [`plan::capacity_streams`].
pub async fn capacity(c: &Client, studio: &Studio) -> Result<Value> {
    let mut levels = Vec::new();
    let mut under_1ms: Option<f64> = None;
    let mut stopped = None;
    for conc in plan::capacity_streams() {
        eprintln!("capacity at {conc} streams…");
        match level_at(c, studio, conc, &mut under_1ms).await {
            Ok(level) => levels.push(level),
            Err(e) => {
                // A level that fails (a stalled transport, a timeout) ends the climb: the levels
                // below keep their figures and the failure is said, not hidden.
                eprintln!("capacity at {conc} streams failed: {e:#}");
                stopped = Some(json!({ "streams": conc, "error": format!("{e:#}") }));
                break;
            }
        }
    }
    Ok(json!({
        "transport": Transport::Http2.label(),
        "limit_to_floor": LIMIT,
        "max_chunks_per_s_within_limit_of_floor": highest_within(&levels, LIMIT),
        "levels": levels,
        "stopped_at": stopped,
        "max_chunks_per_s_with_p99_error_under_1ms": under_1ms,
    }))
}

/// One level: the studio at `conc` streams, then the floor probe at the same level.
async fn level_at(
    c: &Client,
    studio: &Studio,
    conc: usize,
    under_1ms: &mut Option<f64>,
) -> Result<Value> {
    let report = ui_run(
        c,
        studio,
        &Setup::plain(&studio.tls_url),
        MODEL,
        conc,
        conc,
        TOKENS,
    )
    .await?;
    let a = agreement(studio.port, &studio_requests(&report)).await?;
    let e = errors(&a.gap_errors);
    let p99 = e["p99_ms"].as_f64().unwrap_or(f64::INFINITY);
    if p99 < 1.0 {
        *under_1ms = Some(under_1ms.map_or(a.chunks_per_s, |b: f64| b.max(a.chunks_per_s)));
    }
    let level = Level {
        streams: conc,
        requests: conc,
        tokens: TOKENS,
    };
    let fl = floor::floor_in(c, studio, Transport::Http2, Thread::Worker, MODEL, level).await?;
    let f = agreement(studio.port, &fl).await?;
    let fe = errors(&f.gap_errors);
    let ratio = fe["p99_ms"].as_f64().filter(|f| *f > 0.0).map(|f| p99 / f);
    Ok(json!({
        "streams": conc, "chunks": a.chunks, "chunks_per_s": a.chunks_per_s,
        "mismatched_requests": a.mismatched, "failed_requests": a.failed, "itl_error": e,
        "floor": { "client": Thread::Worker.client(), "chunks_per_s": f.chunks_per_s,
                   "mismatched_requests": f.mismatched, "failed_requests": f.failed,
                   "itl_error": fe },
        "ratio_to_floor": ratio,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_is_the_highest_rate_within_the_floor_limit() {
        let level = |rate: f64, ratio: Option<f64>| json!({ "chunks_per_s": rate, "ratio_to_floor": ratio });
        let levels = [
            level(3000.0, Some(1.1)),
            level(6000.0, Some(1.2)),
            // Above the limit: not counted, even though a higher rate follows.
            level(11000.0, Some(1.6)),
            level(17000.0, Some(0.9)),
            level(27000.0, None),
        ];
        assert_eq!(highest_within(&levels, LIMIT), Some(17000.0));
        assert_eq!(highest_within(&levels[..3], LIMIT), Some(6000.0));
        assert_eq!(highest_within(&levels[2..3], LIMIT), None);
        assert_eq!(highest_within(&[], LIMIT), None);
    }
}
