//! Blind review: two recorded streams played side by side at their true timing, labelled only
//! "left" and "right" (which run plays where is random), and the reviewer's vote on which felt
//! faster, kept with both runs ([`crate::report::Report::votes`]) so it travels in exports and
//! share links. [`crate::compare::vote_summary`] sets the votes beside the reading QoE.
//!
//! **Which requests play.** Each run's candidates are its measured, successful requests that
//! carry replay text. When both runs have candidates with the same index (in runs of one
//! scenario, the same prompt), the pair is one of those indices; otherwise it is the
//! requests of the same rank by TTFT in each run (with one pair, each run's median, as
//! [`crate::run_stats::RunStats::median_replay`]).
//!
//! **Randomness.** Everything random comes from the caller's `seed`, mixed by SplitMix64
//! (so poor seeds, such as consecutive numbers, still spread): the mixed value's lowest bit
//! puts run A on the left (0) or the right (1), the rest picks the pair. The same seed gives
//! the same pair, so a review can be replayed and tested.
//!
//! **What the votes tell.** [`vote_test`] is the exact binomial test of the decisive votes
//! ("same" votes left out) against no preference, with an exact interval of the share
//! preferring the leader and how many more votes would tell a 70/30 preference; the studio
//! writes a preference only when the test is conclusive ([`VoteTest::verdict`]).

use serde::{Deserialize, Serialize};

pub use crate::report::votes::{BlindVote, Preference};
use crate::report::{ReplayPiece, Report, RequestRecord};

/// One of the two runs under review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Run {
    /// The first run given to [`pair_for_review`].
    A,
    /// The second.
    B,
}

/// The reviewer's answer, in what they saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Choice {
    /// The left pane felt faster.
    Left,
    /// The right pane felt faster.
    Right,
    /// No difference.
    Same,
}

/// One pane of a blind review.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewStream {
    /// Which run it comes from (not shown until the vote).
    pub run: Run,
    /// The request's index in its run.
    pub request: u32,
    /// What to play (times from the request's send).
    pub replay: Vec<ReplayPiece>,
}

/// Two streams to play side by side, in the order shown.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewPair {
    /// The left pane.
    pub left: ReviewStream,
    /// The right pane.
    pub right: ReviewStream,
    /// Both requests have the same index (in runs of one scenario, the same prompt).
    pub same_index: bool,
}

/// Votes for each side between two runs, as [`tally`] counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VoteTally {
    /// Votes for the first run.
    pub for_a: u32,
    /// Votes for the second run.
    pub for_b: u32,
    /// Votes that found no difference.
    pub same: u32,
}

impl VoteTally {
    /// Votes cast.
    pub fn total(&self) -> u32 {
        self.for_a + self.for_b + self.same
    }
}

/// SplitMix64's output for `seed`.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A run's requests a review can play: measured, successful, with replay text.
fn candidates(r: &Report) -> Vec<&RequestRecord> {
    r.measured()
        .filter(|q| q.outcome.is_ok() && !q.replay.is_empty())
        .collect()
}

/// Chooses the two streams to play and their sides (see the module doc); `None` when a run
/// has no stream to play.
pub fn pair_for_review(a: &Report, b: &Report, seed: u64) -> Option<ReviewPair> {
    let r = mix(seed);
    let a_on_left = r & 1 == 0;
    let pick = r >> 1;
    let (ca, cb) = (candidates(a), candidates(b));
    if ca.is_empty() || cb.is_empty() {
        return None;
    }
    let common: Vec<(&RequestRecord, &RequestRecord)> = ca
        .iter()
        .filter_map(|qa| Some((*qa, *cb.iter().find(|qb| qb.index == qa.index)?)))
        .collect();
    let (qa, qb, same_index) = if common.is_empty() {
        fn by_ttft(mut v: Vec<&RequestRecord>) -> Vec<&RequestRecord> {
            let t = |q: &RequestRecord| q.metrics.ttft_ms.unwrap_or(f64::MAX);
            v.sort_by(|x, y| t(x).total_cmp(&t(y)).then(x.index.cmp(&y.index)));
            v
        }
        let (sa, sb) = (by_ttft(ca), by_ttft(cb));
        let m = sa.len().min(sb.len());
        let j = (pick % m as u64) as usize;
        // The middle of the j-th of m equal slices of each run's TTFT order.
        let at = |len: usize| (2 * j + 1) * len / (2 * m);
        (sa[at(sa.len())], sb[at(sb.len())], false)
    } else {
        let (qa, qb) = common[(pick % common.len() as u64) as usize];
        (qa, qb, true)
    };
    let stream = |run: Run, q: &RequestRecord| ReviewStream {
        run,
        request: q.index,
        replay: q.replay.clone(),
    };
    let (sa, sb) = (stream(Run::A, qa), stream(Run::B, qb));
    let (left, right) = if a_on_left { (sa, sb) } else { (sb, sa) };
    Some(ReviewPair {
        left,
        right,
        same_index,
    })
}

