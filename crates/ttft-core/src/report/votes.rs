//! Blind review votes as a run keeps them, each from its own side ([`crate::review`] pairs
//! the streams and tallies them).

use serde::{Deserialize, Serialize};

/// What the reviewer preferred, from the side of the run that keeps the vote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preference {
    /// This run felt faster.
    This,
    /// The other run felt faster.
    Other,
    /// The reviewer could not tell them apart.
    Same,
}

/// One blind vote, kept by each of the two runs (each from its own side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlindVote {
    /// When the vote was cast (ms since the Unix epoch).
    pub at_unix_ms: f64,
    /// The other run's title when the vote was cast.
    pub opponent: String,
    /// The other run's [`crate::report::Report::created_unix_ms`]: with the title, which run it was.
    pub opponent_created_unix_ms: f64,
    /// The request of this run that played.
    pub this_request: u32,
    /// The request of the other run that played.
    pub other_request: u32,
    /// Which felt faster.
    pub preferred: Preference,
}
