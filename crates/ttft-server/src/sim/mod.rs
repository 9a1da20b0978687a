//! The reference endpoint's simulator: profiles, a continuous-batching scheduler, a real-time
//! engine, generation plans, per-server framing and ground truth.

pub mod engine;
pub mod framing;
pub mod plan;
pub mod prefix_cache;
pub mod profile;
pub mod scheduler;
pub mod text;
pub mod truth;
