//! Read-only views of what the simulator did: ground truth per request id
//! (`GET /v1/ground-truth/{id}`) and Prometheus metrics (`GET /metrics`).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

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

/// `GET /metrics` in Prometheus text format.
pub async fn metrics(State(st): State<ApiState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        st.truth.prometheus(&st.engines.loads()),
    )
}
