//! Distribution-free intervals for a percentile of independent values: the interval between
//! two order statistics `x(l) ≤ ξ_p ≤ x(u)`, whose coverage is `P(l ≤ B < u)` for
//! `B ~ Binomial(n, p)` (the count of values below the true percentile), exactly, whatever the
//! distribution. The ranks are the outermost ones leaving at most `(1 − level)/2` in each tail,
//! so the coverage is at least the level.

use statrs::distribution::{Binomial, DiscreteCDF};

use super::{Estimate, Interval, sane_level};
use crate::stats::percentile_sorted;

/// The 0-based ranks `(l, u)` of the order statistics bounding percentile `p` (a fraction,
/// 0–1) of `n` values at `level`; `None` when `n` is too small for either bound.
pub fn order_ranks(n: usize, p: f64, level: f64) -> Option<(usize, usize)> {
    if n == 0 || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let tail = (1.0 - sane_level(level)) / 2.0;
    let b = Binomial::new(p, n as u64).ok()?;
    let cdf = |k: usize| b.cdf(k as u64);
    // Lower: the largest j with P(B ≤ j) ≤ tail; the bound is x(j+1), 1-based, so rank j.
    if cdf(0) > tail {
        return None;
    }
    let (mut lo, mut hi) = (0usize, n); // cdf(lo) ≤ tail < cdf(hi) = 1
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cdf(mid) <= tail { lo = mid } else { hi = mid }
    }
    let l = lo;
    // Upper: the smallest m with P(B ≤ m) ≥ 1 − tail; the bound is x(m+1), 1-based: rank m.
    if cdf(n - 1) < 1.0 - tail {
        return None;
    }
    let (mut lo, mut hi) = (0usize, n - 1); // answer in (lo, hi] unless cdf(0) qualifies
    if cdf(0) >= 1.0 - tail {
        return Some((l, 0));
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cdf(mid) >= 1.0 - tail {
            hi = mid
        } else {
            lo = mid
        }
    }
    Some((l, hi))
}

/// The fewest values for which percentile `p` (0–1) has an interval at `level`: both
/// `(1 − p)^n` and `p^n` at most `(1 − level)/2`: at 95 %, 6 for a median, 36 for a P90,
/// 72 for a P95 and 368 for a P99.
pub fn requests_needed(p: f64, level: f64) -> usize {
    let tail = (1.0 - sane_level(level)) / 2.0;
    let q = p.max(1.0 - p).clamp(0.0, 1.0 - 1e-12);
    let mut n = (tail.ln() / q.ln()).floor().max(1.0) as usize;
    while q.powi(n as i32) > tail {
        n += 1;
    }
    n
}

/// Percentile `p` (0–1) of a sorted sample (type 7, as every figure of the studio) with its
/// distribution-free interval, or the sample size it needs; `None` for an empty sample.
pub fn percentile_estimate(sorted: &[f64], p: f64, level: f64) -> Option<Estimate> {
    let value = percentile_sorted(sorted, p * 100.0)?;
    let n = sorted.len();
    Some(match order_ranks(n, p, level) {
        Some((l, u)) => Estimate {
            value,
            interval: Some(Interval {
                lo: sorted[l],
                hi: sorted[u],
                level: sane_level(level),
            }),
            n,
            needs: None,
        },
        None => Estimate::without_interval(value, n, Some(requests_needed(p, level))),
    })
}
