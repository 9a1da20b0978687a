//! The comparison's sentences claim only what their intervals support: over seeded simulated
//! pairs of runs (identical, slightly and clearly different; few and many requests), no
//! sentence states a difference whose interval contains zero, and the whole table of two
//! identical runs rarely marks anything different.

use statrs::distribution::{ContinuousCDF, Normal};
use ttft_core::compare::{Comparison, compare_reports};
use ttft_core::differences::Confidence;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::timeline::RequestRecorder;

fn lognormal(rng: &mut fastrand::Rng, median: f64, sigma: f64) -> f64 {
    let u = rng.f64().clamp(1e-9, 1.0 - 1e-9);
    median * (sigma * Normal::standard().inverse_cdf(u)).exp()
}

/// A run of `n` streamed answers of `words` words: TTFT lognormal around `ttft`, each gap
/// lognormal around `itl` (each request its own pace, σ 0.2, and each gap σ 0.3).
fn run(rng: &mut fastrand::Rng, n: usize, ttft: f64, itl: f64, words: usize) -> Report {
    let requests = (0..n)
        .map(|i| {
            let mut r = RequestRecorder::new(0.0, None, None);
            let first = lognormal(rng, ttft, 0.3);
            r.on_headers(first * 0.5, 200, Some("text/event-stream"));
            let pace = lognormal(rng, itl, 0.2);
            let mut at = first;
            for w in 0..words {
                let chunk = format!(
                    "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" w{w}\"}}}}]}}\n\n"
                );
                r.on_read(at, chunk.as_bytes());
                at += lognormal(rng, pace, 0.3);
            }
            r.on_read(at, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":{words},\"total_tokens\":0}}}}\n\ndata: [DONE]\n\n").as_bytes());
            let tl = r.finish(at);
            RequestRecord::from_timeline(i as u32, "chat".into(), None, &tl, &MetricsConfig::default())
        })
        .collect();
    Report::new("run", EndpointInfo::default(), "chat").with_requests(requests)
}

fn cell_of(cmp: &Comparison, metric: &str) -> Option<ttft_core::differences::DiffCell> {
    cmp.rows
        .iter()
        .find(|r| r.metric == metric)?
        .differences
        .get(1)
        .copied()
        .flatten()
}

/// Every claim of the lesson against the table's difference behind it.
fn check_claims(cmp: &Comparison) {
    let lesson = &cmp.lesson;
    for (claim, metric) in [
        ("shows its first token", "TTFT P50"),
        ("finishes", "E2E (total latency) P50"),
        ("A reader prefers", "Reading QoE P50"),
    ] {
        if lesson.contains(claim) && !lesson.contains(&format!("{claim} cannot")) {
            let cell =
                cell_of(cmp, metric).unwrap_or_else(|| panic!("{metric}: no cell for “{lesson}”"));
            let i = cell
                .interval
                .unwrap_or_else(|| panic!("{metric}: no interval for “{lesson}”"));
            assert!(
                i.excludes_zero() && cell.different,
                "{metric}: “{lesson}” claims a difference whose interval is {i:?}"
            );
        }
    }
    // The words of a claim never come with an interval that includes zero.
    for sentence in lesson.split(". ").flat_map(|s| s.split("; ")) {
        if sentence.contains("sooner than") || sentence.contains("prefers") {
            assert!(!sentence.contains("includes zero"), "“{sentence}”");
            assert!(
                sentence.contains("interval"),
                "a claim without its interval: “{sentence}”"
            );
            assert!(
                !sentence.contains(" to "),
                "an interval across zero: “{sentence}”"
            );
        }
    }
}

#[test]
fn no_sentence_claims_a_difference_its_interval_does_not_support() {
    let mut rng = fastrand::Rng::with_seed(290);
    let mut claims = 0;
    let mut quiet = 0;
    for trial in 0..120 {
        let n = [3, 8, 30, 60][trial % 4];
        let shift = [1.0, 1.05, 1.3, 3.0][(trial / 4) % 4];
        let a = run(&mut rng, n, 800.0, 40.0, 30);
        let b = run(&mut rng, n, 800.0 * shift, 40.0 / shift.sqrt(), 30);
        let cmp = compare_reports(&["a", "b"], &[&a, &b], Confidence::default()).2;
        check_claims(&cmp);
        if cmp.lesson.contains("sooner than") {
            claims += 1;
        } else {
            quiet += 1;
            assert!(
                cmp.lesson.contains("per side") || cmp.lesson.contains("cannot be told apart"),
                "no claim and no advice: “{}”",
                cmp.lesson
            );
        }
    }
    // Both kinds of lesson were written (the test saw claims and their absence).
    assert!(
        claims > 20 && quiet > 20,
        "{claims} claims, {quiet} without"
    );
}

