//! What users feel (#14), in headless Chromium against the reference endpoint: the first run
//! that teaches (the article's comparison in one click), a blind review whose votes travel with
//! the runs and their links, the reader's view of a link, SLOs on a sweep, the client-health
//! verdict under a busy main thread beside the error against ground truth (and flagged in
//! compare), Calibrate this browser, the typewriter at reading speed, and a reader you set.
//!
//! Run by `cargo xtask test` (needs `dist/` and chromedriver).

use std::time::Duration;

use anyhow::{Context, Result, ensure};
use fantoccini::{Client, Locator};
use ttft_core::calibration::calibrate;
use ttft_core::client_health::{CauseKind, Verdict, compare_flag};
use ttft_core::experience::{ExperienceConfig, ReadingConfig};
use ttft_core::naming::distinguishing_names;
use ttft_core::report::Report;
use ttft_core::run_stats::RunStats;
use ttft_e2e::*;

async fn attr(c: &Client, css: &str, name: &str) -> Result<Option<String>> {
    Ok(c.find(Locator::Css(css)).await?.attr(name).await?)
}

/// The article's comparison from the empty studio: one A/B run, its guide and lesson with
/// their intervals, both replays, and fluidity pointing the reader's way.
async fn the_tour_compares_one_ab_run(c: &Client) -> Result<()> {
    let offer = wait_text(c, "empty-report", 10, |t| t.contains("Total latency lies")).await?;
    ensure!(
        offer.contains("model-a") && offer.contains("model-b") && offer.contains("about "),
        "the offer names the models and how long it takes: {offer}"
    );
    let started = std::time::Instant::now();
    click(c, "tour-start").await?;
    let guide = wait_text(c, "guide", 240, |t| !t.is_empty()).await?;
    println!(
        "the tour took {:.0} s; guide: {guide}",
        started.elapsed().as_secs_f64()
    );
    ensure!(
        guide.contains("model-b finishes its answer")
            && guide.contains("model-a shows its first words"),
        "{guide}"
    );
    // Each lead is stated with its interval, and no interval holds zero.
    let leads = claimed_leads(&guide)?;
    ensure!(
        leads.len() == 2 && leads.iter().all(|(lo, hi)| *lo > 0.0 && hi >= lo),
        "{leads:?}: {guide}"
    );
    // The two arms of one A/B run, compared.
    let runs = saved_runs(c).await?;
    ensure!(
        runs.len() == 2 && runs.iter().all(|r| r.group.is_some()),
        "one A/B run, split in two: {:?}",
        runs.iter().map(|r| &r.title).collect::<Vec<_>>()
    );
    let lesson = wait_text(c, "compare-lesson", 10, |t| !t.is_empty()).await?;
    println!("lesson: {lesson}");
    ensure!(lesson.contains("A reader prefers “model-a”"), "{lesson}");
    for (lo, hi) in claimed_leads(&lesson)? {
        ensure!(lo > 0.0 && hi > 0.0, "{lo}–{hi} ms: {lesson}");
    }
    let lanes = c
        .find_all(Locator::Css(
            "[data-testid=compare] [data-testid=replay-lane]",
        ))
        .await?;
    ensure!(lanes.len() == 2, "both replays: {}", lanes.len());
    // Fluidity judged at the reader's pace points the same way as the reading QoE.
    let titles: Vec<String> = {
        let mut t = Vec::new();
        for th in c
            .find_all(Locator::Css("[data-testid=compare-table] thead th"))
            .await?
            .iter()
            .skip(1)
        {
            t.push(th.text().await?);
        }
        t
    };
    let best_fluidity = c
        .find_all(Locator::Css(
            "[data-testid=compare-table] tr[data-metric='Fluidity P99 miss rate'] td",
        ))
        .await?;
    let mut best = None;
    for (i, td) in best_fluidity.iter().skip(1).enumerate() {
        if td.attr("class").await?.unwrap_or_default().contains("best") {
            best = Some(i);
        }
    }
    let best = best.context("a best fluidity")?;
    ensure!(titles[best].contains("model-a"), "{titles:?}, best {best}");
    Ok(())
}

