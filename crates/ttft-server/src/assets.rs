//! The app's static files: the rules both ways of serving them share (content type, cache
//! policy) and the embedded app (feature `embed-app`: trunk's `dist/` compiled into the binary
//! by `build.rs`, so one file serves the studio).
//!
//! Cache policy: trunk names every file whose content it fingerprints `name-<hash>.ext` (the
//! wasm, its JS glue, the CSS), so a new build has new names and those can be kept for a year
//! (`immutable`). Everything else (`index.html`, the unknown paths that fall back to it,
//! `echarts.js`, `public/…`, a future `sw.js` or `manifest.webmanifest`) keeps its name across
//! builds and is `no-cache`: the browser may keep it but asks first (ETag or Last-Modified).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

/// `Cache-Control` of a file whose name trunk fingerprinted.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of every other file: kept, but revalidated before each use.
pub const NO_CACHE: &str = "no-cache";

/// One file of the embedded app.
#[derive(Debug)]
pub struct Asset {
    /// Path under the app's root, `/`-separated, no leading `/` (`index.html`, `public/x.js`).
    pub path: &'static str,
    /// Strong `ETag` (quoted), a hash of the content made at build time.
    pub etag: &'static str,
    /// The content.
    pub bytes: &'static [u8],
}

/// The app compiled into this binary (feature `embed-app`), if any.
pub fn embedded() -> Option<&'static [Asset]> {
    #[cfg(feature = "embed-app")]
    return Some(app_files::FILES);
    #[cfg(not(feature = "embed-app"))]
    None
}

/// `build.rs`'s table: `FILES`, sorted by path, each file `include_bytes!`d from `dist/`.
#[cfg(feature = "embed-app")]
mod app_files {
    use super::Asset;
    include!(concat!(env!("OUT_DIR"), "/embedded_app.rs"));
}

/// Whether trunk fingerprinted this file: its name ends in `-<12 to 16 hex digits>` before the
/// extension, after which only `_bg` (wasm-bindgen's wasm) may follow
/// (`main-3e2e0eb07458f0df.css`, `ttft-studio-ca4e98ec65c8b8e0_bg.wasm`).
pub fn is_fingerprinted(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((stem, _ext)) = name.rsplit_once('.') else {
        return false;
    };
    let stem = stem.strip_suffix("_bg").unwrap_or(stem);
    let Some((base, hash)) = stem.rsplit_once('-') else {
        return false;
    };
    !base.is_empty()
        && (12..=16).contains(&hash.len())
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `Cache-Control` for the file sent (its path, not the one asked for: an unknown path gets
/// `index.html`, which is `no-cache`).
pub fn cache_control(served: &str) -> &'static str {
    if is_fingerprinted(served) {
        IMMUTABLE
    } else {
        NO_CACHE
    }
}

/// `Content-Type` by extension, the guess `ServeDir` makes too (`application/wasm`,
/// `text/javascript`, `text/html`, …; `application/octet-stream` when unknown).
pub fn content_type(path: &str) -> &'static str {
    mime_guess::from_path(path)
        .first_raw()
        .unwrap_or("application/octet-stream")
}

/// The file of `files` that answers a request for `uri_path`: the file itself, `index.html`
/// of a directory, else the app's `index.html` (the app routes in the page). `None` only when
/// there is no `index.html`.
pub fn resolve<'a>(files: &'a [Asset], uri_path: &str) -> Option<&'a Asset> {
    let find = |p: &str| {
        files
            .binary_search_by(|a| a.path.cmp(p))
            .ok()
            .map(|i| &files[i])
    };
    let path = uri_path.trim_start_matches('/');
    let wanted = if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_owned()
    };
    find(&wanted).or_else(|| find("index.html"))
}

/// Answers a request from an embedded app (`files` sorted by path): GET and HEAD only, the
/// file or the `index.html` fallback with its content type, cache policy and ETag (`304` when
/// `If-None-Match` has it).
pub fn serve_embedded(
    files: &[Asset],
    method: &Method,
    uri_path: &str,
    headers: &HeaderMap,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return Response::builder()
            .status(StatusCode::METHOD_NOT_ALLOWED)
            .header(header::ALLOW, "GET,HEAD")
            .body(Body::empty())
            .expect("static response");
    }
    let Some(asset) = resolve(files, uri_path) else {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::from("the embedded app has no index.html"))
            .expect("static response");
    };
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim() == asset.etag || t.trim() == "*")
        });
    let builder = Response::builder()
        .header(header::CACHE_CONTROL, cache_control(asset.path))
        .header(header::ETAG, asset.etag);
    let response = if fresh {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        let builder = builder
            .header(header::CONTENT_TYPE, content_type(asset.path))
            .header(header::CONTENT_LENGTH, asset.bytes.len());
        if method == Method::HEAD {
            builder.body(Body::empty())
        } else {
            builder.body(Body::from(asset.bytes))
        }
    };
    response.expect("static response")
}

