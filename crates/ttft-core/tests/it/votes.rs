//! The exact test of blind review votes (`ttft_core::review::vote_test`): its p-values and
//! intervals against known values, how many votes it plans for, and seeded simulations of its
//! error rates: no preference (false alarms), a 70/30 preference (power) and the interval's
//! coverage.

use ttft_core::review::{
    MAX_PLANNED_VOTES, Run, TELLING_SHARE, VOTE_LEVEL, VOTE_POWER, p_text, vote_power, vote_test,
};

#[test]
fn p_values_and_intervals_are_exact() {
    // 7–3: 2 × (1 + 10 + 45 + 120) / 2^10.
    let t = vote_test(7, 3, VOTE_LEVEL);
    assert!((t.p_value - 352.0 / 1024.0).abs() < 1e-12, "{t:?}");
    assert!(!t.conclusive);
    assert_eq!((t.leader(), t.decisive()), (Some(Run::A), 10));
    // 2–14 (B leads): 2 × (1 + 16 + 120) / 2^16; the leader's share 0.6165238–0.9844864
    // (the Beta quantiles, as R's binom.test(14, 16) gives them, computed with mpmath).
    let t = vote_test(2, 14, VOTE_LEVEL);
    assert!((t.p_value - 274.0 / 65536.0).abs() < 1e-12, "{t:?}");
    assert!(t.conclusive);
    assert_eq!(t.leader(), Some(Run::B));
    let (low, high) = t.leader_share();
    assert!(
        (low - 0.616_523_8).abs() < 1e-6 && (high - 0.984_486_4).abs() < 1e-6,
        "{t:?}"
    );
    assert_eq!(
        t.share_text(),
        "95 % interval of the share preferring it: 62–98 %"
    );
    // All one way: the interval reaches 1; no votes: nothing is known.
    let t = vote_test(10, 0, VOTE_LEVEL);
    assert!((t.p_value - 2.0 / 1024.0).abs() < 1e-12 && t.conclusive);
    assert_eq!(t.a_share.1, 1.0);
    // binom.test(10, 10): 0.6915029–1.
    assert!((t.a_share.0 - 0.691_502_9).abs() < 1e-6, "{t:?}");
    let t = vote_test(0, 0, VOTE_LEVEL);
    assert_eq!(
        (t.p_value, t.conclusive, t.a_share, t.leader()),
        (1.0, false, (0.0, 1.0), None)
    );
    // A tie is never conclusive: p = 1.
    assert_eq!(vote_test(20, 20, VOTE_LEVEL).p_value, 1.0);
    // A level outside (0, 1) is taken as 95 %.
    assert_eq!(vote_test(3, 1, 7.0).level, VOTE_LEVEL);
    assert_eq!(
        [0.34375, 0.004_18, 0.000_2].map(p_text),
        ["p = 0.34", "p = 0.004", "p < 0.001"]
    );
}

#[test]
fn more_votes_is_the_fewest_with_enough_exact_power() {
    let from_nothing = vote_test(0, 0, VOTE_LEVEL)
        .more_votes_for(TELLING_SHARE)
        .unwrap();
    // The exact power at that size reaches 80 %, one vote fewer does not.
    assert!(vote_power(from_nothing, TELLING_SHARE, VOTE_LEVEL) >= VOTE_POWER);
    assert!(vote_power(from_nothing - 1, TELLING_SHARE, VOTE_LEVEL) < VOTE_POWER);
    // (A normal approximation says about 37; the exact test needs a few more or less.)
    assert!((30..=50).contains(&from_nothing), "{from_nothing}");
    // Votes already cast count: 7–3 needs 10 fewer.
    let t = vote_test(7, 3, VOTE_LEVEL);
    assert_eq!(t.more_votes_for(TELLING_SHARE), Some(from_nothing - 10));
    assert!(t.more_votes_text("").starts_with(&format!(
        "about {} more votes would tell a 70/30 preference",
        from_nothing - 10
    )));
    // Enough votes cast: none more; then a 70/30 preference would usually have shown.
    let t = vote_test(30, 25, VOTE_LEVEL);
    assert_eq!(t.more_votes_for(TELLING_SHARE), Some(0));
    assert!(
        t.more_votes_text("")
            .starts_with("after 55 decisive votes a 70/30 preference would usually have shown")
    );
    // No preference can never be told; a slight one needs more than the cap.
    assert_eq!(t.more_votes_for(0.5), None);
    assert_eq!(t.more_votes_for(0.52), None);
    assert!(vote_power(MAX_PLANNED_VOTES, 0.52, VOTE_LEVEL) < VOTE_POWER);
    // A stricter level needs more.
    let strict = vote_test(0, 0, 0.99).more_votes_for(TELLING_SHARE).unwrap();
    assert!(strict > from_nothing, "{strict} vs {from_nothing}");
}

