//! What the screen showed (#31): the live surface's arrival-to-paint lag per strategy at 1 and
//! 16 streams, and each strategy's render cost per update at the start and the end of a
//! 200- and a 2,000-token markdown answer in the rendering lab, against the reference
//! endpoint's `sim-markdown`. Section 8 of BENCHMARKS.md.
//!
//! The live surface draws one answer at a time, so at 16 streams it draws only some answers
//! while the other 15 streams load the page and the worker: the lag there is that of a chat
//! window on a busy tab. Lags are pooled over every drawn chunk; the intervals are the core's
//! order-statistic ones, a lower bound on the uncertainty (chunks of one answer are not
//! independent). Paint times are Chromium's Element Timing where it timed nine in ten updates,
//! else frame estimates, as the source column says.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use ttft_core::paint::run_lag;
use ttft_e2e::{
    LAB_STRATEGIES, Studio, click, lab_figures, play_lab, saved_runs, set_field, wait_run_complete,
};

use crate::fresh_page;

/// The model: markdown answers with headings, lists, code and tables.
const MODEL: &str = "sim-markdown";
/// Live levels: (streams, requests, tokens per answer).
const LIVE: [(usize, usize, usize); 2] = [(1, 12, 200), (16, 96, 200)];
/// Lab answer lengths (tokens).
const LAB_TOKENS: [usize; 2] = [200, 2_000];
/// The intervals' level.
const LEVEL: f64 = 0.95;

/// One live run with the surface drawing with `strategy`: its lag and what it drew.
async fn live(
    c: &Client,
    studio: &Studio,
    strategy: &str,
    streams: usize,
    requests: usize,
    tokens: usize,
) -> Result<Value> {
    fresh_page(c, studio, "").await?;
    set_field(c, "surface-strategy", strategy).await?;
    set_field(c, "model", MODEL).await?;
    set_field(c, "requests", &requests.to_string()).await?;
    set_field(c, "concurrency", &streams.to_string()).await?;
    set_field(c, "warmup", "1").await?;
    set_field(c, "max-tokens", &tokens.to_string()).await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 300).await?;
    let run = saved_runs(c).await?.remove(0);
    let painted = run.painted.as_ref().context("the surface drew nothing")?;
    let measured: Vec<_> = painted
        .requests
        .iter()
        .filter(|p| run.requests.iter().any(|r| r.index == p.index && !r.warmup))
        .map(|p| &p.figures)
        .collect();
    let lag = run_lag(measured.iter().copied(), LEVEL).context("no chunk painted")?;
    let estimate = |e: &ttft_core::uncertainty::Estimate| json!({ "ms": e.value, "lo": e.interval.map(|i| i.lo), "hi": e.interval.map(|i| i.hi), "needs": e.needs });
    let sources: Vec<&str> = measured.iter().map(|f| f.source.label()).collect();
    Ok(json!({
        "strategy": strategy,
        "streams": streams,
        "requests": requests,
        "drawn": measured.len(),
        "chunks": lag.chunks,
        "lag_p50": estimate(&lag.p50_ms),
        "lag_p99": estimate(&lag.p99_ms),
        "source": if sources.iter().all(|s| *s == "Element Timing") { "Element Timing" } else { "frame estimate" },
        "dropped_frames": measured.iter().map(|f| f.dropped_frames).sum::<u32>(),
        "frames": measured.iter().map(|f| f.frames).sum::<u32>(),
    }))
}

/// The lab played once on a `tokens`-token answer: each strategy's figures (`data-*`).
async fn lab(c: &Client, studio: &Studio, tokens: usize) -> Result<Value> {
    fresh_page(c, studio, "").await?;
    set_field(c, "surface-strategy", "off").await?;
    set_field(c, "model", MODEL).await?;
    set_field(c, "requests", "1").await?;
    set_field(c, "concurrency", "1").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", &tokens.to_string()).await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 300).await?;
    click(c, "open-lab").await?;
    c.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("[data-testid=lab-play]"))
        .await?;
    play_lab(c, 1, 240).await?;
    let figures = lab_figures(c).await?;
    let num = |f: &HashMap<String, String>, k: &str| f.get(k).and_then(|v| v.parse::<f64>().ok());
    let rows: Vec<Value> = LAB_STRATEGIES
        .iter()
        .map(|id| {
            let f = &figures[*id];
            json!({
                "strategy": id,
                "updates": num(f, "updates"),
                "cost_start_ms": num(f, "costStartMs"),
                "cost_end_ms": num(f, "costEndMs"),
                "growth": num(f, "growth"),
                "lag_p50_ms": num(f, "lagP50Ms"),
                "lag_p99_ms": num(f, "lagP99Ms"),
                "first_paint_delay_ms": num(f, "firstPaintedMs").zip(num(f, "firstArrivalMs")).map(|(p, a)| p - a),
                "source": f.get("source"),
            })
        })
        .collect();
    Ok(json!({ "tokens": tokens, "strategies": rows }))
}

