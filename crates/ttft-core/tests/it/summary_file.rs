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

/// Two requests a second for a minute (TTFT 900 ms for the first 20 s, then 300 ms, ±10 %
/// seeded noise), 10 tokens 20 ms apart.
fn slow_start_run() -> ttft_core::report::Report {
    let mut rng = fastrand::Rng::with_seed(7);
    report(
        (0..120)
            .map(|i| {
                let start = f64::from(i) * 500.0;
                let ttft = if start < 20_000.0 { 900.0 } else { 300.0 };
                let mut r = record(i, ttft * (0.9 + 0.2 * rng.f64()), 20.0, 10);
                r.start_ms = start;
                r
            })
            .collect(),
    )
}

/// A JSON number or null as an `Option<f64>`, to 12 significant digits (JSON's text
/// round trip may change the last bit).
fn num(v: &Value) -> Option<f64> {
    v.as_f64().map(sig)
}

fn sig(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap()
}

#[test]
fn the_summary_json_carries_every_time_window_and_the_steady_state() {
    use ttft_core::time_slices::{steady_state, time_slices};
    let r = slow_start_run();
    let v: Value = serde_json::from_str(&summary_json(&r, 0.9)).unwrap();
    let slices = time_slices(&r, None, 0.9);
    assert_eq!(v["window_ms"].as_f64(), Some(slices.window_ms));
    let windows = v["windows"].as_array().expect("a windows array");
    assert_eq!(windows.len(), slices.windows.len());
    assert!(windows.len() >= 10, "{} windows", windows.len());
    for (j, w) in windows.iter().zip(&slices.windows) {
        assert_eq!(j["window"].as_u64(), Some(w.index as u64));
        assert_eq!(num(&j["start_ms"]), Some(sig(w.start_ms)));
        assert_eq!(num(&j["end_ms"]), Some(sig(w.end_ms)));
        assert_eq!(j["requests"].as_u64(), Some(w.started as u64));
        assert_eq!(j["completed"].as_u64(), Some(w.completed as u64));
        for (key, e) in [
            ("ttft_p50", w.ttft_p50),
            ("ttft_p99", w.ttft_p99),
            ("itl_p50", w.itl_p50),
            ("itl_p99", w.itl_p99),
        ] {
            assert_eq!(
                num(&j[format!("{key}_ms")]),
                e.map(|e| sig(e.value)),
                "{key}"
            );
            let i = e.and_then(|e| e.interval);
            assert_eq!(
                num(&j[format!("{key}_lo_ms")]),
                i.map(|i| sig(i.lo)),
                "{key}"
            );
            assert_eq!(
                num(&j[format!("{key}_hi_ms")]),
                i.map(|i| sig(i.hi)),
                "{key}"
            );
            let needs = e.filter(|e| e.interval.is_none()).and_then(|e| e.needs);
            assert_eq!(j[format!("{key}_needs")].as_u64(), needs.map(|n| n as u64));
        }
        assert_eq!(
            num(&j["output_tokens_per_s"]),
            w.output_tokens_per_s().map(sig)
        );
        assert_eq!(num(&j["in_flight_mean"]), Some(sig(w.in_flight_mean)));
        assert_eq!(
            j["in_flight_max"].as_u64(),
            Some(u64::from(w.in_flight_max))
        );
    }
    // Ten requests a window: the median has an interval, the P99 says what it needs.
    let first = &windows[0];
    assert!(num(&first["ttft_p50_lo_ms"]).unwrap() <= num(&first["ttft_p50_ms"]).unwrap());
    assert!(first["ttft_p99_lo_ms"].is_null());
    assert!(first["ttft_p99_needs"].as_u64().unwrap() > 10);
    let steady = steady_state(&slices).expect("steady after the slow start");
    assert_eq!(
        v["steady_state"]["sentence"].as_str(),
        Some(steady.sentence().as_str())
    );
    assert_eq!(num(&v["steady_state"]["start_ms"]), Some(20_000.0));
    // A run too short for a steady state says why.
    let short: Value = serde_json::from_str(&summary_json(&spread_run(), 0.9)).unwrap();
    assert!(
        short["steady_state"]["none"]
            .as_str()
            .unwrap()
            .contains("telling a warm-up from noise needs 4"),
        "{}",
        short["steady_state"]
    );
}

#[test]
fn the_windows_csv_has_a_row_per_window_matching_the_time_slices() {
    use ttft_core::summary_file::windows_csv;
    use ttft_core::time_slices::time_slices;
    let r = slow_start_run();
    let csv = windows_csv(&r, 0.95);
    let slices = time_slices(&r, None, 0.95);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&head[..4], ["window", "start_ms", "end_ms", "requests"]);
    for col in [
        "ttft_p99_lo_ms",
        "itl_p99_ms",
        "output_tokens_per_s",
        "in_flight_mean",
    ] {
        assert!(head.contains(&col), "{col}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), slices.windows.len());
    let at = |row: &[&str], col: &str| row[head.iter().position(|h| *h == col).unwrap()].to_owned();
    for (row, w) in rows.iter().zip(&slices.windows) {
        assert_eq!(row.len(), head.len());
        assert_eq!(at(row, "requests"), w.started.to_string());
        let p50 = w.ttft_p50.unwrap();
        assert_eq!(at(row, "ttft_p50_ms"), format!("{:.4}", p50.value));
        assert_eq!(
            at(row, "ttft_p50_lo_ms"),
            format!("{:.4}", p50.interval.unwrap().lo)
        );
        assert_eq!(
            at(row, "output_tokens_per_s"),
            w.output_tokens_per_s()
                .map_or(String::new(), |x| format!("{x:.4}"))
        );
    }
    // No requests, no rows; the header stays.
    let empty = windows_csv(&report(Vec::new()), 0.95);
    assert_eq!(empty.lines().count(), 1);
    assert!(empty.starts_with("window,start_ms,end_ms"));
}
