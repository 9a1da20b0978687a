//! Harness for the end-to-end tests: starts the server (app + reference endpoint) on a free
//! loopback port, starts chromedriver, and opens a fresh headless Chromium profile. The same
//! helpers drive Firefox (geckodriver) and WebKit (WebKitWebDriver with MiniBrowser, under
//! `xvfb-run`): [`Engine`], [`start_engine_driver`].
//!
//! The tests are `#[ignore]`d for plain `cargo test` because they need the built app (`dist/`)
//! and Chromium; `cargo xtask test` builds both and runs them with `--ignored`. The benchmark
//! (`crates/ttft-bench`) drives the studio through the same helpers.
//!
//! Saved runs live in the page's IndexedDB: [`saved_runs`] reads them as stored,
//! [`clear_saved_runs`] starts from none. To time storage, import (or run) a report, then
//! [`newest_run_saved`] gives the page's save time and size; reload (`Client::refresh`), then
//! [`saved_runs_reopened`] gives the time to read it back and to list every saved run.
//!
//! The peer tools' tests (Locust, AIPerf) and the bench's peer runs share what drives a tool
//! against the reference endpoint: [`start_reference_endpoint`], [`ground_truth_since`] with
//! [`unix_ms`], [`run_logged`] and the tokenizer script [`WORD_TOKENIZER_PY`].

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running studio server.
pub struct Studio {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its port.
    pub port: u16,
    /// `https://127.0.0.1:PORT` of the HTTP/2 listener (same simulator).
    pub tls_url: String,
    /// `http://127.0.0.1:PORT` of extra HTTP/1.1 listeners (same simulator): with [`Studio::url`]
    /// they give a browser 6 connections each, so 64 streams fit without HTTP/2.
    pub shard_urls: Vec<String>,
}

/// Extra HTTP/1.1 ports of the test server: 12 origins × 6 connections ≥ 64 streams.
pub const SHARD_PORTS: usize = 11;

/// Starts the server with the built app.
pub async fn start_studio() -> Result<Studio> {
    let dist = std::env::var_os("TTFT_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("dist"));
    start_studio_serving(dist).await
}

/// Starts the server with the app built into `dist`.
pub async fn start_studio_serving(dist: PathBuf) -> Result<Studio> {
    if !dist.join("index.html").exists() {
        bail!(
            "{} has no built app: run `cargo xtask test` (it builds with trunk first)",
            dist.display()
        );
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let mut listeners = vec![listener];
    let mut shard_urls = Vec::new();
    for _ in 0..SHARD_PORTS {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        shard_urls.push(format!("http://127.0.0.1:{}", l.local_addr()?.port()));
        listeners.push(l);
    }
    let tls = std::net::TcpListener::bind("127.0.0.1:0")?;
    let tls_url = format!("https://127.0.0.1:{}", tls.local_addr()?.port());
    tokio::spawn(ttft_server::serve_all(
        listeners,
        Some(tls),
        ttft_server::Config {
            dist: Some(dist),
            seed: 1,
        },
    ));
    Ok(Studio {
        url: format!("http://127.0.0.1:{port}"),
        port,
        tls_url,
        shard_urls,
    })
}

/// The reference endpoint alone (its API, no app), in-process on a free loopback port: what a
/// peer tool's own client (Locust, AIPerf) is pointed at. Returns the port; the server runs
/// until the test's runtime ends.
pub async fn start_reference_endpoint() -> Result<u16> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(ttft_server::serve(
        listener,
        ttft_server::Config {
            dist: None,
            seed: 1,
        },
    ));
    Ok(port)
}

/// The wall clock in ms since the Unix epoch: the clock the reference endpoint's ground truth
/// (`received_unix_ms`, `GET /v1/ground-truth?since=`) and the peer tools' files are on.
pub fn unix_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// A Python script that makes a word-level tokenizer (`w0` … `w3999`, split on whitespace) with
/// the `tokenizers` package into the folder given as its first argument (`tokenizer.json` and
/// `tokenizer_config.json`): what AIPerf and the bench's peer tools count prompt tokens with,
/// since no model hub is reachable here. Run as `python -c SCRIPT DIR`.
pub const WORD_TOKENIZER_PY: &str = r#"
import json, os, sys
from tokenizers import Tokenizer, models, pre_tokenizers
out = sys.argv[1]
words = ["[UNK]"] + ["w%d" % i for i in range(4000)]
tok = Tokenizer(models.WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tok.save(os.path.join(out, "tokenizer.json"))
with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
    json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]",
               "model_max_length": 1000000, "clean_up_tokenization_spaces": False}, f)
"#;

