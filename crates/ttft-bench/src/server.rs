//! The reference endpoint the bench measures against, as a deployment runs it: the release
//! `ttft-server` binary in its own process (`--port 0 --extra-ports 11 --tls-port 0`), its URLs
//! read from what it prints, killed when the bench is done. `TTFT_BENCH_SERVER=in-process`
//! runs it inside the bench's own runtime instead (as every bench before #30 did), beside the
//! WebDriver client and the ground-truth queries; `--server-compare` measures both.
//!
//! The binary is `TTFT_SERVER_BIN`, or `release/ttft-server` under `CARGO_TARGET_DIR` (or
//! `ROOT/target`); `cargo xtask bench` builds it first.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use ttft_e2e::{SHARD_PORTS, Studio};

/// Where the reference endpoint runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The release `ttft-server` binary, a process of its own (the default).
    Process,
    /// Inside the bench binary's runtime.
    InProcess,
}

impl Mode {
    /// `TTFT_BENCH_SERVER` (`process`, the default, or `in-process`).
    pub fn from_env() -> Result<Mode> {
        Mode::parse(std::env::var("TTFT_BENCH_SERVER").ok().as_deref())
    }

    /// The mode a `TTFT_BENCH_SERVER` value names (`None`: unset).
    fn parse(value: Option<&str>) -> Result<Mode> {
        match value {
            None | Some("" | "process") => Ok(Mode::Process),
            Some("in-process") => Ok(Mode::InProcess),
            Some(other) => bail!(
                "TTFT_BENCH_SERVER={other}: use `process` (the default: the release ttft-server binary) or `in-process`"
            ),
        }
    }

    /// The name results use.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Process => "process",
            Mode::InProcess => "in-process",
        }
    }
}

/// A running reference endpoint (with the studio's `dist/`): its URLs, and the child process
/// when it has one (killed on drop).
pub struct Served {
    pub studio: Studio,
    pub mode: Mode,
    child: Option<Child>,
    binary: Option<PathBuf>,
}

impl Served {
    /// What `results.json` keeps of it.
    pub fn to_json(&self) -> Value {
        json!({
            "mode": self.mode.label(),
            "binary": self.binary.as_ref().map(|b| b.display().to_string()),
            "shards": self.studio.shard_urls.len(),
        })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The built app the server serves: `TTFT_DIST`, or `ROOT/dist`.
fn dist(root: &Path) -> PathBuf {
    std::env::var_os("TTFT_DIST").map_or_else(|| root.join("dist"), PathBuf::from)
}

/// The release server binary (see the module doc).
pub fn binary(root: &Path) -> PathBuf {
    if let Some(b) = std::env::var_os("TTFT_SERVER_BIN") {
        return PathBuf::from(b);
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    target.join("release/ttft-server")
}

/// Starts the reference endpoint the way `mode` says.
pub async fn start(root: &Path, mode: Mode) -> Result<Served> {
    let dist = dist(root);
    match mode {
        Mode::InProcess => Ok(Served {
            studio: ttft_e2e::start_studio_serving(dist).await?,
            mode,
            child: None,
            binary: None,
        }),
        Mode::Process => {
            let bin = binary(root);
            let (child, studio) = tokio::task::spawn_blocking({
                let bin = bin.clone();
                move || spawn(&bin, &dist)
            })
            .await??;
            // The server answers once it has printed its URLs; make sure before measuring.
            ttft_e2e::http_get(studio.port, "/v1/models")
                .await
                .context("the ttft-server process does not answer /v1/models")?;
            Ok(Served {
                studio,
                mode,
                child: Some(child),
                binary: Some(bin),
            })
        }
    }
}

/// Starts the reference endpoint as `TTFT_BENCH_SERVER` says.
pub async fn start_from_env(root: &Path) -> Result<Served> {
    start(root, Mode::from_env()?).await
}

/// Spawns `bin` on free loopback ports and reads its URLs from its first lines.
fn spawn(bin: &Path, dist: &Path) -> Result<(Child, Studio)> {
    if !bin.exists() {
        bail!(
            "no server binary at {}: run `cargo build --release -p ttft-server` (cargo xtask bench does), set TTFT_SERVER_BIN, or run with TTFT_BENCH_SERVER=in-process",
            bin.display()
        );
    }
    let mut child = Command::new(bin)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--tls-port",
            "0",
            "--seed",
            "1",
        ])
        .args(["--extra-ports", &SHARD_PORTS.to_string()])
        .arg("--dist")
        .arg(dist)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads every line the server prints (so its pipe never fills), handing them over.
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                // Nobody listens any more: keep draining.
                continue;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(Some(studio)) = parse_urls(&lines) {
            return Ok((child, studio));
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "{} printed no URLs within 30 s (it printed: {:?})",
                    bin.display(),
                    lines
                );
            }
        }
    }
}

