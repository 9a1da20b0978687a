//! A/B runs and repeats (#29): the interleaved plan (A0 B0 A1 B1 …, warm-ups too), the checks
//! of arms and repeats with what to do, the arms' reports split from one run, and the pairing
//! of request k of one arm with request k of another.

use ttft_core::pairing::{paired_differences, paired_values};
use ttft_core::report::{ArmPart, EndpointInfo, GroupKind, RunGroup};
use ttft_core::scenario::{
    Arm, ScenarioConfig, ScenarioError, ScenarioKind, arm_labels, total_jobs, warmups_first,
};
use ttft_core::timeline::Outcome;
use ttft_fixtures::report_file::{record, report};

fn arm(label: &str, model: &str) -> Arm {
    Arm {
        label: label.into(),
        model: model.into(),
        base_url: None,
    }
}

fn ab(kind: ScenarioKind, arms: usize) -> ScenarioConfig {
    ScenarioConfig {
        kind,
        requests: 3,
        warmup: 1,
        concurrency: 2,
        arms: (0..arms).map(|i| arm("", &format!("m{i}"))).collect(),
        ..ScenarioConfig::default()
    }
}

fn models(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("m{i}")).collect()
}

/// `(arm, pair, warm-up, model)` of every job of a phase.
fn shape(jobs: &[ttft_core::scenario::Job]) -> Vec<(usize, Option<u32>, bool, String)> {
    jobs.iter()
        .map(|j| (j.arm, j.pair, j.warmup, j.params.model.clone()))
        .collect()
}

#[test]
fn an_ab_chat_run_alternates_the_arms_job_by_job_warm_ups_too() {
    let c = ab(ScenarioKind::Chat, 2);
    let phases = c.plan_arms(&models(2), None).unwrap();
    assert_eq!(phases.len(), 2, "warm-ups, then the measured requests");
    let m = |i: usize| format!("m{i}");
    assert_eq!(
        shape(&phases[0].jobs),
        [(0, None, true, m(0)), (1, None, true, m(1))],
        "warm-ups alternate and pair with nothing"
    );
    assert_eq!(
        shape(&phases[1].jobs),
        [
            (0, Some(0), false, m(0)),
            (1, Some(0), false, m(1)),
            (0, Some(1), false, m(0)),
            (1, Some(1), false, m(1)),
            (0, Some(2), false, m(0)),
            (1, Some(2), false, m(1)),
        ]
    );
    // Both arms send the same prompt in each slot; the concurrency is the whole run's.
    assert_eq!(
        phases[1].jobs[0].params.messages,
        phases[1].jobs[1].params.messages
    );
    assert_eq!(phases[1].concurrency, 2);
    assert_eq!(total_jobs(&phases), 8);
    // An ordinary plan is unchanged: arm 0, no pairs.
    let plain = ScenarioConfig::default().plan("m", None).unwrap();
    assert!(
        plain
            .iter()
            .flat_map(|p| &p.jobs)
            .all(|j| j.arm == 0 && j.pair.is_none())
    );
}

#[test]
fn three_arms_take_turns_a_b_c_a() {
    let phases = ScenarioConfig {
        warmup: 0,
        ..ab(ScenarioKind::AgentJson, 3)
    }
    .plan_arms(&models(3), None)
    .unwrap();
    assert_eq!(phases.len(), 1);
    let order: Vec<(usize, Option<u32>)> = phases[0].jobs.iter().map(|j| (j.arm, j.pair)).collect();
    assert_eq!(
        order,
        [
            (0, Some(0)),
            (1, Some(0)),
            (2, Some(0)),
            (0, Some(1)),
            (1, Some(1)),
            (2, Some(1)),
            (0, Some(2)),
            (1, Some(2)),
            (2, Some(2)),
        ]
    );
}

#[test]
fn a_prompt_sweep_interleaves_within_each_level_and_its_warm_ups_come_first() {
    let c = ScenarioConfig {
        prompt_levels: "100, 500".into(),
        requests: 2,
        ..ab(ScenarioKind::PromptSweep, 2)
    };
    let plan = c.plan_arms(&models(2), None).unwrap();
    assert_eq!(plan.len(), 2, "one phase per level");
    let apart = warmups_first(plan);
    let levels: Vec<Vec<(usize, Option<u32>, bool)>> = apart
        .iter()
        .map(|p| p.jobs.iter().map(|j| (j.arm, j.pair, j.warmup)).collect())
        .collect();
    assert_eq!(
        levels,
        [
            vec![(0, None, true), (1, None, true)],
            vec![
                (0, Some(0), false),
                (1, Some(0), false),
                (0, Some(1), false),
                (1, Some(1), false)
            ],
            // Slots go on counting: levels never share a pair.
            vec![
                (0, Some(2), false),
                (1, Some(2), false),
                (0, Some(3), false),
                (1, Some(3), false)
            ],
        ]
    );
    assert!(apart[2].jobs.iter().all(|j| j.group == "prompt≈500"));
}