/// The empty studio runs the article's comparison in one click, as one interleaved A/B run,
/// opens the comparison with both replays and says what to look at, each lead with its
/// interval (#29); fluidity now agrees with the reader (model-a). A blind review votes on the
/// two streams unnamed, the vote is kept with both runs and their links, and a link opens in
/// the reader's view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn the_first_run_teaches_and_blind_votes_travel() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    the_tour_compares_one_ab_run(c).await?;

    // Blind review: the two streams unnamed, a vote, then the reveal.
    click(c, "blind-review").await?;
    // Its code loads on first use (a lazy part): the panes come once it has.
    c.wait()
        .at_most(Duration::from_secs(10))
        .for_element(Locator::Css(".blind-pane"))
        .await?;
    let panes = c.find_all(Locator::Css(".blind-pane")).await?;
    ensure!(panes.len() == 2, "two panes: {}", panes.len());
    for p in &panes {
        let text = p.text().await?;
        ensure!(!text.contains("model-"), "a pane names its run: {text}");
    }
    click(c, "vote-left").await?;
    let reveal = wait_text(c, "blind-reveal", 10, |t| t.contains("Left was")).await?;
    println!("{reveal}");
    // The runs are named by their models; one vote is a lean, not a finding.
    ensure!(
        reveal.contains("“model-a”") && reveal.contains("“model-b”"),
        "{reveal}"
    );
    let so_far = wait_text(c, "blind-so-far", 10, |t| !t.is_empty()).await?;
    ensure!(so_far.contains("1–0, not yet conclusive"), "{so_far}");
    click(c, "blind-close").await?;
    let votes = wait_text(c, "compare-votes", 10, |t| !t.is_empty()).await?;
    println!("{votes}");
    ensure!(
        votes.contains("not yet conclusive") && !votes.contains("preferred"),
        "{votes}"
    );
    let runs = saved_runs(c).await?;
    ensure!(
        runs.iter().filter(|r| r.votes.len() == 1).count() == 2,
        "each run keeps the vote from its side: {:?}",
        runs.iter().map(|r| r.votes.len()).collect::<Vec<_>>()
    );

    // A link of model-b's run opens in the reader's view, the vote with it; so does a link of
    // model-a's run. Each is opened from the list (the A/B run's first arm, model-a, on top).
    let at = |m: &str| runs.iter().position(|r| r.title.contains(m));
    let (a_at, b_at) = (
        at("model-a").context("model-a's run")?,
        at("model-b").context("model-b's run")?,
    );
    let (a_title, b_title) = (runs[a_at].title.clone(), runs[b_at].title.clone());
    let open = |i: usize| async move {
        c.find_all(Locator::Css("[data-testid=open-run]")).await?[i]
            .click()
            .await?;
        anyhow::Ok(())
    };
    open(b_at).await?;
    wait_text(c, "report-title", 10, |t| t.contains("model-b")).await?;
    let link = make_share_link(c).await?;
    open(a_at).await?;
    wait_text(c, "report-title", 10, |t| t.contains("model-a")).await?;
    let link_a = make_share_link(c).await?;
    ensure!(
        link_a != link,
        "each run has its own link: {b_title} / {a_title}"
    );
    let fresh = browser(&session.driver).await?;
    fresh.goto(&link).await?;
    wait_text(&fresh, "reader-bar", 10, |t| t.contains("shared report")).await?;
    let aside_shown = fresh
        .execute(
            "return getComputedStyle(document.querySelector('aside')).display !== 'none'",
            vec![],
        )
        .await?;
    ensure!(aside_shown == false, "the panels are folded away");
    wait_text(&fresh, "report-title", 10, |t| t.contains("(shared)")).await?;
    click(&fresh, "leave-reader-view").await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let aside_shown = fresh
        .execute(
            "return getComputedStyle(document.querySelector('aside')).display !== 'none'",
            vec![],
        )
        .await?;
    ensure!(aside_shown == true, "the panels come back on request");
    // The opened run holds the vote, against the run it was cast against: saved from the link,
    // it is in this browser's storage with it.
    click(&fresh, "save-run").await?;
    // Written once the report's writer has loaded (a lazy part: the first save fetches it).
    newest_run_saved(&fresh, 15).await?;
    let opened = saved_runs(&fresh).await?;
    ensure!(opened.len() == 1, "{} runs saved", opened.len());
    let votes = &opened[0].votes;
    ensure!(
        votes.len() == 1 && votes[0].opponent == a_title,
        "the link carries the vote against {a_title}: {votes:?}"
    );
    // The other run's link too: compared, the two opened runs show the vote.
    let fragment = link_a.split_once('#').context("a fragment")?.1.to_owned();
    fresh
        .execute(
            "location.hash = arguments[0]",
            vec![serde_json::Value::String(fragment)],
        )
        .await?;
    wait_text(&fresh, "report-title", 10, |t| {
        t.contains("model-a") && t.ends_with("(shared)")
    })
    .await?;
    click(&fresh, "leave-reader-view").await?;
    let boxes = fresh
        .find_all(Locator::Css("[data-testid=compare-run]"))
        .await?;
    ensure!(boxes.len() == 2, "two opened runs: {}", boxes.len());
    for b in &boxes {
        b.click().await?;
    }
    let row = wait_text(&fresh, "compare-votes-row", 10, |t| !t.is_empty()).await?;
    println!("opened from links: {row}");
    ensure!(
        row.contains("1 of 1") && row.contains("0 of 1"),
        "one vote, won by one of the runs: {row}"
    );
    fresh.close().await?;
    session.client.clone().close().await?;
    Ok(())
}

