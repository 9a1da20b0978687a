//! The Locust vantage (#12): the studio's generated `locustfile.py` run by Locust against the
//! bench's in-process reference endpoint, its worker files merged by the core
//! ([`merge_files`]) and every request compared with ground truth by the same
//! [`agreement`] as the studio, the floor probe and the peers.
//!
//! Locust is the pinned one `cargo xtask locust` (or `cargo xtask test`) installs into
//! `target/locust` (or `$LOCUST`, the `locust` executable); without it the section is skipped
//! with the reason and the bench goes on. Every run is distributed mode on loopback, headless,
//! **one master and one worker process** (so every figure is one Python process's), all users
//! spawned at once (`-r` = `-u`), bounded by a request count per worker (`--ttft-requests`)
//! and by time (`-t`, with `--stop-timeout 10` so requests in flight finish):
//!
//! - **Error** at 16, 64 and 256 users: `sim-bench` (20 ms steps, one chunk per token), 100
//!   tokens per request, the model and length of the fidelity section; 32, 128 and 256
//!   requests (two per user at 16 and 64, as the studio's levels; one per user at 256).
//! - **Capacity** of one worker process: `sim-bench-fast` (5 ms steps, so 200 chunks/s per
//!   stream) at rising users, four 100-token requests per user; chunks/s received (first to
//!   last chunk) and the per-gap error at each level, as the browser's capacity section. The
//!   climb stops once the rate falls below 90 % of the best so far, or the section has run
//!   for [`BUDGET`].

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use ttft_core::locust::{LocustTarget, locustfile};
use ttft_core::scenario::{ScenarioConfig, ScenarioKind};
use ttft_core::timeline_file::{MergeOptions, merge_files};
use ttft_e2e::{Studio, free_port, unix_ms};

use crate::accuracy::agreement;
use crate::studio_requests;

/// The fidelity section's model: 20 ms steps nearly independent of load.
const MODEL: &str = "sim-bench";
/// The capacity model: 5 ms steps (200 chunks/s per stream).
const FAST_MODEL: &str = "sim-bench-fast";
/// Chunks per second one `sim-bench-fast` stream is offered.
const FAST_CHUNKS_PER_S: f64 = 200.0;
/// Output tokens per request; both models write one chunk per token.
const OUTPUT_TOKENS: u32 = 100;
/// Worker processes per run.
const WORKERS: u32 = 1;
/// Error levels: (users, requests in all).
const ERROR_LEVELS: [(u32, u32); 3] = [(16, 32), (64, 128), (256, 256)];
/// Capacity levels (users), climbed in order.
const CAPACITY_USERS: [u32; 8] = [1, 4, 16, 32, 64, 128, 192, 256];
/// Requests per user at each capacity level.
const CAPACITY_REQUESTS_PER_USER: u32 = 4;
/// Locust's time bound (`-t`) of an error run and of a capacity run.
const ERROR_RUN_TIME: &str = "60s";
const CAPACITY_RUN_TIME: &str = "30s";
/// Longest the capacity climb starts new levels for, from the section's start.
const BUDGET: Duration = Duration::from_secs(5 * 60);

/// The `locust` executable: `$LOCUST`, else `ROOT/target/locust/bin/locust`.
fn locust_bin(root: &Path) -> Result<PathBuf> {
    let p = std::env::var_os("LOCUST")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/locust/bin/locust"));
    ensure!(
        p.exists(),
        "no Locust at {} (run `cargo xtask locust`, which installs it into target/locust, or set LOCUST)",
        p.display()
    );
    // The runs start in their own directory.
    Ok(std::path::absolute(&p)?)
}

/// `date -u`, as the machine block of the results says it.
fn date_utc() -> String {
    Command::new("date")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The last 600 characters of a log, on one line.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let chars: Vec<char> = text.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(600)..].iter().collect();
    tail.replace('\n', " | ")
}

/// Processes killed when dropped (a failed run leaves none behind).
struct Procs(Vec<Child>);

impl Drop for Procs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One Locust run: the scenario and its bounds.
struct Run {
    name: String,
    model: &'static str,
    users: u32,
    /// Requests per worker.
    per_worker: u32,
    run_time: &'static str,
}

/// What a run left: the worker files and the master's ledger, `(name, text)`.
struct Files {
    workers: Vec<(String, String)>,
    ledger: Option<(String, String)>,
}

/// Writes the generated locustfile for `run` against `studio` into `dir`.
fn write_locustfile(dir: &Path, studio: &Studio, run: &Run) -> Result<PathBuf> {
    let target = LocustTarget {
        base_url: studio.url.clone(),
        dialect: None,
        model: run.model.into(),
        extra_headers: String::new(),
    };
    let scenario = ScenarioConfig {
        kind: ScenarioKind::Chat,
        max_tokens: OUTPUT_TOKENS,
        concurrency: run.users,
        requests: run.per_worker,
        warmup: 0,
        ..ScenarioConfig::default()
    };
    let file = dir.join("locustfile.py");
    std::fs::write(&file, locustfile(&target, &scenario, &run.name)?)?;
    Ok(file)
}

