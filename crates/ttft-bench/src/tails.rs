//! Intervals on the bench's own figures, by the methods the studio shows its users
//! (`ttft_core::uncertainty`): a TTFT |error| percentile gets the distribution-free
//! order-statistic interval over requests, a per-gap ITL |error| percentile the cluster
//! bootstrap over requests (Woodruff's form from 500 requests); either says how many requests
//! it needs when there are too few for one. Across rounds the headline is the median round's
//! figure (the upper of the two middle rounds with an even count) with that round's interval,
//! and the rounds' range beside it. Ratios of the studio's figures to the floor probe's are
//! judged against their targets here too.

use std::sync::Arc;

use serde_json::{Value, json};
use ttft_core::run_intervals::cluster_estimate;
use ttft_core::uncertainty::bootstrap::{Clusters, REPLICATES, seed_of};
use ttft_core::uncertainty::quantile::percentile_estimate;
use ttft_core::uncertainty::{DEFAULT_LEVEL, Estimate};

/// The percentiles given intervals: (key in `intervals`, error kind, percentile key, p).
pub const FIGURES: [(&str, &str, &str, f64); 4] = [
    ("itl_p99", "itl_error", "p99_ms", 0.99),
    ("itl_p50", "itl_error", "p50_ms", 0.50),
    ("ttft_p99", "ttft_error", "p99_ms", 0.99),
    ("ttft_p50", "ttft_error", "p50_ms", 0.50),
];

fn estimate_json(e: Option<Estimate>) -> Value {
    match e {
        None => json!({ "n": 0 }),
        Some(e) => json!({
            "value": e.value, "n": e.n, "needs": e.needs,
            "lo": e.interval.map(|i| i.lo), "hi": e.interval.map(|i| i.hi),
        }),
    }
}

/// The intervals of one measurement: TTFT errors (one per request) and each request's gap
/// errors. `{level, itl_p99: {value, lo, hi, n, needs}, …}`, |error| throughout.
pub fn intervals_json(ttft_errors: &[f64], gap_groups: &[Vec<f64>]) -> Value {
    let mut ttft: Vec<f64> = ttft_errors
        .iter()
        .map(|x| x.abs())
        .filter(|x| x.is_finite())
        .collect();
    ttft.sort_unstable_by(f64::total_cmp);
    let abs: Vec<Vec<f64>> = gap_groups
        .iter()
        .map(|g| g.iter().map(|x| x.abs()).collect())
        .collect();
    let clusters = Clusters::new(abs.iter().map(Vec::as_slice));
    let mut out = json!({ "level": DEFAULT_LEVEL });
    for (key, error, _, p) in FIGURES {
        let e = if error == "ttft_error" {
            percentile_estimate(&ttft, p, DEFAULT_LEVEL)
        } else {
            cluster_estimate(&clusters, p, DEFAULT_LEVEL, || {
                let seed = seed_of("bench per-gap error") ^ (p * 100.0).round() as u64;
                Some(Arc::new(clusters.replicates(p, REPLICATES, seed)))
            })
        };
        out[key] = estimate_json(e);
    }
    out
}

/// A figure's headline over a fidelity row's rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// The median round's figure (ms).
    pub value: f64,
    /// That round's interval, when it has one.
    pub interval: Option<(f64, f64)>,
    /// Requests that round would need for an interval (none when it has one, or when the
    /// results predate intervals).
    pub needs: Option<u64>,
    /// Every round's figure, in round order (`NaN` where a round has none).
    pub rounds: Vec<f64>,
}

impl Headline {
    /// The rounds' range (min, max) of the rounds that have the figure.
    pub fn range(&self) -> Option<(f64, f64)> {
        let v: Vec<f64> = self
            .rounds
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        let lo = v.iter().copied().reduce(f64::min)?;
        let hi = v.iter().copied().reduce(f64::max)?;
        Some((lo, hi))
    }
}

/// The headline of `error`/`pct` (`itl_error`/`p99_ms`) over `row["rounds"]`; `None` when no
/// round has it.
pub fn headline(row: &Value, error: &str, pct: &str) -> Option<Headline> {
    let rounds: Vec<&Value> = row["rounds"].as_array().into_iter().flatten().collect();
    let values: Vec<f64> = rounds
        .iter()
        .map(|r| r[error][pct].as_f64().unwrap_or(f64::NAN))
        .collect();
    let mut order: Vec<usize> = (0..values.len())
        .filter(|&i| values[i].is_finite())
        .collect();
    if order.is_empty() {
        return None;
    }
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let median = order[order.len() / 2];
    let key = FIGURES
        .iter()
        .find(|f| f.1 == error && f.2 == pct)
        .map(|f| f.0);
    let e = key.map_or(&Value::Null, |k| &rounds[median]["intervals"][k]);
    let interval = e["lo"].as_f64().zip(e["hi"].as_f64());
    Some(Headline {
        value: values[median],
        interval,
        needs: e["needs"].as_u64().filter(|_| interval.is_none()),
        rounds: values,
    })
}