/// Middleware for the `--dist` directory (`ServeDir`): the same cache policy as the embedded
/// app. An HTML answer is `index.html` (a directory's, or the fallback of an unknown path),
/// so it is `no-cache` whatever was asked.
pub async fn dist_cache_control(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let mut resp = next.run(req).await;
    let served_ok = resp.status().is_success() || resp.status() == StatusCode::NOT_MODIFIED;
    if served_ok && !resp.headers().contains_key(header::CACHE_CONTROL) {
        let html = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/html"));
        let policy = if html { NO_CACHE } else { cache_control(&path) };
        resp.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    static FILES: &[Asset] = &[
        Asset {
            path: "app-0123456789abcdef_bg.wasm",
            etag: "\"w\"",
            bytes: b"\0asm",
        },
        Asset {
            path: "docs/index.html",
            etag: "\"d\"",
            bytes: b"docs",
        },
        Asset {
            path: "index.html",
            etag: "\"i\"",
            bytes: b"<html>studio</html>",
        },
        Asset {
            path: "public/stamp-worker.js",
            etag: "\"s\"",
            bytes: b"onmessage=0",
        },
    ];

    #[test]
    fn only_trunk_fingerprints_are_immutable() {
        for p in [
            "/ttft-studio-ca4e98ec65c8b8e0_bg.wasm",
            "ttft-studio-ca4e98ec65c8b8e0.js",
            "/main-3e2e0eb07458f0df.css",
            "/a-3e2e0eb07458f0d.css", // a hash with a leading zero dropped
        ] {
            assert!(is_fingerprinted(p), "{p}");
            assert_eq!(cache_control(p), IMMUTABLE, "{p}");
        }
        for p in [
            "index.html",
            "/",
            "echarts.js",
            "/public/stamp-worker.js",
            "/public/favicon.svg",
            "sw.js",
            "manifest.webmanifest",
            "/model-a",
            "-0123456789abcdef.js",           // no name before the hash
            "main-3E2E0EB07458F0DF.css",      // not trunk's lower-case hex
            "main-3e2e0eb0.css",              // too short to be trunk's
            "main-3e2e0eb07458f0df0.css",     // too long
            "main-3e2e0eb07458f0df",          // no extension
            "main-3e2e0eb07458f0df_x.js",     // something after the hash
            "snippets-0123456789abcdef/x.js", // only the file's own name counts
        ] {
            assert!(!is_fingerprinted(p), "{p}");
            assert_eq!(cache_control(p), NO_CACHE, "{p}");
        }
    }

    #[test]
    fn content_types_are_what_the_browser_needs() {
        for (p, t) in [
            ("app_bg.wasm", "application/wasm"),
            ("app.js", "text/javascript"),
            ("index.html", "text/html"),
            ("main.css", "text/css"),
            ("public/favicon.svg", "image/svg+xml"),
            ("manifest.webmanifest", "application/manifest+json"),
            ("data.json", "application/json"),
            ("LICENSE", "application/octet-stream"),
        ] {
            assert_eq!(content_type(p), t, "{p}");
        }
    }

    #[test]
    fn paths_resolve_to_files_then_to_the_app() {
        let served = |p: &str| resolve(FILES, p).map(|a| a.path);
        assert_eq!(served("/"), Some("index.html"));
        assert_eq!(served(""), Some("index.html"));
        assert_eq!(served("/index.html"), Some("index.html"));
        assert_eq!(served("/docs/"), Some("docs/index.html"));
        assert_eq!(
            served("/public/stamp-worker.js"),
            Some("public/stamp-worker.js")
        );
        assert_eq!(
            served("/app-0123456789abcdef_bg.wasm"),
            Some("app-0123456789abcdef_bg.wasm")
        );
        assert_eq!(served("/runs/42"), Some("index.html"));
        assert_eq!(served("/gone-0123456789abcdef.js"), Some("index.html"));
        assert_eq!(served("/../index.html"), Some("index.html"));
        assert!(resolve(&FILES[..2], "/x").is_none());
    }

    async fn body(r: Response) -> Vec<u8> {
        use http_body_util::BodyExt;
        r.into_body().collect().await.unwrap().to_bytes().to_vec()
    }

    #[tokio::test]
    async fn embedded_files_carry_type_cache_and_etag() {
        let get = |p: &str| serve_embedded(FILES, &Method::GET, p, &HeaderMap::new());
        let r = get("/app-0123456789abcdef_bg.wasm");
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(r.headers()[header::CACHE_CONTROL], IMMUTABLE);
        assert_eq!(r.headers()[header::CONTENT_LENGTH], "4");
        assert_eq!(body(r).await, b"\0asm");
        // An unknown path is the app, and the app is never kept unasked, even under a
        // fingerprinted-looking name.
        for p in ["/runs/42", "/gone-0123456789abcdef.js"] {
            let r = get(p);
            assert_eq!(r.status(), StatusCode::OK);
            assert_eq!(r.headers()[header::CONTENT_TYPE], "text/html");
            assert_eq!(r.headers()[header::CACHE_CONTROL], NO_CACHE);
            assert_eq!(r.headers()[header::ETAG], "\"i\"");
            assert_eq!(body(r).await, b"<html>studio</html>");
        }
        let worker = get("/public/stamp-worker.js");
        assert_eq!(worker.headers()[header::CONTENT_TYPE], "text/javascript");
        assert_eq!(worker.headers()[header::CACHE_CONTROL], NO_CACHE);
    }

    #[tokio::test]
    async fn embedded_files_revalidate_and_refuse_writes() {
        let mut h = HeaderMap::new();
        h.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"x\", \"i\""),
        );
        let r = serve_embedded(FILES, &Method::GET, "/", &h);
        assert_eq!(r.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(r.headers()[header::CACHE_CONTROL], NO_CACHE);
        assert!(body(r).await.is_empty());
        let r = serve_embedded(FILES, &Method::HEAD, "/", &HeaderMap::new());
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_LENGTH], "19");
        assert!(body(r).await.is_empty());
        let r = serve_embedded(FILES, &Method::POST, "/", &HeaderMap::new());
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}