#[test]
fn a_multi_turn_ab_run_alternates_rounds() {
    let c = ScenarioConfig {
        rounds: 2,
        ..ab(ScenarioKind::MultiTurn, 2)
    };
    let plan = c.plan_arms(&models(2), None).unwrap();
    let order: Vec<(usize, Option<u32>, bool, &str)> = plan[0]
        .jobs
        .iter()
        .map(|j| (j.arm, j.pair, j.chained, j.group.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            (0, Some(0), false, "round 1"),
            (1, Some(0), false, "round 1"),
            (0, Some(1), true, "round 2"),
            (1, Some(1), true, "round 2"),
        ]
    );
}

#[test]
fn arms_and_repeats_are_checked_with_what_to_do() {
    let check = |c: ScenarioConfig| c.validate_group().map_err(|e| (e.clone(), e.to_string()));
    let (e, msg) = check(ab(ScenarioKind::Chat, 1)).unwrap_err();
    assert_eq!(e, ScenarioError::TooFewArms);
    assert!(msg.contains("add another"), "{msg}");
    let (e, msg) = check(ab(ScenarioKind::Chat, 6)).unwrap_err();
    assert_eq!(e, ScenarioError::TooManyArms(2));
    assert!(
        msg.contains("at most 4") && msg.contains("remove 2"),
        "{msg}"
    );
    let mut c = ab(ScenarioKind::Chat, 2);
    c.arms[1].model = "  ".into();
    let (e, msg) = check(c).unwrap_err();
    assert_eq!(e, ScenarioError::ArmWithoutModel(2));
    assert!(
        msg.contains("configuration 2") && msg.contains("choose one"),
        "{msg}"
    );
    let mut c = ab(ScenarioKind::Chat, 2);
    c.arms[0].label = "fast".into();
    c.arms[1].label = " fast ".into();
    let (e, msg) = check(c).unwrap_err();
    assert_eq!(e, ScenarioError::DuplicateArmLabel("fast".into()));
    assert!(msg.contains("its own label"), "{msg}");
    let (e, msg) = check(ab(ScenarioKind::ConcurrencySweep, 2)).unwrap_err();
    assert_eq!(e, ScenarioError::ArmsInConcurrencySweep);
    assert!(msg.contains("sweep each configuration on its own"), "{msg}");
    for bad in [0, 21] {
        let (e, msg) = check(ScenarioConfig {
            repeats: bad,
            ..ScenarioConfig::default()
        })
        .unwrap_err();
        assert_eq!(e, ScenarioError::BadRepeats(bad));
        assert!(msg.contains("1 to 20 times"), "{msg}");
    }
    // An ordinary run, repeated 20 times, is fine and has no labels; so is a plan of arms.
    assert_eq!(
        check(ScenarioConfig {
            repeats: 20,
            ..ScenarioConfig::default()
        }),
        Ok(Vec::new())
    );
    assert!(
        ab(ScenarioKind::Chat, 1)
            .plan_arms(&models(1), None)
            .is_err()
    );
}

#[test]
fn labels_default_to_the_model_told_apart() {
    let arms = [
        arm("", "sim-ab"),
        arm("", "sim-ab"),
        arm("sim-ab (2)", "x"),
        arm("slow", "sim-ab-slower"),
    ];
    assert_eq!(
        arm_labels(&arms).unwrap(),
        ["sim-ab", "sim-ab (3)", "sim-ab (2)", "slow"],
        "a given label is kept; a model's name steps aside for it"
    );
}

#[test]
fn settings_without_arms_or_repeats_read_and_write_as_before() {
    let v = serde_json::to_value(ScenarioConfig::default()).unwrap();
    assert!(v.get("arms").is_none() && v.get("repeats").is_none());
    let back: ScenarioConfig = serde_json::from_value(v).unwrap();
    assert_eq!(back.repeats, 1);
    assert!(back.arms.is_empty());
    let c = ScenarioConfig {
        repeats: 3,
        ..ab(ScenarioKind::Chat, 2)
    };
    let back: ScenarioConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
}

/// Records of an interleaved run: request k of arm a has slot k, TTFT `ttft[a][k]`.
fn interleaved(ttft: [[f64; 3]; 2]) -> (ttft_core::report::Report, Vec<usize>) {
    let mut records = Vec::new();
    let mut arm_of = Vec::new();
    for k in 0..3u32 {
        for (a, arm) in ttft.iter().enumerate() {
            let mut r = record(k * 2 + a as u32, arm[k as usize], 10.0, 4);
            r.pair = Some(k);
            records.push(r);
            arm_of.push(a);
        }
    }
    (report(records), arm_of)
}

