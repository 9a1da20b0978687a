//! What the side-by-side rounds run at each level: streams, requests per round and answer
//! length, chosen so that a P99 is not a maximum (#30): at one stream 100 requests of 20 tokens
//! (TTFT needs requests; 19 gaps each give per-gap ITL gaps enough), at 16 and 64 streams 384
//! requests of 50 tokens, enough for a distribution-free interval of a P99 (368 requests at
//! 95 %, `ttft_core::uncertainty::quantile::requests_needed`). `TTFT_BENCH_QUICK=1` runs a
//! small version (1 and 16 streams, a few requests) for working on the bench;
//! `TTFT_BENCH_ROUNDS` and `TTFT_BENCH_PEER_ROUNDS` set the rounds.

/// One load level of the side-by-side rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Concurrent streams (closed loop).
    pub streams: usize,
    /// Requests per round.
    pub requests: usize,
    /// Output tokens per request (`max_tokens`; `sim-bench` writes one chunk per token).
    pub tokens: usize,
}

/// The full bench's levels.
pub const FULL: [Level; 3] = [
    Level {
        streams: 1,
        requests: 100,
        tokens: 20,
    },
    Level {
        streams: 16,
        requests: 384,
        tokens: 50,
    },
    Level {
        streams: 64,
        requests: 384,
        tokens: 50,
    },
];

/// `TTFT_BENCH_QUICK=1`: a partial run for working on the bench (minutes, not half an hour).
pub const QUICK: [Level; 2] = [
    Level {
        streams: 1,
        requests: 20,
        tokens: 20,
    },
    Level {
        streams: 16,
        requests: 48,
        tokens: 20,
    },
];

/// Whether `TTFT_BENCH_QUICK` asks for the quick run.
pub fn quick() -> bool {
    std::env::var("TTFT_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The levels of this run.
pub fn levels() -> Vec<Level> {
    if quick() {
        QUICK.to_vec()
    } else {
        FULL.to_vec()
    }
}

/// This run's level at `streams`, if it has one.
pub fn at(streams: usize) -> Option<Level> {
    levels().into_iter().find(|l| l.streams == streams)
}

/// The capacity section's levels (streams, one request each).
pub fn capacity_streams() -> Vec<usize> {
    if quick() {
        vec![16, 64]
    } else {
        vec![16, 32, 64, 128, 192, 256]
    }
}

/// A count from the environment variable `name`, or `default`.
pub fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}

/// What `results.json` keeps of the plan.
pub fn to_json() -> serde_json::Value {
    serde_json::json!({
        "quick": quick(),
        "levels": levels().iter().map(|l| serde_json::json!({
            "streams": l.streams, "requests": l.requests, "tokens": l.tokens,
        })).collect::<Vec<_>>(),
        "capacity_streams": capacity_streams(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ttft_core::uncertainty::quantile::requests_needed;

    #[test]
    fn every_full_level_has_requests_enough_for_its_tails() {
        // ≥ 100 requests at one stream; a P99 interval (368 at 95 %) at 16 and 64 streams.
        assert_eq!(FULL[0].streams, 1);
        assert!(FULL[0].requests >= 100);
        for l in &FULL[1..] {
            assert!(l.requests >= requests_needed(0.99, 0.95), "{l:?}");
            // Whole waves: every stream runs as many requests.
            assert_eq!(l.requests % l.streams, 0, "{l:?}");
        }
        // The quick run measures the same levels' shape, smaller.
        assert!(
            QUICK
                .iter()
                .all(|q| FULL.iter().any(|f| f.streams == q.streams))
        );
    }
}
