//! The rendering lab (#31, items 2–3) on a recorded run, in headless Chromium: a 2,000-token
//! markdown answer from the reference endpoint (`sim-markdown`) played through the four
//! strategies, its paint figures read from the lab's `data-*` attributes.
//!
//! Run by `cargo xtask test` (needs `dist/` and chromedriver).

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fantoccini::{Client, Locator};
use ttft_e2e::*;

/// A 60 Hz frame (ms), the lab's release frames.
const FRAME_MS: f64 = 1000.0 / 60.0;

/// A number attribute (camelCase, as `dataset` names it).
fn num(f: &HashMap<String, String>, key: &str) -> Result<f64> {
    f.get(key)
        .with_context(|| format!("no data-{key} in {f:?}"))?
        .parse::<f64>()
        .with_context(|| format!("data-{key} is not a number in {f:?}"))
}

/// Plays the lab (play number `n`) and reads every strategy's figures.
async fn play(c: &Client, n: u32) -> Result<HashMap<String, HashMap<String, String>>> {
    play_lab(c, n, 180).await?;
    lab_figures(c).await
}

/// A 2,000-token markdown answer through the four strategies. Checks:
/// - no strategy's paint trace was refused by the core (no text painted before it arrived),
///   and every lag is ≥ 0;
/// - *re-render all*'s render cost in its last fifth of updates is above 1.5× its first
///   fifth's, *incremental*'s below (the numbers are printed);
/// - *smoothed* paints its first token no later than the first arrival + its buffer + three
///   frames (one to release at a frame's end, one to paint, one for the timer on this busy
///   machine), and its release schedule has no gap above two frames;
/// - "the same figures twice": a second play gives every strategy the same release schedule
///   (the number of releases, the first and last release times and a digest of every
///   release's time and size) and the same number of updates drawn. The render costs and
///   paint times are measured on the page each play and are not compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn the_lab_plays_a_markdown_answer_through_four_strategies() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    wait_text(c, "connection-result", 10, |t| t.contains("connected")).await?;
    set_field(c, "model", "sim-markdown").await?;
    set_field(c, "requests", "1").await?;
    set_field(c, "concurrency", "1").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", "2000").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 120).await?;

    click(c, "open-lab").await?;
    let lab = c
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css("[data-testid=render-lab]"))
        .await?;
    c.execute(
        "arguments[0].scrollIntoView({block: 'start'});",
        vec![serde_json::to_value(&lab)?],
    )
    .await?;
    let buffer: f64 = c
        .find(Locator::Css("[data-testid=lab-smooth-buffer]"))
        .await?
        .prop("value")
        .await?
        .unwrap_or_default()
        .parse()?;

    let first = play(c, 1).await?;
    for id in LAB_STRATEGIES {
        let f = &first[id];
        println!("{id}: {f:?}");
        ensure!(
            f.get("refused").is_some_and(String::is_empty),
            "{id}: the core refused its paint trace: {f:?}"
        );
        ensure!(num(f, "minLagMs")? >= 0.0, "{id}: painted before arrival");
        ensure!(
            num(f, "updates")? == num(f, "releases")?,
            "{id}: every release drawn"
        );
        ensure!(
            matches!(
                f.get("source").map(String::as_str),
                Some("Element Timing" | "frame estimate")
            ),
            "{id}: its paint source is labelled"
        );
    }
    let growth = |id: &str| num(&first[id], "growth");
    let (all, incremental) = (growth("rerender-all")?, growth("incremental")?);
    println!(
        "render cost growth (last fifth / first fifth): re-render all ×{all:.2} ({} → {} ms), incremental ×{incremental:.2} ({} → {} ms)",
        first["rerender-all"]["costStartMs"],
        first["rerender-all"]["costEndMs"],
        first["incremental"]["costStartMs"],
        first["incremental"]["costEndMs"]
    );
    ensure!(all > 1.5, "re-render all's cost grows: ×{all:.2}");
    ensure!(
        incremental < 1.5,
        "incremental's stays flat: ×{incremental:.2}"
    );

    let s = &first["smoothed"];
    let (arrived, painted) = (num(s, "firstArrivalMs")?, num(s, "firstPaintedMs")?);
    println!(
        "smoothed: first token arrived {arrived:.1} ms, painted {painted:.1} ms (buffer {buffer} ms, source {}); largest release gap {} ms (incremental's {} ms), largest paint gap {} ms",
        s["source"],
        s["maxReleaseGapMs"],
        first["incremental"]["maxReleaseGapMs"],
        s["maxPaintGapMs"]
    );
    ensure!(
        painted <= arrived + buffer + 3.0 * FRAME_MS,
        "smoothed delays its first paint by no more than its buffer and a few frames"
    );
    ensure!(
        num(s, "maxReleaseGapMs")? <= 2.0 * FRAME_MS + 0.01,
        "smoothed leaves no gap above two frames"
    );
    for id in LAB_STRATEGIES {
        println!(
            "{id}: first painted {} ms (arrived {}), lag P50 {} / P99 {} ms, source {}",
            first[id]["firstPaintedMs"],
            first[id]["firstArrivalMs"],
            first[id]["lagP50Ms"],
            first[id]["lagP99Ms"],
            first[id]["source"]
        );
    }

    // The render cost chart: one series per strategy.
    let (charts, _) = drawn_charts(c, "lab-render-cost", 30).await?;
    ensure!(charts.len() == 1, "the render cost chart: {charts:?}");

    let second = play(c, 2).await?;
    for id in LAB_STRATEGIES {
        for key in [
            "releases",
            "releaseDigest",
            "releaseFirstMs",
            "releaseLastMs",
            "updates",
        ] {
            ensure!(
                first[id].get(key) == second[id].get(key),
                "{id}: {key} differs between plays: {:?} then {:?}",
                first[id].get(key),
                second[id].get(key)
            );
        }
    }
    session.client.close().await?;
    Ok(())
}

