//! `ttft-bench ROOT`: drives the built studio in headless Chromium against the reference
//! endpoint (the release `ttft-server` in its own process, `server`) and writes `ROOT/BENCHMARKS.md` and `ROOT/bench/results.json`.
//! Run it through `cargo xtask bench` (which installs and builds what is missing).
//! `ttft-bench ROOT --render-only` re-renders the Markdown from the last `results.json`;
//! `--large-only` and `--locust-only` re-measure one part into it (`locust`: the Locust
//! vantage) and re-render; `--server-compare` measures the 1- and 16-stream rounds with the
//! reference endpoint in its own process and in the bench's (`server`) into it;
//! `--fidelity-only` runs the side-by-side rounds alone into `target/bench/fidelity-only.json`
//! (with `TTFT_BENCH_QUICK=1`, `plan`, a quick partial run). The share links' run is kept in `target/bench/links-100.json`;
//! `--links-from FILE` measures the links of such a run (and of 1,000 and 10,000 requests
//! resampled from it) part by part, without a browser; `--codecs` measures mainstream codecs
//! against the links' own on the same columns (`codecs`, #28: `bench/codecs.json`); `--fuzz`
//! joins the last `cargo xtask fuzz` totals (`bench/fuzz.json`, #30) to the results and
//! re-renders.
//!
//! It starts the server and the browser with the end-to-end harness (`ttft-e2e`); the
//! synthetic reports for render and share-link sizes come from `synthetic`, the Markdown from
//! `bench_report`.

mod accuracy;
mod bench_report;
mod capacity;
mod codecs;
mod fidelity;
mod floor;
mod fuzz;
mod intervals;
mod locust;
mod paint;
mod peers;
mod plan;
mod server;
mod synthetic;
mod tails;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use ttft_core::report::Report;
use ttft_core::stats::Summary;
use ttft_e2e::*;

use crate::accuracy::ClientRequest;
use crate::synthetic::synthetic_report;
use ttft_core::run_stats::RunStats;

/// Opens a fresh page with no saved runs; `query` (`?stamping=page`) goes into its URL.
async fn fresh_page(c: &Client, studio: &Studio, query: &str) -> Result<()> {
    c.goto(&studio.url).await?;
    clear_saved_runs(c).await?;
    c.goto(&format!("{}/{query}", studio.url)).await?;
    wait_text(c, "clock-status", 10, |t| t.contains("µs")).await?;
    Ok(())
}

/// How a studio run reaches the reference endpoint and where it stamps.
struct Setup {
    /// Page URL query choosing the stamping (`""` = the default).
    query: &'static str,
    /// Main base URL (`""` = the page's origin).
    base_url: String,
    /// Shard base URLs.
    shards: Vec<String>,
}

impl Setup {
    /// The studio's defaults, against `base_url`.
    fn plain(base_url: &str) -> Setup {
        Setup {
            query: "",
            base_url: base_url.to_owned(),
            shards: Vec::new(),
        }
    }
}

/// Runs a closed-loop chat scenario from the UI and returns the saved report.
async fn ui_run(
    c: &Client,
    studio: &Studio,
    setup: &Setup,
    model: &str,
    requests: usize,
    concurrency: usize,
    tokens: usize,
) -> Result<Report> {
    fresh_page(c, studio, setup.query).await?;
    set_field(c, "base-url", &setup.base_url).await?;
    set_field(c, "shards", &setup.shards.join("\n")).await?;
    set_field(c, "model", model).await?;
    set_field(c, "requests", &requests.to_string()).await?;
    set_field(c, "concurrency", &concurrency.to_string()).await?;
    // One warm-up request per origin (excluded, as in the studio's default): it opens a
    // connection and primes the CORS preflight cache, which the first requests would pay.
    set_field(c, "warmup", &(1 + setup.shards.len()).to_string()).await?;
    set_field(c, "max-tokens", &tokens.to_string()).await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 300).await?;
    let mut runs = saved_runs(c).await?;
    anyhow::ensure!(!runs.is_empty(), "the run was not saved");
    Ok(runs.remove(0))
}