/// A sweep is held to its SLO: the sentence, attainment per level, the request table and the
/// load chart say where it holds; another set (typed or a preset) re-scores the run and is
/// kept with it; a set that does not read says how to write it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn a_sweep_is_held_to_the_slo_you_set() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    run_small_sweep(c).await?;
    let sentence = wait_text(c, "slo-sentence", 20, |t| !t.is_empty()).await?;
    println!("{sentence}");
    // Four requests a level meet the objectives (sim-fast: ITL ≈ 12 ms against 100 ms; on a
    // machine busy enough to stall the browser for 100 ms the last level may miss, and the
    // sentence then says where it stops), too few to tell at 95 %: the sentence says so.
    ensure!(
        sentence.starts_with("Meets the chat SLO at every level, up to 4 concurrent streams.")
            || sentence.starts_with("Meets the chat SLO up to 2 concurrent streams; at 4,"),
        "{sentence}"
    );
    ensure!(
        sentence.contains(
            "Cannot tell yet at 95 % confidence: at 1 concurrent stream, TTFT P90 was attained by 100 % of 4 requests (95 % interval 51–100 %, target 90 %); about 35 requests would tell"
        ),
        "{sentence}"
    );
    let rows = c
        .find_all(Locator::Css("[data-testid=slo-levels] tbody tr"))
        .await?;
    ensure!(
        rows.len() == 4,
        "3 levels and the whole run: {}",
        rows.len()
    );
    let (charts, _) = drawn_charts(c, "report-charts", 30).await?;
    ensure!(charts.iter().any(|i| i == "levels"), "{charts:?}");

    // A set no request meets: the first level fails, the table says which objective.
    set_field(c, "slo-input", "ttft p90 <= 1000ms, e2e p50 <= 1ms").await?;
    click(c, "slo-apply").await?;
    let sentence = wait_text(c, "slo-sentence", 20, |t| t.starts_with("Misses")).await?;
    println!("{sentence}");
    ensure!(
        sentence.starts_with(
            "Misses the custom SLO from the first level (1 concurrent stream): E2E P50 is"
        ),
        "{sentence}"
    );
    // Each measured request shows the objective it failed; the warm-ups are not judged.
    let mut cells = Vec::new();
    for td in c
        .find_all(Locator::Css("[data-testid=requests] tbody tr .slo-cell"))
        .await?
    {
        cells.push(td.text().await?);
    }
    let judged: Vec<&String> = cells.iter().filter(|t| !t.is_empty()).collect();
    ensure!(
        judged.len() == 12 && judged.iter().all(|t| *t == "✗ E2E"),
        "{cells:?}"
    );
    let run = saved_runs(c).await?.remove(0);
    ensure!(
        run.slo.to_string() == "ttft p90 <= 1000ms, e2e p50 <= 1ms",
        "{}",
        run.slo
    );

    // Text that does not read: what to write instead, and nothing changes.
    set_field(c, "slo-input", "ttft fast please").await?;
    click(c, "slo-apply").await?;
    let error = wait_text(c, "slo-error", 10, |t| !t.is_empty()).await?;
    println!("{error}");
    ensure!(error.contains("ttft"), "{error}");

    // A preset.
    c.find(Locator::Css("[data-testid=slo-preset]"))
        .await?
        .select_by_value("batch")
        .await?;
    let sentence = wait_text(c, "slo-sentence", 20, |t| t.contains("batch")).await?;
    ensure!(
        sentence.starts_with(
            "Meets the batch SLO at every level, up to 4 concurrent streams. Cannot tell yet at 95 % confidence: at 1 concurrent stream, E2E P99 was attained by 100 % of 4 requests (95 % interval 51–100 %, target 99 %)"
        ),
        "{sentence}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let run = saved_runs(c).await?.remove(0);
    ensure!(run.slo.name == "batch", "{}", run.slo);
    session.client.clone().close().await?;
    Ok(())
}