/// The live surface draws a run's answers while it streams (incremental, 6 markdown answers
/// at 1 stream): every answer is drawn, painted never before it arrived, and its figures go
/// in the headline, the request table, the saved report and a share link (whose lab says it
/// plays on the reader's browser).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn the_live_surface_draws_a_run_and_its_paints_go_in_the_report() -> Result<()> {
    const REQUESTS: usize = 6;
    let session = open_studio().await?;
    let c = &session.client;
    wait_text(c, "connection-result", 10, |t| t.contains("connected")).await?;
    set_field(c, "surface-strategy", "incremental").await?;
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("[data-testid=live-surface]"))
        .await?;
    set_field(c, "model", "sim-markdown").await?;
    set_field(c, "requests", &REQUESTS.to_string()).await?;
    set_field(c, "concurrency", "1").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", "200").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 120).await?;
    let shown = wait_text(c, "paint-headline", 20, |t| t.contains("painted")).await?;
    println!("{shown}");
    let run = saved_runs(c).await?.remove(0);
    let painted = run
        .painted
        .as_ref()
        .context("the report keeps what was painted")?;
    assert_eq!(painted.strategy, "incremental");
    assert_eq!(
        painted.requests.len(),
        REQUESTS,
        "one stream: every answer drawn, none refused ({shown})"
    );
    for d in &painted.requests {
        let r = &run.requests[d.index as usize];
        let arrived = ttft_core::report::painted::content_chunks(r)[0].at_ms;
        let first = d.figures.first_painted_ms.context("a first paint")?;
        println!(
            "request {}: first answer token arrived {arrived:.1} ms, painted {first:.1} ms ({})",
            d.index,
            d.figures.source.label()
        );
        ensure!(
            first >= arrived,
            "request {}: painted before it arrived",
            d.index
        );
        ensure!(d.figures.lags_ms.iter().all(|l| *l >= 0.0));
        ensure!(!d.figures.lags_ms.is_empty());
    }
    let headline = c.find(Locator::Css("[data-testid=paint-headline]")).await?;
    assert_eq!(
        headline.attr("data-drawn").await?.as_deref(),
        Some(&*REQUESTS.to_string())
    );
    let delay: f64 = headline
        .attr("data-delay-ms")
        .await?
        .unwrap_or_default()
        .parse()?;
    ensure!((0.0..1_000.0).contains(&delay), "painting added {delay} ms");
    let cells = c
        .execute(
            "return [...document.querySelectorAll('[data-testid=request-painted]')].map(e => e.textContent);",
            vec![],
        )
        .await?;
    let cells: Vec<String> = serde_json::from_value(cells)?;
    ensure!(
        cells.len() == REQUESTS && cells.iter().all(|t| t.contains("ms")),
        "every row says when it was painted: {cells:?}"
    );

    // A link carries what was painted: the reader sees the same paint headline, and the lab
    // there says it re-plays the run on the reader's browser.
    let painted_ms = headline.attr("data-painted-ms").await?;
    let link = make_share_link(c).await?;
    let fresh = browser(&session.driver).await?;
    fresh.goto(&link).await?;
    wait_text(&fresh, "report-title", 20, |t| t.contains("(shared)")).await?;
    wait_text(&fresh, "paint-headline", 20, |t| t.contains("painted")).await?;
    let shared = fresh
        .find(Locator::Css("[data-testid=paint-headline]"))
        .await?;
    assert_eq!(
        shared.attr("data-drawn").await?.as_deref(),
        Some(&*REQUESTS.to_string())
    );
    let (a, b) = (
        painted_ms.unwrap_or_default().parse::<f64>()?,
        shared
            .attr("data-painted-ms")
            .await?
            .unwrap_or_default()
            .parse::<f64>()?,
    );
    ensure!(
        (a - b).abs() <= 0.05,
        "painted P50 {a} in the run, {b} in the link"
    );
    click(&fresh, "open-lab").await?;
    let elsewhere = wait_text(&fresh, "lab-elsewhere", 20, |t| !t.is_empty()).await?;
    ensure!(elsewhere.contains("this browser's"), "{elsewhere}");
    fresh.close().await?;
    session.client.close().await?;
    Ok(())
}

