//! [`ApiError`]: every failure of the API as an OpenAI-style error body
//! (`{"error": {"message", "type", "param", "code"}, "object": "error"}`) with its HTTP status
//! and, for a full queue, `Retry-After`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An OpenAI-style error response.
#[derive(Debug)]
pub struct ApiError {
    pub(super) status: StatusCode,
    pub(super) message: String,
    pub(super) kind: &'static str,
    pub(super) param: Option<&'static str>,
    pub(super) retry_after: Option<u32>,
}

impl ApiError {
    pub(super) fn bad(message: impl Into<String>, param: &'static str) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: Some(param),
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.status.as_u16()}, "object": "error"});
        let mut r = (self.status, Json(body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}
