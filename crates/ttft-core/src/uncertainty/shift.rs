//! Differences of location between two runs.
//!
//! - Independent runs: the Hodges–Lehmann shift (the median of every difference `y − x` of a
//!   value of the second run and one of the first) with its distribution-free interval, the
//!   `C`-th smallest and largest of those differences where `C` comes from the Mann–Whitney
//!   statistic's distribution (its normal approximation: `C = ⌊nm/2 − z·√(nm(n+m+1)/12)⌋`),
//!   and the Mann–Whitney test's p-value (ties corrected). The interval assumes the two
//!   distributions differ by a shift; when they differ in shape too it is still a valid test
//!   of "one run tends to be lower", and the shift is the typical difference of a pair.
//!   The `nm` differences are never formed: the `k`-th smallest is found by bisection on its
//!   value, counting the differences below a value in one pass over the sorted runs.
//! - Paired requests (interleaved runs, the same prompt sent to each): the median of the paired
//!   differences with the sign test's order-statistic interval and its exact binomial p-value:
//!   distribution-free, and the pairing cancels drift shared by both.

use statrs::distribution::{Binomial, DiscreteCDF};

use super::quantile::percentile_estimate;
use super::{Interval, normal_p_value, sane_level, z_two_sided};

/// A difference between two runs (`second − first`), with its interval and the p-value of "no
/// difference".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// The estimate.
    pub estimate: f64,
    /// Its interval; `None` when the runs are too small for one.
    pub interval: Option<Interval>,
    /// Two-sided p-value of no difference.
    pub p_value: f64,
}

/// The number of differences `y_j − x_i ≤ d` (both sorted ascending).
fn count_at_most(x: &[f64], y: &[f64], d: f64) -> u64 {
    let n = x.len();
    let mut i = 0; // first index with x[i] ≥ y_j − d
    let mut count = 0u64;
    for yj in y {
        let t = yj - d;
        while i < n && x[i] < t {
            i += 1;
        }
        count += (n - i) as u64;
    }
    count
}

/// The `k`-th smallest (1-based) of the differences `y_j − x_i` of two sorted samples.
pub fn kth_difference(x: &[f64], y: &[f64], k: u64) -> Option<f64> {
    let total = (x.len() * y.len()) as u64;
    if k == 0 || k > total {
        return None;
    }
    let (mut lo, mut hi) = (y[0] - x[x.len() - 1], y[y.len() - 1] - x[0]);
    let mut below = count_at_most(x, y, lo);
    if below >= k {
        return Some(lo);
    }
    let mut within = total - below;
    // count(lo) < k ≤ count(hi): halve until few differences lie between, then pick among
    // those (or until the two are neighbouring floats).
    let few = 4 * (x.len() + y.len()) as u64;
    for _ in 0..200 {
        if within <= few
            && let Some(d) = pick_between(x, y, (lo, hi), k - below, within)
        {
            return Some(d);
        }
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        let c = count_at_most(x, y, mid);
        if c >= k {
            hi = mid;
            within = c - below;
        } else {
            lo = mid;
            within -= c - below;
            below = c;
        }
    }
    Some(hi)
}

/// The `k`-th smallest of the `expected` differences in `(lo, hi]`, listing them (they are
/// few); `None` when rounding made the list disagree with the count.
fn pick_between(x: &[f64], y: &[f64], (lo, hi): (f64, f64), k: u64, expected: u64) -> Option<f64> {
    let mut found = Vec::with_capacity(expected as usize);
    let (mut a, mut b) = (0, 0); // x[a..b]: the x with lo < y − x ≤ hi, i.e. y − hi ≤ x < y − lo
    for yj in y {
        while a < x.len() && x[a] < yj - hi {
            a += 1;
        }
        while b < x.len() && x[b] < yj - lo {
            b += 1;
        }
        found.extend(x[a..b.max(a)].iter().map(|xi| yj - xi));
    }
    if found.len() as u64 != expected || k == 0 || k > expected {
        return None;
    }
    let (_, d, _) = found.select_nth_unstable_by((k - 1) as usize, f64::total_cmp);
    Some(*d)
}