/// The reading QoE headline once it is scored (`…` while it is).
async fn qoe_shown(c: &Client, unlike: Option<&str>) -> Result<String> {
    wait_text(c, "qoe-p50", 20, |t| {
        t.parse::<f64>().is_ok() && Some(t) != unlike
    })
    .await
}

/// The reading QoE of a stored report, as the headline formats it.
fn qoe_of(run: &Report) -> String {
    run.aggregates()
        .experience
        .qoe_p50
        .map_or("—".into(), |q| format!("{q:.2}"))
}

/// The reader is the user's to set: on `model-b` (a 3.5 s first token) a listener (the speech
/// preset), then a slower reader typed in, waits less for the first words and scores it higher;
/// the run keeps the setting (stored, and after a reload), its SLO on QoE, reading chart and
/// replay pace follow, new runs start with it, the same setting again changes nothing, and a
/// value the core refuses says why and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn the_reader_you_set_rescores_the_run() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    set_field(c, "model", "model-b").await?;
    set_field(c, "requests", "2").await?;
    set_field(c, "concurrency", "2").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", "60").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 60).await?;
    let reading = qoe_shown(c, None).await?;
    let run = saved_runs(c).await?.remove(0);
    ensure!(
        run.experience == ExperienceConfig::default(),
        "{:?}",
        run.experience
    );
    ensure!(reading == qoe_of(&run), "{reading} vs {}", qoe_of(&run));
    // An SLO on the reading QoE just above this reader's: missed.
    let exact = |run: &Report| run.aggregates().experience.qoe_p50.unwrap_or(f64::NAN);
    let bar = exact(&run) + 0.001;
    set_field(c, "slo-input", &format!("qoe p50 >= {bar:.4}")).await?;
    click(c, "slo-apply").await?;
    let sentence = wait_text(c, "slo-sentence", 20, |t| t.contains("< ")).await?;
    println!("at 4 words/s: {sentence}");

    // The speech preset: 2.5 words/s.
    c.find(Locator::Css("[data-testid=reader-preset]"))
        .await?
        .select_by_value("speech")
        .await?;
    let speech = qoe_shown(c, Some(&reading)).await?;
    let run = saved_runs(c).await?.remove(0);
    ensure!(
        run.experience.reading == ReadingConfig::speech(),
        "{:?}",
        run.experience
    );
    ensure!(speech == qoe_of(&run), "{speech} vs {}", qoe_of(&run));

    // A slower reader, typed.
    set_field(c, "reader-words", "1.5").await?;
    click(c, "reader-apply").await?;
    let slower = qoe_shown(c, Some(&speech)).await?;
    println!("model-b reading QoE P50: {reading} at 4 words/s, {speech} at 2.5, {slower} at 1.5");
    ensure!(
        reading.parse::<f64>()? < speech.parse::<f64>()?
            && speech.parse::<f64>()? < slower.parse::<f64>()?,
        "a slower reader waits less for model-b's late first words: {reading}, {speech}, {slower}"
    );
    let run = saved_runs(c).await?.remove(0);
    ensure!(
        run.experience.reading.words_per_s == 1.5
            && run.experience.reading.cjk_chars_per_s == ReadingConfig::speech().cjk_chars_per_s,
        "{:?}",
        run.experience
    );
    ensure!(slower == qoe_of(&run), "{slower} vs {}", qoe_of(&run));
    // The slower reader scores above the bar: the SLO is met now.
    ensure!(exact(&run) > bar, "{} vs {bar}", exact(&run));
    let sentence = wait_text(c, "slo-sentence", 20, |t| t.starts_with("Meets")).await?;
    println!("at 1.5 words/s: {sentence}");
    drawn_charts(c, "report-charts", 30).await?;
    let caption = c
        .find(Locator::Css("[data-chart=reading] figcaption"))
        .await?
        .text()
        .await?;
    ensure!(
        caption.contains("1.5 words/s"),
        "the reading chart: {caption}"
    );
    let pace = c
        .execute(
            "return document.querySelector('[data-testid=replay-reader]').parentElement.title",
            vec![],
        )
        .await?;
    ensure!(
        pace.as_str().is_some_and(|t| t.contains("1.5 words/s")),
        "the replay's pace: {pace}"
    );

    // The same setting again: nothing is scored or drawn again (the report stays in place).
    let title = c.find(Locator::Css("[data-testid=report-title]")).await?;
    click(c, "reader-apply").await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    ensure!(
        title.text().await.is_ok(),
        "re-applying the same reader rendered the report again"
    );

    // A value the core refuses: its reason, and nothing changes.
    set_field(c, "reader-words", "0").await?;
    click(c, "reader-apply").await?;
    let error = wait_text(c, "reader-error", 10, |t| !t.is_empty()).await?;
    println!("{error}");
    ensure!(
        error == "reading speeds must be between 0.01 and 1000 per second (got 0)",
        "{error}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let shown = qoe_shown(c, None).await?;
    ensure!(shown == slower, "{shown} vs {slower}");
    let run = saved_runs(c).await?.remove(0);
    ensure!(
        run.experience.reading.words_per_s == 1.5,
        "{:?}",
        run.experience
    );

    // A reload: the run keeps its reader.
    c.refresh().await?;
    wait_text(c, "clock-status", 30, |t| t.contains("µs")).await?;
    wait_text(c, "report-title", 20, |t| t.contains("model-b")).await?;
    let reopened = qoe_shown(c, None).await?;
    ensure!(reopened == slower, "{reopened} vs {slower} after a reload");
    let words = c
        .find(Locator::Css("[data-testid=reader-words]"))
        .await?
        .prop("value")
        .await?;
    ensure!(words.as_deref() == Some("1.5"), "{words:?}");

    // A new run starts with the reader last applied.
    set_field(c, "model", "sim-fast").await?;
    set_field(c, "requests", "1").await?;
    set_field(c, "max-tokens", "8").await?;
    click(c, "start-run").await?;
    wait_text(c, "report-title", 20, |t| t.contains("sim-fast")).await?;
    wait_run_complete(c, 60).await?;
    let new = saved_runs(c).await?.remove(0);
    ensure!(
        new.endpoint.model == "sim-fast" && new.experience == run.experience,
        "{}: {:?}",
        new.title,
        new.experience
    );
    session.client.clone().close().await?;
    Ok(())
}