#[test]
fn an_interleaved_run_splits_into_one_report_per_arm() {
    let (run, arm_of) = interleaved([[100.0, 110.0, 120.0], [200.0, 210.0, 220.0]]);
    let groups = RunGroup::arms("ab-1", &["sim-ab".into(), "slower".into()]);
    let parts: Vec<ArmPart> = groups
        .into_iter()
        .map(|g| ArmPart {
            title: ttft_core::naming::group_run_title("chat", "x", &g, "2025-03-14T09:26:53.589Z"),
            endpoint: EndpointInfo {
                model: g.label.clone(),
                ..EndpointInfo::default()
            },
            group: g,
        })
        .collect();
    let settings = run.settings.clone();
    let mut run = run;
    // The surface drew requests 1 (arm B's first) and 4 (arm A's third).
    let figures = |first: f64| ttft_core::paint::PaintFigures {
        source: ttft_core::paint::PaintSource::FrameEstimate,
        first_painted_ms: Some(first),
        first_painted_meaningful_ms: Some(first),
        lags_ms: vec![5.0],
        long_frames: 0,
        dropped_frames: 0,
        frames: 10,
        busy_share: None,
    };
    run.painted = Some(ttft_core::paint::PaintedRun {
        strategy: "incremental".into(),
        requests: [(1, 205.0), (4, 125.0)]
            .map(|(index, first)| ttft_core::paint::PaintedRequest {
                index,
                figures: figures(first),
            })
            .to_vec(),
    });
    let arms = run.split_arms(&arm_of, parts);
    assert_eq!(arms.len(), 2);
    let drawn = |a: usize| -> Vec<(u32, Option<f64>)> {
        let p = arms[a]
            .painted
            .as_ref()
            .expect("each arm keeps the surface's record");
        p.requests
            .iter()
            .map(|d| (d.index, d.figures.first_painted_ms))
            .collect()
    };
    assert_eq!(
        drawn(0),
        [(2, Some(125.0))],
        "arm A's third request, renumbered"
    );
    assert_eq!(drawn(1), [(0, Some(205.0))], "arm B's first");
    assert_eq!(
        arms[0].title,
        "chat · sim-ab · A/B 1 of 2 · 2025-03-14T09:26:53"
    );
    assert_eq!(
        arms[1].title,
        "chat · slower · A/B 2 of 2 · 2025-03-14T09:26:53"
    );
    for (a, r) in arms.iter().enumerate() {
        let g = r.group.as_ref().unwrap();
        assert_eq!(
            (g.kind, g.index, g.size, g.id.as_str()),
            (GroupKind::Arms, a, 2, "ab-1")
        );
        let idx: Vec<u32> = r.requests.iter().map(|q| q.index).collect();
        assert_eq!(idx, [0, 1, 2], "each arm numbers its own requests");
        assert_eq!(r.settings, settings);
    }
    // The group and the pairs survive the report file; files without them read as before.
    let json = arms[1].to_json_pretty();
    assert_eq!(
        ttft_core::report::read_json(json.as_bytes()).unwrap(),
        arms[1]
    );
    let plain = serde_json::to_value(report(vec![record(0, 1.0, 1.0, 2)])).unwrap();
    assert!(plain.get("group").is_none() && plain["requests"][0].get("pair").is_none());
    let repeat = RunGroup::repeat("r-1", 1, 3);
    assert_eq!(repeat.describe(), "repeat 2 of 3");
    assert_eq!(
        ttft_core::naming::group_run_title("chat", "sim-fast", &repeat, ""),
        "chat · sim-fast · repeat 2 of 3 · "
    );
}

#[test]
fn requests_pair_up_by_slot_when_both_succeeded_and_were_measured() {
    let (run, arm_of) = interleaved([[100.0, 110.0, 120.0], [200.0, 215.0, 230.0]]);
    let parts = RunGroup::arms("g", &["a".into(), "b".into()])
        .into_iter()
        .map(|g| ArmPart {
            title: g.label.clone(),
            endpoint: EndpointInfo::default(),
            group: g,
        })
        .collect();
    let mut arms = run.split_arms(&arm_of, parts);
    let ttft = |m: &ttft_core::metrics::RequestMetrics| m.ttft_ms;
    assert_eq!(
        paired_values(&arms[0], &arms[1], ttft),
        [(100.0, 200.0), (110.0, 215.0), (120.0, 230.0)]
    );
    assert_eq!(
        paired_differences(&arms[0], &arms[1], ttft),
        [100.0, 105.0, 110.0]
    );
    // A failed request, a warm-up, a missing value or a lost partner drops its pair only.
    arms[1].requests[0].outcome = Outcome::Truncated {
        message: "broke".into(),
    };
    arms[0].requests[1].warmup = true;
    arms[1].requests.pop();
    assert_eq!(paired_values(&arms[0], &arms[1], ttft), []);
    let (run, arm_of) = interleaved([[100.0, 110.0, 120.0], [200.0, 215.0, 230.0]]);
    let parts = RunGroup::arms("g", &["a".into(), "b".into()])
        .into_iter()
        .map(|g| ArmPart {
            title: g.label.clone(),
            endpoint: EndpointInfo::default(),
            group: g,
        })
        .collect();
    let arms = run.split_arms(&arm_of, parts);
    assert_eq!(paired_values(&arms[0], &arms[1], |_| None), []);
    assert_eq!(
        paired_values(&arms[1], &arms[0], |m| m
            .ttft_ms
            .filter(|t| *t > 205.0 || *t < 115.0))
        .len(),
        1,
        "both values must be there"
    );
    // Runs from no A/B run have no slots, so nothing pairs.
    let plain = report(vec![record(0, 100.0, 10.0, 4)]);
    assert!(paired_values(&plain, &plain, ttft).is_empty());
}