impl ReviewPair {
    /// Whether run A plays on the left.
    pub fn a_on_left(&self) -> bool {
        self.left.run == Run::A
    }

    /// The stream run `run` plays.
    pub fn stream(&self, run: Run) -> &ReviewStream {
        if self.left.run == run {
            &self.left
        } else {
            &self.right
        }
    }

    /// When the later stream's last piece arrives (ms from the sends).
    pub fn end_ms(&self) -> f64 {
        [&self.left, &self.right]
            .iter()
            .filter_map(|s| s.replay.last().map(|p| p.at_ms))
            .fold(0.0, f64::max)
    }

    /// The run the reviewer preferred, `None` for "same".
    pub fn preferred(&self, choice: Choice) -> Option<Run> {
        match choice {
            Choice::Left => Some(self.left.run),
            Choice::Right => Some(self.right.run),
            Choice::Same => None,
        }
    }

    /// The vote each run keeps, `(a's, b's)`, for the reviewer's `choice` cast at `at_unix_ms`.
    pub fn votes(
        &self,
        choice: Choice,
        a: &Report,
        b: &Report,
        at_unix_ms: f64,
    ) -> (BlindVote, BlindVote) {
        let winner = self.preferred(choice);
        let side = |me: Run, other: &Report| BlindVote {
            at_unix_ms,
            opponent: other.title.clone(),
            opponent_created_unix_ms: other.created_unix_ms,
            this_request: self.stream(me).request,
            other_request: self
                .stream(if me == Run::A { Run::B } else { Run::A })
                .request,
            preferred: match winner {
                None => Preference::Same,
                Some(w) if w == me => Preference::This,
                Some(_) => Preference::Other,
            },
        };
        (side(Run::A, b), side(Run::B, a))
    }
}

/// Whether `vote` was cast against the run titled `title`, made at `created_unix_ms`: the same
/// creation time and, for runs without one (0, some imports), the same title. A renamed run
/// and a copy opened from a share link (same creation time) keep their votes.
fn against(vote: &BlindVote, (title, created_unix_ms): (&str, f64)) -> bool {
    vote.opponent_created_unix_ms == created_unix_ms
        && (created_unix_ms != 0.0 || vote.opponent == title)
}

/// The votes run `a` keeps against run `b` (given by title and creation time, see `against`).
pub fn tally(a: &Report, b_title_created: (&str, f64)) -> VoteTally {
    let mut t = VoteTally::default();
    for v in a.votes.iter().filter(|v| against(v, b_title_created)) {
        match v.preferred {
            Preference::This => t.for_a += 1,
            Preference::Other => t.for_b += 1,
            Preference::Same => t.same += 1,
        }
    }
    t
}

/// The votes between two runs, from both: `a`'s, plus any of `b`'s that `a` does not hold (by
/// the time cast), as when one of them was opened from a link made before some votes.
pub fn tally_both(a: &Report, b: &Report) -> VoteTally {
    let mut t = tally(a, (&b.title, b.created_unix_ms));
    let a_key = (a.title.as_str(), a.created_unix_ms);
    let b_key = (b.title.as_str(), b.created_unix_ms);
    for v in b.votes.iter().filter(|v| against(v, a_key)) {
        let held = a
            .votes
            .iter()
            .any(|w| w.at_unix_ms == v.at_unix_ms && against(w, b_key));
        if !held {
            match v.preferred {
                Preference::This => t.for_b += 1,
                Preference::Other => t.for_a += 1,
                Preference::Same => t.same += 1,
            }
        }
    }
    t
}

/// The confidence a verdict on votes is held to unless the caller asks for another: 95 %.
pub const VOTE_LEVEL: f64 = 0.95;

/// The preference [`VoteTest::more_votes_for`] is asked about in the studio's sentences: 70
/// reviewers in 100 preferring one run.
pub const TELLING_SHARE: f64 = 0.7;

/// The chance of a conclusive test [`VoteTest::more_votes_for`] plans for: 80 %.
pub const VOTE_POWER: f64 = 0.8;

/// Most decisive votes [`VoteTest::more_votes_for`] plans for: beyond them it says "more than
/// 1,000" (`None`).
pub const MAX_PLANNED_VOTES: u32 = 1000;

