//! Comparisons you can trust (#29), in headless Chromium against the reference endpoint: an
//! A/B run of two profiles whose decode steps differ by exactly 10 % is called different where
//! the 10 % is, with a relative interval that holds the truth; an A/B run of two identical
//! profiles is not, and says how many requests per side would tell a 10 % difference; no
//! lesson states a lead whose interval holds zero.
//!
//! Run by `cargo xtask test` (needs `dist/` and chromedriver); alone:
//! `cargo test -p ttft-e2e --test trust -- --ignored --nocapture`.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use fantoccini::elements::Element;
use fantoccini::{Client, Locator};
use ttft_core::calibration::GroundTruth;
use ttft_core::report::Report;
use ttft_e2e::*;

/// Requests per arm: enough for the ITL P50's cluster bootstrap to tell a 10 % difference
/// (≈ 4.5 standard errors with the profiles' 10 % noise per request) well inside the time.
const PER_ARM: &str = "40";
/// Tokens per answer: ≈ 0.95 s a request on the A/B profiles.
const MAX_TOKENS: &str = "40";

/// A compared row's difference of the second run from the first, as the table shows it.
#[derive(Debug)]
struct Diff {
    rel: (f64, f64),
    lo_hi: (f64, f64),
    different: bool,
    needs_per_side: Option<usize>,
}

async fn num(e: &Element, name: &str) -> Result<f64> {
    let v = e
        .attr(name)
        .await?
        .with_context(|| format!("no {name} attribute"))?;
    v.parse()
        .with_context(|| format!("{name}={v:?} is not a number"))
}

/// The `compare-diff` of `metric`'s row (the second run against the first).
async fn diff(c: &Client, metric: &str) -> Result<Diff> {
    let row = c
        .find(Locator::Css(&format!(
            "[data-testid=compare-table] tr[data-metric='{metric}']"
        )))
        .await
        .with_context(|| format!("no row {metric}"))?;
    let cells = row
        .find_all(Locator::Css("[data-testid=compare-cell]"))
        .await?;
    ensure!(cells.len() == 2, "{metric}: {} run cells", cells.len());
    for cell in &cells {
        // Every figure carries its interval (or none when too few requests give one).
        let run = cell.attr("data-run").await?;
        ensure!(run.is_some(), "{metric}: a cell without data-run");
    }
    let d = row
        .find(Locator::Css("[data-testid=compare-diff]"))
        .await
        .with_context(|| format!("{metric}: no compare-diff"))?;
    let needs = d.attr("data-needs-per-side").await?;
    Ok(Diff {
        rel: (num(&d, "data-rel-lo").await?, num(&d, "data-rel-hi").await?),
        lo_hi: (num(&d, "data-lo").await?, num(&d, "data-hi").await?),
        different: d.attr("data-different").await?.as_deref() == Some("true"),
        needs_per_side: needs.and_then(|n| n.parse().ok()),
    })
}

