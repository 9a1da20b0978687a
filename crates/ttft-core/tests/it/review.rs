//! Blind review: which streams play, on which side, the votes each run keeps, how they travel
//! (report files; share links: `crates/ttft-share/tests`) and how the comparison reads them
//! beside the reading QoE.

use ttft_core::compare::vote_summary;
use ttft_core::report::{EndpointInfo, Report, read_json};
use ttft_core::review::{
    BlindVote, Choice, Preference, Run, VoteTally, pair_for_review, tally, tally_both,
};
use ttft_core::run_stats::RunStats;
use ttft_fixtures::review::{judge, request, run, vote};

#[test]
fn requests_of_the_same_index_play_and_the_sides_are_random() {
    let a = run("model-a", 1000.0, &[(0, 300.0), (1, 310.0), (2, 320.0)]);
    let b = run(
        "model-b",
        2000.0,
        &[(0, 900.0), (1, 910.0), (2, 920.0), (3, 930.0), (4, 940.0)],
    );
    let mut a_left = 0;
    let mut seen = [false; 3];
    for seed in 0..400u64 {
        let p = pair_for_review(&a, &b, seed).unwrap();
        assert_eq!(
            p,
            pair_for_review(&a, &b, seed).unwrap(),
            "same seed, same pair"
        );
        assert!(p.same_index);
        assert_eq!(p.left.request, p.right.request);
        assert_ne!(p.left.run, p.right.run);
        // Only indices both runs have: 0, 1, 2.
        let i = p.left.request as usize;
        seen[i] = true;
        assert_eq!(p.stream(Run::A).replay, a.requests[i].replay);
        assert_eq!(p.stream(Run::B).replay, b.requests[i].replay);
        assert_eq!(p.end_ms(), 900.0 + i as f64 * 10.0 + 19.0 * 50.0);
        a_left += usize::from(p.a_on_left());
    }
    assert_eq!(seen, [true; 3]);
    // Consecutive seeds still put run A left about half the time.
    assert!(
        (140..=260).contains(&a_left),
        "A on the left {a_left} of 400"
    );
}

#[test]
fn without_a_shared_index_each_run_plays_the_same_ttft_rank() {
    // One stream in b: a plays its median by TTFT (indices by TTFT: 5 (100), 7 (200), 6 (300):
    // the middle is 7), as the comparison's replay does.
    let a = run("a", 1.0, &[(5, 100.0), (6, 300.0), (7, 200.0)]);
    let b = run("b", 2.0, &[(9, 500.0)]);
    for seed in 0..20 {
        let p = pair_for_review(&a, &b, seed).unwrap();
        assert!(!p.same_index);
        assert_eq!((p.stream(Run::A).request, p.stream(Run::B).request), (7, 9));
        assert_eq!(a.median_replay().unwrap().index, 7);
    }
    // Four against two: two slices; the first pairs a's 2nd (of 4) with b's 1st, the second
    // a's 4th with b's 2nd: (2j + 1) × len / (2 × 2).
    let a = run("a", 1.0, &[(0, 10.0), (1, 20.0), (2, 30.0), (3, 40.0)]);
    let b = run("b", 2.0, &[(10, 50.0), (11, 60.0)]);
    let mut pairs: Vec<(u32, u32)> = (0..50)
        .map(|seed| {
            let p = pair_for_review(&a, &b, seed).unwrap();
            (p.stream(Run::A).request, p.stream(Run::B).request)
        })
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs, vec![(1, 10), (3, 11)]);
}

#[test]
fn nothing_to_play_gives_no_pair() {
    let a = run("a", 1.0, &[(0, 100.0)]);
    let empty = run("b", 2.0, &[]);
    assert_eq!(pair_for_review(&a, &empty, 1), None);
    assert_eq!(pair_for_review(&empty, &a, 1), None);
}

#[test]
fn each_run_keeps_the_vote_from_its_own_side() {
    let a = run("model-a", 1000.0, &[(0, 300.0), (1, 310.0)]);
    let b = run("model-b", 2000.0, &[(1, 900.0), (2, 910.0)]);
    let left_seed = (0..)
        .find(|s| pair_for_review(&a, &b, *s).unwrap().a_on_left())
        .unwrap();
    let right_seed = (0..)
        .find(|s| !pair_for_review(&a, &b, *s).unwrap().a_on_left())
        .unwrap();
    // A on the left, "left felt faster": a keeps This, b keeps Other.
    let p = pair_for_review(&a, &b, left_seed).unwrap();
    let (va, vb) = p.votes(Choice::Left, &a, &b, 5.0);
    assert_eq!(
        va,
        BlindVote {
            at_unix_ms: 5.0,
            opponent: "model-b".into(),
            opponent_created_unix_ms: 2000.0,
            this_request: 1,
            other_request: 1,
            preferred: Preference::This,
        }
    );
    assert_eq!(
        (
            vb.opponent.as_str(),
            vb.opponent_created_unix_ms,
            vb.preferred
        ),
        ("model-a", 1000.0, Preference::Other)
    );
    // A on the right, "left felt faster": b wins.
    let p = pair_for_review(&a, &b, right_seed).unwrap();
    let (va, vb) = p.votes(Choice::Left, &a, &b, 6.0);
    assert_eq!(
        (va.preferred, vb.preferred),
        (Preference::Other, Preference::This)
    );
    let (va, vb) = p.votes(Choice::Same, &a, &b, 7.0);
    assert_eq!(
        (va.preferred, vb.preferred),
        (Preference::Same, Preference::Same)
    );
}

