//! The reference endpoint's HTTP API: OpenAI chat and text completions, Anthropic messages,
//! models, ground truth and metrics, with OpenAI-style errors.
//!
//! The routes are put together by [`crate::api_router`]. This module holds the state they
//! share ([`ApiState`]), the limits, and `GET /v1/models`; the rest is split by concern:
//!
//! - `generate`: the three generation handlers ([`chat`], [`completions`], [`messages`]): read
//!   and check the request, plan it, queue it on the model's engine, answer;
//! - `validate`: reading the JSON body and checking the fields every API shares;
//! - `stream`: the response being generated, framed as a stream or collected into one body,
//!   recording ground truth for every chunk it hands over;
//! - `truth`: ground truth by request id or since a time, and Prometheus metrics;
//! - `transports`: the ports the server listens on (HTTP/1.1 shards, HTTP/2 over TLS);
//! - `error`: [`ApiError`], the OpenAI-style error body.

mod error;
mod generate;
mod stream;
mod transports;
mod truth;
mod validate;

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use serde_json::{Value, json};

use crate::sim::engine::Engines;
use crate::sim::prefix_cache::PrefixCache;
use crate::sim::profile::profiles;
use crate::sim::truth::TruthStore;

pub use error::ApiError;
pub use generate::{chat, completions, messages};
pub use transports::{Transports, transports};
pub use truth::{SinceQuery, ground_truth, ground_truth_since, metrics, server_info};

/// Largest request body accepted.
pub const MAX_BODY: usize = 1024 * 1024;
/// Largest `max_tokens`.
pub const MAX_TOKENS: u64 = 32_768;

/// Shared state of the API.
#[derive(Clone)]
pub struct ApiState {
    /// Engines by model.
    pub engines: Engines,
    /// Ground truth.
    pub truth: TruthStore,
    /// Server seed.
    pub seed: u64,
    /// The prefix caches of the models that keep one, by model name.
    pub prefix_caches: Arc<Mutex<HashMap<&'static str, PrefixCache>>>,
    counter: Arc<AtomicU64>,
}

impl ApiState {
    /// Fresh state with a seed.
    pub fn new(seed: u64) -> Self {
        Self {
            engines: Engines::default(),
            truth: TruthStore::default(),
            seed,
            prefix_caches: Arc::default(),
            counter: Arc::new(AtomicU64::new(0)),
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `GET /v1/models`: the profiles.
pub async fn models() -> Json<Value> {
    let data: Vec<Value> = profiles()
        .iter()
        .map(|p| json!({"id": p.name, "object": "model", "created": 0, "owned_by": "ttft-studio", "description": p.description, "tokens_per_chunk": p.tokens_per_chunk, "behaviour": p.behaviour}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}