/// `x` in ms at a precision that suits its size.
pub fn ms(x: f64) -> String {
    if x.abs() < 10.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.1}")
    }
}

/// `2.350 ms (1.900–3.100)`, `2.350 ms (needs 368 requests)`, or `2.350 ms` (results from
/// before intervals); `—` for none.
pub fn cell(h: Option<&Headline>) -> String {
    match h {
        None => "—".into(),
        Some(h) => match (h.interval, h.needs) {
            (Some((lo, hi)), _) => format!("{} ms ({}–{})", ms(h.value), ms(lo), ms(hi)),
            (None, Some(n)) => format!("{} ms (needs {n} requests)", ms(h.value)),
            (None, None) => format!("{} ms", ms(h.value)),
        },
    }
}

/// `5.595–6.366` (the rounds' range), or `—`.
pub fn range_cell(h: Option<&Headline>) -> String {
    match h.and_then(Headline::range) {
        Some((lo, hi)) => format!("{}–{}", ms(lo), ms(hi)),
        None => "—".into(),
    }
}

/// The studio's figure over the floor's.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// Headline over headline.
    pub ratio: f64,
    /// The range of the round-by-round ratios (round i of one over round i of the other).
    pub rounds: Option<(f64, f64)>,
    /// From the two headlines' intervals (lowest studio over highest floor, and the reverse):
    /// where the ratio may lie at ≥ 90 % when both intervals hold.
    pub bounds: Option<(f64, f64)>,
}

/// `studio / floor`; `None` when the floor's figure is not positive.
pub fn ratio(studio: &Headline, floor: &Headline) -> Option<Ratio> {
    if floor.value <= 0.0 || !floor.value.is_finite() {
        return None;
    }
    let per_round: Vec<f64> = studio
        .rounds
        .iter()
        .zip(&floor.rounds)
        .filter(|(_, f)| **f > 0.0)
        .map(|(s, f)| s / f)
        .filter(|r| r.is_finite())
        .collect();
    let rounds = per_round
        .iter()
        .copied()
        .reduce(f64::min)
        .zip(per_round.iter().copied().reduce(f64::max));
    let bounds = match (studio.interval, floor.interval) {
        (Some((slo, shi)), Some((flo, fhi))) if flo > 0.0 && fhi > 0.0 => {
            Some((slo / fhi, shi / flo))
        }
        _ => None,
    };
    Some(Ratio {
        ratio: studio.value / floor.value,
        rounds,
        bounds,
    })
}

/// `1.23× (rounds 1.10–1.40×; intervals 0.90–1.80×)`.
pub fn ratio_cell(r: &Ratio) -> String {
    let mut s = format!("{:.2}×", r.ratio);
    let mut more = Vec::new();
    if let Some((lo, hi)) = r.rounds {
        more.push(format!("rounds {lo:.2}–{hi:.2}×"));
    }
    if let Some((lo, hi)) = r.bounds {
        more.push(format!("intervals {lo:.2}–{hi:.2}×"));
    }
    if !more.is_empty() {
        s.push_str(&format!(" ({})", more.join("; ")));
    }
    s
}