/// Two runs of one distribution, 400 times: the whole table (every figure with an interval,
/// Holm-corrected) marks any difference in at most 6 % of them.
#[test]
fn a_table_of_identical_runs_rarely_marks_a_difference() {
    let mut rng = fastrand::Rng::with_seed(2911);
    let trials = 400;
    let mut marked = 0;
    let mut figures = 0;
    for _ in 0..trials {
        let a = run(&mut rng, 40, 800.0, 40.0, 30);
        let b = run(&mut rng, 40, 800.0, 40.0, 30);
        let cmp = compare_reports(&["a", "b"], &[&a, &b], Confidence::default()).2;
        check_claims(&cmp);
        let cells: Vec<_> = cmp
            .rows
            .iter()
            .filter_map(|r| r.differences.get(1).copied().flatten())
            .collect();
        figures = figures.max(cells.iter().filter(|c| c.p_value.is_some()).count());
        marked += usize::from(cells.iter().any(|c| c.different));
    }
    let rate = marked as f64 / trials as f64;
    assert!(figures >= 8, "only {figures} figures had an interval");
    assert!(
        rate <= 0.06,
        "{rate} of tables of identical runs marked a difference"
    );
}

/// Interleaved runs pair up: a drift shared by each pair (the server's load at that moment,
/// here a factor of 1–3 on every request) hides a 5 % difference from independent samples, and
/// the paired comparison finds it.
#[test]
fn paired_requests_cancel_drift_that_hides_a_difference() {
    let mut rng = fastrand::Rng::with_seed(5150);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for k in 0..40u32 {
        let drift = 1.0 + 2.0 * rng.f64();
        let base = lognormal(&mut rng, 800.0, 0.05) * drift;
        let mut ra = run(
            &mut fastrand::Rng::with_seed(u64::from(k)),
            1,
            base,
            40.0,
            10,
        )
        .requests
        .remove(0);
        let mut rb = run(
            &mut fastrand::Rng::with_seed(u64::from(k)),
            1,
            base * 1.05,
            40.0,
            10,
        )
        .requests
        .remove(0);
        ra.index = k;
        rb.index = k;
        ra.pair = Some(k);
        rb.pair = Some(k);
        a.push(ra);
        b.push(rb);
    }
    let a = Report::new("a", EndpointInfo::default(), "chat").with_requests(a);
    let b = Report::new("b", EndpointInfo::default(), "chat").with_requests(b);
    let cmp = compare_reports(&["a", "b"], &[&a, &b], Confidence::default()).2;
    let cell = cell_of(&cmp, "TTFT P50").unwrap();
    assert_eq!(cell.method, ttft_core::differences::Method::Paired);
    assert!(cell.different, "{cell:?}");
    let i = cell.interval.unwrap();
    let truth = 0.05 * 800.0 * 2.0; // 5 % of a median request (drift ≈ 2)
    assert!(i.lo > 0.0 && i.hi < 3.0 * truth, "{i:?}");
    // Without the pairs the same values cannot be told apart.
    let strip = |r: &Report| {
        let mut r = r.clone();
        r.requests.iter_mut().for_each(|q| q.pair = None);
        r
    };
    let (ua, ub) = (strip(&a), strip(&b));
    let unpaired = compare_reports(&["a", "b"], &[&ua, &ub], Confidence::default()).2;
    let cell = cell_of(&unpaired, "TTFT P50").unwrap();
    assert_eq!(cell.method, ttft_core::differences::Method::Shift);
    assert!(!cell.different, "{cell:?}");
}

/// Repeats of one scenario say how far their medians moved between repeats; runs that are
/// not repeats of one scenario say nothing of it.
#[test]
fn repeats_show_their_spread() {
    use ttft_core::report::RunGroup;
    let mut rng = fastrand::Rng::with_seed(77);
    let runs: Vec<Report> = (0..3)
        .map(|i| {
            run(&mut rng, 20, 800.0 + 40.0 * i as f64, 40.0, 10)
                .with_group(RunGroup::repeat("rep-1", i, 3))
        })
        .collect();
    let refs: Vec<&Report> = runs.iter().collect();
    let cmp = compare_reports(&["1", "2", "3"], &refs, Confidence::default()).2;
    let spread = cmp.repeat_spread.expect("a spread for repeats");
    assert!(
        spread.starts_with("Between these 3 repeats of one scenario: TTFT P50 "),
        "{spread}"
    );
    let plain = compare_reports(
        &["1", "2"],
        &[
            &refs[0].clone().with_group(RunGroup::repeat("other", 0, 2)),
            refs[1],
        ],
        Confidence::default(),
    )
    .2;
    assert_eq!(plain.repeat_spread, None);
}