/// The studio's report as the client requests the comparison reads.
fn studio_requests(report: &Report) -> Vec<ClientRequest> {
    report
        .measured()
        .map(ttft_core::calibration::client_chunks)
        .collect()
}

fn gzip_len(bytes: &[u8]) -> usize {
    // DEFLATE at level 9 plus gzip's 18 bytes of header and trailer.
    miniz_oxide::deflate::compress_to_vec(bytes, 9).len() + 18
}

/// Sizes of what `dist/` serves: the wasm, its JS glue and ECharts, raw and gzip; the first
/// load: every file the built `index.html` names and every module those scripts import
/// statically (the page, its CSS, the glue and the lazy parts' loader, the main wasm; ECharts
/// only if the page loads it up front rather than on demand); and the lazy parts, each with the
/// files it loads (`wasm-parts.json`, written by `crates/ttft-split`).
fn bundle(root: &Path) -> Result<Value> {
    let dist = root.join("dist");
    let size = |name: &str| -> (usize, usize) {
        let bytes = std::fs::read(dist.join(name)).unwrap_or_default();
        (bytes.len(), gzip_len(&bytes))
    };
    let page = std::fs::read(dist.join("index.html"))?;
    // What the page names outside its comments.
    let mut page_text = String::new();
    for (i, part) in String::from_utf8_lossy(&page).split("<!--").enumerate() {
        page_text.push_str(if i == 0 {
            part
        } else {
            part.split_once("-->").map_or("", |(_, rest)| rest)
        });
    }
    let names: Vec<String> = std::fs::read_dir(&dist)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut first_load_files = vec!["index.html".to_owned()];
    first_load_files.extend(
        names
            .iter()
            .filter(|n| *n != "index.html" && page_text.contains(n.as_str()))
            .cloned(),
    );
    // The scripts' static imports, transitively (the glue imports the lazy parts' loader).
    let mut i = 0;
    while i < first_load_files.len() {
        if first_load_files[i].ends_with(".js") {
            let text = std::fs::read_to_string(dist.join(&first_load_files[i])).unwrap_or_default();
            for imported in static_imports(&text) {
                if names.contains(&imported) && !first_load_files.contains(&imported) {
                    first_load_files.push(imported);
                }
            }
        }
        i += 1;
    }
    let first_load: usize = first_load_files.iter().map(|n| size(n).1).sum();
    let pick = |f: &dyn Fn(&str) -> bool| -> (usize, usize) {
        names
            .iter()
            .filter(|n| f(n))
            .map(|n| size(n))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let wasm = pick(&|n| n.starts_with("ttft-studio") && n.ends_with("_bg.wasm"));
    let js = pick(&|n| {
        (n.starts_with("ttft-studio") || n.starts_with("__wasm_split")) && n.ends_with(".js")
    });
    let echarts = pick(&|n| n.starts_with("echarts") && n.ends_with(".js"));
    let lazy =
        pick(&|n| n.ends_with(".wasm") && (n.starts_with("split_") || n.starts_with("chunk_")));
    let lazy_files = names
        .iter()
        .filter(|n| n.ends_with(".wasm") && (n.starts_with("split_") || n.starts_with("chunk_")))
        .count();
    let manifest: serde_json::Map<String, Value> = std::fs::read(dist.join("wasm-parts.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let parts: Vec<Value> = manifest
        .iter()
        .map(|(part, files)| {
            let files: Vec<&str> = files
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let (raw, gzip) = files
                .iter()
                .map(|f| size(f))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            json!({ "part": part, "files": files.len(), "raw": raw, "gzip": gzip })
        })
        .collect();
    Ok(json!({
        "wasm_raw": wasm.0, "wasm_gzip": wasm.1, "js_raw": js.0, "js_gzip": js.1,
        "app_gzip_total": wasm.1 + js.1, "echarts_raw": echarts.0, "echarts_gzip": echarts.1,
        "first_load_gzip": first_load, "first_load_files": first_load_files,
        "lazy_raw": lazy.0, "lazy_gzip": lazy.1, "lazy_files": lazy_files, "lazy_parts": parts,
    }))
}

/// The relative modules a script imports statically (`import … from "./x.js"`, `import "./x.js"`),
/// as file names in the same directory.
fn static_imports(js: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in js.match_indices("import") {
        let rest = &js[i + "import".len()..];
        // Up to the end of the statement: `… from "x"` or `"x"` right away.
        let statement = rest.split(';').next().unwrap_or("");
        let spec = statement
            .rsplit_once("from")
            .map_or(statement, |(_, s)| s)
            .trim_start();
        let Some(quote) = spec.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some(path) = spec[1..].split(quote).next() else {
            continue;
        };
        if let Some(name) = path.strip_prefix("./").or_else(|| path.strip_prefix('/'))
            && !name.contains('/')
            && !out.iter().any(|o| o == name)
        {
            out.push(name.to_owned());
        }
    }
    out
}

async fn load_times(driver: &Driver, studio: &Studio, runs: usize) -> Result<Value> {
    let mut samples: Vec<Value> = Vec::new();
    for _ in 0..runs {
        let c = browser(driver).await?;
        c.goto(&studio.url).await?;
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        let v = loop {
            let v = c
                .execute(
                    "const m = performance.getEntriesByName('ttft-studio:interactive')[0];
                     if (!m) return null;
                     const nav = performance.getEntriesByType('navigation')[0];
                     const paint = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]));
                     const wasm = performance.getEntriesByType('resource').find(r => r.name.endsWith('.wasm'));
                     return { first_paint_ms: paint['first-paint'] ?? null,
                              first_contentful_paint_ms: paint['first-contentful-paint'] ?? null,
                              dom_content_loaded_ms: nav.domContentLoadedEventEnd,
                              interactive_ms: m.startTime,
                              wasm_fetch_ms: wasm ? wasm.responseEnd - wasm.startTime : null };",
                    vec![],
                )
                .await?;
            if !v.is_null() || Instant::now() > deadline {
                break v;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        c.close().await?;
        samples.push(v);
    }
    let median = |key: &str| {
        let v: Vec<f64> = samples.iter().filter_map(|s| s[key].as_f64()).collect();
        Summary::of(&v).map(|s| s.p50)
    };
    Ok(json!({
        "runs": runs,
        "first_paint_ms": median("first_paint_ms"),
        "first_contentful_paint_ms": median("first_contentful_paint_ms"),
        "dom_content_loaded_ms": median("dom_content_loaded_ms"),
        "interactive_ms": median("interactive_ms"),
        "wasm_fetch_ms": median("wasm_fetch_ms"),
        "samples": samples,
    }))
}

/// What the tab holds: the app's wasm memory (`window.ttftWasmMemory`), the JS heap in use
/// (`performance.memory`), and Chromium's whole-page figure (`measureUserAgentSpecificMemory`,
/// the page being cross-origin isolated; it may wait for a garbage collection, at most 30 s).
async fn tab_memory(c: &Client) -> Result<Value> {
    Ok(c.execute_async(
        "const done = arguments[arguments.length - 1];
         const wasm = self.ttftWasmMemory ? self.ttftWasmMemory.buffer.byteLength : null;
         const heap = performance.memory ? performance.memory.usedJSHeapSize : null;
         if (!(self.crossOriginIsolated && performance.measureUserAgentSpecificMemory)) {
           done({ wasm_bytes: wasm, js_heap_bytes: heap, page_bytes: null });
           return;
         }
         const t = setTimeout(() => done({ wasm_bytes: wasm, js_heap_bytes: heap, page_bytes: null }), 30000);
         performance.measureUserAgentSpecificMemory().then(
           m => { clearTimeout(t); done({ wasm_bytes: wasm, js_heap_bytes: heap, page_bytes: m.bytes }); },
           () => { clearTimeout(t); done({ wasm_bytes: wasm, js_heap_bytes: heap, page_bytes: null }); });",
        vec![],
    )
    .await?)
}

async fn chart_render(
    c: &Client,
    studio: &Studio,
    dir: &Path,
    n: usize,
    reps: usize,
) -> Result<Value> {
    let report = synthetic_report(n, 100, 7);
    let path = dir.join(format!("synthetic-{n}.json"));
    std::fs::write(&path, serde_json::to_string(&report)?)?;
    let mut times = Vec::new();
    let mut charts = 0;
    for _ in 0..reps {
        fresh_page(c, studio, "").await?;
        // ECharts loads when the page is first idle, long before a person has picked a file:
        // the figure is the charts' building and drawing, not the library's download.
        c.execute_async(
            "const done = arguments[0], t0 = performance.now();
             (function poll() {
               if (window.echarts || performance.now() - t0 > 10000) done(!!window.echarts);
               else setTimeout(poll, 20);
             })();",
            vec![],
        )
        .await?;
        let input = c.find(Locator::Css("[data-testid=import-file]")).await?;
        input.send_keys(path.to_str().context("path")?).await?;
        let (ids, ms) = drawn_charts(c, "report-charts", 120).await?;
        charts = ids.len();
        times.push(ms);
    }
    let s = Summary::of(&times).context("no render times")?;
    // With the report open and drawn: what the tab holds.
    let memory = tab_memory(c).await?;
    Ok(json!({
        "requests": n, "charts": charts, "median_ms": s.p50, "max_ms": s.max,
        "samples_ms": times, "memory": memory,
    }))
}

/// Characters the 0.1 ms gap steps of `report` need at least when each is coded on its own:
/// their empirical order-0 entropy (bits per gap × gaps) in base64 characters.
fn gap_entropy_chars(report: &Report) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut total = 0usize;
    for r in report.requests.iter() {
        for g in &r.metrics.itl_ms {
            *counts.entry((g / 0.1).round() as i64).or_insert(0usize) += 1;
            total += 1;
        }
    }
    let bits: f64 = counts
        .values()
        .map(|&c| {
            let p = c as f64 / total as f64;
            -(c as f64) * p.log2()
        })
        .sum();
    bits / 6.0
}

/// Share links: a real 100-request run on the reference endpoint (100 tokens each, recorded by
/// the studio), and 1,000 and 10,000 requests resampled from it; each link is decoded natively
/// (headline within its precision), then opened in a fresh page of the browser.
async fn share_links(c: &Client, studio: &Studio) -> Result<Value> {
    eprintln!("share links: a 100-request run…");
    let real = ui_run(c, studio, &Setup::plain(""), "sim-bench", 100, 8, 100).await?;
    // The run behind every link figure, kept for working on the codec
    // (`ttft-bench ROOT --links-from target/bench/links-100.json`).
    let kept = std::env::var_os("TTFT_BENCH_LINK_RUN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/bench/links-100.json"));
    if let Some(dir) = kept.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&kept, real.to_json_pretty())?;
    let (printed, parts) = link_breakdown(&real);
    eprintln!("{printed}");
    let real_replay_chars = replay_chars(&parts);
    let mut out = serde_json::Map::new();
    for n in [100usize, 1000, 10_000] {
        let report = if n == 100 {
            real.clone()
        } else {
            synthetic::resampled_report(&real, n, 11)
        };
        let replays = (n == 100).then_some(real_replay_chars);
        out.insert(n.to_string(), link_row(c, studio, &report, replays).await?);
    }
    // A real run of 1,000 requests too: its streams share the server's steps, as every
    // concurrent run's do, which the resampled one (each request's gaps drawn on their own)
    // cannot show.
    eprintln!("share links: a real 1000-request run ({REAL_LINK_STREAMS} streams)…");
    let real_1000 = ui_run(
        c,
        studio,
        &Setup::plain(""),
        "sim-bench",
        1000,
        REAL_LINK_STREAMS,
        100,
    )
    .await?;
    // Kept beside the 100-request run: `ttft-bench ROOT --codecs` measures the codecs on it.
    if let Some(dir) = kept.parent() {
        std::fs::write(dir.join("links-1000-real.json"), real_1000.to_json_pretty())?;
    }
    eprintln!("{}", link_breakdown(&real_1000).0);
    let mut row = link_row(c, studio, &real_1000, None).await?;
    row["streams"] = json!(REAL_LINK_STREAMS);
    row["itl_p50_ms_of_run"] = json!(real_1000.aggregates().itl.map(|s| s.p50));
    out.insert("1000_real".into(), row);
    out.insert(
        "source".into(),
        json!({ "title": real.title, "requests": real.requests.len(),
                "itl_p50_ms": real.aggregates().itl.map(|s| s.p50) }),
    );
    Ok(Value::Object(out))
}

