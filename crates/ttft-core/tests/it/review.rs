//! Blind review: which streams play, on which side, the votes each run keeps, how they travel
//! (report files; share links: `crates/ttft-share/tests`) and how the comparison reads them
//! beside the reading QoE.

use ttft_core::compare::{compare_reports, vote_summary};
use ttft_core::report::{EndpointInfo, Report, read_json};
use ttft_core::review::{
    BlindVote, Choice, Preference, Run, TELLING_SHARE, VOTE_LEVEL, VoteTally, pair_for_review,
    tally, tally_both, vote_test,
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
            .with_requests((0..8).map(|i| request(i, ttft, itl, 200)).collect())
    };
    (
        mk("model-a", 1000.0, 800.0, 65.0),
        mk("model-b", 2000.0, 3500.0, 40.0),
    )
}

/// `for_a` votes for `a`, `for_b` for `b` and `same` that found no difference, kept by both.
fn cast(a: &mut Report, b: &mut Report, for_a: u32, for_b: u32, same: u32) {
    let mut at = a.votes.len() as f64;
    let each = [(for_a, Some(true)), (for_b, Some(false)), (same, None)];
    for (count, side) in each {
        for _ in 0..count {
            at += 1.0;
            vote(a, b, at, side);
        }
    }
}

const NAMES: [&str; 2] = ["model-a", "model-b"];

