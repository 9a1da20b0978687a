//! The one binary (`--features embed-app`), copied on its own and started from an empty
//! directory: it serves the studio (index.html, the wasm and JS it names, unknown paths) with the
//! headers the page needs, and the reference endpoint; `--dist` still overrides it.
//!
//! `#[ignore]`d: it needs the release binary built with the app in it. `cargo xtask test` (and
//! `cargo xtask dist --check`) builds it and runs this with its path in `TTFT_SERVER_BIN`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `bin` in `cwd` on a free port, returning once it printed its URL.
fn start(bin: &Path, cwd: &Path, args: &[&str]) -> Server {
    let mut child = Command::new(bin)
        .current_dir(cwd)
        .args(["--host", "127.0.0.1", "--port", "0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    // Keep reading what it prints later, so its stdout never breaks.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    // `ttft-studio: http://127.0.0.1:PORT/  (reference endpoint: …)`
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no URL in the server's first line: {line:?}"))
        .to_owned();
    Server { child, addr }
}

struct Resp {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no {name} header in {:?}", self.headers))
    }
}

/// One `GET` over HTTP/1.1 with `Connection: close`, read to the end.
fn get(addr: &str, path: &str) -> Resp {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete head");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Resp {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// The app's page: served, cross-origin isolated, never kept unasked.
fn assert_page(r: &Resp, what: &str) {
    assert_eq!(r.status, 200, "{what}");
    assert_eq!(r.header("content-type"), "text/html", "{what}");
    assert_eq!(
        r.header("cross-origin-opener-policy"),
        "same-origin",
        "{what}"
    );
    assert_eq!(
        r.header("cross-origin-embedder-policy"),
        "require-corp",
        "{what}"
    );
    assert_eq!(r.header("cache-control"), "no-cache", "{what}");
}

/// The absolute paths index.html loads that end in `suffix` (`'/x.js'`, `href="/y.wasm"`).
fn named(index: &str, suffix: &str) -> Vec<String> {
    let mut out: Vec<String> = index
        .split(['"', '\''])
        .filter(|t| t.starts_with('/') && t.ends_with(suffix) && !t.contains(' '))
        .map(str::to_owned)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The paths a generated `sw.js` precaches: the JSON array after `const SHELL =`.
fn precached(sw: &str) -> Vec<String> {
    let start = sw.find("const SHELL =").expect("sw.js has its SHELL list") + "const SHELL =".len();
    let rest = &sw[start..];
    let end = rest.find("];").expect("SHELL ends") + 1;
    serde_json::from_str(rest[..end].trim()).expect("SHELL is a JSON array of paths")
}

/// A fresh scratch directory under the system's temp directory.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ttft-embedded-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
#[ignore = "needs the release binary built with --features embed-app (cargo xtask dist --check)"]
fn one_binary_serves_the_studio_from_an_empty_directory() {
    let built = PathBuf::from(
        std::env::var_os("TTFT_SERVER_BIN")
            .expect("TTFT_SERVER_BIN: the ttft-server binary built with --features embed-app"),
    );
    // The binary alone, as if copied to another machine, run where there is nothing else.
    let home = scratch("bin");
    let bin = home.join(built.file_name().unwrap());
    std::fs::copy(&built, &bin).unwrap();
    let empty = scratch("cwd");
    let server = start(&bin, &empty, &[]);
    let addr = server.addr.as_str();

    let index = get(addr, "/");
    assert_page(&index, "/");
    let html = String::from_utf8(index.body.clone()).unwrap();
    assert!(html.contains("<html"), "{html}");

    let wasm = named(&html, ".wasm");
    let js = named(&html, ".js");
    assert!(!wasm.is_empty(), "index.html names no wasm: {html}");
    assert!(!js.is_empty(), "index.html names no JS: {html}");
    for (paths, content_type) in [(&wasm, "application/wasm"), (&js, "text/javascript")] {
        for p in paths {
            let r = get(addr, p);
            assert_eq!(r.status, 200, "{p}");
            assert_eq!(r.header("content-type"), content_type, "{p}");
            assert_eq!(r.header("cross-origin-opener-policy"), "same-origin", "{p}");
            assert_eq!(
                r.header("cross-origin-embedder-policy"),
                "require-corp",
                "{p}"
            );
            assert_eq!(
                r.header("cache-control"),
                "public, max-age=31536000, immutable",
                "{p}: trunk fingerprints it"
            );
            assert_eq!(r.header("content-length"), r.body.len().to_string(), "{p}");
            assert!(!r.body.is_empty(), "{p}");
        }
    }
    let first_wasm = get(addr, &wasm[0]);
    assert!(first_wasm.body.starts_with(b"\0asm"), "{} is wasm", wasm[0]);

    // Installable and offline from the one binary too: the service worker, every file it
    // precaches, the manifest and each icon it names are served, not the app's fallback page.
    let sw = get(addr, "/sw.js");
    assert_eq!(sw.status, 200, "/sw.js");
    assert_eq!(sw.header("content-type"), "text/javascript", "/sw.js");
    assert_eq!(
        sw.header("cache-control"),
        "no-cache",
        "/sw.js is revalidated"
    );
    let sw_text = String::from_utf8(sw.body.clone()).unwrap();
    let shell = precached(&sw_text);
    assert!(shell.len() > 4, "sw.js precaches the app shell: {sw_text}");
    for p in wasm.iter().chain(&js) {
        assert!(shell.contains(p), "sw.js precaches {p}: {shell:?}");
    }
    for p in &shell {
        let r = get(addr, p);
        assert_eq!(r.status, 200, "precached {p}");
        if p != "/" && !p.ends_with(".html") {
            assert_ne!(
                r.body, index.body,
                "precached {p} is its own file, not the app page"
            );
        }
    }
    let manifest = get(addr, "/public/manifest.webmanifest");
    assert_eq!(manifest.status, 200);
    assert_eq!(manifest.header("content-type"), "application/manifest+json");
    let m: serde_json::Value = serde_json::from_slice(&manifest.body).unwrap();
    assert_eq!(m["display"], "standalone", "{m}");
    let icons = m["icons"].as_array().expect("the manifest names icons");
    for size in ["192x192", "512x512"] {
        assert!(
            icons
                .iter()
                .any(|i| i["sizes"] == size && i["type"] == "image/png"),
            "a {size} PNG icon: {m}"
        );
    }
    for icon in icons {
        let src = icon["src"].as_str().unwrap();
        let r = get(addr, src);
        assert_eq!(r.status, 200, "{src}");
        assert_eq!(
            r.header("content-type"),
            icon["type"].as_str().unwrap(),
            "{src}"
        );
        if icon["type"] == "image/png" {
            assert!(r.body.starts_with(b"\x89PNG"), "{src} is a PNG");
        }
    }

    let unknown = get(addr, "/runs/42");
    assert_page(&unknown, "an unknown path");
    assert_eq!(unknown.body, index.body, "an unknown path is the app");

    let models = get(addr, "/v1/models");
    assert_eq!(models.status, 200);
    let m: serde_json::Value = serde_json::from_slice(&models.body).unwrap();
    assert!(
        m["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == "model-a"),
        "{m}"
    );
    drop(server);

    // `--dist DIR` still serves another build instead.
    let other = scratch("other-dist");
    std::fs::write(other.join("index.html"), "<html>another build</html>").unwrap();
    let server = start(&bin, &empty, &["--dist", other.to_str().unwrap()]);
    let r = get(&server.addr, "/runs/42");
    assert_page(&r, "--dist's fallback");
    assert_eq!(r.body, b"<html>another build</html>");
    drop(server);

    for d in [home, empty, other] {
        let _ = std::fs::remove_dir_all(d);
    }
}
