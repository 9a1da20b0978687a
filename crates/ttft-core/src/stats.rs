//! Statistics over many requests.
//!
//! **Percentile method**: linear interpolation between closest ranks on the sorted sample
//! (Hyndman & Fan type 7, the default of NumPy and of `vllm bench serve`): for a sample of `n`
//! sorted values and `p` in [0, 100], the rank is `h = (n − 1)·p/100` and the result is
//! `x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋])`. NaN values are ignored.

use serde::{Deserialize, Serialize};

/// Count, mean, extremes and the usual percentiles of a sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub count: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// Sorts a copy of the finite values (ascending, in [`f64::total_cmp`] order).
///
/// They are sorted as integers with the same order (values equal under `total_cmp` have the
/// same bits, so the result is the one a comparison sort gives): a run's million gaps sort
/// several times faster than through a comparison closure.
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut keys: Vec<i64> = values
        .iter()
        .filter(|x| x.is_finite())
        .map(|x| order_key(x.to_bits() as i64))
        .collect();
    keys.sort_unstable();
    keys.into_iter()
        .map(|k| f64::from_bits(order_key(k) as u64))
        .collect()
}

/// `total_cmp`'s own bit trick: an integer whose order is the float's (its own inverse).
fn order_key(bits: i64) -> i64 {
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// Percentile `p` (0–100) of the finite values of an unsorted sample, found by selection
/// rather than a sort: the same value as `percentile_sorted(&sorted(values), p)`. Reorders
/// `values`.
pub fn percentile_select(values: &mut Vec<f64>, p: f64) -> Option<f64> {
    values.retain(|x| x.is_finite());
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let h = (n - 1) as f64 * (p.clamp(0.0, 100.0) / 100.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let (_, x_lo, rest) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let x_lo = *x_lo;
    let x_hi = if hi == lo {
        x_lo
    } else {
        rest.iter().copied().min_by(f64::total_cmp).unwrap_or(x_lo)
    };
    Some(x_lo + (h - lo as f64) * (x_hi - x_lo))
}

/// Percentile `p` (0–100) of an already sorted sample (type 7).
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * (p.clamp(0.0, 100.0) / 100.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// Percentile `p` of an unsorted sample.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    percentile_sorted(&sorted(values), p)
}

impl Summary {
    /// Summarises a sample; `None` when it has no finite values.
    ///
    /// The percentiles are found by selection, not a sort (a run's million gaps take a few
    /// linear passes): each is the value [`percentile_sorted`] gives on the sorted sample.
    pub fn of(values: &[f64]) -> Option<Self> {
        let mut keys: Vec<i64> = values
            .iter()
            .filter(|x| x.is_finite())
            .map(|x| order_key(x.to_bits() as i64))
            .collect();
        if keys.is_empty() {
            return None;
        }
        let n = keys.len();
        let value = |k: i64| f64::from_bits(order_key(k) as u64);
        let mean = keys.iter().map(|k| value(*k)).sum::<f64>() / n as f64;
        let (min, max) = keys
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), k| (lo.min(*k), hi.max(*k)));
        // Ascending ranks: each selection works on what lies right of the one before.
        let mut done = 0;
        let mut pct = |p: f64| {
            let h = (n - 1) as f64 * (p / 100.0);
            let lo = h.floor() as usize;
            let x_lo = if lo >= done {
                *keys[done..].select_nth_unstable(lo - done).1
            } else {
                keys[lo]
            };
            done = lo + 1;
            let x_hi = if lo + 1 < n {
                let i = lo
                    + 1
                    + keys[lo + 1..]
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, k)| **k)
                        .map_or(0, |(i, _)| i);
                keys.swap(lo + 1, i);
                done = lo + 2;
                keys[lo + 1]
            } else {
                x_lo
            };
            let (x_lo, x_hi) = (value(x_lo), value(x_hi));
            x_lo + (h - lo as f64) * (x_hi - x_lo)
        };
        let (p50, p90, p95, p99) = (pct(50.0), pct(90.0), pct(95.0), pct(99.0));
        Some(Self {
            count: n,
            mean,
            min: value(min),
            max: value(max),
            p50,
            p90,
            p95,
            p99,
        })
    }
}

/// One histogram bin `[lo, hi)` (the last bin includes `hi`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bin {
    /// Lower edge.
    pub lo: f64,
    /// Upper edge.
    pub hi: f64,
    /// Values in the bin.
    pub count: usize,
}

/// Equal-width histogram with `bins` bins over the range of the finite values, counting each
/// once, in one pass and no sort.
pub fn histogram(values: &[f64], bins: usize) -> Vec<Bin> {
    let finite = || values.iter().copied().filter(|v| v.is_finite());
    let (Some(lo), Some(hi)) = (
        finite().min_by(f64::total_cmp),
        finite().max_by(f64::total_cmp),
    ) else {
        return Vec::new();
    };
    if bins == 0 {
        return Vec::new();
    }
    let width = if hi > lo {
        (hi - lo) / bins as f64
    } else {
        1.0
    };
    let mut out: Vec<Bin> = (0..bins)
        .map(|i| Bin {
            lo: lo + width * i as f64,
            hi: lo + width * (i + 1) as f64,
            count: 0,
        })
        .collect();
    for v in finite() {
        let i = (((v - lo) / width) as usize).min(bins - 1);
        out[i].count += 1;
    }
    out
}