#[test]
fn the_comparison_says_whether_reading_qoe_agrees_with_conclusive_votes() {
    let (mut a, mut b) = article();
    let cmp = compare_reports(&NAMES, &[&a, &b], Default::default()).2;
    assert_eq!(cmp.reader_winner, Some(0));
    assert_eq!(vote_summary(&NAMES, &[&a, &b], &cmp), None);

    cast(&mut a, &mut b, 14, 2, 1);
    let v = vote_summary(&NAMES, &[&a, &b], &cmp).unwrap();
    assert_eq!((v.wins.clone(), v.same, v.total), (vec![14, 2], 1, 17));
    assert_eq!(
        (v.winner, v.agrees, v.conclusive),
        (Some(0), Some(true), true)
    );
    assert_eq!(v.more_votes, None);
    assert!((v.p_value.unwrap() - 274.0 / 65536.0).abs() < 1e-12);
    assert_eq!(
        v.sentence,
        "Reviewers preferred “model-a” 14–2 (p = 0.004; 95 % interval of the share preferring it: 62–98 %; 1 found no difference, not counted); reading QoE agrees."
    );

    // The reviewers side with B: the sentence names the figures where B is ahead.
    let (mut a, mut b) = article();
    cast(&mut a, &mut b, 1, 12, 0);
    let v = vote_summary(&NAMES, &[&a, &b], &cmp).unwrap();
    assert_eq!(
        (v.winner, v.agrees, v.conclusive),
        (Some(1), Some(false), true)
    );
    // B finishes first (11.46 s against 13.74 s) and its 40 ms words keep ahead of the 50 ms
    // pace (fluid token rate): the figures that side with the reviewers.
    assert!(
        v.sentence.starts_with(
            "Reviewers preferred “model-b” 12–1 (p = 0.003; 95 % interval of the share preferring it: 64–99.8 %); reading QoE disagrees (it prefers “model-a”, 1.00 vs 0.90): look at E2E (total latency) P50"
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
}

#[test]
fn votes_that_are_not_conclusive_are_a_lean_and_say_how_many_more_would_tell() {
    let (a0, b0) = article();
    let cmp = compare_reports(&NAMES, &[&a0, &b0], Default::default()).2;
    // 3–1 for B against a reading QoE that prefers A: no disagreement is claimed.
    let (mut a, mut b) = (a0.clone(), b0.clone());
    cast(&mut a, &mut b, 1, 3, 0);
    let v = vote_summary(&NAMES, &[&a, &b], &cmp).unwrap();
    assert_eq!((v.winner, v.agrees, v.conclusive), (Some(1), None, false));
    let more = v.more_votes.unwrap();
    assert_eq!(
        v.sentence,
        format!(
            "Reviewers leaned towards “model-b” 3–1, not yet conclusive (p = 0.63): about {more} more votes would tell a 70/30 preference; reading QoE prefers “model-a”: the votes cannot yet tell whether reviewers agree."
        )
    );
    assert!(!v.sentence.contains("preferred"), "{}", v.sentence);
    // 7–3, the example: a p of 0.34, and 10 votes fewer to go than from none.
    let (mut a, mut b) = (a0.clone(), b0.clone());
    cast(&mut a, &mut b, 7, 3, 2);
    let v = vote_summary(&NAMES, &[&a, &b], &cmp).unwrap();
    assert!(
        v.sentence.starts_with(
            "Reviewers leaned towards “model-a” 7–3 (2 found no difference, not counted), not yet conclusive (p = 0.34): about "
        ),
        "{}",
        v.sentence
    );
    let from_none = vote_test(0, 0, VOTE_LEVEL).more_votes_for(TELLING_SHARE);
    assert_eq!(v.more_votes, from_none.map(|n| n - 10), "{v:?}");
    // Split votes, and votes that found no difference.
    let (mut a, mut b) = (a0.clone(), b0.clone());
    cast(&mut a, &mut b, 1, 1, 0);
    let v = vote_summary(&NAMES, &[&a, &b], &cmp).unwrap();
    assert_eq!((v.winner, v.agrees, v.p_value), (None, None, Some(1.0)));
    let more = v.more_votes.unwrap();
    assert_eq!(
        v.sentence,
        format!(
            "Reviewers were split 1–1: about {more} more votes would tell a 70/30 preference; reading QoE prefers “model-a”: the votes cannot yet tell whether reviewers agree."
        )
    );
    let (mut a, mut b) = (a0, b0);
    cast(&mut a, &mut b, 0, 0, 1);
    let v = vote_summary(&NAMES, &[&a, &b], &cmp).unwrap();
    assert_eq!((v.p_value, v.conclusive), (None, false));
    assert_eq!(
        v.sentence,
        "Reviewers found no difference in 1 vote; reading QoE prefers “model-a”: the votes cannot yet tell whether reviewers agree."
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
    let cmp = compare_reports(&titles, &[&a, &b, &c], Default::default()).2;
    let v = vote_summary(&titles, &[&a, &b, &c], &cmp).unwrap();
    assert_eq!(
        (v.wins.clone(), v.total, v.winner, v.conclusive),
        (vec![2, 1, 0], 3, Some(0), false)
    );
    assert!(
        v.sentence.starts_with(
            "Reviewers leaned towards “model-a” (votes won: “model-a” 2, “model-b” 1, “model-c” 0), not yet conclusive (it won 2 of its 2 decisive votes, p = 1.00 allowing for 3 runs): about "
        ),
        "{}",
        v.sentence
    );
    assert!(
        v.sentence
            .contains(" more votes with “model-a” would tell a 70/30 preference")
    );
    // Twelve more wins for model-a over the others: conclusive even allowing for 3 runs.
    for i in 0..12 {
        if i % 2 == 0 {
            vote(&mut a, &mut b, 10.0 + f64::from(i), Some(true));
        } else {
            vote(&mut a, &mut c, 10.0 + f64::from(i), Some(true));
        }
    }
    let v = vote_summary(&titles, &[&a, &b, &c], &cmp).unwrap();
    assert!(v.conclusive, "{v:?}");
    // 14 of 14: 2 / 2^14 × 3.
    assert!((v.p_value.unwrap() - 3.0 * 2.0 / 16384.0).abs() < 1e-12);
    assert!(
        v.sentence.starts_with(
            "Reviewers preferred “model-a” (votes won: “model-a” 14, “model-b” 1, “model-c” 0) (it won 14 of its 14 decisive votes, p < 0.001 allowing for 3 runs; 98.3 % interval of the share preferring it: "
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