/// The section: every live level and strategy, then the lab at each answer length.
pub async fn measure(c: &Client, studio: &Studio) -> Result<Value> {
    let started = Instant::now();
    let mut live_rows = Vec::new();
    for (streams, requests, tokens) in LIVE {
        for strategy in LAB_STRATEGIES {
            eprintln!("paint: {strategy} at {streams} stream(s)…");
            live_rows.push(live(c, studio, strategy, streams, requests, tokens).await?);
        }
    }
    let mut lab_rows = Vec::new();
    for tokens in LAB_TOKENS {
        eprintln!("paint: the lab on {tokens} tokens…");
        lab_rows.push(lab(c, studio, tokens).await?);
    }
    Ok(json!({
        "model": MODEL,
        "live": live_rows,
        "lab": lab_rows,
        "seconds": started.elapsed().as_secs_f64().round(),
    }))
}

/// Measures the section alone (`--paint-only`), for the caller to merge into the last
/// results.json.
pub async fn standalone(root: &std::path::Path) -> Result<Value> {
    let served = crate::server::start_from_env(root).await?;
    let driver = ttft_e2e::start_driver().await?;
    let c = ttft_e2e::browser(&driver).await?;
    let mut section = measure(&c, &served.studio).await?;
    c.close().await?;
    section["mode"] = json!("--paint-only");
    section["date"] = crate::machine()["date"].clone();
    Ok(section)
}

/// `12.3 [11.0–13.9]` ms, or the figure with the samples an interval needs.
fn estimate_cell(e: &Value) -> String {
    let Some(ms) = e["ms"].as_f64() else {
        return "—".into();
    };
    match (e["lo"].as_f64(), e["hi"].as_f64()) {
        (Some(lo), Some(hi)) => format!("{ms:.1} [{lo:.1}–{hi:.1}]"),
        _ => format!("{ms:.1} (an interval needs {})", e["needs"]),
    }
}

/// Section 8 (a line saying how to measure it when not measured).
pub fn markdown(p: &Value) -> String {
    let Some(live) = p["live"].as_array() else {
        return "\n## 8. What the screen showed: paint lag and render cost\n\nNot measured: `cargo run --release -p ttft-bench -- . --paint-only` measures it.\n".into();
    };
    let mut s = String::from("\n## 8. What the screen showed: paint lag and render cost\n\n");
    s.push_str(&format!(
        "The live chat surface drawing `{}` answers in headless Chromium on this machine (2 shared cores: a laptop's paint lags are lower), {} ({}). **Live**: arrival-to-paint lag over every chunk of the measured answers the surface drew (one answer at a time, so at 16 streams it drew a few while 15 other streams loaded the tab), P50 and P99 in ms with 95 % order-statistic intervals (a lower bound: chunks of one answer are not independent).\n\n| Strategy | Streams | Answers drawn / requests | Chunks | Lag P50 (ms) | Lag P99 (ms) | Dropped frames | Paint times |\n|---|---|---|---|---|---|---|---|\n",
        p["model"].as_str().unwrap_or("?"),
        p["date"].as_str().unwrap_or("date not recorded"),
        p["mode"].as_str().unwrap_or("full bench"),
    ));
    for r in live {
        s.push_str(&format!(
            "| {} | {} | {} / {} | {} | {} | {} | {} of {} | {} |\n",
            r["strategy"].as_str().unwrap_or("?"),
            r["streams"],
            r["drawn"],
            r["requests"],
            r["chunks"],
            estimate_cell(&r["lag_p50"]),
            estimate_cell(&r["lag_p99"]),
            r["dropped_frames"],
            r["frames"],
            r["source"].as_str().unwrap_or("?"),
        ));
    }
    s.push_str("\n**Lab**: one recorded answer played through the four strategies at its recorded times (one play, the four sharing the main thread): the median render cost per update of the first fifth of the updates and of the last fifth, and their ratio, where re-rendering the whole answer on every chunk shows its growth; the smoothed strategy's lag is its pace and buffer.\n\n| Answer | Strategy | Updates | Cost at start (ms) | Cost at end (ms) | Growth | Lag P50 / P99 (ms) | First paint after arrival (ms) |\n|---|---|---|---|---|---|---|---|\n");
    let f = |v: &Value, d: usize| v.as_f64().map_or("—".to_owned(), |x| format!("{x:.d$}"));
    for play in p["lab"].as_array().into_iter().flatten() {
        for r in play["strategies"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "| {} tokens | {} | {} | {} | {} | ×{} | {} / {} | {} |\n",
                play["tokens"],
                r["strategy"].as_str().unwrap_or("?"),
                f(&r["updates"], 0),
                f(&r["cost_start_ms"], 2),
                f(&r["cost_end_ms"], 2),
                f(&r["growth"], 2),
                f(&r["lag_p50_ms"], 1),
                f(&r["lag_p99_ms"], 1),
                f(&r["first_paint_delay_ms"], 1),
            ));
        }
    }
    s
}