#[test]
fn tallies_follow_the_run_through_renames_and_links() {
    let mut a = run("model-a", 1000.0, &[(0, 300.0)]);
    let mut b = run("model-b", 2000.0, &[(0, 900.0)]);
    let mut c = run("model-c", 3000.0, &[(0, 900.0)]);
    vote(&mut a, &mut b, 1.0, Some(true));
    vote(&mut a, &mut b, 2.0, Some(true));
    vote(&mut a, &mut b, 3.0, Some(false));
    vote(&mut a, &mut b, 4.0, None);
    vote(&mut a, &mut c, 5.0, Some(false));
    let ab = VoteTally {
        for_a: 2,
        for_b: 1,
        same: 1,
    };
    assert_eq!(tally(&a, ("model-b", 2000.0)), ab);
    assert_eq!(ab.total(), 4);
    // Renamed, or reopened from a link as "model-b (shared)": the same run by its creation time.
    assert_eq!(tally(&a, ("model-b (shared)", 2000.0)), ab);
    assert_eq!(tally(&a, ("model-b", 2001.0)), VoteTally::default());
    assert_eq!(
        tally(&b, ("model-a", 1000.0)),
        VoteTally {
            for_a: 1,
            for_b: 2,
            same: 1
        }
    );
    // Both sides, without counting a vote twice: b holds one more, cast where a was a copy.
    assert_eq!(tally_both(&a, &b), ab);
    b.votes.push(BlindVote {
        at_unix_ms: 9.0,
        opponent: "model-a".into(),
        opponent_created_unix_ms: 1000.0,
        this_request: 0,
        other_request: 0,
        preferred: Preference::This,
    });
    assert_eq!(
        tally_both(&a, &b),
        VoteTally {
            for_a: 2,
            for_b: 2,
            same: 1
        }
    );
    // Runs without a creation time are told apart by title.
    let mut x = run("x", 0.0, &[(0, 1.0)]);
    let mut y = run("y", 0.0, &[(0, 1.0)]);
    vote(&mut x, &mut y, 1.0, Some(true));
    assert_eq!(tally(&x, ("y", 0.0)).for_a, 1);
    assert_eq!(tally(&x, ("z", 0.0)).total(), 0);
}

#[test]
fn votes_travel_in_report_files() {
    let mut a = run("model-a", 1000.0, &[(0, 300.0), (1, 350.0)]);
    let mut b = run("model-b", 2000.0, &[(0, 900.0)]);
    // No votes: not written, and files from before votes read.
    let json = serde_json::to_string(&a).unwrap();
    assert!(!json.contains("\"votes\""));
    assert!(read_json(json.as_bytes()).unwrap().votes.is_empty());
    vote(&mut a, &mut b, 1.78e12 + 0.5, Some(true));
    vote(&mut a, &mut b, 1.78e12 + 9.25, None);
    let json = serde_json::to_string(&a).unwrap();
    assert_eq!(read_json(json.as_bytes()).unwrap().votes, a.votes);
}

/// The article's two models (200 words each): A starts at 0.8 s with 65 ms words, B at 3.5 s
/// with 40 ms words. A reader prefers A (QoE 1.00 vs 0.90); B finishes first and is the more
/// fluid (fluid token rate, P99 miss rate).
fn article() -> (Report, Report) {
    let mk = |title: &str, created: f64, ttft: f64, itl: f64| {
        Report::new(title, EndpointInfo::default(), "chat")
            .created_at(created)
            .with_requests((0..3).map(|i| request(i, ttft, itl, 200)).collect())
    };
    (
        mk("model-a", 1000.0, 800.0, 65.0),
        mk("model-b", 2000.0, 3500.0, 40.0),
    )
}