/// Runs a short `sim-bench` scenario (page or worker stamping, per the page's URL), with the
/// page's main thread blocked for 200 ms every 300 ms while it streams when `busy`; returns the
/// saved run.
async fn run_with_main_thread(c: &Client, busy: bool) -> Result<Report> {
    set_field(c, "model", "sim-bench").await?;
    set_field(c, "requests", "12").await?;
    set_field(c, "concurrency", "4").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", "40").await?;
    click(c, "start-run").await?;
    if busy {
        c.execute(
            "window.__busy = setInterval(() => { const t = performance.now(); while (performance.now() - t < 200) {} }, 300);",
            vec![],
        )
        .await?;
    }
    wait_run_complete(c, 90).await?;
    c.execute("clearInterval(window.__busy)", vec![]).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(saved_runs(c).await?.remove(0))
}

/// The client-health verdict: a busy main thread while the page stamps the reads makes it say
/// how much the client may have added, and the error against ground truth stays within that
/// bound; the same load with the stamping worker leaves the stamps alone and the verdict says
/// so. The verdict travels with the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn a_busy_main_thread_changes_the_client_verdict() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    let port = session.studio.port;
    c.goto(&format!("{}/?stamping=page", session.studio.url))
        .await?;
    wait_text(c, "clock-status", 10, |t| t.contains("µs")).await?;

    let quiet = run_with_main_thread(c, false).await?;
    let quiet_health = quiet.client_health.clone().context("a verdict")?;
    println!(
        "page stamping, idle page: {} (lag P99 {:.1} ms, max {:.1} ms)",
        quiet_health.headline(),
        quiet_health.lag_p99_ms,
        quiet_health.lag_max_ms
    );
    ensure!(
        quiet_health.lag_samples > 0,
        "the lag probe ran while requests streamed"
    );
    let busy = run_with_main_thread(c, true).await?;
    let h = busy.client_health.clone().context("a verdict")?;
    let shown = wait_text(c, "client-health", 10, |t| t.contains("Client health")).await?;
    println!("page stamping, busy page: {shown}");
    let Verdict::MayHaveAdded { up_to_ms } = h.verdict else {
        anyhow::bail!("a busy page is not healthy: {}", h.headline());
    };
    ensure!(
        h.causes
            .iter()
            .any(|c| c.kind == CauseKind::MainThreadLag && c.up_to_ms >= 100.0),
        "{:?}",
        h.causes
    );
    ensure!(
        attr(c, "[data-testid=client-health]", "data-healthy")
            .await?
            .as_deref()
            == Some("false"),
        "the report shows the warning"
    );
    ensure!(
        h.lag_p99_ms > quiet_health.lag_p99_ms + 50.0,
        "{} vs {}",
        h.lag_p99_ms,
        quiet_health.lag_p99_ms
    );
    // The idle page: healthy, or at least bounded well below the busy one.
    match quiet_health.verdict {
        Verdict::Healthy => {}
        Verdict::MayHaveAdded {
            up_to_ms: quiet_up_to,
        } => ensure!(
            quiet_up_to < up_to_ms,
            "the idle page's bound {quiet_up_to:.0} ms is not below the busy page's {up_to_ms:.0} ms"
        ),
    }
    // Compared, the busy run is flagged for its lag, the idle one is not.
    let boxes = c
        .find_all(Locator::Css("[data-testid=compare-run]"))
        .await?;
    ensure!(boxes.len() == 2, "two runs: {}", boxes.len());
    for b in &boxes {
        b.click().await?;
    }
    let flagged = wait_text(c, "compare-health", 10, |t| !t.is_empty()).await?;
    println!("compare: {flagged}");
    // Named by what differs between the two runs (their times), not by their titles.
    let names = distinguishing_names(&[&busy, &quiet]);
    let (busy_name, quiet_name) = (&names[0], &names[1]);
    let busy_flag = compare_flag(&h).context("the busy run has a flag")?;
    ensure!(
        busy_flag.contains("heavy main-thread lag")
            && flagged.contains(&format!("{busy_name}: {busy_flag}")),
        "the busy run is named with its lag: {flagged}"
    );
    // The idle run is named only with a flag of its own (none when healthy, as it is on an
    // idle machine; a loaded machine can make even an idle page late).
    match compare_flag(&quiet_health) {
        None => ensure!(
            !flagged.contains(quiet_name.as_str()),
            "the idle run is not flagged: {flagged}"
        ),
        Some(f) => ensure!(
            flagged.contains(&format!("{quiet_name}: {f}")),
            "the idle run's own flag: {flagged}"
        ),
    }
    for b in &c
        .find_all(Locator::Css("[data-testid=compare-run]"))
        .await?
    {
        b.click().await?;
    }
    // Beside it, the error the busy page really added against ground truth: within the bound.
    let error = calibrate(&busy, &ground_truths(port, &busy).await?, 4);
    println!(
        "busy page vs ground truth: {} (verdict: up to {up_to_ms:.0} ms)",
        error.sentence()
    );
    let worst = error.itl_error_p99_ms.context("gaps compared")?;
    ensure!(
        worst <= up_to_ms + 20.0,
        "the gap error P99 {worst:.1} ms exceeds the verdict's {up_to_ms:.0} ms"
    );
    ensure!(
        worst > 20.0,
        "a blocked page delays page stamps: {worst:.1} ms"
    );

    // The stamping worker: the same load leaves the stamps alone, and the verdict says so.
    c.goto(&session.studio.url).await?;
    wait_text(c, "clock-status", 10, |t| t.contains("µs")).await?;
    let worker = run_with_main_thread(c, true).await?;
    let w = worker.client_health.clone().context("a verdict")?;
    let error = calibrate(&worker, &ground_truths(port, &worker).await?, 4);
    println!(
        "stamping worker, busy page: {} — {}",
        w.headline(),
        error.sentence()
    );
    ensure!(
        w.causes
            .iter()
            .any(|c| c.kind == CauseKind::MainThreadLag && c.up_to_ms == 0.0),
        "the lag is noted, with nothing added to the stamps: {:?}",
        w.causes
    );
    session.client.clone().close().await?;
    Ok(())
}

