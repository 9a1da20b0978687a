//! ttft-server: serves the built studio and the reference endpoint.
//!
//! [`app`] builds the router: the OpenAI-compatible simulator under `/v1` (see [`sim`] for the
//! latency model), ground truth at `/v1/ground-truth/{id}` (and the records since a time at
//! `/v1/ground-truth?since=`), Prometheus metrics at `/metrics`,
//! and the app's static files with `Cross-Origin-Opener-Policy`/`-Embedder-Policy` so the page
//! is cross-origin isolated and `performance.now()` has 5 µs resolution. The app comes from
//! a directory (`--dist`) or, built with feature `embed-app`, from the binary itself
//! ([`assets`]).

pub mod api;
pub mod assets;
pub mod sim;
pub mod tls;

use std::future::IntoFuture;
use std::path::PathBuf;

use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use tower::Layer;
use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
use tower_http::services::{ServeDir, ServeFile};
use tower_http::set_header::SetResponseHeaderLayer;

pub use api::ApiState;

/// What the server serves.
#[derive(Clone)]
pub struct Config {
    /// The built app (trunk's `dist/`). `None`: the app embedded in this binary (feature
    /// `embed-app`), else a 404 that says how to build it.
    pub dist: Option<PathBuf>,
    /// Simulator seed.
    pub seed: u64,
}

/// The reference endpoint's routes (CORS open, Resource Timing visible).
pub fn api_router(state: ApiState) -> Router {
    let cors = CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([Method::GET, Method::POST, Method::OPTIONS])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([HeaderName::from_static("x-request-id"), header::RETRY_AFTER])
        .max_age(std::time::Duration::from_secs(600));
    Router::new()
        .route("/v1/chat/completions", post(api::chat))
        .route("/v1/completions", post(api::completions))
        .route("/v1/messages", post(api::messages))
        .route("/v1/models", get(api::models))
        .route("/v1/transports", get(api::transports))
        .route("/v1/ground-truth", get(api::ground_truth_since))
        .route("/v1/ground-truth/{id}", get(api::ground_truth))
        .route("/metrics", get(api::metrics))
        .route("/server_info", get(api::server_info))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(state)
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("timing-allow-origin"),
            HeaderValue::from_static("*"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("cross-origin-resource-policy"),
            HeaderValue::from_static("cross-origin"),
        ))
        .layer(cors)
}

/// The whole server: API plus the app's static files (from `config.dist`, else embedded), with
/// the same headers either way: COOP/COEP/CORP here, the cache policy of [`assets`].
pub fn app(config: Config) -> Router {
    let state = ApiState::new(config.seed);
    let router = api_router(state);
    let router = match (config.dist, assets::embedded()) {
        (Some(dist), _) => {
            let index = dist.join("index.html");
            let files = ServeDir::new(dist).fallback(ServeFile::new(index));
            router.fallback_service(
                axum::middleware::from_fn(assets::dist_cache_control).layer(files),
            )
        }
        (None, Some(files)) => router.fallback(
            move |method: Method, uri: axum::http::Uri, headers: axum::http::HeaderMap| async move {
                assets::serve_embedded(files, &method, uri.path(), &headers)
            },
        ),
        (None, None) => router.fallback(|| async {
            (
                axum::http::StatusCode::NOT_FOUND,
                "the app is not built: run `cargo xtask serve`, or build the server with `cargo xtask dist`",
            )
        }),
    };
    router
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("cross-origin-opener-policy"),
            HeaderValue::from_static("same-origin"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("cross-origin-embedder-policy"),
            HeaderValue::from_static("require-corp"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            HeaderName::from_static("cross-origin-resource-policy"),
            HeaderValue::from_static("same-origin"),
        ))
}

/// Serves [`app`] on an already bound listener until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, config: Config) -> std::io::Result<()> {
    serve_many(vec![listener], config).await
}

/// Serves one [`app`] (one simulator, one ground-truth store) on several listeners: browsers
/// open at most 6 HTTP/1.1 connections per origin, so each extra port is another origin the
/// studio can shard requests over.
pub async fn serve_many(
    listeners: Vec<tokio::net::TcpListener>,
    config: Config,
) -> std::io::Result<()> {
    serve_all(listeners, None, config).await
}

/// Like [`serve_many`], plus an optional HTTPS listener that speaks HTTP/2 (one connection
/// carries any number of streams) with a self-signed certificate made at start.
pub async fn serve_all(
    listeners: Vec<tokio::net::TcpListener>,
    tls: Option<std::net::TcpListener>,
    config: Config,
) -> std::io::Result<()> {
    let transports = api::Transports {
        http1_ports: listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .map(|a| a.port())
            .collect(),
        tls_port: tls
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port()),
    };
    let router = app(config).layer(axum::Extension(transports));
    let mut tasks = tokio::task::JoinSet::new();
    for l in listeners {
        // Every chunk must leave at once: no Nagle delay on small SSE writes.
        let l = l.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        tasks.spawn(axum::serve(l, router.clone()).into_future());
    }
    if let Some(l) = tls {
        let (cert, key) = tls::self_signed()?;
        let config = axum_server::tls_rustls::RustlsConfig::from_pem(cert, key).await?;
        l.set_nonblocking(true)?;
        let acceptor = axum_server::tls_rustls::RustlsAcceptor::new(config)
            .acceptor(axum_server::accept::NoDelayAcceptor::new());
        let server = axum_server::from_tcp(l)?.acceptor(acceptor);
        let make = router.clone().into_make_service();
        tasks.spawn(async move { server.serve(make).await });
    }
    while let Some(r) = tasks.join_next().await {
        r.map_err(std::io::Error::other)??;
    }
    Ok(())
}