/// Runs a peer tool's command (AIPerf, vLLM's or SGLang's bench, pip) to completion within
/// `limit`, its output written to `log`; fails with the log's last lines when it exits
/// non-zero or runs over (it is killed then).
pub async fn run_logged(
    mut cmd: tokio::process::Command,
    log: &std::path::Path,
    limit: Duration,
    what: &str,
) -> Result<()> {
    let out =
        std::fs::File::create(log).with_context(|| format!("cannot write {}", log.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .kill_on_drop(true);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {what}"))?;
    let status = match tokio::time::timeout(limit, child.wait()).await {
        Ok(s) => s?,
        Err(_) => {
            let _ = child.kill().await;
            bail!(
                "{what} ran over {} s (log: {})",
                limit.as_secs(),
                log.display()
            );
        }
    };
    if !status.success() {
        bail!("{what} failed ({status}): {}", log_tail(log));
    }
    Ok(())
}

/// The last non-empty lines of a log on one line, and where the log is: why a tool failed.
pub fn log_tail(log: &std::path::Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
    format!("{tail} (log: {})", log.display())
}

/// A browser engine the studio is tested in, each through its own WebDriver server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// Chromium (Blink) through chromedriver (`CHROMEDRIVER`, `CHROMIUM` to override).
    Chromium,
    /// Firefox ESR (Gecko) through geckodriver (`GECKODRIVER`, `FIREFOX` to override).
    Firefox,
    /// WebKitGTK's MiniBrowser (Safari's engine) through WebKitWebDriver, on a virtual display
    /// (`xvfb-run -a`) since it has no headless mode (`WEBKIT_WEBDRIVER`, `MINIBROWSER`).
    WebKit,
}

impl Engine {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Chromium => "Chromium",
            Engine::Firefox => "Firefox",
            Engine::WebKit => "WebKit",
        }
    }

    /// The driver listening on `port`, and what to install when it is missing.
    fn driver_command(self, port: u16) -> (Command, String, &'static str) {
        let bin = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
        match self {
            Engine::Chromium => {
                let bin = bin("CHROMEDRIVER", "/usr/bin/chromedriver");
                let mut c = Command::new(&bin);
                c.arg(format!("--port={port}"));
                (c, bin, "apt-get install chromium-driver")
            }
            Engine::Firefox => {
                let bin = std::env::var("GECKODRIVER").unwrap_or_else(|_| {
                    let cargo_bin = std::env::var_os("CARGO_HOME")
                        .map(PathBuf::from)
                        .unwrap_or_else(|| {
                            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cargo")
                        })
                        .join("bin/geckodriver");
                    if cargo_bin.exists() {
                        cargo_bin.display().to_string()
                    } else {
                        "geckodriver".into()
                    }
                });
                let mut c = Command::new(&bin);
                c.args(["--port", &port.to_string()]);
                (
                    c,
                    bin,
                    "apt-get install firefox-esr; cargo install geckodriver --locked",
                )
            }
            Engine::WebKit => {
                let bin = bin("WEBKIT_WEBDRIVER", "/usr/bin/WebKitWebDriver");
                let mut c = Command::new("xvfb-run");
                c.args(["-a", &bin, &format!("--port={port}")]);
                (
                    c,
                    format!("xvfb-run -a {bin}"),
                    "apt-get install webkit2gtk-driver xvfb",
                )
            }
        }
    }

    /// New-session capabilities: headless (or on the virtual display) with a fresh profile.
    fn capabilities(self, driver: &Driver) -> Result<serde_json::Map<String, serde_json::Value>> {
        let var = |var: &str, default: &str| std::env::var(var).unwrap_or_else(|_| default.into());
        let mut caps = serde_json::Map::new();
        match self {
            Engine::Chromium => {
                let profile = driver.new_profile()?;
                caps.insert(
                    "goog:chromeOptions".into(),
                    serde_json::json!({
                        "binary": var("CHROMIUM", "/usr/bin/chromium"),
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                 "--no-first-run", "--disable-quic", "--window-size=1400,1000",
                                 "--ignore-certificate-errors",
                                 format!("--user-data-dir={}", profile.display())]
                    }),
                );
            }
            Engine::Firefox => {
                // geckodriver makes a fresh profile for every session in its TMPDIR (the
                // driver's scratch directory).
                caps.insert("acceptInsecureCerts".into(), true.into());
                caps.insert(
                    "moz:firefoxOptions".into(),
                    serde_json::json!({
                        "binary": var("FIREFOX", "/usr/bin/firefox-esr"),
                        "args": ["-headless", "--width=1400", "--height=1000"],
                    }),
                );
            }
            Engine::WebKit => {
                // MiniBrowser in automation mode keeps each session's website data in memory:
                // every session starts with none.
                caps.insert("acceptInsecureCerts".into(), true.into());
                caps.insert(
                    "webkitgtk:browserOptions".into(),
                    serde_json::json!({
                        "binary": var("MINIBROWSER", "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"),
                        "args": ["--automation"],
                    }),
                );
            }
        }
        Ok(caps)
    }
}

/// A WebDriver server (chromedriver, geckodriver, or WebKitWebDriver under `xvfb-run`), with
/// everything it and its browsers write kept in one scratch directory.
///
/// On drop the driver's whole process group is killed (a test that fails before closing its
/// browser leaves no browser, nor `Xvfb`, behind) and the scratch directory is removed: browser
/// profiles and the temporary files browsers make (they honour `TMPDIR`) would otherwise pile
/// up in `/tmp` at some hundred megabytes a test run.
pub struct Driver {
    child: Child,
    /// Its port.
    pub port: u16,
    /// The engine it drives.
    pub engine: Engine,
    scratch: PathBuf,
}