/// Runs Locust (one master, [`WORKERS`] workers) in `dir` until the master exits.
async fn run_locust(bin: &Path, dir: &Path, file: &Path, run: &Run) -> Result<Files> {
    let _ = std::fs::remove_dir_all(dir.join("timelines"));
    let port = free_port()?;
    let common = |c: &mut Command, log: &str| -> Result<()> {
        let out = std::fs::File::create(dir.join(log))?;
        c.arg("-f")
            .arg(file)
            .current_dir(dir)
            .env("TTFT_TIMELINE_DIR", dir.join("timelines"))
            .env_remove("TTFT_API_KEY")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        Ok(())
    };
    let users = run.users.to_string();
    let workers = WORKERS.to_string();
    let mut m = Command::new(bin);
    common(&mut m, "master.log")?;
    m.args(["--master", "--headless", "--expect-workers", &workers])
        .args(["-u", &users, "-r", &users, "-t", run.run_time])
        .args(["--stop-timeout", "10", "--ttft-workers", &workers])
        .args(["--master-bind-host", "127.0.0.1", "--master-bind-port"])
        .arg(port.to_string())
        .arg("--ttft-requests")
        .arg(run.per_worker.to_string());
    let mut procs = Procs(vec![m.spawn().context("cannot start the Locust master")?]);
    for k in 0..WORKERS {
        let mut w = Command::new(bin);
        common(&mut w, &format!("worker{k}.log"))?;
        w.args(["--worker", "--master-host", "127.0.0.1", "--master-port"])
            .arg(port.to_string());
        procs
            .0
            .push(w.spawn().context("cannot start a Locust worker")?);
    }
    // The run's own bound, plus start-up, the stop timeout and a margin.
    let limit = Duration::from_secs(
        run.run_time
            .trim_end_matches('s')
            .parse::<u64>()
            .unwrap_or(60)
            + 40,
    );
    let started = Instant::now();
    loop {
        // Locust exits 1 when a request failed: failures are counted, not fatal.
        if procs.0[0].try_wait()?.is_some() {
            break;
        }
        if started.elapsed() > limit {
            bail!(
                "the Locust master ran over {} s; its log ends: {}",
                limit.as_secs(),
                log_tail(&dir.join("master.log"))
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The workers write their last lines and leave once the master quits.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(procs);
    let mut files = Files {
        workers: Vec::new(),
        ledger: None,
    };
    let entries = std::fs::read_dir(dir.join("timelines")).with_context(|| {
        format!(
            "no timeline files; the worker's log ends: {}",
            log_tail(&dir.join("worker0.log"))
        )
    })?;
    for e in entries {
        let p = e?.path();
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if name.ends_with(".jsonl") {
            files.workers.push((name, std::fs::read_to_string(&p)?));
        } else if name.ends_with(".ledger.json") {
            files.ledger = Some((name, std::fs::read_to_string(&p)?));
        }
    }
    files.workers.sort();
    ensure!(
        !files.workers.is_empty(),
        "the workers wrote no timeline file"
    );
    Ok(files)
}

/// Ground-truth records of `model` the server received since `since` (wall clock, ms).
async fn records_since(port: u16, model: &str, since: f64) -> Result<usize> {
    Ok(ttft_e2e::ground_truth_since(port, since, model)
        .await?
        .len())
}

/// One run: Locust, the merge, the comparison with ground truth. The row carries the
/// agreement's figures, the run's size and what the merge found.
async fn measure(studio: &Studio, bin: &Path, work: &Path, run: &Run) -> Result<Value> {
    let dir = work.join(&run.name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let file = write_locustfile(&dir, studio, run)?;
    let since = unix_ms() - 1.0;
    let started = Instant::now();
    let files = run_locust(bin, &dir, &file, run).await?;
    let wall_s = started.elapsed().as_secs_f64();
    let mut inputs = files.workers.clone();
    inputs.extend(files.ledger.clone());
    let merged = merge_files(&inputs, &MergeOptions::default())?;
    // Ground truth is filed when a response's stream ends; give the last ones a moment.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let server_records = records_since(studio.port, run.model, since).await?;
    let a = agreement(studio.port, &studio_requests(&merged.report)).await?;
    let mut row = a.to_json();
    row["users"] = json!(run.users);
    row["requests"] = json!(run.per_worker * WORKERS);
    row["merge"] = json!({
        "files": files.workers.len(), "lines": merged.lines_read,
        "requests": merged.report.requests.len(), "duplicates": merged.duplicates,
        "missing": merged.missing.iter().map(|(_, n)| u64::from(*n)).sum::<u64>(),
        "bad_lines": merged.bad_lines.len(),
        "skew": merged.skew.as_ref().map(|s| s.message.clone()),
        "server_records": server_records,
    });
    // Reads of the body (one stamp each): more chunks than reads means the worker read late
    // enough for several SSE events to arrive together.
    let reads: usize = merged
        .report
        .measured()
        .filter_map(|r| r.raw.as_ref())
        .map(|raw| raw.reads.len())
        .sum();
    row["reads"] = json!(reads);
    row["agent"] = json!(merged.vantages.first().and_then(|v| v.agent.clone()));
    row["wall_s"] = json!((wall_s * 10.0).round() / 10.0);
    eprintln!(
        "locust: {} users: {} requests merged, {} seen by the server, {:.0} chunks/s, ITL |error| P99 {} ms",
        run.users,
        merged.report.requests.len(),
        server_records,
        a.chunks_per_s,
        row["itl_error"]["p99_ms"]
    );
    Ok(row)
}

/// The whole section: `{ levels, capacity, workers, agent, … }`, or `{ skipped }` with the
/// reason when Locust is missing. A run that fails stops the section with its reason in
/// `error` (what was measured before it is kept); the bench goes on either way.
pub async fn locust(studio: &Studio, root: &Path, work: &Path) -> Value {
    let bin = match locust_bin(root) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("locust: skipped: {e:#}");
            return json!({ "skipped": format!("{e:#}") });
        }
    };
    let started = Instant::now();
    let work = work.join("locust");
    let mut out = json!({
        "model": MODEL, "output_tokens": OUTPUT_TOKENS, "workers": WORKERS,
        "date": date_utc(),
        "levels": [],
        "capacity": { "model": FAST_MODEL, "requests_per_user": CAPACITY_REQUESTS_PER_USER,
                      "levels": [] },
    });
    if let Err(e) = sections(studio, &bin, &work, started, &mut out).await {
        eprintln!("locust: stopped: {e:#}");
        out["error"] = json!(format!("{e:#}"));
    }
    out["duration_s"] = json!(started.elapsed().as_secs_f64().round());
    let _ = std::fs::remove_dir_all(&work);
    out
}

/// Error levels, then the capacity climb, into `out`.
async fn sections(
    studio: &Studio,
    bin: &Path,
    work: &Path,
    started: Instant,
    out: &mut Value,
) -> Result<()> {
    for (users, requests) in ERROR_LEVELS {
        eprintln!("locust: {users} users, {requests} requests of {MODEL}…");
        let run = Run {
            name: format!("bench-locust-{users}"),
            model: MODEL,
            users,
            per_worker: requests / WORKERS,
            run_time: ERROR_RUN_TIME,
        };
        let row = measure(studio, bin, work, &run).await?;
        if out["agent"].is_null() {
            out["agent"] = row["agent"].clone();
        }
        out["levels"].as_array_mut().context("levels")?.push(row);
    }
    let mut best: Option<f64> = None;
    let mut peak: Option<(u32, f64, f64)> = None;
    for users in CAPACITY_USERS {
        if started.elapsed() > BUDGET {
            out["capacity"]["stopped"] = json!(format!(
                "the section's {} s budget was spent before {users} users",
                BUDGET.as_secs()
            ));
            break;
        }
        eprintln!("locust capacity: {users} users of {FAST_MODEL}, one worker…");
        let run = Run {
            name: format!("bench-locust-capacity-{users}"),
            model: FAST_MODEL,
            users,
            per_worker: users * CAPACITY_REQUESTS_PER_USER / WORKERS,
            run_time: CAPACITY_RUN_TIME,
        };
        let mut row = measure(studio, bin, work, &run).await?;
        let rate = row["chunks_per_s"].as_f64().unwrap_or(0.0);
        let p99 = row["itl_error"]["p99_ms"].as_f64().unwrap_or(f64::INFINITY);
        row["offered_chunks_per_s"] = json!(f64::from(users) * FAST_CHUNKS_PER_S);
        if p99 < 1.0 {
            best = Some(best.map_or(rate, |b| b.max(rate)));
        }
        let top = peak.as_ref().map_or(0.0, |p| p.1);
        out["capacity"]["levels"]
            .as_array_mut()
            .context("capacity levels")?
            .push(row);
        if rate > top {
            peak = Some((users, rate, p99));
        } else if rate < 0.9 * top {
            out["capacity"]["stopped"] = json!(format!(
                "the rate fell below 90 % of the best ({top:.0} chunks/s) at {users} users"
            ));
            break;
        }
    }
    out["capacity"]["max_chunks_per_s_with_p99_error_under_1ms"] = json!(best);
    if let Some((users, rate, p99)) = peak {
        out["capacity"]["peak"] =
            json!({ "users": users, "chunks_per_s": rate, "itl_p99_ms": p99 });
    }
    Ok(())
}

/// `ttft-bench ROOT --locust-only`: measures this section alone against a fresh server, puts
/// it into `ROOT/bench/results.json` (keeping every other figure) and re-renders
/// `BENCHMARKS.md`.
pub async fn standalone(root: &Path) -> Result<()> {
    let served = crate::server::start_from_env(root).await?;
    let studio = &served.studio;
    let work = std::env::temp_dir().join(format!("ttft-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let mut section = locust(studio, root, &work).await;
    section["mode"] = json!("--locust-only");
    let _ = std::fs::remove_dir_all(&work);
    crate::bench_report::merge_section(root, "locust", section)?;
    eprintln!("wrote the Locust section into bench/results.json and BENCHMARKS.md");
    Ok(())
}
