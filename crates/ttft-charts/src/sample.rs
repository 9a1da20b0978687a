//! Fewer points, the same story: how a large run's series are cut down before ECharts sees
//! them, keeping what a reader checks.
//!
//! - [`quantile_ranks`] picks which of `n` sorted values to draw so that the drawn ones have the
//!   same minimum, maximum and type-7 P50/P90/P95/P99 as all of them (the percentiles
//!   `ttft_core::stats` computes and the charts mark). It is used for CDF lines ([`cdf`]) and
//!   the TTFT-against-prompt scatter ([`sample_by_value`]).
//! - [`min_max_buckets`] thins a line ordered along x (the reading curves) to the first, lowest,
//!   highest and last point of each bucket, so no peak or step is lost.
//! - [`histogram`] bins every value in one pass (histograms never sample).
//!
//! Nothing here sorts a whole series with a comparison closure: values are ordered through
//! integer keys with the order of `f64::total_cmp` (a million gaps sort in ~30 ms instead of
//! ~150 ms), and a CDF needs only the values at its ranks, which [`order_statistics`] selects in
//! O(n log k). Whenever a chart draws a sample, its caption says so ([`sampled_note`]).

use ttft_core::stats::Bin;

/// Points drawn per series at most; above it, a sample that keeps the extremes and the
/// percentiles, said in the caption.
pub const MAX_POINTS: usize = 1000;

/// Percentiles (of 100) a sample keeps exactly: the ones charts and headlines show.
const KEPT_PERCENTILES: [usize; 4] = [50, 90, 95, 99];

/// An integer with the order `f64::total_cmp` gives (its own bit trick): integers sort and
/// select several times faster than floats through a comparison closure.
fn key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

/// The float of a [`key`] (the transform is its own inverse).
fn from_key(k: i64) -> f64 {
    f64::from_bits((k ^ ((((k >> 63) as u64) >> 1) as i64)) as u64)
}

/// The keys of the finite values (NaN and infinities dropped, as `ttft_core::stats` drops
/// them).
fn finite_keys(values: &[f64]) -> Vec<i64> {
    values
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .map(key)
        .collect()
}

/// The finite values, sorted ascending (what `ttft_core::stats::sorted` returns).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut keys = finite_keys(values);
    keys.sort_unstable();
    keys.into_iter().map(from_key).collect()
}

/// The values at `ranks` (ascending, each below the number of finite values) of the ascending
/// order of the finite `values`, found by selection rather than a sort: what `sorted(values)[r]`
/// gives for each rank.
pub fn order_statistics(values: &[f64], ranks: &[usize]) -> Vec<f64> {
    fn select(keys: &mut [i64], offset: usize, ranks: &[usize], out: &mut [f64]) {
        if ranks.is_empty() {
            return;
        }
        let mid = ranks.len() / 2;
        let (left, nth, right) = keys.select_nth_unstable(ranks[mid] - offset);
        out[mid] = from_key(*nth);
        let right_offset = offset + left.len() + 1;
        select(left, offset, &ranks[..mid], &mut out[..mid]);
        select(right, right_offset, &ranks[mid + 1..], &mut out[mid + 1..]);
    }
    let mut out = vec![0.0; ranks.len()];
    select(&mut finite_keys(values), 0, ranks, &mut out);
    out
}

/// Ranks (ascending indices into `n` sorted values) of the values to draw, at most `cap` of
/// them: all of them when `n <= cap`; otherwise a sample of `m` ranks, `m` the largest count
/// ≤ `cap` with `m ≡ n (mod 100)`, that contains the smallest and largest value and, for each
/// kept percentile, the two values type-7 interpolation reads at the same fraction. Because
/// `(n − 1)·p/100` and `(m − 1)·p/100` then have the same fractional part, the sample's P50,
/// P90, P95 and P99 equal the full ones (up to floating-point rounding), as do its min and max.
/// Between those anchors the ranks are evenly spread. `cap` below 200 counts as 200 (a sample
/// needs 101 points for the anchors to fit).
pub fn quantile_ranks(n: usize, cap: usize) -> Vec<usize> {
    let cap = cap.max(200);
    if n <= cap {
        return (0..n).collect();
    }
    let m = cap - (cap % 100 + 100 - n % 100) % 100;
    let (k, big) = (m - 1, n - 1);
    // (sample rank, full rank) pairs that must hold.
    let mut anchors: Vec<(usize, usize)> = vec![(0, 0), (k, big)];
    for p in KEPT_PERCENTILES {
        let (lo_s, lo_f) = (k * p / 100, big * p / 100);
        anchors.push((lo_s, lo_f));
        if (k * p) % 100 != 0 {
            anchors.push((lo_s + 1, lo_f + 1));
        }
    }
    anchors.sort_unstable();
    anchors.dedup();
    let mut ranks = Vec::with_capacity(m);
    for pair in anchors.windows(2) {
        let ((a_s, a_f), (b_s, b_f)) = (pair[0], pair[1]);
        // Full-rank gaps are at least the sample's (n − m is a multiple of 100 and every
        // anchor moves by p·(n − m)/100 ≥ 0), so the spread ranks stay strictly increasing.
        debug_assert!(b_f - a_f >= b_s - a_s);
        for i in a_s..b_s {
            ranks.push(a_f + (i - a_s) * (b_f - a_f) / (b_s - a_s));
        }
    }
    ranks.push(big);
    debug_assert_eq!(ranks.len(), m);
    ranks
}