/// `n` votes, each for A with probability `p`.
fn votes(rng: &mut fastrand::Rng, n: u32, p: f64) -> (u32, u32) {
    let a = (0..n).filter(|_| rng.f64() < p).count() as u32;
    (a, n - a)
}

#[test]
fn with_no_preference_the_test_is_rarely_conclusive() {
    let mut rng = fastrand::Rng::with_seed(29);
    let (mut sets, mut alarms) = (0u32, 0u32);
    for n in [4, 6, 8, 10, 15, 20, 30, 40, 60, 100] {
        for _ in 0..300 {
            let (a, b) = votes(&mut rng, n, 0.5);
            sets += 1;
            alarms += u32::from(vote_test(a, b, VOTE_LEVEL).conclusive);
        }
    }
    let rate = f64::from(alarms) / f64::from(sets);
    println!(
        "no preference: conclusive in {alarms} of {sets} vote sets ({:.2} %)",
        rate * 100.0
    );
    assert!(sets >= 2000 && rate <= 0.05, "{alarms} of {sets}");
}

#[test]
fn a_70_30_preference_is_told_with_the_advised_votes() {
    let mut rng = fastrand::Rng::with_seed(2929);
    let n = vote_test(0, 0, VOTE_LEVEL)
        .more_votes_for(TELLING_SHARE)
        .unwrap();
    let sets = 2000u32;
    let mut told = 0u32;
    for i in 0..sets {
        // Either run may be the preferred one.
        let p = if i % 2 == 0 {
            TELLING_SHARE
        } else {
            1.0 - TELLING_SHARE
        };
        let (a, b) = votes(&mut rng, n, p);
        let t = vote_test(a, b, VOTE_LEVEL);
        let right = t.leader() == Some(if p > 0.5 { Run::A } else { Run::B });
        told += u32::from(t.conclusive && right);
    }
    let power = f64::from(told) / f64::from(sets);
    println!(
        "70/30 preference, {n} votes: conclusive for the preferred run in {told} of {sets} ({:.1} %; exact power {:.1} %)",
        power * 100.0,
        vote_power(n, TELLING_SHARE, VOTE_LEVEL) * 100.0
    );
    assert!(power >= 0.75, "{told} of {sets}");
}

#[test]
fn the_exact_interval_covers_the_true_share() {
    let mut rng = fastrand::Rng::with_seed(7);
    let (mut sets, mut covered) = (0u32, 0u32);
    for p in [0.1, 0.3, 0.5, 0.7, 0.85, 0.95] {
        for n in [5, 10, 20, 40, 80] {
            for _ in 0..100 {
                let (a, b) = votes(&mut rng, n, p);
                let (low, high) = vote_test(a, b, VOTE_LEVEL).a_share;
                sets += 1;
                covered += u32::from(low <= p && p <= high);
            }
        }
    }
    let rate = f64::from(covered) / f64::from(sets);
    println!(
        "Clopper–Pearson 95 %: covers the true share in {covered} of {sets} ({:.2} %)",
        rate * 100.0
    );
    assert!(rate >= 0.95, "{covered} of {sets}");
}