/// Streams of the real 1,000-request run behind the share-link figures (over the reference
/// endpoint's HTTP/1.1 origins).
const REAL_LINK_STREAMS: usize = 32;

/// One row of the share-link figures: `report`'s default link, decoded (its headline within
/// its precision) and opened in a fresh page, beside the whole link, r2 and r1, the gaps'
/// entropy bound and the report's JSON; `replay_chars`, the replays' share, where known.
async fn link_row(
    c: &Client,
    studio: &Studio,
    report: &Report,
    replay_chars: Option<f64>,
) -> Result<Value> {
    use ttft_share::{ShareOptions, compact_for_share, decode, encode, encode_r1, encode_r2};
    let n = report.requests.len();
    let started = Instant::now();
    let link = encode(report, &ShareOptions::default());
    let encode_ms = started.elapsed().as_secs_f64() * 1e3;
    let whole = encode(
        report,
        &ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        },
    );
    let whole_r2 = encode_r2(
        report,
        &ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        },
    );
    let r1 = encode_r1(&compact_for_share(report, 5));
    let back = decode(&link.text)?;
    let (a, b) = (back.aggregates(), report.aggregates());
    let p50 = |s: Option<Summary>| s.map(|s| s.p50);
    // What the link promises: each time within half its step, each gap within its step.
    let within = |x: Option<f64>, y: Option<f64>, limit: f64| match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() <= limit + 1e-9,
        (x, y) => x.is_none() && y.is_none(),
    };
    let step = link.precision_ms;
    anyhow::ensure!(
        within(p50(a.ttft), p50(b.ttft), step / 2.0) && within(p50(a.itl), p50(b.itl), step),
        "the {n}-request link's headline moved beyond its precision ({step} ms): TTFT P50 {:?} against {:?}, ITL P50 {:?} against {:?}",
        p50(a.ttft),
        p50(b.ttft),
        p50(a.itl),
        p50(b.itl)
    );
    fresh_page(c, studio, "").await?;
    let url = format!("{}/#share={}", studio.url, link.text);
    c.goto(&url).await?;
    let started = Instant::now();
    let shown = wait_text(c, "ttft-p50", 60, |t| {
        t.ends_with("ms") || t.ends_with(" s")
    })
    .await?;
    let open_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok(json!({
            "link_chars": link.text.len(),
            "whole_link_chars": whole.text.len(),
            "whole_r2_link_chars": whole_r2.text.len(),
            "gap_entropy_chars": gap_entropy_chars(report).round(),
        // (Of the real run only: its link is the one the estimates start from.)
        "replay_chars": replay_chars.map(f64::round),
            "r1_link_chars": r1.len(),
            "report_json_chars": serde_json::to_string(report)?.len(),
            "precision_ms": link.precision_ms,
            "replays": link.replays,
            "requests_kept": link.requests_kept,
            "gaps_kept_for": link.gaps_kept_for,
            "left_out": link.left_out,
            "encode_ms": encode_ms,
            "opens": true,
            "open_ms": open_ms,
            "ttft_p50_shown": shown,
            "ttft_p50_ms": p50(b.ttft),
            "itl_p50_ms": p50(b.itl),
            "itl_p50_reopened_ms": p50(a.itl),
    }))
}

