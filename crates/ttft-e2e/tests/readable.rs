//! Readable by everyone on the review (#31): axe-core (npm `axe-core`, its default rules:
//! WCAG 2.x A and AA and best practices) finds no violation on the empty studio, a finished
//! run, the compare view, the blind review, the rendering lab with the live surface and a link's
//! reader view.
//!
//! Run by `cargo xtask test` (needs `dist/`, chromedriver and `node_modules/axe-core`).

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use fantoccini::{Client, Locator};
use ttft_e2e::*;

/// axe-core's violations on the page as it is now: one line per rule and node (`rule
/// (impact): node — what to fix`), empty when it found none.
async fn violations(c: &Client) -> Result<Vec<String>> {
    let axe = root().join("node_modules/axe-core/axe.min.js");
    let source = std::fs::read_to_string(&axe)
        .with_context(|| format!("{}: run `cargo xtask setup` (npm ci)", axe.display()))?;
    c.execute(&source, vec![]).await?;
    let out = c
        .execute_async(
            r"const done = arguments[arguments.length - 1];
            axe.run(document).then(r => done(r.violations.flatMap(v => v.nodes.map(n =>
                `${v.id} (${v.impact}): ${n.target.join(' ')} — ${n.failureSummary.replace(/\s+/g, ' ')}`))))
              .catch(e => done(['axe failed: ' + e]));",
            vec![],
        )
        .await?;
    let lines: Vec<String> = serde_json::from_value(out)?;
    Ok(lines)
}

/// Fails, listing them, when axe finds violations on `view`.
async fn clean(c: &Client, view: &str) -> Result<()> {
    let found = violations(c).await?;
    println!("{view}: {} violations", found.len());
    if !found.is_empty() {
        bail!("{view}: {} violations:\n{}", found.len(), found.join("\n"));
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app, Chromium and node_modules: run `cargo xtask test`"]
async fn every_view_reads_without_an_axe_violation() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    wait_text(c, "empty-report", 10, |t| t.contains("Total latency lies")).await?;
    clean(c, "the empty studio").await?;

    // The tour's A/B run: a finished run, then its two arms compared.
    click(c, "tour-start").await?;
    wait_text(c, "compare-lesson", 300, |t| !t.is_empty()).await?;
    clean(c, "the compare view").await?;
    let opened = c.find_all(Locator::Css("[data-testid=open-run]")).await?;
    ensure!(!opened.is_empty(), "the tour saved its runs");
    opened[0].click().await?;
    wait_text(c, "report-title", 10, |t| t.contains("model-")).await?;
    clean(c, "a finished run").await?;

    click(c, "blind-review").await?;
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(".blind-pane"))
        .await?;
    clean(c, "the blind review").await?;
    click(c, "blind-close").await?;

    // The rendering lab after one play, and the live surface's setting and surface.
    click(c, "open-lab").await?;
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css("[data-testid=lab-play]"))
        .await?;
    play_lab(c, 1, 120).await?;
    set_field(c, "surface-strategy", "smoothed").await?;
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css("[data-testid=live-surface]"))
        .await?;
    clean(c, "the rendering lab and the live surface").await?;
    set_field(c, "surface-strategy", "off").await?;

    let link = make_share_link(c).await?;
    let fresh = browser(&session.driver).await?;
    fresh.goto(&link).await?;
    wait_text(&fresh, "reader-bar", 10, |t| t.contains("shared report")).await?;
    wait_text(&fresh, "report-title", 10, |t| t.contains("(shared)")).await?;
    clean(&fresh, "a link's reader view").await?;
    fresh.close().await?;
    Ok(())
}