/// Calibrate this browser: one click, the planned concurrency, the reference endpoint's
/// ground truth, and the same figures the benchmark's comparison gives for that run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn calibrate_this_browser_shows_its_own_error() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    set_field(c, "concurrency", "4").await?;
    click(c, "calibrate").await?;
    let shown = wait_text(c, "calibration", 90, |t| t.contains("timing error")).await?;
    println!("{shown}");
    ensure!(shown.contains("at 4 streams"), "{shown}");
    let run = saved_runs(c).await?.remove(0);
    ensure!(
        run.endpoint.model == "sim-bench" && run.measured().count() == 8,
        "{}",
        run.title
    );
    let native = calibrate(&run, &ground_truths(session.studio.port, &run).await?, 4);
    ensure!(
        shown == native.sentence(),
        "{shown} vs {}",
        native.sentence()
    );
    ensure!(native.mismatched == 0 && native.failed == 0, "{native:?}");
    session.client.clone().close().await?;
    Ok(())
}

/// The typewriter at reading speed on `sim-flaky`: a stall mid-answer leaves the reader
/// waiting, and the replay marks it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the built app and Chromium: run `cargo xtask test`"]
async fn the_reading_speed_replay_marks_the_readers_wait() -> Result<()> {
    let session = open_studio().await?;
    let c = &session.client;
    set_field(c, "model", "sim-flaky").await?;
    set_field(c, "requests", "2").await?;
    set_field(c, "concurrency", "2").await?;
    set_field(c, "warmup", "0").await?;
    set_field(c, "max-tokens", "8").await?;
    // With this seed (and the test server's seed, 1) `sim-flaky` stalls 1.5 s mid-answer.
    set_field(c, "seed", "5").await?;
    click(c, "start-run").await?;
    wait_run_complete(c, 60).await?;
    let run = saved_runs(c).await?.remove(0);
    let waits = run.aggregates().experience.with_waits;
    println!(
        "sim-flaky: {waits} request(s) with reader waits, outcomes {:?}",
        run.requests
            .iter()
            .map(|r| r.outcome.kind())
            .collect::<Vec<_>>()
    );
    ensure!(waits > 0, "a stall mid-answer leaves a reader waiting");
    let checkbox = c.find(Locator::Css("[data-testid=replay-reader]")).await?;
    checkbox.click().await?;
    click(c, "replay-play").await?;
    let wait = wait_text(c, "replay-reader-waiting", 15, |t| {
        t.contains("the reader waits")
    })
    .await?;
    println!("{wait}");
    session.client.clone().close().await?;
    Ok(())
}