#[test]
fn the_comparison_says_whether_reading_qoe_agrees_with_the_reviewers() {
    let (mut a, mut b) = article();
    let cmp =
        ttft_core::compare::compare_reports(&["model-a", "model-b"], &[&a, &b], Default::default())
            .2;
    assert_eq!(cmp.reader_winner, Some(0));
    assert_eq!(vote_summary(&[&a, &b], &cmp), None);

    for (i, for_a) in [
        Some(true),
        Some(true),
        Some(false),
        Some(true),
        None,
        Some(true),
    ]
    .into_iter()
    .enumerate()
    {
        vote(&mut a, &mut b, i as f64, for_a);
    }
    let v = vote_summary(&[&a, &b], &cmp).unwrap();
    assert_eq!((v.wins.clone(), v.same, v.total), (vec![4, 1], 1, 6));
    assert_eq!((v.winner, v.agrees), (Some(0), Some(true)));
    assert_eq!(
        v.sentence,
        "Reviewers preferred “model-a” 4–1 (1 found no difference); reading QoE agrees."
    );

    // The reviewers side with B: the sentence names the figures where B is ahead.
    let (mut a, mut b) = article();
    for (i, for_a) in [Some(false), Some(false), Some(true), Some(false)]
        .into_iter()
        .enumerate()
    {
        vote(&mut a, &mut b, i as f64, for_a);
    }
    let v = vote_summary(&[&a, &b], &cmp).unwrap();
    assert_eq!((v.winner, v.agrees), (Some(1), Some(false)));
    // B finishes first (11.46 s against 13.74 s) and its 40 ms words keep ahead of the 50 ms
    // pace (fluid token rate): the figures that side with the reviewers.
    assert!(
        v.sentence.starts_with(
            "Reviewers preferred “model-b” 3–1; reading QoE disagrees (it prefers “model-a”, 1.00 vs 0.90): look at E2E (total latency) P50"
        ),
        "{}",
        v.sentence
    );
    assert!(
        v.sentence.ends_with(
            "Fluid token rate, where “model-b” is ahead, and at whether the reading speed in the experience settings fits your reviewers."
        ),
        "{}",
        v.sentence
    );
    // Split votes, and votes that found no difference.
    let (mut a, mut b) = article();
    vote(&mut a, &mut b, 1.0, Some(true));
    vote(&mut a, &mut b, 2.0, Some(false));
    let v = vote_summary(&[&a, &b], &cmp).unwrap();
    assert_eq!((v.winner, v.agrees), (None, None));
    assert_eq!(
        v.sentence,
        "Reviewers were split 1–1; reading QoE prefers “model-a”."
    );
    let (mut a, mut b) = article();
    vote(&mut a, &mut b, 1.0, None);
    assert_eq!(
        vote_summary(&[&a, &b], &cmp).unwrap().sentence,
        "Reviewers found no difference in 1 vote; reading QoE prefers “model-a”."
    );
}

#[test]
fn three_runs_count_every_pair() {
    let (mut a, mut b) = article();
    let mut c = run("model-c", 3000.0, &[(0, 5000.0)]);
    vote(&mut a, &mut b, 1.0, Some(true));
    vote(&mut a, &mut c, 2.0, Some(true));
    vote(&mut b, &mut c, 3.0, Some(true));
    let titles = ["model-a", "model-b", "model-c"];
    let cmp = ttft_core::compare::compare_reports(&titles, &[&a, &b, &c], Default::default()).2;
    let v = vote_summary(&[&a, &b, &c], &cmp).unwrap();
    assert_eq!(
        (v.wins.clone(), v.total, v.winner),
        (vec![2, 1, 0], 3, Some(0))
    );
    assert!(
        v.sentence.starts_with(
            "Reviewers preferred “model-a” (votes won: “model-a” 2, “model-b” 1, “model-c” 0)"
        ),
        "{}",
        v.sentence
    );
}

#[test]
fn the_slo_set_and_the_client_health_verdict_travel_with_the_run() {
    let mut a = run("model-a", 1000.0, &[(0, 300.0), (1, 350.0)]);
    // The default set stays out of the file; a chosen one travels.
    assert!(!serde_json::to_string(&a).unwrap().contains("\"slo\""));
    judge(&mut a);
    let json = serde_json::to_string(&a).unwrap();
    let file = read_json(json.as_bytes()).unwrap();
    assert_eq!((&file.slo, &file.client_health), (&a.slo, &a.client_health));
}

#[test]
fn a_damaged_slo_set_in_a_file_falls_back_to_the_default_and_the_rest_reads() {
    use ttft_core::slo::SloSet;
    let a = run("model-a", 1000.0, &[(0, 300.0)]);
    let mut v = serde_json::to_value(&a).unwrap();
    v["slo"] = serde_json::json!({ "name": "nothing", "objectives": [] });
    let back = read_json(v.to_string().as_bytes()).unwrap();
    assert_eq!(back.slo, SloSet::default());
    assert_eq!(back.requests.len(), 1);
    v["slo"] = serde_json::json!("not a set");
    assert_eq!(
        read_json(v.to_string().as_bytes()).unwrap().slo,
        SloSet::default()
    );
}
