//! The report format's one home (construction, JSON read with version check, CSV) and the
//! small computations views used to do themselves (per-request ITL, the median replay, the
//! roofline verdict, precision ids, extra-header lines).

use ttft_core::report::{ReportFileError, read_json};
use ttft_core::request::{HeaderLineError, parse_header_lines};
use ttft_core::roofline::{Precision, RooflineInput};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::Outcome;
use ttft_fixtures::report_file::{record, report};

#[test]
fn a_built_report_round_trips_and_newer_or_damaged_files_are_refused() {
    let r = report(vec![record(0, 100.0, 10.0, 5)]);
    assert_eq!(r.version, ttft_core::report::REPORT_VERSION);
    assert_eq!(read_json(r.to_json_pretty().as_bytes()).unwrap(), r);
    let mut newer = serde_json::to_value(&r).unwrap();
    newer["version"] = serde_json::json!(7);
    assert_eq!(
        read_json(newer.to_string().as_bytes()),
        Err(ReportFileError::NewerVersion(7))
    );
    assert!(
        ReportFileError::NewerVersion(7)
            .to_string()
            .contains("newer studio")
    );
    assert_eq!(
        read_json(b"{\"requests\":[]}"),
        Err(ReportFileError::NoVersion)
    );
    assert!(matches!(
        read_json(b"{oops"),
        Err(ReportFileError::NotJson(_))
    ));
    assert!(matches!(
        read_json(b"{\"version\":1,\"title\":3}"),
        Err(ReportFileError::BadField(_))
    ));
}

#[test]
fn csv_has_a_row_per_request_with_messages_quoted() {
    let mut failed = record(1, 50.0, 10.0, 2);
    failed.outcome = Outcome::Truncated {
        message: "the connection broke, \"mid\"-stream".into(),
    };
    failed.warmup = true;
    let csv = report(vec![record(0, 100.0, 10.0, 5), failed]).to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("index,group,level,warmup,outcome,ttfb_ms,ttft_ms"));
    assert!(lines[1].starts_with("0,\"c=1\",,false,ok,1.000,100.000,"));
    assert!(lines[2].contains(",true,truncated,"));
    assert!(lines[2].ends_with("\"the connection broke, \"\"mid\"\"-stream\""));
}

#[test]
fn per_request_itl_and_the_median_replay() {
    let r = report(vec![
        record(0, 300.0, 10.0, 5),
        record(1, 100.0, 20.0, 5),
        record(2, 200.0, 30.0, 5),
    ]);
    let itl = r.requests[1].metrics.itl_summary().unwrap();
    assert!((itl.p50 - 20.0).abs() < 1e-9);
    assert_eq!(r.median_replay().map(|q| q.index), Some(2));
    let mut none_ok = r.clone();
    for q in &mut none_ok.requests {
        q.replay.clear();
    }
    assert_eq!(none_ok.median_replay(), None, "nothing to replay");
    assert_eq!(record(3, 10.0, 1.0, 1).metrics.itl_summary(), None);
}

#[test]
fn roofline_verdict_and_precision_ids() {
    for (p, id, _) in Precision::ALL {
        assert_eq!(Precision::from_id(id), Some(p));
        assert_eq!(p.id(), id);
    }
    assert_eq!(Precision::from_id("fp32"), None);
    let input = RooflineInput {
        params_billion: 7.0,
        precision: Precision::Fp16,
        kv_bytes_per_token: 0.0,
        context_tokens: 0.0,
        bandwidth_tb_s: 2.0,
    };
    let at = |m: f64| input.evaluate(Some(m)).verdict(Some(m));
    assert!(at(8.0).contains("bandwidth-bound"), "{}", at(8.0));
    assert!(at(30.0).contains("well below the bound"));
    assert!(at(5.0).contains("inputs are wrong"));
    let none = input.evaluate(None).verdict(None);
    assert!(none.starts_with("Lowest possible ITL: 7.00 ms per token (143 tokens/s)"));
    assert!(none.contains("No per-token time measured"));
}

#[test]
fn extra_header_lines() {
    assert_eq!(
        parse_header_lines("X-Team: infra\n\n  X-Trace :  a:b  \n").unwrap(),
        vec![
            ("X-Team".to_owned(), "infra".to_owned()),
            ("X-Trace".to_owned(), "a:b".to_owned())
        ]
    );
    assert_eq!(
        parse_header_lines("X-Ok: 1\nno colon"),
        Err(HeaderLineError { line: 2 })
    );
}

/// The browser that measured a run travels with its clock resolution in the file, and is named
/// shortly for the page; files without it still open.
#[test]
fn the_measuring_browser_travels_with_the_clock() {
    use ttft_core::report::browser_name;
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0";
    let r = report(vec![record(0, 100.0, 10.0, 5)]).with_user_agent(Some(firefox.into()));
    assert_eq!(read_json(r.to_json_pretty().as_bytes()).unwrap(), r);
    let old = serde_json::to_value(report(vec![])).unwrap();
    assert!(old.get("user_agent").is_none(), "absent when unknown");
    assert_eq!(
        read_json(old.to_string().as_bytes()).unwrap().user_agent,
        None
    );
    for (ua, name) in [
        (firefox, "Firefox 153"),
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
            "Chrome 156",
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
            "Chrome 156 (headless)",
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Safari/605.1.15",
            "Safari 26 (WebKit)",
        ),
        (
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko)",
            "WebKit",
        ),
        ("curl/8", "curl/8"),
    ] {
        assert_eq!(browser_name(ua), name, "{ua}");
    }
}
