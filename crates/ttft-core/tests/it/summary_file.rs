//! The summary export ([`ttft_core::summary_file`]): every headline figure with its interval
//! at the chosen level, or what it needs for one, or why it has none; the report file itself
//! keeps no interval.

use serde_json::Value;
use ttft_core::report::SharedFrom;
use ttft_core::run_intervals::RunSamples;
use ttft_core::run_stats::RunStats;
use ttft_core::summary_file::{
    NoInterval, report_summary_rows, summary_csv, summary_json, summary_rows,
};
use ttft_fixtures::report_file::{record, report};

/// 60 requests whose TTFT spreads from 100 to 277 ms and whose gaps vary by request.
fn spread_run() -> ttft_core::report::Report {
    report(
        (0..60)
            .map(|i| record(i, 100.0 + 3.0 * f64::from(i), 10.0 + f64::from(i % 5), 8))
            .collect(),
    )
}

/// The CSV's header and row, zipped: column → cell.
fn csv_cells(csv: &str) -> Vec<(String, String)> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    // The title holds a quoted comma: split the row after it.
    let row = lines.next().unwrap();
    let (_, rest) = row.rsplit_once("\",\"").unwrap();
    let rest = rest.split_once("\",").unwrap().1;
    let mut cells = vec!["title".to_owned(), "model".to_owned()];
    cells.extend(rest.split(',').map(str::to_owned));
    assert_eq!(head.len(), cells.len(), "{csv}");
    head.into_iter().map(str::to_owned).zip(cells).collect()
}

fn cell<'a>(cells: &'a [(String, String)], name: &str) -> &'a str {
    &cells
        .iter()
        .find(|(h, _)| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .1
}

#[test]
fn summary_csv_has_each_figures_interval_and_the_level() {
    let r = spread_run();
    let csv = summary_csv(&r, 0.9);
    let cells = csv_cells(&csv);
    assert_eq!(cell(&cells, "confidence_level"), "0.9");
    assert_eq!(cell(&cells, "requests"), "60");
    let num = |c: &str| cell(&cells, c).parse::<f64>().unwrap_or(f64::NAN);
    let (v, lo, hi) = (
        num("ttft_p50_ms"),
        num("ttft_p50_lo_ms"),
        num("ttft_p50_hi_ms"),
    );
    assert!(
        lo <= v && v <= hi && lo < hi,
        "TTFT P50 {v} in [{lo}, {hi}]"
    );
    assert_eq!(cell(&cells, "ttft_p50_needs"), "");
    // 60 requests give no interval of a P99: the row says how many would.
    assert_eq!(cell(&cells, "ttft_p99_lo_ms"), "");
    assert!(cell(&cells, "ttft_p99_needs").parse::<usize>().unwrap() > 60);
    // Per-gap figures have theirs (a cluster bootstrap over 60 requests), shares theirs.
    assert!(num("itl_p50_lo_ms") <= num("itl_p50_ms") && num("itl_p50_ms") <= num("itl_p50_hi_ms"));
    assert!(num("goodput_lo") <= num("goodput") && num("goodput") <= num("goodput_hi"));
    // A higher level, a wider interval.
    let wide = csv_cells(&summary_csv(&r, 0.99));
    let w = |c: &str| cell(&wide, c).parse::<f64>().unwrap();
    assert!(w("ttft_p50_hi_ms") - w("ttft_p50_lo_ms") > hi - lo);
    // The per-request CSV is unchanged.
    assert!(!r.to_csv().contains("_lo"));
}

#[test]
fn summary_json_has_an_intervals_object_and_the_report_file_none() {
    let r = spread_run();
    let v: Value = serde_json::from_str(&summary_json(&r, 0.95)).unwrap();
    assert_eq!(v["confidence_level"], 0.95);
    let i = &v["intervals"]["ttft_p50_ms"];
    let value = v["figures"]["ttft_p50_ms"].as_f64().unwrap();
    let (lo, hi) = (i["lo"].as_f64().unwrap(), i["hi"].as_f64().unwrap());
    assert!(lo <= value && value <= hi, "{i}");
    assert_eq!(i["level"], 0.95);
    assert_eq!(i["n"], 60);
    assert!(v["intervals"]["itl_p50_ms"]["lo"].is_number(), "{v}");
    assert_eq!(
        v["intervals"]["longest_reader_wait_ms"]["none"],
        "no interval (a maximum)"
    );
    assert!(v["intervals"]["ttft_p99_ms"]["needs"].as_u64().unwrap() > 60);
    // The report file keeps no interval: they are recomputed on opening.
    assert!(!r.to_json_pretty().contains("interval"));
}

#[test]
fn a_link_without_gaps_and_a_file_without_requests_say_why_there_is_no_interval() {
    let mut r = spread_run();
    let agg = r.aggregates();
    r.shared = Some(SharedFrom {
        format: "r3".into(),
        precision_ms: 0.1,
        left_out: vec!["per-gap timings of some requests".into()],
        headline: Some(Box::new(agg.clone())),
    });
    let rows = report_summary_rows(&r, 0.95);
    let row = |k: &str| rows.iter().find(|x| x.key == k).unwrap();
    assert_eq!(row("itl_p50").no_interval, Some(NoInterval::GapsNotInLink));
    assert!(
        row("itl_p50").value.is_some(),
        "the headline's figure stays"
    );
    assert!(row("ttft_p50").estimate.unwrap().interval.is_some());
    assert_eq!(row("longest_reader_wait").figure, None);
    // A run with its figures and no requests (a file of summary figures only).
    let empty = RunSamples::default();
    let rows = summary_rows(&agg, &empty, 0.95);
    let ttft = rows.iter().find(|x| x.key == "ttft_p50").unwrap();
    assert_eq!(ttft.no_interval, Some(NoInterval::NoPerRequestValues));
    assert_eq!(
        NoInterval::NoPerRequestValues.describe(),
        "the file holds no per-request values: no interval"
    );
}