/// Runs an A/B run of `a` against `b` from the scenario panel (the reference endpoint, chat,
/// [`PER_ARM`] requests per arm at concurrency 2) and waits for its comparison.
async fn ab_run(c: &Client, a: &str, b: &str) -> Result<()> {
    set_field(c, "base-url", "").await?;
    set_field(c, "requests", PER_ARM).await?;
    set_field(c, "concurrency", "2").await?;
    set_field(c, "max-tokens", MAX_TOKENS).await?;
    set_field(c, "warmup", "1").await?;
    if c.find_all(Locator::Css("[data-testid^=ab-arm-model-]"))
        .await?
        .is_empty()
    {
        click(c, "ab-enable").await?;
    }
    c.wait()
        .at_most(Duration::from_secs(5))
        .for_element(Locator::Css("[data-testid=ab-arm-model-1]"))
        .await?;
    set_field(c, "ab-arm-model-0", a).await?;
    set_field(c, "ab-arm-model-1", b).await?;
    let items = || async {
        Ok::<_, anyhow::Error>(
            c.find_all(Locator::Css("[data-testid=run-item]"))
                .await?
                .len(),
        )
    };
    let before = items().await?;
    click(c, "start-run").await?;
    // Done when both arms are saved runs of their own.
    let deadline = Instant::now() + Duration::from_secs(150);
    while items().await? < before + 2 {
        ensure!(
            Instant::now() < deadline,
            "the A/B run of {a} and {b} never finished"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    wait_text(c, "notice", 10, |t| {
        t.contains("A/B run done: 2 runs, compared below")
    })
    .await?;
    // The comparison of this run's arms (named by their models).
    wait_text(c, "compare-table", 20, |t| t.contains(a) && t.contains(b)).await?;
    Ok(())
}

/// The lesson, after checking that no lead it states has an interval that holds zero, and
/// the comparison's whole text (the table note under the table with it).
async fn lesson_and_view(c: &Client) -> Result<(String, String)> {
    let lesson = wait_text(c, "compare-lesson", 10, |t| !t.is_empty()).await?;
    for (lo, hi) in claimed_leads(&lesson)? {
        ensure!(
            lo > 0.0 && hi > 0.0,
            "the lesson claims a lead whose interval {lo}–{hi} ms holds zero: {lesson}"
        );
    }
    let view = wait_text(c, "compare", 5, |_| true).await?;
    Ok((lesson, view))
}

/// Median of the ground truth's gaps between chunks over every request of `report`: the ITL
/// P50 the reference endpoint wrote.
async fn truth_itl_p50(port: u16, report: &Report) -> Result<f64> {
    let truths: Vec<GroundTruth> = ground_truths(port, report).await?;
    let mut gaps: Vec<f64> = truths
        .iter()
        .flat_map(|t| {
            let at: Vec<f64> = t.chunks.iter().filter_map(|c| c.written_ms).collect();
            at.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>()
        })
        .collect();
    ensure!(!gaps.is_empty(), "no ground truth for {}", report.title);
    gaps.sort_by(f64::total_cmp);
    Ok(gaps[gaps.len() / 2])
}

/// `sim-ab` against `sim-ab-slower` (decode steps exactly 1.10× by construction): the ITL P50
/// and TPOT P50 are called different and the ITL's relative interval holds 0.10; `sim-ab`
/// against `sim-ab-twin` (identical): the ITL P50 and TTFT P50 are not, their rows say how
/// many requests per side would tell 10 %, and so does the lesson.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn ab_runs_find_the_known_ten_percent_and_nothing_in_twins() -> Result<()> {
    let started = Instant::now();
    let session = open_studio().await?;
    let c = &session.client;

    ab_run(c, "sim-ab", "sim-ab-slower").await?;
    let slower_s = started.elapsed().as_secs_f64();
    let (lesson, _) = lesson_and_view(c).await?;
    println!("slower: lesson: {lesson}");
    let itl = diff(c, "ITL P50").await?;
    let tpot = diff(c, "TPOT P50").await?;
    let ttft = diff(c, "TTFT P50").await?;
    println!("slower: ITL P50 {itl:?}\nslower: TPOT P50 {tpot:?}\nslower: TTFT P50 {ttft:?}");
    // The ground truth of what the server wrote, per arm (each saved arm labelled by its
    // model).
    let runs = saved_runs(c).await?;
    let arm = |m: &str| {
        runs.iter()
            .find(|r| r.group.as_ref().is_some_and(|g| g.label == m))
            .with_context(|| format!("no saved arm {m}"))
    };
    let (ab, slower) = (arm("sim-ab")?, arm("sim-ab-slower")?);
    let (t_ab, t_slower) = (
        truth_itl_p50(session.studio.port, ab).await?,
        truth_itl_p50(session.studio.port, slower).await?,
    );
    println!(
        "slower: ground truth ITL P50 {t_ab:.2} ms vs {t_slower:.2} ms: {:+.4} relative (by construction +0.10 in expectation)",
        t_slower / t_ab - 1.0
    );
    ensure!(itl.different, "ITL P50 is called different: {itl:?}");
    ensure!(
        itl.rel.0 <= 0.10 && 0.10 <= itl.rel.1,
        "ITL P50's relative interval holds the truth 0.10: {itl:?}"
    );
    ensure!(itl.lo_hi.0 > 0.0, "the slower arm's ITL is longer: {itl:?}");
    ensure!(tpot.different, "TPOT P50 is called different: {tpot:?}");
    ensure!(
        tpot.rel.0 <= 0.10 && 0.10 <= tpot.rel.1,
        "TPOT P50's relative interval holds the truth 0.10: {tpot:?}"
    );

    let twin_started = Instant::now();
    ab_run(c, "sim-ab", "sim-ab-twin").await?;
    let twin_s = twin_started.elapsed().as_secs_f64();
    let (lesson, view) = lesson_and_view(c).await?;
    println!("twin: lesson: {lesson}");
    for metric in ["ITL P50", "TTFT P50"] {
        let d = diff(c, metric).await?;
        println!("twin: {metric} {d:?}");
        ensure!(
            !d.different,
            "{metric} of twins is not called different: {d:?}"
        );
        ensure!(
            d.rel.0 <= 0.0 && 0.0 <= d.rel.1,
            "{metric}: twins' interval holds zero: {d:?}"
        );
        ensure!(
            d.needs_per_side.is_some_and(|n| n > 0),
            "{metric}: the row says how many requests per side would tell: {d:?}"
        );
    }
    ensure!(
        lesson.contains("per side") || view.contains("requests per side"),
        "the lesson or the table note says what more requests per side would show: {lesson}"
    );
    println!(
        "durations: slower A/B run (with page load) {slower_s:.0} s, twin A/B run {twin_s:.0} s, test {:.0} s",
        started.elapsed().as_secs_f64()
    );
    session.client.clone().close().await?;
    Ok(())
}