/// Drawing moves no network stamp: the calibration (sim-bench, 1 stream, so the surface draws
/// every answer) with the live surface re-rendering every answer whole stays within the
/// run-to-run spread of medians of the one with it off. As in the offline copy's test, a pair whose medians differ is measured
/// again, up to three pairs in alternating order: noise passes in one, a surface that delayed
/// the stamps fails all three. The surface's run must have drawn answers (so it was on).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn drawing_moves_no_network_stamp() -> Result<()> {
    const PAIRS: usize = 3;
    let session = open_studio().await?;
    let c = &session.client;
    wait_text(c, "connection-result", 10, |t| t.contains("connected")).await?;
    set_field(c, "concurrency", "1").await?;
    let mut differences = Vec::new();
    for pair in 1..=PAIRS {
        let order = if pair % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        let mut results = Vec::new();
        for drawing in order {
            set_field(
                c,
                "surface-strategy",
                if drawing { "rerender-all" } else { "off" },
            )
            .await?;
            click(c, "calibrate").await?;
            // The previous calibration's sentence stays until this one starts.
            wait_text(c, "calibration", 10, |t| t.contains("Calibrating")).await?;
            wait_text(c, "calibration", 90, |t| t.contains("timing error")).await?;
            let run = saved_runs(c).await?.remove(0);
            let drawn = run.painted.as_ref().map_or(0, |p| p.requests.len());
            let measured = run.requests.iter().filter(|r| !r.warmup).count();
            ensure!(
                if drawing {
                    drawn >= measured
                } else {
                    drawn == 0
                },
                "surface {}: {drawn} answers drawn",
                if drawing { "on" } else { "off" }
            );
            let result = ttft_core::calibration::calibrate(
                &run,
                &ground_truths(session.studio.port, &run).await?,
                1,
            );
            ensure!(result.mismatched == 0 && result.failed == 0, "{result:?}");
            println!(
                "pair {pair}, surface {} ({drawn} answers drawn): {}",
                if drawing { "on" } else { "off" },
                result.sentence()
            );
            results.push(result);
        }
        if pair % 2 == 0 {
            results.reverse();
        }
        match worse_median_error(&results[0], &results[1], "the surface drawing")? {
            None => {
                session.client.close().await?;
                return Ok(());
            }
            Some(d) => {
                println!("pair {pair}: {d}");
                differences.push(d);
            }
        }
    }
    anyhow::bail!(
        "the error rose with the surface drawing in all {PAIRS} pairs: {}",
        differences.join("; ")
    )
}

/// The typewriter replay plays the answers as the chosen strategy releases them: smoothed at
/// a pace and buffer of the user's (a pace of 0 refused), no lane's text starts before its
/// first arrival plus the buffer, and the replay says how it draws.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn the_replay_shows_the_chosen_strategy() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    wait_text(c, "connection-result", 10, |t| t.contains("connected")).await?;
    set_field(c, "surface-strategy", "smoothed").await?;
    // Its pace and buffer are settings; a pace that cannot pace a stream is refused.
    set_field(c, "surface-pace", "0").await?;
    let refused = wait_text(c, "surface-error", 10, |t| !t.is_empty()).await?;
    ensure!(refused.contains("at least 1"), "{refused}");
    set_field(c, "surface-pace", "120").await?;
    set_field(c, "surface-buffer", "200").await?;
    set_field(c, "model", "sim-fast").await?;
    set_field(c, "requests", "3").await?;
    set_field(c, "concurrency", "1").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", "40").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 60).await?;
    let note = wait_text(c, "replay-drawn", 30, |t| !t.is_empty()).await?;
    ensure!(
        note.contains("smoothed to 120 characters/s after a 200 ms buffer"),
        "{note}"
    );
    let run = saved_runs(c).await?.remove(0);
    let arrivals: Vec<f64> = run
        .requests
        .iter()
        .filter_map(|r| r.replay.iter().find(|p| p.kind == 'a').map(|p| p.at_ms))
        .collect();
    let firsts = c
        .execute(
            "return [...document.querySelectorAll('[data-testid=replay] [data-testid=replay-lane]')].map(e => Number(e.dataset.firstMs));",
            vec![],
        )
        .await?;
    let firsts: Vec<f64> = serde_json::from_value(firsts)?;
    ensure!(!firsts.is_empty(), "no replay lane");
    let earliest = arrivals.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "smoothed replay: lanes start at {firsts:?} ms; first arrivals {arrivals:?} ms ({note})"
    );
    for f in firsts {
        ensure!(
            f >= earliest + 200.0,
            "a smoothed lane starts at {f} ms, before the first arrival {earliest} ms + its 200 ms buffer"
        );
    }
    session.client.close().await?;
    Ok(())
}
