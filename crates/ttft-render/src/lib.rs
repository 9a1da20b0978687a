//! How a chat UI draws a stream, without a screen (#31): the part of the rendering lab that
//! needs no browser, so it can be tested and replayed deterministically.
//!
//! A chat UI does two things with a streamed answer, and products differ in both:
//! - **when** it hands text to its renderer ([`release()`]): at once, batched to one update per
//!   animation frame, or *smoothed* (released at a steady pace, as chat SDKs' smoothing does);
//! - **how** it renders what it has ([`markdown`]): re-parse the whole answer's markdown on every
//!   update (so a token's cost grows with the answer's length), or append to the last open
//!   block (the cost stays flat).
//!
//! A [`Strategy`] is one choice of both, the four the studio offers. The browser's surface
//! (the app) applies the [`markdown::Update`]s to the DOM and stamps when they are painted;
//! the network stamps stay in the stamping worker, so nothing here can move them.

pub mod markdown;
pub mod release;

use serde::{Deserialize, Serialize};

pub use markdown::{RenderMode, Surface, Update, render_html};
pub use release::{Arrival, Pacing, Release, Smoothing, SmoothingError, release};

/// How a chat surface draws a stream: when text is released and how it is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Strategy {
    /// Every chunk re-parses the whole answer (the common one).
    RerenderAll,
    /// Every chunk re-renders only the last open block.
    Incremental,
    /// Chunks batched to one update per animation frame, each a whole re-render (throttled
    /// re-rendering, as products that batch do).
    PerFrame,
    /// Text released at a steady pace ([`Smoothing`]), rendered incrementally.
    Smoothed(Smoothing),
}

impl Strategy {
    /// The four strategies, smoothing at its defaults.
    pub const ALL: [Strategy; 4] = [
        Strategy::RerenderAll,
        Strategy::Incremental,
        Strategy::PerFrame,
        Strategy::Smoothed(Smoothing::DEFAULT),
    ];

    /// A stable id (settings, links, `data-testid`s).
    pub fn id(self) -> &'static str {
        match self {
            Strategy::RerenderAll => "rerender-all",
            Strategy::Incremental => "incremental",
            Strategy::PerFrame => "per-frame",
            Strategy::Smoothed(_) => "smoothed",
        }
    }

    /// Its name on the page.
    pub fn label(self) -> &'static str {
        match self {
            Strategy::RerenderAll => "re-render all",
            Strategy::Incremental => "incremental",
            Strategy::PerFrame => "per frame",
            Strategy::Smoothed(_) => "smoothed",
        }
    }

    /// How it renders.
    pub fn mode(self) -> RenderMode {
        match self {
            Strategy::RerenderAll | Strategy::PerFrame => RenderMode::All,
            Strategy::Incremental | Strategy::Smoothed(_) => RenderMode::Incremental,
        }
    }

    /// When it releases text, frames of `frame_ms`.
    pub fn pacing(self, frame_ms: f64) -> Pacing {
        match self {
            Strategy::RerenderAll | Strategy::Incremental => Pacing::Immediate,
            Strategy::PerFrame => Pacing::PerFrame { frame_ms },
            Strategy::Smoothed(s) => Pacing::Smoothed {
                smoothing: s,
                frame_ms,
            },
        }
    }
}

/// A 60 Hz display's frame (ms): the lab's frames when it replays without a screen.
pub const FRAME_MS: f64 = 1000.0 / 60.0;
