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