/// `met`, or by how much the ratio misses `limit`; and whether the intervals leave it open.
pub fn ratio_verdict(r: &Ratio, limit: f64) -> String {
    let open = r.bounds.is_some_and(|(lo, hi)| lo <= limit && limit < hi);
    let base = if r.ratio <= limit {
        "met".to_owned()
    } else {
        format!(
            "missed by {:.0} % ({:.2}× against ≤ {limit}×)",
            (r.ratio / limit - 1.0) * 100.0,
            r.ratio
        )
    };
    if open {
        format!("{base}; the intervals reach both sides of {limit}×")
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(p99: f64, interval: Option<(f64, f64)>, needs: Option<u64>) -> Value {
        json!({ "itl_error": { "p99_ms": p99 },
                "intervals": { "itl_p99": { "value": p99, "lo": interval.map(|i| i.0),
                                            "hi": interval.map(|i| i.1), "needs": needs } } })
    }

    #[test]
    fn the_headline_is_the_median_round_with_its_own_interval() {
        let row = json!({ "rounds": [round(6.0, Some((5.0, 7.5)), None),
                                     round(4.0, Some((3.0, 4.5)), None),
                                     round(9.0, None, Some(368))] });
        let h = headline(&row, "itl_error", "p99_ms").unwrap();
        assert_eq!((h.value, h.interval), (6.0, Some((5.0, 7.5))));
        assert_eq!(cell(Some(&h)), "6.000 ms (5.000–7.500)");
        assert_eq!(range_cell(Some(&h)), "4.000–9.000");
        // With an even count, the upper middle round; without an interval, what it needs.
        let row = json!({ "rounds": [round(4.0, None, Some(368)), round(9.0, None, Some(368))] });
        let h = headline(&row, "itl_error", "p99_ms").unwrap();
        assert_eq!(cell(Some(&h)), "9.000 ms (needs 368 requests)");
        // Results from before intervals: the figure alone.
        let old = json!({ "rounds": [{ "itl_error": { "p99_ms": 12.25 } }] });
        assert_eq!(
            cell(headline(&old, "itl_error", "p99_ms").as_ref()),
            "12.2 ms"
        );
        assert_eq!(cell(None), "—");
        assert!(headline(&json!({}), "itl_error", "p99_ms").is_none());
    }

    #[test]
    fn ratios_are_judged_against_their_targets() {
        let h = |value: f64, interval: Option<(f64, f64)>, rounds: &[f64]| Headline {
            value,
            interval,
            needs: None,
            rounds: rounds.to_vec(),
        };
        let studio = h(6.0, Some((5.0, 8.0)), &[6.0, 5.0, 7.0]);
        let floor = h(5.0, Some((4.0, 6.0)), &[5.0, 5.0, 4.0]);
        let r = ratio(&studio, &floor).unwrap();
        assert!((r.ratio - 1.2).abs() < 1e-12);
        assert_eq!(r.rounds, Some((1.0, 1.75)));
        let (lo, hi) = r.bounds.unwrap();
        assert!((lo - 5.0 / 6.0).abs() < 1e-12 && (hi - 2.0).abs() < 1e-12);
        assert_eq!(
            ratio_verdict(&r, 1.2),
            "met; the intervals reach both sides of 1.2×"
        );
        assert_eq!(
            ratio_verdict(&r, 1.0),
            "missed by 20 % (1.20× against ≤ 1×); the intervals reach both sides of 1×"
        );
        assert_eq!(
            ratio_cell(&r),
            "1.20× (rounds 1.00–1.75×; intervals 0.83–2.00×)"
        );
        let tight = ratio(&h(9.0, None, &[9.0]), &h(4.5, None, &[4.5])).unwrap();
        assert_eq!(
            ratio_verdict(&tight, 1.5),
            "missed by 33 % (2.00× against ≤ 1.5×)"
        );
        assert!(ratio(&studio, &h(0.0, None, &[0.0])).is_none());
    }

    #[test]
    fn intervals_come_from_requests_not_gaps() {
        // 400 requests of 19 gaps: enough for a P99 interval of either kind (368 needed).
        let ttft: Vec<f64> = (0..400).map(|i| f64::from(i % 97) / 10.0 - 4.0).collect();
        let gaps: Vec<Vec<f64>> = (0..400)
            .map(|i| {
                (0..19)
                    .map(|k| f64::from((i * 7 + k) % 50) / 25.0)
                    .collect()
            })
            .collect();
        let v = intervals_json(&ttft, &gaps);
        for key in ["itl_p99", "ttft_p99", "itl_p50", "ttft_p50"] {
            let (lo, hi, value) = (
                v[key]["lo"].as_f64().unwrap(),
                v[key]["hi"].as_f64().unwrap(),
                v[key]["value"].as_f64().unwrap(),
            );
            assert!(lo <= value && value <= hi, "{key}: {v}");
            assert_eq!(v[key]["n"], 400, "{key}");
        }
        // 100 requests: a median has an interval, a P99 says what it needs.
        let v = intervals_json(&ttft[..100], &gaps[..100]);
        assert_eq!(v["ttft_p99"]["needs"], 368);
        assert_eq!(v["itl_p99"]["needs"], 368);
        assert!(v["ttft_p99"]["lo"].is_null() && v["ttft_p50"]["lo"].is_f64());
    }
}