/// Empirical CDF points `(value, fraction ≤ value)`, at most `max_points` of them.
pub fn cdf(values: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let s = sorted(values);
    let n = s.len();
    if n == 0 || max_points == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(max_points).max(1);
    let mut out: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .map(|i| (s[i], (i + 1) as f64 / n as f64))
        .collect();
    if out.last().is_some_and(|p| p.1 < 1.0) {
        out.push((s[n - 1], 1.0));
    }
    out
}

/// Least-squares line `y = slope·x + intercept` with its R².
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// Slope (y units per x unit).
    pub slope: f64,
    /// Intercept (y at x = 0).
    pub intercept: f64,
    /// Coefficient of determination.
    pub r2: f64,
    /// Points used.
    pub n: usize,
}

/// Fits a line through `(x, y)` points; `None` with fewer than two distinct x.
pub fn linear_fit(points: &[(f64, f64)]) -> Option<LinearFit> {
    linear_fit_iter(points.iter().copied())
}

/// [`linear_fit`] over points given by an iterator it walks a few times (so a million points
/// need not be gathered first); the same result, summed in the same order.
pub fn linear_fit_iter<I>(points: I) -> Option<LinearFit>
where
    I: Iterator<Item = (f64, f64)> + Clone,
{
    let pts = points.filter(|(x, y)| x.is_finite() && y.is_finite());
    let count = pts.clone().count();
    let n = count as f64;
    if count < 2 {
        return None;
    }
    let mx = pts.clone().map(|p| p.0).sum::<f64>() / n;
    let my = pts.clone().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.clone().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.clone().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = pts.map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 {
        1.0
    } else {
        (sxy * sxy) / (sxx * syy)
    };
    Some(LinearFit {
        slope,
        intercept: my - slope * mx,
        r2,
        n: count,
    })
}

/// Thresholds of a good experience (defaults from practice).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// A request whose TTFT exceeds this is not good (ms).
    pub ttft_ms: f64,
    /// A request whose P95 gap exceeds this is not good (ms).
    pub itl_ms: f64,
    /// The run's P95 TTFT above this is a bad experience (ms).
    pub p95_ttft_ms: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            ttft_ms: 2000.0,
            itl_ms: 120.0,
            p95_ttft_ms: 2000.0,
        }
    }
}

/// First level at which a value exceeds `factor` × the first level's value.
/// `levels` are `(level, value)` sorted by level.
pub fn knee(levels: &[(f64, f64)], factor: f64) -> Option<f64> {
    let base = levels.first()?.1;
    levels
        .iter()
        .skip(1)
        .find(|(_, v)| *v > base * factor)
        .map(|(l, _)| *l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `Summary::of` gave when it sorted (the reference its selection must equal).
    fn by_sorting(values: &[f64]) -> Option<Summary> {
        let s = sorted(values);
        let pct = |p| percentile_sorted(&s, p).unwrap_or(f64::NAN);
        (!s.is_empty()).then(|| Summary {
            count: s.len(),
            mean: 0.0,
            min: s[0],
            max: s[s.len() - 1],
            p50: pct(50.0),
            p90: pct(90.0),
            p95: pct(95.0),
            p99: pct(99.0),
        })
    }

    fn same_as_sorting(values: &[f64]) {
        let got = Summary::of(values);
        let want = by_sorting(values);
        match (got, want) {
            (None, None) => {}
            (Some(g), Some(w)) => {
                assert_eq!(Summary { mean: 0.0, ..g }, w, "{values:?}");
                let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
                let mean = finite.iter().sum::<f64>() / finite.len() as f64;
                if mean.is_finite() {
                    assert!((g.mean - mean).abs() <= 1e-9 * mean.abs().max(1.0));
                }
            }
            (g, w) => panic!("{g:?} vs {w:?} for {values:?}"),
        }
    }

    #[test]
    fn selection_gives_the_sorted_percentiles() {
        same_as_sorting(&[]);
        same_as_sorting(&[f64::NAN, f64::INFINITY]);
        same_as_sorting(&[3.0]);
        same_as_sorting(&[2.0, 1.0]);
        same_as_sorting(&[5.0, 5.0, 5.0, -0.0, 0.0, f64::NAN, 7.5]);
        same_as_sorting(
            &(0..1000)
                .map(|i| f64::from((i * 7919) % 1000))
                .collect::<Vec<_>>(),
        );
    }

    proptest! {
        #[test]
        fn selection_equals_sorting(values in proptest::collection::vec(
            prop_oneof![
                8 => (-1000i32..1000).prop_map(|v| f64::from(v) / 8.0),
                1 => any::<f64>(),
                1 => Just(f64::NAN),
            ], 0..300)) {
            same_as_sorting(&values);
        }
    }
}
