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

const STRATEGIES: [&str; 4] = ["rerender-all", "incremental", "per-frame", "smoothed"];

/// Every strategy's figures (`lab-figures-<id>`'s `data-*` attributes, by id).
async fn figures(c: &Client) -> Result<HashMap<String, HashMap<String, String>>> {
    let v = c
        .execute(
            r"const out = {};
            for (const id of arguments[0]) {
              const el = document.querySelector(`[data-testid=lab-figures-${id}]`);
              out[id] = el ? Object.assign({}, el.dataset) : {};
            }
            return out;",
            vec![serde_json::json!(STRATEGIES)],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// A number attribute (camelCase, as `dataset` names it).
fn num(f: &HashMap<String, String>, key: &str) -> Result<f64> {
    f.get(key)
        .with_context(|| format!("no data-{key} in {f:?}"))?
        .parse::<f64>()
        .with_context(|| format!("data-{key} is not a number in {f:?}"))
}

/// Presses Play and waits for play number `n` to end.
async fn play(c: &Client, n: u32) -> Result<HashMap<String, HashMap<String, String>>> {
    click(c, "lab-play").await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(180);
    loop {
        let status = c.find(Locator::Css("[data-testid=lab-status]")).await?;
        if status.attr("data-plays").await?.as_deref() == Some(&n.to_string()) {
            break;
        }
        ensure!(
            std::time::Instant::now() < deadline,
            "play {n} did not end in 180 s"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    figures(c).await
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
    for id in STRATEGIES {
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
    for id in STRATEGIES {
        println!(
            "{id}: first painted {} ms (arrived {}), lag P50 {} / P99 {} ms, source {}",
            first[id]["firstPaintedMs"],
            first[id]["firstArrivalMs"],
            first[id]["lagP50Ms"],
            first[id]["lagP99Ms"],
            first[id]["source"]
        );
    }

    let second = play(c, 2).await?;
    for id in STRATEGIES {
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
