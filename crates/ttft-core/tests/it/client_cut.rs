//! Requests the client cut at its own end of run (Locust's `-t`, the studio's Stop, a peer
//! tool's cancellation) are counted apart: never the server's errors, never against goodput,
//! their partial data kept; a lost worker's requests stay counted as lost (issue #30).

use ttft_core::diagnosis::diagnose;
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::Outcome;
use ttft_fixtures::WALL0;
use ttft_fixtures::timeline_file::{merge, worker_file};

/// `file` with its lines `cut` ended as Locust ends a request it stops at `-t`: `outcome`
/// (what the locustfile writes), 30 ms after it was sent, the bytes read so far kept.
fn cut_at_the_end(file: &str, cut: &[u32], outcome: &serde_json::Value) -> String {
    file.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if cut.contains(&(v["request"]["index"].as_u64().unwrap() as u32)) {
                let at = v["sent_ms"].as_f64().unwrap() + 130.0;
                v["end"] = serde_json::json!({"kind": "failed", "at_ms": at, "outcome": outcome});
            }
            v.to_string() + "\n"
        })
        .collect()
}

#[test]
fn a_locust_run_stopped_by_its_time_limit_reports_no_server_error() {
    // Worker a: 6 requests, the last 2 cut by `-t` (the locustfile of this studio); worker b:
    // 5 written by an older locustfile (`aborted`, "stopped by Locust"), its last one cut;
    // worker b was then killed: the master's ledger says it had started 7.
    let now = serde_json::json!({"kind": "cut_by_client", "message": "stopped by Locust (the run's end, -t or a stop): partial data kept"});
    let old = serde_json::json!({"kind": "aborted", "message": "stopped by Locust"});
    let a = cut_at_the_end(
        &worker_file("host-a:1", &[0, 1, 2, 3, 4, 5], 5000.0, WALL0),
        &[4, 5],
        &now,
    );
    let b = cut_at_the_end(
        &worker_file("host-b:2", &[0, 1, 2, 3, 4], 5016.0, WALL0),
        &[4],
        &old,
    );
    let ledger = serde_json::json!({
        "format": "ttft-ledger/1", "run": "run-a",
        "started": {"host-a:1": 6, "host-b:2": 7}
    })
    .to_string();
    let merged = merge(&[
        ("a.jsonl", a),
        ("b.jsonl", b),
        ("run-a-master.ledger.json", ledger),
    ])
    .unwrap();
    assert_eq!(
        merged.missing,
        vec![("host-b:2".to_owned(), 2)],
        "the killed worker's requests stay lost"
    );
    let report = &merged.report;
    let cut: Vec<&Outcome> = report
        .requests
        .iter()
        .map(|r| &r.outcome)
        .filter(|o| !o.is_ok())
        .collect();
    assert_eq!(cut.len(), 3);
    assert!(
        cut.iter().all(|o| o.kind() == "cut_by_client"),
        "an older file's `aborted` by Locust reads as cut too: {cut:?}"
    );
    assert!(
        report
            .requests
            .iter()
            .filter(|r| !r.outcome.is_ok())
            .all(|r| r.raw.as_ref().is_some_and(|c| !c.reads.is_empty())
                && r.metrics.ttft_ms.is_some()),
        "their partial data is kept"
    );
    let agg = report.aggregates();
    assert_eq!(agg.count, 11);
    assert!(agg.errors.is_empty(), "no server error: {:?}", agg.errors);
    assert_eq!(
        serde_json::to_value(&agg).unwrap()["cut_by_client"],
        serde_json::json!(3),
        "counted apart"
    );
    assert_eq!(
        agg.goodput, 1.0,
        "the cut requests are not held against the server"
    );
    let findings = diagnose(report, &agg);
    assert!(
        !findings.iter().any(|f| f.id == "errors"),
        "no 'Requests failed'"
    );
    let cut = findings
        .iter()
        .find(|f| f.id == "cut_by_client")
        .expect("the cut requests are told apart");
    assert!(cut.evidence.starts_with("3 of 11"), "{}", cut.evidence);
}

#[test]
fn the_locustfile_writes_a_stopped_request_as_cut_by_the_client() {
    use ttft_core::locust::{LocustTarget, locustfile};
    use ttft_core::scenario::ScenarioConfig;
    let target = LocustTarget {
        base_url: "http://127.0.0.1:8080/v1".into(),
        dialect: None,
        model: "m".into(),
        extra_headers: String::new(),
    };
    let py = locustfile(&target, &ScenarioConfig::default(), "run-x").unwrap();
    assert!(py.contains(r#""kind": "cut_by_client""#));
    assert!(!py.contains(r#""kind": "aborted""#));
    assert!(
        py.contains(r#""choices": job.get("choices")"#),
        "each line says how many answers its body asked for"
    );
}

#[test]
fn outcomes_written_as_aborted_by_a_client_read_as_cut_and_others_stay_aborted() {
    let read = |kind: &str, message: &str| -> Outcome {
        serde_json::from_value(serde_json::json!({"kind": kind, "message": message})).unwrap()
    };
    for m in [
        "stopped by Locust",
        "cancelled by the user: partial data kept",
        "AIPerf cancelled the request",
        "GuideLLM recorded the request as incomplete",
    ] {
        assert!(read("aborted", m).is_cut_by_client(), "{m}");
    }
    let other = read("aborted", "the proxy reset the stream");
    assert_eq!(other.kind(), "aborted");
    assert!(other.is_failure());
    let cut = read("cut_by_client", "stopped");
    assert!(cut.is_cut_by_client() && !cut.is_failure() && !cut.is_ok());
    assert_eq!(
        serde_json::to_value(&cut).unwrap()["kind"],
        serde_json::json!("cut_by_client")
    );
    assert!(
        read("timeout", "no complete answer").is_failure(),
        "a timeout is the server's"
    );
}