/// What the decisive votes between two runs tell: the exact two-sided binomial test of "the
/// reviewers have no preference" (each decisive vote is for A with probability ½), and an exact
/// (Clopper–Pearson) interval of the share of reviewers preferring A. Votes that found no
/// difference ("same") are not counted: they say nothing about which run is preferred.
///
/// **The p-value** is the probability, with no preference, of a split at least as uneven as
/// the one observed: twice the smaller tail, capped at 1. Under p = ½ the distribution is
/// symmetric, so this is also the sum of the probabilities of every split no more likely than
/// the observed one (the other usual definition): both give the same value here.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VoteTest {
    /// Decisive votes for run A.
    pub for_a: u32,
    /// Decisive votes for run B.
    pub for_b: u32,
    /// The confidence asked for (0.95): the test is conclusive when `p_value ≤ 1 − level`.
    pub level: f64,
    /// The exact two-sided p-value (1 without decisive votes).
    pub p_value: f64,
    /// Whether the votes show a preference at `level`.
    pub conclusive: bool,
    /// The share of reviewers preferring A, Clopper–Pearson at `level`: `(low, high)`, 0–1
    /// (`(0, 1)` without decisive votes).
    pub a_share: (f64, f64),
}

/// The exact binomial test of `for_a` against `for_b` decisive votes at confidence `level`
/// (0.95 = [`VOTE_LEVEL`]; a level outside (0, 1) is taken as that). See [`VoteTest`].
pub fn vote_test(for_a: u32, for_b: u32, level: f64) -> VoteTest {
    let level = if level > 0.0 && level < 1.0 {
        level
    } else {
        VOTE_LEVEL
    };
    let p_value = two_sided_p(for_a.min(for_b), for_a + for_b);
    VoteTest {
        for_a,
        for_b,
        level,
        p_value,
        conclusive: for_a + for_b > 0 && p_value <= 1.0 - level,
        a_share: clopper_pearson(for_a, for_a + for_b, level),
    }
}

/// The exact two-sided p-value of `k` (the smaller side) of `n` under p = ½.
fn two_sided_p(k: u32, n: u32) -> f64 {
    use statrs::distribution::{Binomial, DiscreteCDF};
    if n == 0 {
        return 1.0;
    }
    Binomial::new(0.5, u64::from(n)).map_or(1.0, |b| (2.0 * b.cdf(u64::from(k))).min(1.0))
}

/// The Clopper–Pearson interval of a share from `k` successes in `n`, at confidence `level`.
fn clopper_pearson(k: u32, n: u32, level: f64) -> (f64, f64) {
    use statrs::distribution::{Beta, ContinuousCDF};
    let alpha = 1.0 - level;
    let (kf, nf) = (f64::from(k), f64::from(n));
    let low = if k == 0 {
        0.0
    } else {
        Beta::new(kf, nf - kf + 1.0).map_or(0.0, |b| b.inverse_cdf(alpha / 2.0))
    };
    let high = if k >= n {
        1.0
    } else {
        Beta::new(kf + 1.0, nf - kf).map_or(1.0, |b| b.inverse_cdf(1.0 - alpha / 2.0))
    };
    (low, high)
}

