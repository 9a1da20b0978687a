//! `GET /v1/transports`: the ports this server listens on, so a browser client can spread more
//! than 6 streams over several HTTP/1.1 origins (browsers open 6 connections per origin), or
//! use HTTP/2 over TLS, with no setup.

use axum::{Extension, Json};
use serde::Serialize;

/// The listeners of one server (same simulator, same ground truth behind each).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Transports {
    /// Plain HTTP/1.1 ports, the main one first.
    pub http1_ports: Vec<u16>,
    /// The HTTPS port (HTTP/2, self-signed certificate), if any.
    pub tls_port: Option<u16>,
}

/// `GET /v1/transports` (empty lists when the router runs without [`crate::serve_all`]).
pub async fn transports(known: Option<Extension<Transports>>) -> Json<Transports> {
    Json(known.map(|Extension(t)| t).unwrap_or_default())
}
