//! The studio as a new user opens it in the other engines: Firefox (geckodriver) and WebKit,
//! Safari's engine (WebKitGTK's MiniBrowser through WebKitWebDriver, under `xvfb-run`). One
//! smoke test each: load, the clock line, a short run on the reference endpoint drawn by the
//! live surface (one painted-token figure, its source labelled), charts, the report stating the
//! engine's clock, and a share link reopened in a fresh profile.
//! Run by `cargo xtask test` (it installs the browsers and drivers).

use std::time::Instant;

use anyhow::{Context, Result, ensure};
use fantoccini::Locator;
use ttft_e2e::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app, Firefox ESR and geckodriver: run `cargo xtask test`"]
async fn firefox_smoke() -> Result<()> {
    smoke(Engine::Firefox, "Firefox ").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app, WebKitGTK's driver and Xvfb: run `cargo xtask test`"]
async fn webkit_smoke() -> Result<()> {
    smoke(Engine::WebKit, "(WebKit)").await
}

/// `value unit` as shown (`61.2 ms`, `1.02 s`) in ms.
fn shown_ms(t: &str) -> f64 {
    let (n, unit) = t.split_once(' ').unwrap_or((t, "ms"));
    n.parse::<f64>().unwrap_or(f64::NAN) * if unit == "s" { 1000.0 } else { 1.0 }
}

/// One painted-token figure: this engine's paint times, labelled by where they came from (a
/// frame estimate where the engine has no Element Timing), never before the arrival.
async fn painted_token(c: &fantoccini::Client, name: &str) -> Result<()> {
    let painted = wait_text(c, "paint-headline", 20, |t| t.contains("painted")).await?;
    let headline = c.find(Locator::Css("[data-testid=paint-headline]")).await?;
    let attr = |v: Option<String>| v.unwrap_or_default().parse::<f64>().unwrap_or(f64::NAN);
    let arrived = attr(headline.attr("data-arrived-ms").await?);
    let first_paint = attr(headline.attr("data-painted-ms").await?);
    let source = headline.attr("data-source").await?.unwrap_or_default();
    let element_timing = c
        .execute(
            "return PerformanceObserver.supportedEntryTypes.includes('element');",
            vec![],
        )
        .await?
        .as_bool()
        .unwrap_or(false);
    println!(
        "{name}: first answer token arrived {arrived:.1} ms, painted {first_paint:.1} ms ({source}; Element Timing {})",
        if element_timing {
            "supported"
        } else {
            "absent"
        }
    );
    ensure!(
        first_paint >= arrived && first_paint - arrived < 1_000.0,
        "{name}: {painted}"
    );
    ensure!(
        element_timing || source == "frame estimate",
        "{name}: without Element Timing the paint times must say they are frame estimates: {source}"
    );
    ensure!(
        painted.contains(if source == "frame estimate" {
            "estimated from animation frames"
        } else {
            "from Element Timing"
        }),
        "{name}: the headline names its source: {painted}"
    );
    Ok(())
}

/// The smoke test in `engine`; `named` is part of the name the report gives the browser.
async fn smoke(engine: Engine, named: &str) -> Result<()> {
    let started = Instant::now();
    let session = open_studio_in(engine).await?;
    let c = &session.client;
    let name = engine.name();

    // The clock line: a resolution, and isolation (the server sends COOP/COEP).
    let clock = wait_text(c, "clock-status", 30, |t| t.contains("µs")).await?;
    ensure!(
        clock.contains("cross-origin isolated"),
        "{name}: not isolated: {clock}"
    );
    // No static service-worker routes here: the studio keeps no offline copy (a fetch handler
    // would sit in front of every benchmark request) and says so. Waits past "…" and
    // "saving…" (the label is followed by the switch's "turn off", so not at its end).
    let copy = wait_text(c, "offline-copy", 30, |t| !t.contains('…')).await?;
    ensure!(
        copy.contains("cannot keep one") || copy.contains("not available here"),
        "{name}: {copy}"
    );
    let resolution_us: f64 = clock
        .strip_prefix("clock resolution ")
        .and_then(|t| t.split(" µs").next())
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("{name}: no resolution in {clock:?}"))?;
    ensure!(
        resolution_us > 0.0 && resolution_us <= 100.0,
        "{name}: {clock}"
    );
    println!("{name}: {clock}");

    // A short run on the reference endpoint, its answers drawn by the live surface.
    wait_text(c, "connection-result", 30, |t| t.contains("connected")).await?;
    set_field(c, "surface-strategy", "incremental").await?;
    set_field(c, "model", "sim-fast").await?;
    set_field(c, "requests", "4").await?;
    set_field(c, "concurrency", "2").await?;
    set_field(c, "max-tokens", "24").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 120).await?;
    let ttft = wait_text(c, "ttft-p50", 10, |t| t.ends_with("ms")).await?;
    ensure!(
        shown_ms(&ttft) > 20.0 && shown_ms(&ttft) < 2000.0,
        "{name}: sim-fast TTFT ≈ 60 ms: {ttft}"
    );
    let itl = wait_text(c, "itl-p95", 10, |t| t.ends_with("ms")).await?;
    let rows = c
        .find_all(Locator::Css("[data-testid=requests] tbody tr"))
        .await?;
    ensure!(
        rows.len() == 5,
        "{name}: 1 warm-up + 4 measured requests, got {}",
        rows.len()
    );
    painted_token(c, name).await?;
    let (charts, render_ms) = drawn_charts(c, "report-charts", 60).await?;
    ensure!(!charts.is_empty(), "{name}: no charts");
    println!(
        "{name}: TTFT p50 {ttft}, ITL p95 {itl}, {} charts drawn in {render_ms:.0} ms",
        charts.len()
    );

    // The report states the clock and the browser it was measured in, as saved.
    let agent = c
        .execute("return navigator.userAgent", vec![])
        .await?
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let report_clock = wait_text(c, "report-clock", 10, |t| t.contains(" in ")).await?;
    ensure!(
        report_clock.starts_with(&format!("clock {resolution_us:.0} µs in ")),
        "{name}: the report's clock {report_clock:?} is not the page's ({clock})"
    );
    ensure!(
        report_clock.contains(named),
        "{name}: the report names another browser: {report_clock:?} ({agent})"
    );
    let saved = saved_runs(c).await?;
    let report = saved.first().context("the run was not saved")?;
    let saved_us = report
        .clock_resolution_ms
        .with_context(|| format!("{name}: the saved report has no clock resolution"))?
        * 1000.0;
    ensure!(
        (saved_us - resolution_us).abs() < 0.5,
        "{name}: saved {saved_us} µs, shown {resolution_us} µs"
    );
    ensure!(
        report.user_agent.as_deref() == Some(agent.as_str()),
        "{name}: saved agent {:?}, page {agent:?}",
        report.user_agent
    );

    // A share link, opened in a fresh profile of the same engine: the same headline and clock.
    let link = make_share_link(c).await?;
    ensure!(link.contains("#share=r3."), "{name}: {link}");
    session.client.clone().close().await?;
    let fresh = browser(&session.driver).await?;
    fresh.goto(&link).await?;
    // Times travel at 0.1 ms: the figures agree within 0.05 ms and the display's rounding.
    for (id, was) in [("ttft-p50", &ttft), ("itl-p95", &itl)] {
        let shown = wait_text(&fresh, id, 30, |t| t.ends_with("ms")).await?;
        ensure!(
            (shown_ms(&shown) - shown_ms(was)).abs() <= 0.55,
            "{name}: {id} {shown} in the link, {was} in the run"
        );
    }
    let title = wait_text(&fresh, "report-title", 10, |t| !t.is_empty()).await?;
    ensure!(title.ends_with("(shared)"), "{name}: {title}");
    let shared_clock = wait_text(&fresh, "report-clock", 10, |t| !t.is_empty()).await?;
    ensure!(
        shared_clock == report_clock,
        "{name}: the link says {shared_clock:?}, the run {report_clock:?}"
    );
    let (fresh_charts, _) = drawn_charts(&fresh, "report-charts", 60).await?;
    ensure!(
        fresh_charts == charts,
        "{name}: the link redraws other charts"
    );
    // A fresh profile: the shared run is the only one it has.
    let runs = saved_runs(&fresh).await?;
    ensure!(
        runs.is_empty(),
        "{name}: the fresh profile has {} runs: {:?}",
        runs.len(),
        runs.iter().map(|r| &r.title).collect::<Vec<_>>()
    );
    fresh.close().await?;
    println!(
        "{name}: smoke passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