impl Driver {
    /// A new, empty browser profile directory inside the driver's scratch directory.
    fn new_profile(&self) -> Result<PathBuf> {
        let dir = self.scratch.join(format!("profile-{}", free_port()?));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create a browser profile in {}", dir.display()))?;
        Ok(dir)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // The driver leads its own process group (see `start_engine_driver`); the browsers it
        // started are in it too, and so is `Xvfb` under `xvfb-run`.
        let group = format!("-{}", self.child.id());
        let signal = |sig: &str| {
            Command::new("kill")
                .args([sig, "--", &group])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if self.engine != Engine::Chromium {
            // Asked first, so that geckodriver ends Firefox and Xvfb removes its display's
            // lock and socket in /tmp; killed after 3 s all the same.
            signal("-TERM");
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            while std::time::Instant::now() < deadline {
                let _ = self.child.try_wait();
                if !signal("-0") {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        signal("-KILL");
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Browser processes may still be exiting and writing: retry briefly.
        for _ in 0..20 {
            if std::fs::remove_dir_all(&self.scratch).is_ok() || !self.scratch.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A loopback port free when asked (for a process that binds it itself).
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Starts chromedriver (`CHROMEDRIVER` or `/usr/bin/chromedriver`) in its own process group,
/// with a scratch directory as its and its browsers' `TMPDIR`.
pub async fn start_driver() -> Result<Driver> {
    start_engine_driver(Engine::Chromium).await
}

/// Starts `engine`'s driver in its own process group, with a scratch directory as its and its
/// browsers' `TMPDIR` (and, for Firefox and WebKit, their `HOME` and XDG directories, so
/// nothing lands in the user's).
pub async fn start_engine_driver(engine: Engine) -> Result<Driver> {
    use std::os::unix::process::CommandExt as _;
    let port = free_port()?;
    let scratch = std::env::temp_dir().join(format!("ttft-e2e-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let (mut command, bin, install) = engine.driver_command(port);
    command.env("TMPDIR", &scratch);
    if engine != Engine::Chromium {
        let home = scratch.join("home");
        command
            .env("HOME", &home)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"));
        std::fs::create_dir_all(&home)?;
    }
    let spawned = command
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&scratch);
            bail!("cannot start {bin}: {e}; install it ({install}) or run `cargo xtask test`");
        }
    };
    let driver = Driver {
        child,
        port,
        engine,
        scratch,
    };
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(driver);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("{bin} did not start on port {port}")
}

/// A fresh browser profile of the driver's engine: headless Chromium or Firefox, or WebKit's
/// MiniBrowser on the driver's virtual display.
pub async fn browser(driver: &Driver) -> Result<Client> {
    let caps = driver.engine.capabilities(driver)?;
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    Ok(ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await?)
}

/// Sets an input's value and fires `change` (as a user typing and leaving the field).
pub async fn set_field(c: &Client, testid: &str, value: &str) -> Result<()> {
    let el = c
        .find(Locator::Css(&format!("[data-testid={testid}]")))
        .await
        .with_context(|| format!("no field {testid}"))?;
    c.execute(
        "const el = arguments[0]; el.value = arguments[1]; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![serde_json::to_value(&el)?, serde_json::json!(value)],
    )
    .await?;
    Ok(())
}

/// Waits until `testid`'s text satisfies `ok`, returning it.
pub async fn wait_text(
    c: &Client,
    testid: &str,
    secs: u64,
    ok: impl Fn(&str) -> bool,
) -> Result<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    let mut last = String::new();
    while std::time::Instant::now() < deadline {
        if let Ok(el) = c
            .find(Locator::Css(&format!("[data-testid={testid}]")))
            .await
            && let Ok(t) = el.text().await
        {
            if ok(&t) {
                return Ok(t);
            }
            last = t;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("{testid} never satisfied the condition within {secs}s; last text: {last:?}")
}

/// Runs a small concurrency sweep from the UI (`sim-fast`, levels 1, 2 and 4, 4 requests of
/// 16 tokens each) and waits for it to complete.
pub async fn run_small_sweep(c: &Client) -> Result<()> {
    c.find(Locator::Css("[data-testid=scenario-kind]"))
        .await?
        .select_by_value("concurrency_sweep")
        .await?;
    set_field(c, "levels", "1, 2, 4").await?;
    set_field(c, "requests", "4").await?;
    set_field(c, "max-tokens", "16").await?;
    set_field(c, "model", "sim-fast").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 90).await
}

/// Clicks `testid`.
pub async fn click(c: &Client, testid: &str) -> Result<()> {
    c.find(Locator::Css(&format!("[data-testid={testid}]")))
        .await
        .with_context(|| format!("no {testid}"))?
        .click()
        .await?;
    Ok(())
}

/// Reads the studio's run storage (IndexedDB `ttft-studio`) in the page: every run's index
/// record and report JSON, top of the list first. Opens nothing that does not exist yet.
const READ_STORED_RUNS: &str = r#"
const done = arguments[arguments.length - 1];
(async () => {
  // Runs still on their way to storage (a run that just finished) are waited for.
  const deadline = Date.now() + 60000;
  for (;;) {
    const list = document.querySelector('[data-testid=runs-list]');
    if (list && list.dataset.pending === '0') break;
    if (Date.now() > deadline) return done({ error: 'runs were still being saved after 60 s' });
    await new Promise(r => setTimeout(r, 50));
  }
  const db = await new Promise(resolve => {
    const req = indexedDB.open('ttft-studio');
    req.onupgradeneeded = () => req.transaction.abort();
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => resolve(null);
  });
  if (!db) return done([]);
  if (!db.objectStoreNames.contains('runs')) { db.close(); return done([]); }
  const tx = db.transaction(['runs', 'reports']);
  const get = r => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
  const [metas, keys, records] = await Promise.all([
    get(tx.objectStore('runs').getAll()),
    get(tx.objectStore('reports').getAllKeys()),
    get(tx.objectStore('reports').getAll()),
  ]);
  db.close();
  const byId = new Map(keys.map((k, i) => [k, records[i]]));
  metas.sort((a, b) => b.order - a.order || b.id - a.id);
  const out = [];
  for (const m of metas) {
    const r = byId.get(m.id);
    // A Blob, or bytes where the browser refuses Blobs in IndexedDB (WebKit's private sessions).
    const json = !r || !r.data ? null
      : r.data instanceof Blob ? await r.data.text() : new TextDecoder().decode(r.data);
    out.push({ id: m.id, title: m.title, json });
  }
  done(out);
})().catch(e => done({ error: String(e) }));
"#;

/// The saved runs as the app stored them in IndexedDB (top of the list first, titles as
/// renamed), once every run on its way to storage has arrived.
pub async fn saved_runs(c: &Client) -> Result<Vec<ttft_core::report::Report>> {
    let v = c.execute_async(READ_STORED_RUNS, vec![]).await?;
    if let Some(e) = v.get("error") {
        bail!("could not read the stored runs: {e}");
    }
    v.as_array()
        .context("no stored runs")?
        .iter()
        .map(|run| {
            let json = run["json"]
                .as_str()
                .with_context(|| format!("run {} has no stored report", run["id"]))?;
            let mut report = ttft_core::report::read_json(json.as_bytes())?;
            if let Some(title) = run["title"].as_str() {
                title.clone_into(&mut report.title);
            }
            Ok(report)
        })
        .collect()
}

/// Everything this origin keeps in the browser, as text: every localStorage and sessionStorage
/// entry and every record of every IndexedDB database (Blobs and bytes read as UTF-8). Where a
/// secret must never be.
const DUMP_BROWSER_STORAGE: &str = r#"
const done = arguments[arguments.length - 1];
(async () => {
  const out = [];
  for (const store of [localStorage, sessionStorage]) {
    for (let i = 0; i < store.length; i++) out.push(store.key(i) + '=' + store.getItem(store.key(i)));
  }
  const text = async v => {
    if (v instanceof Blob) return await v.text();
    if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) return new TextDecoder().decode(v);
    if (v && typeof v === 'object') {
      const parts = [];
      for (const [k, x] of Object.entries(v)) parts.push(k + ':' + await text(x));
      return '{' + parts.join(',') + '}';
    }
    return String(v);
  };
  const get = r => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
  for (const info of await indexedDB.databases()) {
    const db = await get(indexedDB.open(info.name));
    const names = [...db.objectStoreNames];
    if (names.length) {
      // Every store read in the one transaction before anything else is awaited (a Blob's
      // text resolves in a later task, by when the transaction has committed).
      const tx = db.transaction(names);
      const read = await Promise.all(names.map(name => get(tx.objectStore(name).getAll())));
      for (const [i, name] of names.entries()) {
        for (const v of read[i]) out.push(info.name + '/' + name + ': ' + await text(v));
      }
    }
    db.close();
  }
  done(out.join('\n'));
})().catch(e => done({ error: String(e) }));
"#;

/// Everything the studio's origin stores in this browser (see `DUMP_BROWSER_STORAGE`).
pub async fn browser_storage_dump(c: &Client) -> Result<String> {
    let v = c.execute_async(DUMP_BROWSER_STORAGE, vec![]).await?;
    if let Some(e) = v.get("error") {
        bail!("could not read the browser's storage: {e}");
    }
    Ok(v.as_str().context("storage dump is not text")?.to_owned())
}

/// Deletes the studio's run storage (and runs left in localStorage by older studios), so the
/// next page load starts with no saved runs. The page's own connection closes when asked.
pub async fn clear_saved_runs(c: &Client) -> Result<()> {
    let v = c
        .execute_async(
            "const done = arguments[arguments.length - 1];
             localStorage.removeItem('ttft-studio.runs');
             const req = indexedDB.deleteDatabase('ttft-studio');
             req.onsuccess = () => done('ok');
             req.onerror = () => done(String(req.error));
             req.onblocked = () => setTimeout(() => done('blocked'), 5000);",
            vec![],
        )
        .await?;
    match v.as_str() {
        Some("ok") => Ok(()),
        other => bail!("could not delete the saved runs: {other:?}"),
    }
}

/// A save as the page recorded it on the newest run's list item.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveTiming {
    /// Size of the stored report JSON (bytes).
    pub bytes: u64,
    /// From the save's start until the page saw IndexedDB commit it (`data-save-ms`). Work the
    /// page does meanwhile (drawing the run) delays the moment the commit is seen.
    pub save_ms: f64,
    /// The page's own share: the report written as JSON (`data-encode-ms`).
    pub encode_ms: f64,
}

/// Saved runs read back after a reload, as the page recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReopenTiming {
    /// Size of the newest run's stored report JSON (bytes).
    pub bytes: u64,
    /// Reading the newest run: IndexedDB, then the report format (its item's `data-load-ms`).
    pub read_ms: f64,
    /// From opening storage to every saved run listed (the list's `data-load-ms`).
    pub all_ms: f64,
}

/// Waits until the newest run's item is stored and `attrs` (its own `data-*`, or the list's
/// for `list.`) are set; returns its size and their values.
async fn newest_item(c: &Client, attrs: [&str; 2], secs: u64) -> Result<(u64, f64, f64)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let v = c
            .execute(
                "const list = document.querySelector('[data-testid=runs-list]');
                 const item = document.querySelector('[data-testid=run-item]');
                 if (!list || !item) return null;
                 if (item.dataset.saved === 'failed')
                   return { failed: item.querySelector('[data-testid=not-saved]')?.title };
                 const read = a => a.startsWith('list.') ? list.dataset[a.slice(5)] : item.dataset[a];
                 return { saved: item.dataset.saved, loaded: list.dataset.loaded,
                          bytes: Number(item.dataset.bytes),
                          a: read(arguments[0]) ?? null, b: read(arguments[1]) ?? null };",
                vec![serde_json::json!(attrs[0]), serde_json::json!(attrs[1])],
            )
            .await?;
        if let Some(reason) = v.get("failed") {
            bail!("the run was not saved: {reason}");
        }
        let num = |k: &str| v[k].as_str().and_then(|t| t.parse::<f64>().ok());
        if v["saved"] == "saved"
            && v["loaded"] == "true"
            && let (Some(a), Some(b)) = (num("a"), num("b"))
        {
            return Ok((v["bytes"].as_u64().unwrap_or(0), a, b));
        }
        if std::time::Instant::now() > deadline {
            bail!("the newest run did not show {attrs:?} within {secs}s: {v}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the newest run (top of the list: just finished or imported) is stored; returns
/// its size and save times.
pub async fn newest_run_saved(c: &Client, secs: u64) -> Result<SaveTiming> {
    let (bytes, save_ms, encode_ms) = newest_item(c, ["saveMs", "encodeMs"], secs).await?;
    Ok(SaveTiming {
        bytes,
        save_ms,
        encode_ms,
    })
}

/// After a reload: waits until every saved run is listed again; returns the newest run's size
/// and read time, and the time to list them all.
pub async fn saved_runs_reopened(c: &Client, secs: u64) -> Result<ReopenTiming> {
    let (bytes, read_ms, all_ms) = newest_item(c, ["loadMs", "list.loadMs"], secs).await?;
    Ok(ReopenTiming {
        bytes,
        read_ms,
        all_ms,
    })
}

/// Makes the page's IndexedDB refuse (or, with `false`, accept again) every report write with a
/// `QuotaExceededError`, as a full disk or quota does: a full store on demand. (Chromium's
/// `Storage.overrideQuotaForOrigin` through chromedriver's DevTools bridge answers but leaves
/// the quota unchanged, so the refusal is simulated in the page.)
pub async fn simulate_full_storage(c: &Client, full: bool) -> Result<()> {
    c.execute(
        "const proto = IDBObjectStore.prototype;
         window.__ttftPut = window.__ttftPut || proto.put;
         proto.put = arguments[0]
           ? function (value, key) {
               if (this.name === 'reports')
                 throw new DOMException('simulated full storage', 'QuotaExceededError');
               return window.__ttftPut.call(this, value, key);
             }
           : window.__ttftPut;",
        vec![serde_json::json!(full)],
    )
    .await?;
    Ok(())
}

/// A plain HTTP GET on loopback, returning the body.
pub async fn http_get(port: u16, path: &str) -> Result<String> {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await?;
    let text = String::from_utf8_lossy(&buf).to_string();
    let (head, body) = text.split_once("\r\n\r\n").context("bad HTTP response")?;
    if !head.starts_with("HTTP/1.1 200") {
        bail!("GET {path}: {}", head.lines().next().unwrap_or(""));
    }
    // De-chunk if needed.
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut out = String::new();
        let mut rest = body;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            out.push_str(&tail[..n]);
            rest = &tail[n + 2..];
        }
        return Ok(out);
    }
    Ok(body.to_owned())
}

/// Waits until the run started from the UI has finished and been saved.
pub async fn wait_run_complete(c: &Client, secs: u64) -> Result<()> {
    wait_text(c, "run-status", secs, |t| t == "complete")
        .await
        .map(|_| ())
}

/// A browser on a freshly started studio, with the clock measured.
pub struct Session {
    /// The browser (first, so it closes before the driver stops).
    pub client: Client,
    /// Its driver (chromedriver unless opened with [`open_studio_in`]).
    pub driver: Driver,
    /// The studio server.
    pub studio: Studio,
}

/// Starts the studio, chromedriver and a fresh browser, and opens the studio.
pub async fn open_studio() -> Result<Session> {
    open_studio_in(Engine::Chromium).await
}

/// Starts the studio, `engine`'s driver and a fresh browser, and opens the studio.
pub async fn open_studio_in(engine: Engine) -> Result<Session> {
    let studio = start_studio().await?;
    let driver = start_engine_driver(engine).await?;
    let client = browser(&driver).await?;
    client.goto(&studio.url).await?;
    wait_text(&client, "clock-status", 30, |t| t.contains("µs")).await?;
    Ok(Session {
        client,
        driver,
        studio,
    })
}

/// Waits until the chart grid `testid` has drawn every chart; returns the chart ids and the
/// drawing time the page recorded (ms).
pub async fn drawn_charts(c: &Client, testid: &str, secs: u64) -> Result<(Vec<String>, f64)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        let v = c
            .execute(
                "const g = document.querySelector(`[data-testid=${arguments[0]}]`);
                 if (!g || !g.dataset.renderMs) return null;
                 const figs = [...g.querySelectorAll('[data-testid=chart]')];
                 return { ms: Number(g.dataset.renderMs),
                          ids: figs.map(f => f.dataset.chart),
                          drawn: figs.filter(f => f.querySelector('.chart canvas')).length,
                          errors: figs.map(f => f.querySelector('.error')?.textContent).filter(Boolean) };",
                vec![serde_json::json!(testid)],
            )
            .await?;
        if let Some(o) = v.as_object() {
            let errors = o["errors"].as_array().cloned().unwrap_or_default();
            if !errors.is_empty() {
                bail!("charts failed: {errors:?}");
            }
            let ids: Vec<String> = o["ids"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect();
            if o["drawn"].as_u64() == Some(ids.len() as u64) {
                return Ok((ids, o["ms"].as_f64().unwrap_or(f64::NAN)));
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("charts in {testid} were not drawn within {secs}s")
}

/// A Chrome DevTools Protocol command, sent through chromedriver (`goog/cdp/execute`).
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: serde_json::Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(serde_json::json!({ "cmd": self.cmd, "params": self.params }).to_string()),
        )
    }
}

/// Sends a Chrome DevTools Protocol command to the page (Chromium only) and returns its result.
pub async fn cdp(
    c: &Client,
    cmd: &'static str,
    params: serde_json::Value,
) -> Result<serde_json::Value> {
    c.issue_cmd(Cdp { cmd, params })
        .await
        .with_context(|| format!("DevTools command {cmd} failed"))
}

/// Ground truth of every measured request of `report`, from the studio's own server.
pub async fn ground_truths(
    port: u16,
    report: &ttft_core::report::Report,
) -> Result<Vec<ttft_core::calibration::GroundTruth>> {
    let mut out = Vec::new();
    for r in report.measured() {
        if let Some(id) = r.server_request_id.as_deref() {
            out.push(ttft_core::calibration::GroundTruth::from_json(
                &http_get(port, &format!("/v1/ground-truth/{id}")).await?,
            )?);
        }
    }
    Ok(out)
}

/// The reference endpoint's records of `model` it received since `since_ms` (wall clock,
/// [`unix_ms`]), as `GET /v1/ground-truth?since=&model=` lists them: what a peer tool's
/// requests are checked against.
pub async fn ground_truth_since(
    port: u16,
    since_ms: f64,
    model: &str,
) -> Result<Vec<serde_json::Value>> {
    let body = http_get(
        port,
        &format!("/v1/ground-truth?since={since_ms:.3}&model={model}"),
    )
    .await?;
    let mut v: serde_json::Value = serde_json::from_str(&body)?;
    match v["data"].take() {
        serde_json::Value::Array(records) => Ok(records),
        _ => bail!("no ground-truth list in {body:.200}"),
    }
}

/// Clicks "make share link" and returns the link the page wrote.
pub async fn make_share_link(c: &Client) -> Result<String> {
    click(c, "make-share-link").await?;
    c.wait()
        .for_element(Locator::Css("[data-testid=share-link]"))
        .await?
        .prop("value")
        .await?
        .context("the share box has no link")
}

/// A figure as the studio shows it (`12.3 ms`, `123 ms`, `1.23 s`): its value in ms and the
/// step it is rounded to (ms), so that two displays of values a link's precision apart can be
/// compared (they may round to neighbouring steps).
pub fn shown_ms(text: &str) -> Result<(f64, f64)> {
    let (n, unit) = text
        .split_once(' ')
        .with_context(|| format!("{text:?}: a number and a unit"))?;
    let scale = match unit {
        "s" => 1000.0,
        "ms" => 1.0,
        other => bail!("{text:?}: unit {other:?}, not ms or s"),
    };
    let decimals = n.split_once('.').map_or(0, |(_, d)| d.len());
    let value: f64 = n
        .parse()
        .with_context(|| format!("{text:?}: not a number"))?;
    Ok((value * scale, 10f64.powi(-(decimals as i32)) * scale))
}

/// Whether two shown figures agree within `slack_ms` plus the coarser display step.
pub fn shown_agree(a: &str, b: &str, slack_ms: f64) -> Result<bool> {
    let ((x, step_x), (y, step_y)) = (shown_ms(a)?, shown_ms(b)?);
    Ok((x - y).abs() <= step_x.max(step_y) + slack_ms)
}

/// Every lead a sentence claims (`… 2.70 s sooner than “B” (95 % interval 2.60–2.90 s)`,
/// `… finishes first too (1.20 s sooner, 95 % interval 1.1–1.3 s)`, the guide's `… 2.69 s
/// earlier (2.63–2.69 s)`): each claim's interval as `(lo, hi)` in ms. A claim that carries no
/// interval is an error: a sentence may claim a lead only with its interval (#29).
pub fn claimed_leads(text: &str) -> Result<Vec<(f64, f64)>> {
    const CLAIMS: [&str; 4] = ["sooner than", "sooner (", "sooner,", "earlier ("];
    let mut starts: Vec<usize> = CLAIMS
        .iter()
        .flat_map(|k| text.match_indices(k).map(|(i, _)| i))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    starts
        .into_iter()
        .map(|at| {
            let rest = &text[at..];
            let close = rest
                .find(')')
                .with_context(|| format!("a claim with no interval: {rest:?}"))?;
            let inside = &rest[..close];
            let range = match inside.find("interval ") {
                Some(i) => &inside[i + "interval ".len()..],
                None => inside
                    .rsplit_once('(')
                    .map(|(_, r)| r)
                    .with_context(|| format!("a claim with no interval: {inside:?}"))?,
            };
            interval_ms(range).with_context(|| format!("in {inside:?}"))
        })
        .collect()
}

/// A shown range of durations, `2.60–2.90 s`, `812 ms–1.20 s`, `−20 to 70 ms`, in ms.
fn interval_ms(range: &str) -> Result<(f64, f64)> {
    let range = range.trim().replace('−', "-");
    let (lo, hi) = range
        .split_once('–')
        .or_else(|| range.split_once(" to "))
        .with_context(|| format!("{range:?} is no range"))?;
    let hi_ms = shown_ms(hi.trim())?.0;
    // The unit is written once when both ends share it.
    let lo = lo.trim();
    let lo_ms = if lo.ends_with('s') {
        shown_ms(lo)?.0
    } else {
        let unit = hi.trim().rsplit_once(' ').map_or("", |(_, u)| u);
        shown_ms(&format!("{lo} {unit}"))?.0
    };
    Ok((lo_ms, hi_ms))
}

/// Runs an open-loop run from the UI against the reference endpoint: `requests` requests of
/// `model` at `rate` req/s (Poisson arrivals, or the load shape chosen on the form before),
/// 16 tokens each, up to 64 in flight so that a lane is free at each planned send (the
/// client keeps to the plan, and the achieved rate is the server's doing); waits for it.
pub async fn run_open_loop(
    c: &Client,
    model: &str,
    rate: f64,
    requests: usize,
    secs: u64,
) -> Result<()> {
    set_field(c, "model", model).await?;
    set_field(c, "requests", &requests.to_string()).await?;
    set_field(c, "concurrency", "64").await?;
    set_field(c, "max-tokens", "16").await?;
    set_field(c, "rate", &rate.to_string()).await?;
    click(c, "start-run").await?;
    wait_run_complete(c, secs).await
}

/// What the report of an open-loop run shows of its time: the planned-vs-achieved rate chart's
/// series, the time-slices charts and the per-window table.
#[derive(Debug, Clone)]
pub struct OverTime {
    /// The rate chart's series names (`planned`, `achieved`, its interval's bounds).
    pub rate_series: Vec<String>,
    /// The time-slices charts drawn (ids).
    pub slice_charts: Vec<String>,
    /// The per-window table's rows, each row's cells as text.
    pub windows: Vec<Vec<String>>,
}

/// Waits (up to `secs`) for the report's rate chart and time slices to be drawn and reads them.
/// Fails when either is missing, or the run has too few windows for the table (the page's
/// reason in the error).
pub async fn over_time(c: &Client, secs: u64) -> Result<OverTime> {
    let (rate, _) = drawn_charts(c, "rate-chart-grid", secs).await?;
    if rate != ["rate-chart"] {
        bail!("the rate grid holds {rate:?}");
    }
    let series = c
        .find(Locator::Css("[data-testid=rate-chart]"))
        .await?
        .attr("data-series")
        .await?
        .unwrap_or_default();
    if let Ok(why) = c.find(Locator::Css("[data-testid=time-slices-why]")).await {
        bail!("no time slices: {}", why.text().await?);
    }
    let (slice_charts, _) = drawn_charts(c, "time-slices-charts", secs).await?;
    let windows = c
        .execute(
            "return [...document.querySelectorAll('[data-testid=time-slices-table] tbody tr')]
                 .map(tr => [...tr.cells].map(td => td.textContent));",
            vec![],
        )
        .await?;
    let windows = serde_json::from_value(windows)?;
    Ok(OverTime {
        rate_series: series.split('|').map(str::to_owned).collect(),
        slice_charts,
        windows,
    })
}

/// The text the download button `testid` saves (its file name and contents): the page's
/// download link is caught as it is clicked and its blob read back.
pub async fn downloaded(c: &Client, testid: &str) -> Result<(String, String)> {
    let v = c
        .execute_async(
            "const [testid, done] = arguments;
             const click = HTMLAnchorElement.prototype.click;
             HTMLAnchorElement.prototype.click = function () {
               if (!this.href.startsWith('blob:')) return click.call(this);
               HTMLAnchorElement.prototype.click = click;
               fetch(this.href).then(r => r.text())
                 .then(text => done({ name: this.download, text }), e => done({ error: String(e) }));
             };
             document.querySelector(`[data-testid=${testid}]`).click();",
            vec![serde_json::json!(testid)],
        )
        .await?;
    if let Some(e) = v.get("error") {
        bail!("the download of {testid} failed: {e}");
    }
    Ok((
        v["name"].as_str().unwrap_or_default().to_owned(),
        v["text"].as_str().context("no downloaded text")?.to_owned(),
    ))
}

/// The rendering lab's strategies, as its `data-testid`s name them.
pub const LAB_STRATEGIES: [&str; 4] = ["rerender-all", "incremental", "per-frame", "smoothed"];

/// Presses the lab's Play and waits (up to `secs`) for play number `n` to end.
pub async fn play_lab(c: &Client, n: u32, secs: u64) -> Result<()> {
    click(c, "lab-play").await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let status = c.find(Locator::Css("[data-testid=lab-status]")).await?;
        if status.attr("data-plays").await?.as_deref() == Some(&n.to_string()) {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("the lab's play {n} did not end in {secs} s");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every lab strategy's figures (`lab-figures-<id>`'s `data-*` attributes, camelCase as
/// `dataset` names them), by strategy id.
pub async fn lab_figures(
    c: &Client,
) -> Result<std::collections::HashMap<String, std::collections::HashMap<String, String>>> {
    let v = c
        .execute(
            r"const out = {};
            for (const id of arguments[0]) {
              const el = document.querySelector(`[data-testid=lab-figures-${id}]`);
              out[id] = el ? Object.assign({}, el.dataset) : {};
            }
            return out;",
            vec![serde_json::json!(LAB_STRATEGIES)],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// Where a calibration made with something in place (`with`: the offline copy, the live
/// surface) measured a worse median error than the one without it, beyond this machine's
/// run-to-run spread of medians (1 ms), in words naming `what`; `None` when it did not.
pub fn worse_median_error(
    without: &ttft_core::calibration::CalibrationResult,
    with: &ttft_core::calibration::CalibrationResult,
    what: &str,
) -> Result<Option<String>> {
    for (name, a, b) in [
        (
            "TTFT P50",
            without.ttft_error_p50_ms,
            with.ttft_error_p50_ms,
        ),
        ("ITL P50", without.itl_error_p50_ms, with.itl_error_p50_ms),
    ] {
        let (a, b) = (a.context(name)?, b.context(name)?);
        if b > a + 1.0 {
            return Ok(Some(format!(
                "{name} |error| {b:.2} ms with {what} vs {a:.2} ms without"
            )));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_figures_read_with_their_display_step() {
        let near = |(v, s): (f64, f64), (w, t): (f64, f64)| {
            assert!((v - w).abs() < 1e-9 && (s - t).abs() < 1e-9, "{v} {s}")
        };
        near(shown_ms("12.3 ms").unwrap(), (12.3, 0.1));
        near(shown_ms("123 ms").unwrap(), (123.0, 1.0));
        near(shown_ms("1.23 s").unwrap(), (1230.0, 10.0));
        assert!(shown_ms("12.3").is_err() && shown_ms("x ms").is_err());
        // Within the coarser step (1 ms) and the slack: agree; two steps apart: do not.
        assert!(shown_agree("99.96 ms", "100 ms", 0.05).unwrap());
        assert!(!shown_agree("100 ms", "102 ms", 0.05).unwrap());
    }

    #[test]
    fn claimed_leads_carry_their_intervals() {
        let lesson = "“model-b” finishes 1.75 s sooner than “model-a” (95 % interval 1.31–2.10 s), but “model-a” shows its first token 2.68 s sooner than “model-b” (95 % interval 812 ms–2.70 s): users will feel “model-a” is faster. Total latency lies. “model-b” only catches up at token 98 (7.24 s); answers shorter than that are seen sooner on “model-a”.";
        assert_eq!(
            claimed_leads(lesson).unwrap(),
            vec![(1310.0, 2100.0), (812.0, 2700.0)]
        );
        let guide = "model-b finishes its answer 2.08 s sooner (95 % interval 1.35–2.09 s), yet model-a shows its first words 2.69 s earlier (2.63–2.69 s): play";
        assert_eq!(
            claimed_leads(guide).unwrap(),
            vec![(1350.0, 2090.0), (2630.0, 2690.0)]
        );
        let too = "“A” shows its first token 90.0 ms sooner than “B” (95 % interval 80.0–95.0 ms), and it finishes first too (1.20 s sooner, 95 % interval −20 to 70 ms).";
        assert_eq!(
            claimed_leads(too).unwrap(),
            vec![(80.0, 95.0), (-20.0, 70.0)]
        );
        assert!(claimed_leads("“A” is 2.70 s sooner than “B”.").is_err());
        assert!(
            claimed_leads("No difference is told from noise yet")
                .unwrap()
                .is_empty()
        );
    }
}