/// Empirical CDF points `(value, fraction ≤ value)` of the finite values, at the ranks
/// [`quantile_ranks`] keeps: the line passes through the min, the max and the percentiles.
pub fn cdf(values: &[f64], cap: usize) -> Vec<(f64, f64)> {
    let count = values.iter().filter(|x| x.is_finite()).count();
    let n = count as f64;
    let ranks = quantile_ranks(count, cap);
    let at = order_statistics(values, &ranks);
    ranks
        .into_iter()
        .zip(at)
        .map(|(r, v)| (v, (r + 1) as f64 / n))
        .collect()
}

/// `bins` equal-width bins between the smallest and largest of the finite values: the core's
/// one-pass histogram, no sort.
pub fn histogram(values: &[f64], bins: usize) -> Vec<Bin> {
    ttft_core::stats::histogram(values, bins)
}

/// Indices of at most `cap` of `values` (one per item, `None` for items without a value),
/// chosen by the rank of their value with [`quantile_ranks`]: the items holding the smallest,
/// largest and percentile values are among them. Items without a value are left out when
/// sampling. Returned in ascending index order.
pub fn sample_by_value(values: &[Option<f64>], cap: usize) -> Vec<usize> {
    if values.len() <= cap.max(200) {
        return (0..values.len()).collect();
    }
    let mut order: Vec<(f64, usize)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|v| v.is_finite()).map(|v| (v, i)))
        .collect();
    order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<usize> = quantile_ranks(order.len(), cap)
        .into_iter()
        .map(|r| order[r].1)
        .collect();
    picked.sort_unstable();
    picked
}

/// A line ordered along x, thinned to at most `cap` points: x is cut into `cap / 4` buckets
/// of equal point count, each keeping its first, lowest, highest and last point (in order,
/// without repeats). Peaks, dips and steps survive; flat runs shrink.
pub fn min_max_buckets(points: &[(f64, f64)], cap: usize) -> Vec<(f64, f64)> {
    let cap = cap.max(8);
    if points.len() <= cap {
        return points.to_vec();
    }
    let buckets = cap / 4;
    let n = points.len();
    let mut out = Vec::with_capacity(cap);
    for b in 0..buckets {
        let (from, to) = (b * n / buckets, (b + 1) * n / buckets);
        let chunk = &points[from..to];
        if chunk.is_empty() {
            continue;
        }
        let lowest = (0..chunk.len()).fold(0, |m, i| if chunk[i].1 < chunk[m].1 { i } else { m });
        let highest = (0..chunk.len()).fold(0, |m, i| if chunk[i].1 > chunk[m].1 { i } else { m });
        let mut keep = [0, lowest, highest, chunk.len() - 1];
        keep.sort_unstable();
        let mut last = None;
        for i in keep {
            if last != Some(i) {
                out.push(chunk[i]);
                last = Some(i);
            }
        }
    }
    out
}

/// What a sample by [`quantile_ranks`] keeps, for captions.
pub const KEEPS_PERCENTILES: &str = "min, max, P50, P90, P95 and P99 kept";

/// What [`min_max_buckets`] keeps, for captions.
pub const KEEPS_PEAKS: &str = "every peak and step kept";

/// What a caption adds when a chart drew a sample: `"1000 of 99000 points shown (…kept)"`;
/// `None` when everything was drawn.
pub fn sampled_note(shown: usize, total: usize, what: &str, kept: &str) -> Option<String> {
    (shown < total).then(|| format!("{shown} of {total} {what} shown ({kept})"))
}
