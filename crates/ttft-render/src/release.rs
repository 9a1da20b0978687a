//! When a chat UI hands a stream's text to its renderer ([`release`]): at once on each chunk's
//! arrival, batched to one update per animation frame, or smoothed.
//!
//! Smoothing releases text at a steady pace, character by character, as chat SDKs do to hide
//! bursty streams: a character is released no earlier than it arrived, no sooner than one pace
//! step after the one before it and, so that smoothing never falls far behind the network, no
//! later than `max_lag_ms` after it arrived. The first character may wait `prebuffer_ms`, a
//! buffer that lets the pace ride over the network's gaps; that wait is all it adds to the
//! first painted token. Smoothed characters are released in frames: each frame releases those
//! due by its end, as a page would on `requestAnimationFrame`.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A chunk of text as it reached the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrival {
    /// ms since the request's t0.
    pub at_ms: f64,
    /// Its text.
    pub text: String,
}

/// Text handed to the renderer.
#[derive(Debug, Clone, PartialEq)]
pub struct Release {
    /// ms since the request's t0.
    pub at_ms: f64,
    /// The text released (in order, the releases add up to the whole answer).
    pub text: String,
    /// When the oldest of its text arrived (ms since t0): `at_ms` minus it is what this
    /// release waited.
    pub oldest_arrival_ms: f64,
}

/// How smoothing paces the text.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Smoothing {
    /// The steady pace, characters per second.
    pub chars_per_s: f64,
    /// How long the first character waits to fill a buffer (ms); 0 = none.
    pub prebuffer_ms: f64,
    /// The longest any character waits (ms): text further behind is released at once.
    pub max_lag_ms: f64,
}

impl Smoothing {
    /// About 60 tokens/s of English (4 characters a token), a 100 ms buffer, at most 500 ms
    /// behind the network.
    pub const DEFAULT: Smoothing = Smoothing {
        chars_per_s: 240.0,
        prebuffer_ms: 100.0,
        max_lag_ms: 500.0,
    };

    /// The pace step between characters (ms).
    pub fn step_ms(&self) -> f64 {
        1000.0 / self.chars_per_s
    }

    /// Settings that can pace a stream, or what to change.
    pub fn check(&self) -> Result<(), SmoothingError> {
        if !(self.chars_per_s.is_finite() && self.chars_per_s >= 1.0) {
            return Err(SmoothingError::Pace(self.chars_per_s));
        }
        if !(self.prebuffer_ms.is_finite() && self.prebuffer_ms >= 0.0) {
            return Err(SmoothingError::Prebuffer(self.prebuffer_ms));
        }
        if !(self.max_lag_ms.is_finite() && self.max_lag_ms >= self.prebuffer_ms) {
            return Err(SmoothingError::MaxLag {
                max_lag_ms: self.max_lag_ms,
                prebuffer_ms: self.prebuffer_ms,
            });
        }
        Ok(())
    }
}

impl Default for Smoothing {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Smoothing settings that cannot pace a stream.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SmoothingError {
    /// The pace is not a number of at least 1 character per second.
    #[error("smoothing pace {0} characters/s: give at least 1 (240 ≈ 60 tokens/s)")]
    Pace(f64),
    /// The buffer is negative or not a number.
    #[error("smoothing buffer {0} ms: give 0 or more")]
    Prebuffer(f64),
    /// The longest wait is shorter than the buffer.
    #[error(
        "smoothing may hold text at most {max_lag_ms} ms, less than its {prebuffer_ms} ms buffer: give at least the buffer"
    )]
    MaxLag {
        /// The longest wait asked.
        max_lag_ms: f64,
        /// The buffer asked.
        prebuffer_ms: f64,
    },
}

/// When text reaches the renderer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Each chunk when it arrives.
    Immediate,
    /// The chunks that arrived during a frame, at its end.
    PerFrame {
        /// The frame (ms).
        frame_ms: f64,
    },
    /// At a steady pace ([`Smoothing`]), in frames.
    Smoothed {
        /// The pace.
        smoothing: Smoothing,
        /// The frame (ms).
        frame_ms: f64,
    },
}

/// The releases of `arrivals` (in arrival order) under `pacing`: never before the text
/// arrived, in order, adding up to the whole text. Frames start at 0 (the request's t0).
/// Empty chunks release nothing.
pub fn release(arrivals: &[Arrival], pacing: Pacing) -> Vec<Release> {
    let arrivals: Vec<&Arrival> = arrivals.iter().filter(|a| !a.text.is_empty()).collect();
    match pacing {
        Pacing::Immediate => arrivals
            .iter()
            .map(|a| Release {
                at_ms: a.at_ms,
                text: a.text.clone(),
                oldest_arrival_ms: a.at_ms,
            })
            .collect(),
        Pacing::PerFrame { frame_ms } => {
            let timed = arrivals
                .iter()
                .flat_map(|a| a.text.chars().map(move |c| (c, a.at_ms, a.at_ms)));
            in_frames(timed, frame_ms)
        }
        Pacing::Smoothed {
            smoothing,
            frame_ms,
        } => in_frames(paced(&arrivals, smoothing), frame_ms),
    }
}

/// Each character with its arrival and its paced release time.
fn paced<'a>(
    arrivals: &'a [&'a Arrival],
    s: Smoothing,
) -> impl Iterator<Item = (char, f64, f64)> + 'a {
    let step = s.step_ms();
    let max_lag = s.max_lag_ms.max(s.prebuffer_ms);
    let mut last: Option<f64> = None;
    arrivals
        .iter()
        .flat_map(|a| a.text.chars().map(move |c| (c, a.at_ms)))
        .map(move |(c, arrived)| {
            let due = match last {
                None => arrived + s.prebuffer_ms,
                Some(prev) => (prev + step).max(arrived).min(arrived + max_lag),
            };
            last = Some(due);
            (c, arrived, due)
        })
}

/// Groups characters `(c, arrived, due)` into one release per frame: each at the end of the
/// frame its characters fall due in.
fn in_frames(chars: impl Iterator<Item = (char, f64, f64)>, frame_ms: f64) -> Vec<Release> {
    let frame_ms = if frame_ms.is_finite() && frame_ms > 0.0 {
        frame_ms
    } else {
        crate::FRAME_MS
    };
    let mut out: Vec<Release> = Vec::new();
    for (c, arrived, due) in chars {
        let frame_end = ((due / frame_ms).floor() + 1.0) * frame_ms;
        match out.last_mut() {
            Some(r) if r.at_ms == frame_end => r.text.push(c),
            _ => out.push(Release {
                at_ms: frame_end,
                text: c.to_string(),
                oldest_arrival_ms: arrived,
            }),
        }
    }
    out
}

/// The gaps between consecutive releases (ms): what a reader sees as pauses.
pub fn gaps_ms(releases: &[Release]) -> Vec<f64> {
    releases
        .windows(2)
        .map(|w| w[1].at_ms - w[0].at_ms)
        .collect()
}
