//! A trace replay as a scenario's run (#32): the form's options and a trace become one
//! open-loop phase at the trace's times, the locustfile sends the same jobs, the options live
//! in settings only when set, and the report's record compares expected and measured reuse.

use ttft_core::dialect::Dialect;
use ttft_core::locust::{LocustTarget, locust_jobs_for_phases, locustfile_for_phases};
use ttft_core::scenario::{ScenarioConfig, ScenarioError, ScenarioKind, TraceReplay};
use ttft_core::trace::{
    Trace, TracePlanError, TraceReplayError, TraceReplayRecord, parse, replay_phase,
};
use ttft_fixtures::traces;

fn fixture(name: &str) -> Trace {
    parse(traces::read(name).as_bytes(), None).unwrap()
}

fn trace_scenario(speed: f64, lanes: u32) -> ScenarioConfig {
    ScenarioConfig {
        kind: ScenarioKind::Trace,
        trace: TraceReplay {
            speed,
            max_concurrency: lanes,
            ..TraceReplay::default()
        },
        ..ScenarioConfig::default()
    }
}

fn replay(sc: &ScenarioConfig, trace: &Trace, seed: u64) -> ttft_core::scenario::Phase {
    let template = sc.params("sim-cache", String::new(), Some(Dialect::OpenAiChat));
    replay_phase(trace, &sc.trace, seed, &template, Some(Dialect::OpenAiChat))
        .unwrap()
        .0
}

#[test]
fn a_trace_becomes_one_phase_at_its_times_with_the_lanes_as_its_cap() {
    let trace = fixture(traces::MOONCAKE);
    let sc = trace_scenario(10.0, 24);
    let template = sc.params("sim-cache", String::new(), Some(Dialect::OpenAiChat));
    let (phase, plan) =
        replay_phase(&trace, &sc.trace, 3, &template, Some(Dialect::OpenAiChat)).unwrap();
    assert_eq!(phase.concurrency, 24);
    assert_eq!(phase.jobs.len(), trace.rows.len());
    for (job, tj) in phase.jobs.iter().zip(&plan.jobs) {
        let row = &trace.rows[tj.row];
        let planned = job.planned_ms.unwrap();
        assert!((planned - row.arrival_ms / 10.0).abs() < 1e-6, "{planned}");
        assert_eq!(job.params.max_tokens, row.output_tokens.max(1));
        assert_eq!(job.params.model, "sim-cache");
        assert!(job.params.ignore_eos, "the OpenAI style takes ignore_eos");
        assert_eq!(job.params.messages, vec![("user".to_owned(), tj.prompt())]);
        assert!(!job.warmup);
    }
}

#[test]
fn bad_replay_options_are_refused_with_what_to_change() {
    let trace = fixture(traces::AZURE);
    let template = ScenarioConfig::default().params("m", String::new(), None);
    let none = TraceReplay {
        max_concurrency: 0,
        ..TraceReplay::default()
    };
    assert_eq!(
        replay_phase(&trace, &none, 0, &template, None).unwrap_err(),
        TraceReplayError::NoLanes
    );
    let fast = TraceReplay {
        speed: 0.0,
        ..TraceReplay::default()
    };
    let e = replay_phase(&trace, &fast, 0, &template, None).unwrap_err();
    assert_eq!(e, TraceReplayError::Plan(TracePlanError::BadSpeed(0.0)));
    assert!(e.to_string().contains("speed"), "{e}");
}

#[test]
fn a_trace_scenario_without_its_trace_says_what_to_do() {
    let e = trace_scenario(1.0, 8).plan("m", None).unwrap_err();
    assert_eq!(e, ScenarioError::NoTrace);
    assert!(e.to_string().contains("choose a trace file"), "{e}");
}

#[test]
fn trace_options_are_absent_from_settings_until_set() {
    let plain = serde_json::to_value(ScenarioConfig::default()).unwrap();
    assert!(plain.get("trace").is_none(), "{plain}");
    let back: ScenarioConfig = serde_json::from_value(plain).unwrap();
    assert_eq!(back.trace, TraceReplay::default());
    let mut sc = trace_scenario(10.0, 16);
    sc.trace.window_s = Some(30.0);
    let v = serde_json::to_value(&sc).unwrap();
    assert_eq!(v["trace"]["speed"], 10.0);
    assert_eq!(v["kind"], "trace");
    assert_eq!(serde_json::from_value::<ScenarioConfig>(v).unwrap(), sc);
}

#[test]
fn the_locustfile_sends_the_trace_plans_jobs_at_their_times() {
    let trace = fixture(traces::MOONCAKE);
    let sc = trace_scenario(10.0, 32);
    let phase = replay(&sc, &trace, 9);
    let target = LocustTarget {
        base_url: "http://127.0.0.1:8080".into(),
        dialect: Some(Dialect::OpenAiChat),
        model: "sim-cache".into(),
        extra_headers: String::new(),
    };
    let jobs = locust_jobs_for_phases(&target, &sc, vec![phase.clone()]);
    assert_eq!(jobs.len(), phase.jobs.len());
    for (lj, job) in jobs.iter().zip(&phase.jobs) {
        assert_eq!(lj.planned_ms, job.planned_ms);
        let body: serde_json::Value = serde_json::from_str(&lj.body).unwrap();
        assert_eq!(
            body["messages"][0]["content"].as_str(),
            Some(job.params.messages[0].1.as_str())
        );
        assert_eq!(body["max_tokens"], job.params.max_tokens);
    }
    let file = locustfile_for_phases(&target, &sc, "t1", vec![phase.clone()]).unwrap();
    assert!(file.contains("USERS = 32\n"), "the lanes are the users");
    assert!(file.contains("OPEN_LOOP = True"));
    let last = phase.jobs.last().unwrap().planned_ms.unwrap();
    assert!(file.contains(&format!("\"planned_ms\": {last}")), "{last}");
}

#[test]
fn the_record_rides_in_settings_and_compares_reuse_over_the_traces_tokens() {
    let trace = fixture(traces::MOONCAKE);
    let sc = trace_scenario(10.0, 64);
    let template = sc.params("m", String::new(), None);
    let (_, plan) = replay_phase(&trace, &sc.trace, 1, &template, None).unwrap();
    let record = TraceReplayRecord::of("mooncake.jsonl", &plan, &sc.trace, 1);
    let mut settings = serde_json::to_value(&sc).unwrap();
    record.put_in(&mut settings);
    assert_eq!(
        TraceReplayRecord::of_settings(&settings),
        Some(record.clone())
    );
    assert_eq!(
        TraceReplayRecord::of_settings(&serde_json::to_value(&sc).unwrap()),
        None
    );
    // The settings still read as the scenario.
    assert_eq!(
        serde_json::from_value::<ScenarioConfig>(settings).unwrap(),
        sc
    );
    let e = record.expected;
    let all = record
        .compare_reuse(e.reused_tokens, record.requests, record.requests)
        .unwrap();
    assert!((all.measured - all.expected).abs() < 1e-12);
    assert!(
        all.sentence.contains(&e.reused_tokens.to_string()),
        "{}",
        all.sentence
    );
    let half = record
        .compare_reuse(e.reused_tokens / 2, record.requests / 2, record.requests)
        .unwrap();
    assert!((half.measured - all.expected / 2.0).abs() < 1e-5);
    assert!(
        half.sentence.contains("only 100 of the 200"),
        "{}",
        half.sentence
    );
}