/// Where the bytes of a report's link go, part by part: as a table, and the parts.
fn link_breakdown(report: &Report) -> (String, Vec<ttft_share::LinkPart>) {
    let (link, parts) = ttft_share::breakdown(report, &ttft_share::ShareOptions::default());
    let mut out = format!(
        "{} requests: {} characters ({} kept, gaps of {}, {} replays, {} ms steps)\n{:<68} {:>8} {:>8} {:>8}\n",
        report.requests.len(),
        link.text.len(),
        link.requests_kept,
        link.gaps_kept_for,
        link.replays,
        link.precision_ms,
        "part (bytes)",
        "raw",
        "coded",
        "deflated"
    );
    for p in &parts {
        out += &format!(
            "{:<68} {:>8} {:>8.0} {:>8}\n",
            p.name, p.raw_bytes, p.coded_bytes, p.deflated_alone_bytes
        );
    }
    (out, parts)
}

/// What a link's replays (their pieces and text) take of it, in characters, from its parts.
fn replay_chars(parts: &[ttft_share::LinkPart]) -> f64 {
    parts
        .iter()
        .filter(|p| p.name == "replay" || p.name == "text")
        .map(|p| p.coded_bytes * 4.0 / 3.0)
        .sum()
}

/// `--links-from FILE`: the link figures of a kept run (FILE, a report's JSON) and of 1,000 and
/// 10,000 requests resampled from it as the bench does, without a browser.
fn links_from(path: &Path) -> Result<()> {
    use ttft_share::{ShareOptions, decode, encode, encode_r3_deflate};
    let real = ttft_core::report::read_json(&std::fs::read(path)?)?;
    for n in [real.requests.len(), 1000, 10_000] {
        let report = if n == real.requests.len() {
            real.clone()
        } else {
            synthetic::resampled_report(&real, n, 11)
        };
        let whole = ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        };
        let started = Instant::now();
        let link = encode(&report, &ShareOptions::default());
        let encode_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        decode(&link.text)?;
        let decode_ms = started.elapsed().as_secs_f64() * 1e3;
        println!(
            "{n} requests: link {} chars ({} ms steps, encoded in {encode_ms:.0} ms, decoded in {decode_ms:.0} ms); whole {} chars, first r3 layout {} chars (whole {}), gap entropy bound {:.0} chars",
            link.text.len(),
            link.precision_ms,
            encode(&report, &whole).text.len(),
            encode_r3_deflate(&report, &ShareOptions::default())
                .text
                .len(),
            encode_r3_deflate(&report, &whole).text.len(),
            gap_entropy_chars(&report)
        );
        println!("{}", link_breakdown(&report).0);
    }
    Ok(())
}