/// The studio URL, the shard origins and the HTTP/2 origin from what `ttft-server` prints at
/// start (`ttft-studio: http://A/ …`, `more HTTP/1.1 origins (…): http://B http://C`,
/// `HTTP/2 over TLS (…): https://D/v1`); `None` until all three have been printed.
pub fn parse_urls(lines: &[String]) -> Result<Option<Studio>> {
    let after = |prefix: &str| {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::trim)
    };
    let (Some(main), Some(shards), Some(tls)) = (
        after("ttft-studio: "),
        lines
            .iter()
            .find(|l| l.starts_with("more HTTP/1.1 origins"))
            .and_then(|l| l.split_once("): ").map(|(_, s)| s)),
        lines
            .iter()
            .find(|l| l.starts_with("HTTP/2 over TLS"))
            .and_then(|l| l.rsplit_once(": ").map(|(_, s)| s.trim())),
    ) else {
        return Ok(None);
    };
    let url = main
        .split_whitespace()
        .next()
        .context("no URL after `ttft-studio:`")?
        .trim_end_matches('/')
        .to_owned();
    let port = url
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .with_context(|| format!("no port in {url}"))?;
    Ok(Some(Studio {
        url,
        port,
        tls_url: tls.trim_end_matches("/v1").trim_end_matches('/').to_owned(),
        shard_urls: shards.split_whitespace().map(str::to_owned).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_urls_the_server_prints() {
        let printed: Vec<String> = [
            "ttft-studio: http://127.0.0.1:41234/  (reference endpoint: http://127.0.0.1:41234/v1)",
            "more HTTP/1.1 origins (same simulator; the studio spreads runs above 6 streams over them): http://127.0.0.1:41235 http://127.0.0.1:41236",
        ]
        .map(String::from)
        .to_vec();
        // Not all printed yet: no studio.
        assert!(parse_urls(&printed).unwrap().is_none());
        let mut all = printed;
        all.push("HTTP/2 over TLS (self-signed certificate, accept it once in the browser): https://127.0.0.1:41300/v1".into());
        let s = parse_urls(&all).unwrap().unwrap();
        assert_eq!(s.url, "http://127.0.0.1:41234");
        assert_eq!(s.port, 41234);
        assert_eq!(s.tls_url, "https://127.0.0.1:41300");
        assert_eq!(
            s.shard_urls,
            ["http://127.0.0.1:41235", "http://127.0.0.1:41236"]
        );
    }

    #[test]
    fn the_mode_is_the_process_unless_asked_otherwise() {
        assert_eq!(Mode::parse(None).unwrap(), Mode::Process);
        assert_eq!(Mode::parse(Some("process")).unwrap(), Mode::Process);
        assert_eq!(Mode::parse(Some("in-process")).unwrap(), Mode::InProcess);
        let e = Mode::parse(Some("inprocess")).unwrap_err().to_string();
        assert!(e.contains("in-process"), "{e}");
    }
}
