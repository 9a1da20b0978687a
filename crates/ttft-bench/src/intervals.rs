//! `ttft-bench ROOT --intervals` (#29): what saying how sure every figure is costs a report.
//! For synthetic runs of 1,000 and 10,000 requests (100 tokens each, the bench's resampled
//! jitter), the time to the run's statistics without intervals (its aggregates), then what the
//! intervals add: the run's samples and every headline figure's estimate (order statistics,
//! cluster bootstrap of the gaps, Wilson), and a two-run comparison's differences (shift
//! intervals, bootstraps, Holm). Native, release build, median of 5; the browser's figures
//! come from the studio itself (`data-intervals-ms` on the report, when the bench's browser
//! part measured them). Writes `intervals` into `bench/results.json` and re-renders
//! BENCHMARKS.md.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};
use ttft_core::compare::compare;
use ttft_core::differences::Confidence;
use ttft_core::run_intervals::{Figure, PerRequest, Share, aggregates_and_samples};
use ttft_core::run_stats::RunStats;

use crate::synthetic::synthetic_report;

/// Every figure a report's headline shows with an interval.
const FIGURES: &[Figure] = &[
    Figure::Percentile {
        of: PerRequest::Ttft,
        pct: 50,
    },
    Figure::Percentile {
        of: PerRequest::Ttft,
        pct: 90,
    },
    Figure::Percentile {
        of: PerRequest::Ttft,
        pct: 99,
    },
    Figure::Percentile {
        of: PerRequest::E2e,
        pct: 50,
    },
    Figure::Percentile {
        of: PerRequest::Tpot,
        pct: 50,
    },
    Figure::Itl { pct: 50 },
    Figure::Itl { pct: 90 },
    Figure::Itl { pct: 99 },
    Figure::Share { of: Share::Goodput },
    Figure::Share { of: Share::Errors },
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The native figures for one size.
fn measure(n: usize) -> Value {
    let a = synthetic_report(n, 100, 7);
    let b = synthetic_report(n, 100, 8);
    let (mut stats, mut intervals, mut differences) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let plain = a.aggregates();
        stats.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let (agg_a, sa) = aggregates_and_samples(&a);
        let built = t.elapsed().as_secs_f64() * 1e3;
        let mut each = Vec::new();
        let shown = FIGURES
            .iter()
            .filter_map(|f| {
                let t = Instant::now();
                let e = sa.estimate(*f, 0.95);
                each.push(format!("{f:?} {:.1}", t.elapsed().as_secs_f64() * 1e3));
                e
            })
            .filter(|e| e.interval.is_some())
            .count();
        intervals.push(t.elapsed().as_secs_f64() * 1e3);
        if std::env::var_os("TTFT_BENCH_VERBOSE").is_some() {
            eprintln!(
                "{n}: aggregates {:.1} ms, with samples {built:.1} ms; {}",
                stats.last().unwrap_or(&0.0),
                each.join(", ")
            );
        }
        assert_eq!(plain.count, agg_a.count);
        assert!(shown >= 8, "{shown} intervals");
        let (agg_b, sb) = aggregates_and_samples(&b);
        let t = Instant::now();
        let cmp = compare(
            &["a", "b"],
            &[agg_a, agg_b],
            &[sa, sb],
            Confidence::default(),
        );
        differences.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!cmp.lesson.is_empty());
    }
    let statistics = median(stats);
    let with_intervals = median(intervals);
    json!({
        "requests": n,
        "statistics_ms": statistics,
        "with_intervals_ms": with_intervals,
        "intervals_ms": (with_intervals - statistics).max(0.0),
        "comparison_ms": median(differences),
    })
}

/// Measures both sizes into the results and re-renders BENCHMARKS.md.
pub fn run(root: &Path) -> anyhow::Result<()> {
    let sizes: Vec<Value> = [1_000, 10_000].iter().map(|n| measure(*n)).collect();
    println!("{}", serde_json::to_string_pretty(&sizes)?);
    let previous: Value = std::fs::read_to_string(root.join("bench/results.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .map(|r| r["intervals"]["browser"].clone())
        .unwrap_or(Value::Null);
    crate::bench_report::merge_section(
        root,
        "intervals",
        json!({ "native": sizes, "browser": previous, "date": crate::machine()["date"] }),
    )
}
