//! Intervals for proportions (a share of requests): Wilson's score interval for one, and
//! Newcombe's hybrid score interval (his method 10) for the difference of two, with the
//! two-proportion z-test's p-value for the multiple-comparison correction.

use super::{Estimate, Interval, normal_p_value, sane_level, z_two_sided};

/// Wilson's score interval for `hits` of `n` at `level`; `None` when `n` is 0. Its coverage
/// oscillates around the level as `n` and the share change, dipping to about 92 % for shares
/// near 0 or 1 (a 98 % goodput from 200 requests) and averaging the level
/// (`tests/it/uncertainty.rs` measures both).
pub fn wilson(hits: usize, n: usize, level: f64) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let (x, n_f) = (hits.min(n) as f64, n as f64);
    let z = z_two_sided(level);
    let p = x / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = z / denom * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    Some(Interval {
        lo: (centre - half).max(0.0),
        hi: (centre + half).min(1.0),
        level: sane_level(level),
    })
}

/// A proportion with its Wilson interval; `None` when `n` is 0.
pub fn proportion_estimate(hits: usize, n: usize, level: f64) -> Option<Estimate> {
    let interval = wilson(hits, n, level)?;
    Some(Estimate {
        value: hits.min(n) as f64 / n as f64,
        interval: Some(interval),
        n,
        needs: None,
    })
}

/// The difference `b − a` of two proportions (`hits` of `n` each) with Newcombe's interval
/// and the pooled two-proportion z-test's two-sided p-value; `None` when either `n` is 0.
pub fn proportion_difference(
    a: (usize, usize),
    b: (usize, usize),
    level: f64,
) -> Option<(f64, Interval, f64)> {
    let (wa, wb) = (wilson(a.0, a.1, level)?, wilson(b.0, b.1, level)?);
    let (pa, pb) = (a.0 as f64 / a.1 as f64, b.0 as f64 / b.1 as f64);
    let d = pb - pa;
    let lo = d - ((pb - wb.lo).powi(2) + (wa.hi - pa).powi(2)).sqrt();
    let hi = d + ((wb.hi - pb).powi(2) + (pa - wa.lo).powi(2)).sqrt();
    let pooled = (a.0 + b.0) as f64 / (a.1 + b.1) as f64;
    let se = (pooled * (1.0 - pooled) * (1.0 / a.1 as f64 + 1.0 / b.1 as f64)).sqrt();
    let p_value = if se > 0.0 {
        normal_p_value(d / se)
    } else {
        1.0
    };
    Some((
        d,
        Interval {
            lo,
            hi,
            level: sane_level(level),
        },
        p_value,
    ))
}

/// Whether the Wilson interval of `hits` of `n` at `level` clears `target` (a share, 0–1):
/// `Some(true)` when its lower bound is at or above it, `Some(false)` when its upper bound is
/// below it, `None` when it straddles it (or `n` is 0).
pub fn clears(hits: usize, n: usize, target: f64, level: f64) -> Option<bool> {
    let w = wilson(hits, n, level)?;
    if w.lo >= target {
        Some(true)
    } else if w.hi < target {
        Some(false)
    } else {
        None
    }
}

/// The most requests [`requests_to_clear`] looks at.
pub const MAX_REQUESTS_TO_CLEAR: usize = 10_000_000;

/// About how many requests would let a share like `hits` of `n` be told from `target`: the
/// fewest `m` whose Wilson interval at `level` around `m × hits / n` hits clears it (a search:
/// doubling, then bisection). `None` when the share equals the target, or no size up to
/// [`MAX_REQUESTS_TO_CLEAR`] would (a share of 1 against a target of 1).
pub fn requests_to_clear(hits: usize, n: usize, target: f64, level: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let share = hits.min(n) as f64 / n as f64;
    if share == target {
        return None;
    }
    let settled = |m: usize| {
        let h = ((share * m as f64).round() as usize).min(m);
        clears(h, m, target, level).is_some()
    };
    let mut hi = n.max(1);
    while !settled(hi) {
        hi = hi.checked_mul(2)?;
        if hi > MAX_REQUESTS_TO_CLEAR {
            return None;
        }
    }
    let mut lo = hi / 2; // not settled (or 0), unless `n` itself already was
    if lo < n {
        return Some(hi);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if settled(mid) { hi = mid } else { lo = mid }
    }
    Some(hi)
}
