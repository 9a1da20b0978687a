//! Downsampling keeps what a reader checks: the drawn sample of a series has the same min, max
//! and P50/P90/P95/P99 as all of it (the core's type-7 percentiles), histograms count every
//! value, and thinned lines keep their peaks and ends.

use ttft_charts::sample::{
    cdf, histogram, min_max_buckets, order_statistics, quantile_ranks, sample_by_value,
    sampled_note, sorted,
};
use ttft_core::stats::Summary;

/// A small deterministic generator (xorshift64*), uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Latency-like values: a body, a heavy tail, stalls and many exact ties.
fn latencies(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| {
            let u = rng.next();
            if u < 0.2 {
                20.0 // ties: one decode step
            } else if u < 0.995 {
                18.0 + 10.0 * rng.next() + 1.0 / (0.01 + rng.next())
            } else {
                400.0 + 1000.0 * rng.next() // stalls
            }
        })
        .collect()
}

fn assert_same_figures(sample: &[f64], full: &[f64], what: &str) {
    let (s, f) = (Summary::of(sample).unwrap(), Summary::of(full).unwrap());
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for (name, a, b) in [
        ("min", s.min, f.min),
        ("max", s.max, f.max),
        ("P50", s.p50, f.p50),
        ("P90", s.p90, f.p90),
        ("P95", s.p95, f.p95),
        ("P99", s.p99, f.p99),
    ] {
        assert!(
            close(a, b),
            "{what}: sampled {name} {a} ≠ full {b} ({} of {} values)",
            sample.len(),
            full.len()
        );
    }
}

#[test]
fn a_sample_keeps_the_min_max_and_percentiles_of_the_full_series() {
    let mut checked = 0;
    for cap in [200, 1000] {
        for n in (cap + 1..cap + 2_000)
            .step_by(37)
            .chain([10_000, 99_000, 100_001])
        {
            let full = sorted(&latencies(n, n as u64 * 31 + cap as u64));
            let ranks = quantile_ranks(n, cap);
            assert!(ranks.len() <= cap && ranks.len() > cap - 100, "n {n}");
            assert_eq!(ranks.len() % 100, n % 100, "n {n}: m ≡ n (mod 100)");
            assert!(ranks.windows(2).all(|w| w[0] < w[1]), "n {n}: ascending");
            assert_eq!((ranks[0], *ranks.last().unwrap()), (0, n - 1));
            let sample: Vec<f64> = ranks.iter().map(|&r| full[r]).collect();
            assert_same_figures(&sample, &full, &format!("n {n}, cap {cap}"));
            checked += 1;
        }
    }
    assert!(checked > 100);
}

#[test]
fn small_series_are_drawn_whole() {
    assert_eq!(quantile_ranks(0, 1000), Vec::<usize>::new());
    assert_eq!(quantile_ranks(5, 1000), vec![0, 1, 2, 3, 4]);
    assert_eq!(quantile_ranks(1000, 1000).len(), 1000);
    // A cap below 200 still leaves room for the anchors.
    assert_eq!(quantile_ranks(150, 10).len(), 150);
    assert_eq!(sampled_note(10, 10, "points", "x"), None);
}

#[test]
fn a_cdf_line_passes_through_the_percentiles_and_ends_at_one() {
    let values = latencies(54_321, 7);
    let full = sorted(&values);
    let cdf = cdf(&values, 200);
    assert!(cdf.len() <= 200);
    assert_eq!(cdf.last().unwrap(), &(full[full.len() - 1], 1.0));
    assert!(cdf.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
    let xs: Vec<f64> = cdf.iter().map(|p| p.0).collect();
    assert_same_figures(&xs, &full, "CDF");
}

#[test]
fn selected_order_statistics_are_the_sorted_values_at_those_ranks() {
    for n in [1, 2, 3, 10, 1_000, 77_777] {
        let mut v = latencies(n, n as u64 + 1);
        v.extend([-0.0, -3.5, f64::NAN, f64::INFINITY]); // negatives ordered, non-finite dropped
        let full = sorted(&v);
        assert_eq!(full.len(), n + 2);
        assert!(full.windows(2).all(|w| w[0].total_cmp(&w[1]).is_le()));
        assert_eq!(full, ttft_core::stats::sorted(&v));
        let ranks = quantile_ranks(n + 2, 200);
        let picked = order_statistics(&v, &ranks);
        let expected: Vec<f64> = ranks.iter().map(|&r| full[r]).collect();
        assert_eq!(picked, expected, "n {n}");
    }
}

#[test]
fn histograms_count_every_value_in_the_cores_bins() {
    for (n, bins) in [(1, 5), (2, 5), (999, 32), (100_000, 40)] {
        let mut v = latencies(n, n as u64);
        v.push(f64::NAN); // dropped by both
        assert_eq!(histogram(&v, bins), ttft_core::stats::histogram(&v, bins));
    }
    let same = vec![3.0; 10];
    assert_eq!(histogram(&same, 5), ttft_core::stats::histogram(&same, 5));
    assert!(histogram(&[], 5).is_empty());
}

#[test]
fn items_sampled_by_value_keep_the_figures_and_their_order() {
    let v = latencies(12_345, 3);
    let mut values: Vec<Option<f64>> = v.iter().copied().map(Some).collect();
    values[17] = None; // a failed request: no value
    let picked = sample_by_value(&values, 1000);
    assert_eq!(
        picked.len(),
        944,
        "≡ 12,344 values (mod 100), at most 1,000"
    );
    assert!(picked.windows(2).all(|w| w[0] < w[1]), "in index order");
    assert!(!picked.contains(&17));
    let sample: Vec<f64> = picked.iter().map(|&i| v[i]).collect();
    let full: Vec<f64> = values.iter().flatten().copied().collect();
    assert_same_figures(&sample, &full, "by value");
    assert_eq!(sample_by_value(&values[..300], 1000).len(), 300);
}

#[test]
fn a_thinned_line_keeps_its_ends_peaks_and_order() {
    let mut rng = Rng(5);
    let line: Vec<(f64, f64)> = (0..50_000)
        .map(|i| (i as f64, if i == 31_337 { 1e6 } else { rng.next() }))
        .collect();
    let thin = min_max_buckets(&line, 1000);
    assert!(thin.len() <= 1000 && thin.len() > 500, "{}", thin.len());
    assert_eq!(thin.first(), line.first());
    assert_eq!(thin.last(), line.last());
    assert!(
        thin.windows(2).all(|w| w[0].0 < w[1].0),
        "x order, no repeats"
    );
    assert!(thin.contains(&(31_337.0, 1e6)), "the peak");
    let lowest = line.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    assert!(thin.iter().any(|p| p.1 == lowest), "the dip");
    assert_eq!(min_max_buckets(&line[..999], 1000), line[..999].to_vec());
}