/// The Mann–Whitney statistic's two-sided p-value (normal approximation, ties corrected).
fn mann_whitney_p(x: &[f64], y: &[f64]) -> f64 {
    let (n, m) = (x.len() as f64, y.len() as f64);
    // U = #{y > x} + ½ #{y = x}, and the tie groups of the pooled sample.
    let (mut i, mut j) = (0, 0);
    let mut u = 0.0;
    let mut tie_term = 0.0;
    while i < x.len() || j < y.len() {
        let v = match (x.get(i), y.get(j)) {
            (Some(a), Some(b)) => a.min(*b),
            (Some(a), None) => *a,
            (None, Some(b)) => *b,
            (None, None) => break,
        };
        let (i0, j0) = (i, j);
        while i < x.len() && x[i] == v {
            i += 1;
        }
        while j < y.len() && y[j] == v {
            j += 1;
        }
        let (tx, ty) = ((i - i0) as f64, (j - j0) as f64);
        // These y's exceed the i0 smaller x's and tie with the tx equal ones.
        u += ty * (i0 as f64 + tx / 2.0);
        let t = tx + ty;
        tie_term += t * t * t - t;
    }
    let total = n + m;
    let var = n * m / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    normal_p_value((u - n * m / 2.0) / var.sqrt())
}

/// The Hodges–Lehmann shift of `second` from `first` (both sorted ascending, finite) with its
/// interval at `level` and the Mann–Whitney p-value; `None` when either is empty.
pub fn hodges_lehmann(first: &[f64], second: &[f64], level: f64) -> Option<Difference> {
    if first.is_empty() || second.is_empty() {
        return None;
    }
    let (n, m) = (first.len() as f64, second.len() as f64);
    let total = (first.len() * second.len()) as u64;
    let estimate = if total % 2 == 1 {
        kth_difference(first, second, total.div_ceil(2))?
    } else {
        (kth_difference(first, second, total / 2)? + kth_difference(first, second, total / 2 + 1)?)
            / 2.0
    };
    let c = (n * m / 2.0 - z_two_sided(level) * (n * m * (n + m + 1.0) / 12.0).sqrt()).floor();
    let interval = if c >= 1.0 {
        let c = c as u64;
        Some(Interval {
            lo: kth_difference(first, second, c)?,
            hi: kth_difference(first, second, total - c + 1)?,
            level: sane_level(level),
        })
    } else {
        None
    };
    Some(Difference {
        estimate,
        interval,
        p_value: mann_whitney_p(first, second),
    })
}

/// The fewest requests per side for which the shift has an interval at `level` (4 at 95 %).
pub fn shift_requests_needed(level: f64) -> usize {
    let z = z_two_sided(level);
    (2usize..)
        .find(|n| {
            let n = *n as f64;
            (n * n / 2.0 - z * (n * n * (2.0 * n + 1.0) / 12.0).sqrt()).floor() >= 1.0
        })
        .unwrap_or(usize::MAX)
}

/// The median of paired differences `second − first` with the sign test's interval and exact
/// two-sided p-value (zero differences left out of the test); `None` without pairs.
pub fn paired_median(pairs: &[(f64, f64)], level: f64) -> Option<Difference> {
    let mut d: Vec<f64> = pairs
        .iter()
        .map(|(a, b)| b - a)
        .filter(|x| x.is_finite())
        .collect();
    d.sort_unstable_by(f64::total_cmp);
    let est = percentile_estimate(&d, 0.5, level)?;
    let above = d.iter().filter(|x| **x > 0.0).count() as u64;
    let below = d.iter().filter(|x| **x < 0.0).count() as u64;
    let n = above + below;
    let p_value = if n == 0 {
        1.0
    } else {
        let b = Binomial::new(0.5, n).ok()?;
        (2.0 * b.cdf(above.min(below))).min(1.0)
    };
    Some(Difference {
        estimate: est.value,
        interval: est.interval,
        p_value,
    })
}
