//! Read-only views of what the simulator did: ground truth per request id
//! (`GET /v1/ground-truth/{id}`), the records since a time (`GET /v1/ground-truth?since=`)
//! and Prometheus metrics (`GET /metrics`); and a plain 404 for SGLang's `GET /server_info`.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, ApiState};
use crate::sim::truth::TruthStore;

/// `GET /v1/ground-truth/{id}`.
pub async fn ground_truth(
    State(st): State<ApiState>,
    Path(id): Path<String>,
) -> Result<Json<crate::sim::truth::Truth>, ApiError> {
    st.truth.get(&id).map(Json).ok_or(ApiError {
        status: StatusCode::NOT_FOUND,
        message: format!(
            "No ground truth for `{id}` (unknown, still streaming, or evicted after {} records).",
            TruthStore::CAPACITY
        ),
        kind: "not_found_error",
        param: None,
        retry_after: None,
    })
}

/// The query of [`ground_truth_since`].
#[derive(Debug, Deserialize)]
pub struct SinceQuery {
    /// Records received at or after this wall-clock time (ms since the Unix epoch); all kept
    /// records when absent.
    pub since: Option<f64>,
    /// Records of this model only.
    pub model: Option<String>,
}

/// `GET /v1/ground-truth?since=<unix_ms>&model=<name>`: the finished records received since
/// then, in the order they were received (`{"object": "list", "data": [...]}`), for clients
/// that do not keep the `x-request-id` of their requests (peer benchmark tools).
pub async fn ground_truth_since(
    State(st): State<ApiState>,
    Query(q): Query<SinceQuery>,
) -> Json<Value> {
    let data = st
        .truth
        .since(q.since.unwrap_or(f64::NEG_INFINITY), q.model.as_deref());
    Json(json!({ "object": "list", "data": data }))
}

/// `GET /server_info`, SGLang's route for its engine's internals (SGLang's `bench_serving`
/// reads it after every run): 404, the simulator keeps none there (without this route the
/// static app's fallback would answer with `index.html`, which such a client cannot read).
pub async fn server_info() -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        message: "No SGLang server internals here: this is the ttft-studio reference endpoint."
            .into(),
        kind: "not_found_error",
        param: None,
        retry_after: None,
    }
}

/// `GET /metrics` in Prometheus text format.
pub async fn metrics(State(st): State<ApiState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        st.truth.prometheus(&st.engines.loads()),
    )
}