/// The chance that the exact two-sided test at confidence `level` is conclusive with `n`
/// decisive votes when a share `share` of reviewers prefers one run.
pub fn vote_power(n: u32, share: f64, level: f64) -> f64 {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let alpha = 1.0 - level;
    // The largest smaller side that is conclusive: the test rejects k ≤ c or k ≥ n − c.
    // (The p-value grows with c: a binary search for the first c that is not conclusive.)
    let (mut lo, mut hi) = (0, n / 2 + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if two_sided_p(mid, n) <= alpha {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let Some(c) = lo.checked_sub(1) else {
        return 0.0;
    };
    let Ok(b) = Binomial::new(share, u64::from(n)) else {
        return 0.0;
    };
    let (c, n) = (u64::from(c), u64::from(n));
    // P(X ≤ c) + P(X ≥ n − c); the tails do not overlap since 2c < n.
    b.cdf(c) + if n - c == 0 { 1.0 } else { b.sf(n - c - 1) }
}

impl VoteTest {
    /// Decisive votes.
    pub fn decisive(&self) -> u32 {
        self.for_a + self.for_b
    }

    /// The run with more decisive votes, `None` on a tie.
    pub fn leader(&self) -> Option<Run> {
        match self.for_a.cmp(&self.for_b) {
            std::cmp::Ordering::Greater => Some(Run::A),
            std::cmp::Ordering::Less => Some(Run::B),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// The interval of the share preferring the leader (A on a tie), 0–1.
    pub fn leader_share(&self) -> (f64, f64) {
        let (low, high) = self.a_share;
        if self.leader() == Some(Run::B) {
            (1.0 - high, 1.0 - low)
        } else {
            (low, high)
        }
    }

    /// About how many more decisive votes would make a test at this level conclusive in
    /// [`VOTE_POWER`] (80 %) of reviews when a share `share` of reviewers (0.7: a 70/30
    /// preference) prefers one run: the fewest decisive votes in all whose exact power is at
    /// least that, less those already cast (0 when they are enough). `None` when more than
    /// [`MAX_PLANNED_VOTES`] would be needed in all (a share of ½ can never be told).
    pub fn more_votes_for(&self, share: f64) -> Option<u32> {
        if !(share.is_finite() && share > 0.0 && share < 1.0) {
            return None;
        }
        let needed =
            (1..=MAX_PLANNED_VOTES).find(|&n| vote_power(n, share, self.level) >= VOTE_POWER)?;
        Some(needed.saturating_sub(self.decisive()))
    }
}

/// A p-value as the studio writes it: `p = 0.34`, `p = 0.004`, `p < 0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_owned()
    } else if p < 0.01 {
        format!("p = {p:.3}")
    } else {
        format!("p = {p:.2}")
    }
}

/// A confidence level in percent: `95 %`, `98.3 %`.
pub fn level_text(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 0.05 {
        format!("{pct:.0} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// A preference as a split of 100 (0.7 → `70/30`).
fn share_text(share: f64) -> String {
    let s = (share * 100.0).round();
    format!("{s:.0}/{:.0}", 100.0 - s)
}

/// ` (1 found no difference, not counted)`, empty without such votes.
pub fn same_note(same: u32) -> String {
    match same {
        0 => String::new(),
        s => format!(" ({s} found no difference, not counted)"),
    }
}

impl VoteTest {
    /// What more votes would tell, in words: `about 30 more votes would tell a 70/30
    /// preference` ([`VoteTest::more_votes_for`] of [`TELLING_SHARE`]); `with` names where the
    /// votes are cast (empty for the two runs compared, ` with “model-a”` among more).
    pub fn more_votes_text(&self, with: &str) -> String {
        let share = share_text(TELLING_SHARE);
        match self.more_votes_for(TELLING_SHARE) {
            Some(0) => format!(
                "after {} decisive votes{with} a {share} preference would usually have shown, so any preference is likely milder",
                self.decisive()
            ),
            Some(1) => format!("about 1 more vote{with} would tell a {share} preference"),
            Some(m) => format!("about {m} more votes{with} would tell a {share} preference"),
            None => format!(
                "more than {MAX_PLANNED_VOTES} votes would be needed to tell a {share} preference"
            ),
        }
    }

    /// The leader's share as an interval in words: `95 % interval of the share preferring it:
    /// 62–98 %`.
    pub fn share_text(&self) -> String {
        let (low, high) = self.leader_share();
        // Whole percents, but never 0 or 100 for a bound that is not.
        let pct = |x: f64| {
            let whole = format!("{:.0}", x * 100.0);
            if (whole == "0" && x > 0.0) || (whole == "100" && x < 1.0) {
                format!("{:.1}", x * 100.0)
            } else {
                whole
            }
        };
        format!(
            "{} interval of the share preferring it: {}–{} %",
            level_text(self.level),
            pct(low),
            pct(high)
        )
    }

    /// The reviewers' verdict between runs A and B (named `names`), its uncertainty said:
    /// a preference only when the test is conclusive (`Reviewers preferred “model-a” 14–2
    /// (p = 0.004; 95 % interval of the share preferring it: 62–98 %)`), else a lean and what
    /// more votes would tell (`Reviewers leaned towards “model-a” 7–3, not yet conclusive
    /// (p = 0.34): about 30 more votes would tell a 70/30 preference`). `same` votes found no
    /// difference. No closing stop: the comparison goes on with the reading QoE.
    pub fn verdict(&self, names: [&str; 2], same: u32) -> String {
        let note = same_note(same);
        let Some(leader) = self.leader() else {
            if self.decisive() == 0 {
                return match same {
                    0 => "No reviewer has voted yet".to_owned(),
                    1 => "Reviewers found no difference in 1 vote".to_owned(),
                    s => format!("Reviewers found no difference in {s} votes"),
                };
            }
            return format!(
                "Reviewers were split {}–{}{note}: {}",
                self.for_a,
                self.for_b,
                self.more_votes_text("")
            );
        };
        let (name, w, l) = match leader {
            Run::A => (names[0], self.for_a, self.for_b),
            Run::B => (names[1], self.for_b, self.for_a),
        };
        if self.conclusive {
            let counted = match same {
                0 => String::new(),
                s => format!("; {s} found no difference, not counted"),
            };
            format!(
                "Reviewers preferred “{name}” {w}–{l} ({}; {}{counted})",
                p_text(self.p_value),
                self.share_text()
            )
        } else {
            format!(
                "Reviewers leaned towards “{name}” {w}–{l}{note}, not yet conclusive ({}): {}",
                p_text(self.p_value),
                self.more_votes_text("")
            )
        }
    }
}