/// The large-run figures (#13): bundle and first load, chart times, share links.
async fn large_runs(
    results: &mut serde_json::Map<String, Value>,
    root: &Path,
    driver: &Driver,
    studio: &Studio,
    work: &Path,
) -> Result<()> {
    eprintln!("bundle sizes…");
    results.insert("bundle".into(), bundle(root)?);
    eprintln!("load times (5 cold loads)…");
    results.insert("load".into(), load_times(driver, studio, 5).await?);
    let c = browser(driver).await?;
    eprintln!("chart render times…");
    results.insert(
        "charts".into(),
        json!({
            "r100": chart_render(&c, studio, work, 100, 3).await?,
            "r1000": chart_render(&c, studio, work, 1000, 3).await?,
            "r10000": chart_render(&c, studio, work, 10_000, 2).await?,
        }),
    );
    eprintln!("share links…");
    results.insert("share_links".into(), share_links(&c, studio).await?);
    c.close().await?;
    Ok(())
}

pub(crate) fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("?")
        .trim()
        .to_owned();
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .nth(1)
        .and_then(|k| k.parse::<f64>().ok())
        .map_or(0.0, |k| k / 1024.0 / 1024.0);
    let out = |prog: &str, arg: &str| {
        std::process::Command::new(prog)
            .arg(arg)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    json!({
        "cpu": cpu,
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "memory_gib": (mem * 10.0).round() / 10.0,
        "chromium": out("chromium", "--version"),
        "rustc": out("rustc", "--version"),
        "date": out("date", "-u"),
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    if std::env::args().nth(2).as_deref() == Some("--render-only") {
        // Re-renders BENCHMARKS.md from the last results (after editing the template).
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("bench/results.json"))?)?;
        std::fs::write(root.join("BENCHMARKS.md"), bench_report::markdown(&results))?;
        return Ok(());
    }
    match std::env::args().nth(2).as_deref() {
        // Quick runs of one part, printing its JSON (for working on it).
        Some("--floor-only") => return floor::standalone(&root).await,
        // The 1- and 16-stream rounds once with the server in its own process and once in the
        // bench's, merged into the last results.json as `server_compare`.
        Some("--server-compare") => return fidelity::server_compare(&root).await,
        Some("--peers-only") => return peers::standalone(&root).await,
        // Measures the Locust vantage alone into the last results.json and re-renders.
        Some("--locust-only") => return locust::standalone(&root).await,
        // Measures section 8 (what the screen showed) alone into the last results.json.
        Some("--paint-only") => {
            let section = paint::standalone(&root).await?;
            bench_report::merge_section(&root, "paint", section)?;
            eprintln!("wrote the paint section into bench/results.json and BENCHMARKS.md");
            return Ok(());
        }
        // Mainstream codecs against the share links' (#28): bench/codecs.json.
        Some("--codecs") => return codecs::run(&root),
        // What the intervals add to a report's time (#29).
        Some("--intervals") => return intervals::run(&root),
        // The last `cargo xtask fuzz` totals (bench/fuzz.json, #30) joined to the results.
        Some("--fuzz") => {
            let totals = fuzz::last(&root).context("no bench/fuzz.json: run `cargo xtask fuzz`")?;
            return bench_report::merge_section(&root, "fuzz", totals);
        }
        Some("--links-from") => {
            let path = std::env::args().nth(3).context("--links-from FILE")?;
            return links_from(Path::new(&path));
        }
        _ => {}
    }
    let started = Instant::now();
    let served = server::start_from_env(&root).await?;
    let studio = &served.studio;
    let driver = start_driver().await?;
    let work = std::env::temp_dir().join(format!("ttft-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    if std::env::args().nth(2).as_deref() == Some("--profile-charts") {
        // A DevTools CPU profile of opening an N-request report and drawing its charts (for
        // working on chart times; serve a dist built with names kept through TTFT_DIST).
        let n: usize = std::env::args()
            .nth(3)
            .and_then(|n| n.parse().ok())
            .context("--profile-charts N OUT.cpuprofile")?;
        let out = PathBuf::from(std::env::args().nth(4).context("OUT.cpuprofile")?);
        let c = browser(&driver).await?;
        let report = synthetic_report(n, 100, 7);
        let path = work.join(format!("synthetic-{n}.json"));
        std::fs::write(&path, serde_json::to_string(&report)?)?;
        for profile in [false, true] {
            fresh_page(&c, studio, "").await?;
            if profile {
                cdp(&c, "Profiler.enable", json!({})).await?;
                cdp(
                    &c,
                    "Profiler.setSamplingInterval",
                    json!({ "interval": 200 }),
                )
                .await?;
                cdp(&c, "Profiler.start", json!({})).await?;
            }
            let input = c.find(Locator::Css("[data-testid=import-file]")).await?;
            input.send_keys(path.to_str().context("path")?).await?;
            let (ids, ms) = drawn_charts(&c, "report-charts", 120).await?;
            eprintln!("{} charts drawn in {ms:.0} ms", ids.len());
            let each = c
                .execute(
                    "return [...document.querySelectorAll('[data-testid=report-charts] [data-chart]')]
                        .map(f => `${f.dataset.chart} ${f.dataset.drawMs} ms`).join(', ');",
                    vec![],
                )
                .await?;
            eprintln!(
                "each drawn by ECharts in: {}",
                each.as_str().unwrap_or_default()
            );
            if profile {
                let p = cdp(&c, "Profiler.stop", json!({})).await?;
                std::fs::write(&out, serde_json::to_string(&p["profile"])?)?;
            }
        }
        let _ = std::fs::remove_dir_all(&work);
        return Ok(());
    }
    if std::env::args().nth(2).as_deref() == Some("--large-only") {
        // Re-measures the large-run parts only (bundle, load, charts, links, storage) into the
        // last results.json, keeping its fidelity and capacity figures.
        let path = root.join("bench/results.json");
        let mut results: serde_json::Map<String, Value> =
            serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        large_runs(&mut results, &root, &driver, studio, &work).await?;
        results.insert("large_runs_date".into(), machine()["date"].clone());
        std::fs::write(&path, serde_json::to_string_pretty(&results)? + "\n")?;
        let results = Value::Object(results);
        std::fs::write(root.join("BENCHMARKS.md"), bench_report::markdown(&results))?;
        let _ = std::fs::remove_dir_all(&work);
        return Ok(());
    }
    let fidelity_only = std::env::args().nth(2).as_deref() == Some("--fidelity-only");
    let mut results = serde_json::Map::new();
    results.insert("machine".into(), machine());
    results.insert("server".into(), served.to_json());
    results.insert("plan".into(), plan::to_json());
    // Fuzzing is measured apart (`cargo xtask fuzz`): its last totals stay in the report.
    if let Some(totals) = fuzz::last(&root) {
        results.insert("fuzz".into(), totals);
    }
    let c = browser(&driver).await?;
    // 1. Measurement error against ground truth (sim-bench: 20 ms steps, 100 tokens): the
    // studio, the browser's floor and peer clients side by side, over several rounds.
    let rounds = plan::env_count("TTFT_BENCH_ROUNDS", 3);
    // The peers run 1 round by default: their start-up dominates a round (~20 s a run), and the
    // targets judge the studio against the floor, not the peers.
    let peer_rounds = plan::env_count("TTFT_BENCH_PEER_ROUNDS", 1);
    results.insert(
        "fidelity".into(),
        fidelity::fidelity(&c, studio, &root, rounds, peer_rounds).await?,
    );
    if fidelity_only {
        // A partial run (for working on the bench): its own file, the last full run untouched.
        c.close().await?;
        let path = root.join("target/bench/fidelity-only.json");
        std::fs::create_dir_all(root.join("target/bench"))?;
        results.insert(
            "duration_s".into(),
            json!(started.elapsed().as_secs_f64().round()),
        );
        let results = Value::Object(results);
        std::fs::write(&path, serde_json::to_string_pretty(&results)? + "\n")?;
        std::fs::write(
            root.join("target/bench/fidelity-only.md"),
            bench_report::markdown(&results),
        )?;
        eprintln!("wrote {} and target/bench/fidelity-only.md", path.display());
        return Ok(());
    }
    // 2. Client capacity, judged against the floor probe at each level.
    results.insert("capacity".into(), capacity::capacity(&c, studio).await?);
    // 8. What the screen showed: the live surface's paint lag, the lab's render cost.
    let mut painted = paint::measure(&c, studio).await?;
    painted["date"] = machine()["date"].clone();
    results.insert("paint".into(), painted);
    c.close().await?;
    // The Locust vantage (skipped with a note when Locust is not installed).
    eprintln!("locust…");
    results.insert("locust".into(), locust::locust(studio, &root, &work).await);
    // 3. Large runs: first load, charts, share links, storage.
    large_runs(&mut results, &root, &driver, studio, &work).await?;
    results.insert(
        "duration_s".into(),
        json!(started.elapsed().as_secs_f64().round()),
    );
    let results = Value::Object(results);
    std::fs::create_dir_all(root.join("bench"))?;
    std::fs::write(
        root.join("bench/results.json"),
        serde_json::to_string_pretty(&results)? + "\n",
    )?;
    std::fs::write(root.join("BENCHMARKS.md"), bench_report::markdown(&results))?;
    let _ = std::fs::remove_dir_all(&work);
    eprintln!("wrote BENCHMARKS.md and bench/results.json");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::static_imports;

    #[test]
    fn a_script_s_static_imports_are_its_first_load_too() {
        let glue = r#"import * as import1 from "./__wasm_split-ab.js"
import * as import2 from "./__wasm_split-ab.js";
import { x } from '/other.js'; import "./side.js";
const later = () => import("./lazy.js"); // not static
let important = 1; export function importer() {}"#;
        assert_eq!(
            static_imports(glue),
            ["__wasm_split-ab.js", "other.js", "side.js"]
        );
    }
}
