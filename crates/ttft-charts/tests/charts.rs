//! Report → chart options: what each chart shows, checked against the core's numbers, plus
//! snapshots of the full options of a small run so any change to a chart is reviewed.

use serde_json::Value;
use ttft_charts::{ChartSpec, compare_charts, report_charts};
use ttft_core::compare::compare_reports;
use ttft_core::metrics::MetricsConfig;
use ttft_core::report::{EndpointInfo, Report, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::{RequestRecorder, RequestTimeline};

fn chunk(text: &str) -> String {
    format!(
        "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}}}}]}}\n\n",
        serde_json::to_string(text).unwrap()
    )
}

/// A request: headers at ttft/2, first token at `ttft`, then `n` tokens whose gap grows by
/// `growth` ms per position, one per chunk; usage reports `prompt` prompt tokens.
fn stream(
    ttft: f64,
    itl: f64,
    growth: f64,
    n: usize,
    prompt: u64,
    pieces: &[&str],
) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(ttft * 0.5, 200, Some("text/event-stream"));
    let mut at = ttft;
    for i in 0..n {
        let piece = pieces
            .get(i)
            .map_or_else(|| format!(" w{i}"), |p| (*p).to_owned());
        r.on_read(at, chunk(&piece).as_bytes());
        at += itl + growth * i as f64;
    }
    r.on_read(at, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{n},\"total_tokens\":0}}}}\n\ndata: [DONE]\n\n").as_bytes());
    r.finish(at)
}

fn report(
    scenario: &str,
    reqs: Vec<(String, Option<f64>, RequestTimeline)>,
    cfg: &MetricsConfig,
) -> Report {
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:1".into(),
        model: "model-a".into(),
        dialect: None,
    };
    Report::new(scenario, endpoint, scenario)
        .with_clock_resolution(Some(0.005))
        .with_settings(serde_json::json!({}))
        .with_requests(
            reqs.into_iter()
                .enumerate()
                .map(|(i, (group, level, tl))| RequestRecord {
                    start_ms: i as f64 * 10.0,
                    browser_queue_ms: Some(1.5),
                    ..RequestRecord::from_timeline(i as u32, group, level, &tl, cfg)
                })
                .collect(),
        )
}

/// Chat: TTFT grows with prompt length; ITL grows with position.
fn chat(n: usize, tokens: usize) -> Report {
    let reqs = (0..n)
        .map(|i| {
            let prompt = 100 + 50 * (i as u64 % 8);
            let ttft = 200.0 + 0.5 * prompt as f64 + (i % 3) as f64;
            (
                "chat".to_owned(),
                None,
                stream(
                    ttft,
                    20.0 + (i % 4) as f64,
                    0.05,
                    tokens,
                    prompt,
                    &["Sure, here's", " the answer:", "\n\nThe"],
                ),
            )
        })
        .collect();
    report("chat", reqs, &MetricsConfig::default())
}

fn json(spec: &ChartSpec) -> Value {
    serde_json::from_str(&spec.options_json()).unwrap()
}

/// The names of a chart's series, in order.
fn series_names(chart: &Value) -> Vec<&str> {
    chart["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect()
}

fn find<'a>(charts: &'a [ChartSpec], id: &str) -> &'a ChartSpec {
    charts.iter().find(|c| c.id == id).unwrap_or_else(|| {
        panic!(
            "no chart {id}: {:?}",
            charts.iter().map(|c| c.id).collect::<Vec<_>>()
        )
    })
}

fn mark_values(series: &Value, key: &str) -> Vec<f64> {
    series["markLine"]["data"]
        .as_array()
        .map_or(Vec::new(), |d| {
            d.iter().filter_map(|m| m[key].as_f64()).collect()
        })
}

#[test]
fn a_chat_run_draws_distributions_waterfall_position_and_prompt_fit() {
    let r = chat(24, 80);
    let agg = r.aggregates();
    let charts = report_charts(&r, &agg);
    let ids: Vec<&str> = charts.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        [
            "ttft-hist",
            "ttft-cdf",
            "itl-hist",
            "itl-cdf",
            "waterfall",
            "reading",
            "itl-position",
            "ttft-prompt"
        ]
    );
    for c in &charts {
        assert_eq!(
            json(c)["animation"],
            Value::Bool(false),
            "{}: no animation",
            c.id
        );
        assert!(!c.caption.is_empty(), "{} has a caption", c.id);
    }

    // Histogram bars count every TTFT once; the P50 line sits at the core's P50.
    let hist = json(find(&charts, "ttft-hist"));
    let bars = hist["series"][0]["data"].as_array().unwrap();
    let total: f64 = bars.iter().map(|b| b[1].as_f64().unwrap()).sum();
    assert_eq!(total as usize, 24);
    let p50 = agg.ttft.unwrap().p50;
    assert!(
        mark_values(&hist["series"][0], "xAxis")
            .iter()
            .any(|x| (x - p50).abs() < 0.001)
    );

    // Its axis starts and ends on round numbers around the bars, not on a bin's raw edge
    // (an axis once printed "14,344.103"), and the marker labels sit inside the plot, not on
    // the title.
    let (min, max) = (
        hist["xAxis"]["min"].as_f64().unwrap(),
        hist["xAxis"]["max"].as_f64().unwrap(),
    );
    let step = 10f64.powf((max - min).log10().floor()) / 10.0;
    for edge in [min, max] {
        assert!(
            (edge / step - (edge / step).round()).abs() < 1e-6,
            "{edge} on a {step} grid"
        );
    }
    let (lo, hi) = (
        bars.first().unwrap()[0].as_f64().unwrap(),
        bars.last().unwrap()[0].as_f64().unwrap(),
    );
    assert!(
        min <= lo && hi <= max,
        "[{min}, {max}] holds the bars {lo}..{hi}"
    );
    assert_eq!(
        hist["series"][0]["markLine"]["label"]["position"],
        "insideEndTop"
    );

    // The ITL histogram counts per-token gaps: 79 per request.
    let itl = json(find(&charts, "itl-hist"));
    let total: f64 = itl["series"][0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b[1].as_f64().unwrap())
        .sum();
    assert_eq!(total as usize, 24 * 79);

    // CDFs end at 100 % and the meaningful line is right of TTFT (openers skipped).
    let cdf = json(find(&charts, "ttft-cdf"));
    let names: Vec<&str> = lines(&cdf)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["TTFB (headers)", "TTFT", "meaningful first token"]);
    for s in lines(&cdf) {
        assert_eq!(
            s["data"].as_array().unwrap().last().unwrap()[1].as_f64(),
            Some(100.0)
        );
    }

    // Waterfall: 5 stacked segments per request; TTFT − TTFB is the orange one.
    let w = json(find(&charts, "waterfall"));
    assert_eq!(w["series"].as_array().unwrap().len(), 5);
    assert_eq!(w["yAxis"]["data"].as_array().unwrap().len(), 24);
    let m = &r.requests[3].metrics;
    let to_first = w["series"][3]["data"][3].as_f64().unwrap();
    assert!((to_first - (m.ttft_ms.unwrap() - m.ttfb_ms.unwrap())).abs() < 0.001);

    // ITL rises with position: last P50 point above the first; the fit line is drawn.
    let pos = json(find(&charts, "itl-position"));
    let p50s = pos["series"][0]["data"].as_array().unwrap();
    assert!(p50s.last().unwrap()[1].as_f64() > p50s[0][1].as_f64());
    assert_eq!(pos["series"][2]["name"], "fit");
    assert!(
        find(&charts, "itl-position")
            .caption
            .contains("+50.00 ms per 1,000"),
        "{}",
        find(&charts, "itl-position").caption
    );

    // TTFT against prompt: 0.5 ms per prompt token → 2,000 tokens/s prefill.
    let fit = agg.ttft_vs_prompt.unwrap();
    assert!((fit.slope - 0.5).abs() < 0.01);
    assert!(
        find(&charts, "ttft-prompt")
            .caption
            .contains("2000 prompt tokens prefilled per second"),
        "{}",
        find(&charts, "ttft-prompt").caption
    );
}

#[test]
fn a_concurrency_sweep_marks_thresholds_and_the_knee() {
    let mut reqs = Vec::new();
    for (c, itl) in [
        (1.0, 20.0),
        (2.0, 21.0),
        (4.0, 24.0),
        (8.0, 40.0),
        (16.0, 80.0),
    ] {
        for _ in 0..4 {
            reqs.push((
                format!("c={c}"),
                Some(c),
                stream(150.0 * c, itl, 0.0, 20, 100, &[]),
            ));
        }
    }
    let r = report("concurrency_sweep", reqs, &MetricsConfig::default());
    let agg = r.aggregates();
    let charts = report_charts(&r, &agg);
    let levels = json(find(&charts, "levels"));
    assert_eq!(levels["xAxis"]["type"], "log");
    let knee = agg.knee_level.expect("a knee");
    // The knee, and the highest level meeting the default (chat) SLO: TTFT P90 ≤ 1 s holds at
    // 1, 2 and 4 streams (TTFT 150 × c ms) and fails at 8 (1.2 s).
    let slo = ttft_core::slo::evaluate(&r, &r.slo);
    assert_eq!(slo.highest_level_meeting, Some(4.0));
    assert_eq!(mark_values(&levels["series"][0], "xAxis"), vec![knee, 4.0]);
    // Drawn before the SLO is scored: the knee alone and no goodput, said so; once scored, the
    // load charts alone are what the whole set holds.
    let before = ttft_charts::report_charts_before_slo(&r, &agg, None, 0.95);
    assert_eq!(before.len(), charts.len());
    let early = json(find(&before, "levels"));
    assert_eq!(mark_values(&early["series"][0], "xAxis"), vec![knee]);
    assert!(
        find(&before, "levels")
            .caption
            .contains("follow once the SLO is scored")
    );
    assert_eq!(
        json(find(&before, "throughput"))["series"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let marked = ttft_charts::load_charts(&r, &agg, &slo);
    assert_eq!(
        marked.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec!["levels", "throughput"]
    );
    for chart in &marked {
        assert_eq!(chart, find(&charts, chart.id));
    }
    // The knee is stated with the diagnosis' test that it is told from noise.
    assert!(
        find(&charts, "levels").caption.starts_with(&format!(
            "Latency bends at level {knee}: P50 TTFT or ITL above 1.5× the first level's, told from noise per request."
        )),
        "{}",
        find(&charts, "levels").caption
    );
    assert!(
        find(&charts, "levels")
            .caption
            .contains("Meets the chat SLO up to 4"),
        "{}",
        find(&charts, "levels").caption
    );
    // Goodput (requests meeting the SLO per second) beside throughput, on its own axis: none
    // at 8 and 16 streams.
    let throughput = json(find(&charts, "throughput"));
    let goodput = &throughput["series"][1];
    assert!(goodput["name"].as_str().unwrap().starts_with("goodput"));
    assert_eq!(goodput["yAxisIndex"], 1.0);
    let per_level: Vec<f64> = goodput["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_f64().unwrap())
        .collect();
    assert_eq!(per_level.len(), 5);
    assert!(per_level[..3].iter().all(|g| *g > 0.0) && per_level[3..] == [0.0, 0.0]);
    assert_eq!(
        mark_values(&levels["series"][1], "yAxis"),
        vec![r.thresholds.p95_ttft_ms]
    );
    assert_eq!(
        mark_values(&levels["series"][3], "yAxis"),
        vec![r.thresholds.itl_ms]
    );
    assert_eq!(
        levels["series"][2]["yAxisIndex"], 1.0,
        "ITL on the right axis"
    );
    let itl_points = levels["series"][2]["data"].as_array().unwrap();
    assert_eq!(itl_points.len(), 5);
    assert!((itl_points[4][1].as_f64().unwrap() - 80.0).abs() < 0.01);
    assert!(
        find(&charts, "levels")
            .caption
            .contains(&format!("level {knee}"))
    );
    assert!(charts.iter().any(|c| c.id == "throughput"));
}

#[test]
fn multi_turn_and_agent_json_runs_get_their_charts() {
    let reqs = (1..=4)
        .map(|round| {
            (
                format!("round {round}"),
                Some(round as f64),
                stream(100.0 * round as f64, 20.0, 0.0, 10, 200 * round, &[]),
            )
        })
        .collect();
    let r = report("multi_turn", reqs, &MetricsConfig::default());
    let charts = report_charts(&r, &r.aggregates());
    let rounds = json(find(&charts, "rounds"));
    assert_eq!(rounds["xAxis"]["data"].as_array().unwrap().len(), 4);
    assert_eq!(
        rounds["series"][2]["data"][3].as_f64(),
        Some(800.0),
        "prompt grows"
    );
    assert!(!charts.iter().any(|c| c.id == "levels"));

    let cfg = MetricsConfig {
        track_json: true,
        required_keys: vec!["city".into()],
        ..MetricsConfig::default()
    };
    let reqs = (0..3)
        .map(|i| {
            (
                "agent".to_owned(),
                None,
                stream(
                    100.0 + i as f64,
                    10.0,
                    0.0,
                    6,
                    50,
                    &["{\"city\"", ": \"Pa", "ris\"", "}", " ", " "],
                ),
            )
        })
        .collect();
    let r = report("agent_json", reqs, &cfg);
    let agg = r.aggregates();
    let charts = report_charts(&r, &agg);
    let spec = find(&charts, "json-valid");
    assert!(spec.caption.contains("3 of 3"), "{}", spec.caption);
    let j = json(spec);
    let valid_first = lines(&j)[1]["data"][0][0].as_f64().unwrap();
    assert!((valid_first - agg.json_valid.unwrap().min).abs() < 0.001);
}

#[test]
fn a_thousand_requests_are_sampled_not_dropped_silently() {
    let r = chat(1000, 10);
    let charts = report_charts(&r, &r.aggregates());
    let w = find(&charts, "waterfall");
    assert_eq!(
        json(w)["yAxis"]["data"].as_array().unwrap().len(),
        ttft_charts::MAX_DRAWN_REQUESTS
    );
    assert!(w.caption.contains("200 of 1000"), "{}", w.caption);
    let cdf = json(find(&charts, "ttft-cdf"));
    assert!(cdf["series"][1]["data"].as_array().unwrap().len() <= 202);
}

/// A chat run of `n` requests whose TTFTs hardly repeat (a heavy-ish spread over prompt
/// lengths), `tokens` tokens each.
fn varied(n: usize, tokens: usize) -> Report {
    let reqs = (0..n)
        .map(|i| {
            let prompt = 100 + 50 * (i as u64 % 8);
            let jitter = ((i * 7919) % 1009) as f64 * 0.313;
            let ttft = 150.0 + 0.5 * prompt as f64 + jitter + if i % 97 == 0 { 900.0 } else { 0.0 };
            let itl = 15.0 + ((i * 31) % 17) as f64;
            (
                "chat".to_owned(),
                None,
                stream(ttft, itl, 0.02, tokens, prompt, &[]),
            )
        })
        .collect();
    report("chat", reqs, &MetricsConfig::default())
}

/// x (`axis` 0) or y (1) of every `[x, y]` point of a series.
fn coords(series: &Value, axis: usize) -> Vec<f64> {
    series["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[axis].as_f64().unwrap())
        .collect()
}

/// A chart's lines without their DKW bands.
fn lines(chart: &Value) -> Vec<&Value> {
    chart["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["name"].as_str().unwrap_or("").ends_with(" band"))
        .collect()
}

/// The drawn values have the core's min, max and P50/P90/P99 (to the 0.001 ms the options
/// are rounded to).
fn assert_keeps_figures(drawn: &[f64], core: ttft_core::stats::Summary, what: &str) {
    let s = ttft_core::stats::Summary::of(drawn).unwrap();
    for (name, a, b) in [
        ("min", s.min, core.min),
        ("max", s.max, core.max),
        ("P50", s.p50, core.p50),
        ("P90", s.p90, core.p90),
        ("P99", s.p99, core.p99),
    ] {
        assert!((a - b).abs() <= 0.001, "{what}: drawn {name} {a}, core {b}");
    }
}

#[test]
fn a_large_run_draws_samples_that_keep_the_cores_figures_and_say_so() {
    let r = varied(2345, 8);
    let agg = r.aggregates();
    let charts = report_charts(&r, &agg);
    for c in &charts {
        for s in json(c)["series"].as_array().unwrap() {
            let n = s["data"].as_array().map_or(0, Vec::len);
            assert!(n <= ttft_charts::MAX_POINTS, "{}: {n} points", c.id);
        }
    }
    let (ttft, itl) = (agg.ttft.unwrap(), agg.itl.unwrap());

    // The scatter: 2,345 ≡ 45 (mod 100), so 945 requests, with the core's TTFT figures.
    let spec = find(&charts, "ttft-prompt");
    assert!(
        spec.caption
            .contains("945 of 2345 requests shown (min, max, P50, P90, P95 and P99 kept)"),
        "{}",
        spec.caption
    );
    let scatter = &json(spec)["series"][0];
    assert_eq!(scatter["data"].as_array().unwrap().len(), 945);
    assert_eq!(
        scatter["large"],
        Value::Bool(true),
        "one path, not 945 symbols"
    );
    assert_keeps_figures(&coords(scatter, 1), ttft, "scatter TTFT");

    // CDF lines pass through the same figures (after the leading 0 % point).
    let cdf = json(find(&charts, "ttft-cdf"));
    assert_keeps_figures(&coords(lines(&cdf)[1], 0)[1..], ttft, "TTFT CDF");
    assert!(
        find(&charts, "ttft-cdf")
            .caption
            .contains("of 2345 points shown"),
        "{}",
        find(&charts, "ttft-cdf").caption
    );
    let itl_cdf = find(&charts, "itl-cdf");
    assert_keeps_figures(&coords(&json(itl_cdf)["series"][0], 0)[1..], itl, "ITL CDF");
    assert!(
        itl_cdf
            .caption
            .contains(&format!("of {} points shown", itl.count)),
        "{}",
        itl_cdf.caption
    );

    // Histograms never sample: every gap is counted.
    let hist = json(find(&charts, "itl-hist"));
    let counted: f64 = coords(&hist["series"][0], 1).iter().sum();
    assert_eq!(counted as usize, itl.count);

    // The waterfall keeps the slowest request among its 200, in run order, drawn as one path.
    let w = find(&charts, "waterfall");
    assert!(
        w.caption.starts_with("200 of 2345 requests shown"),
        "{}",
        w.caption
    );
    let wj = json(w);
    let labels: Vec<&str> = wj["yAxis"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let slowest = r
        .requests
        .iter()
        .max_by(|a, b| {
            a.metrics
                .ttft_ms
                .unwrap()
                .total_cmp(&b.metrics.ttft_ms.unwrap())
        })
        .unwrap();
    assert!(labels.contains(&format!("#{}", slowest.index).as_str()));
    let order: Vec<u32> = labels.iter().map(|l| l[1..].parse().unwrap()).collect();
    assert!(order.windows(2).all(|p| p[0] < p[1]));
    assert_eq!(wj["series"][4]["large"], Value::Bool(true));
}

#[test]
fn compare_overlays_runs_and_marks_where_the_slow_starter_catches_up() {
    let a = report(
        "chat",
        (0..5)
            .map(|_| {
                (
                    "chat".to_owned(),
                    None,
                    stream(800.0, 65.0, 0.0, 200, 100, &[]),
                )
            })
            .collect(),
        &MetricsConfig::default(),
    );
    let b = report(
        "chat",
        (0..5)
            .map(|_| {
                (
                    "chat".to_owned(),
                    None,
                    stream(3500.0, 40.0, 0.0, 200, 100, &[]),
                )
            })
            .collect(),
        &MetricsConfig::default(),
    );
    let (aggs, _, cmp) = compare_reports(&["A", "B"], &[&a, &b], Default::default());
    let charts = compare_charts(&["A", "B"], &[&a, &b], &aggs, &cmp);
    let ids: Vec<&str> = charts.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        ["cmp-progress", "cmp-ttft-cdf", "cmp-itl-cdf", "cmp-bars"]
    );
    let p = json(find(&charts, "cmp-progress"));
    let at = mark_values(&p["series"][0], "xAxis");
    assert_eq!(at.len(), 1);
    // The synthetic TPOT counts the final usage chunk: TTFT + 199 gaps of 65 ms over 199 tokens.
    let c = cmp.crossover.unwrap();
    assert!((at[0] - (c.at_ms * 1000.0).round() / 1000.0).abs() < 1e-9);
    assert!((c.at_token - 109.0).abs() < 1.0, "{}", c.at_token);
    // Before A's first token nothing is visible; at B's first token A shows ~43 tokens.
    let a_line = p["series"][0]["data"].as_array().unwrap();
    assert_eq!(a_line[1][0].as_f64(), Some(800.0));
    assert_eq!(a_line[1][1].as_f64(), Some(0.0));
    assert!(
        find(&charts, "cmp-progress")
            .caption
            .contains("slower starter overtakes")
    );
    let bars = json(find(&charts, "cmp-bars"));
    assert_eq!(bars["series"].as_array().unwrap().len(), 2);
    assert_eq!(bars["series"][1]["data"][0].as_f64(), Some(3500.0));
}

#[test]
fn chart_options_snapshot() {
    let r = chat(6, 12);
    let charts = report_charts(&r, &r.aggregates());
    for c in &charts {
        insta::assert_json_snapshot!(format!("report-{}", c.id), json(c));
    }
}

/// A chat run of `n` requests with this TTFT and gap, 12 tokens each.
fn steady(n: usize, ttft: f64, itl: f64) -> Report {
    let reqs = (0..n)
        .map(|i| {
            (
                "chat".to_owned(),
                None,
                stream(ttft + i as f64, itl, 0.0, 12, 100, &[]),
            )
        })
        .collect();
    report("chat", reqs, &MetricsConfig::default())
}

#[test]
fn compare_options_snapshot() {
    let (a, b) = (steady(3, 800.0, 65.0), steady(3, 3500.0, 40.0));
    let (aggs, _, cmp) = compare_reports(&["A", "B"], &[&a, &b], Default::default());
    for c in compare_charts(&["A", "B"], &[&a, &b], &aggs, &cmp) {
        insta::assert_json_snapshot!(format!("compare-{}", c.id), json(&c));
    }
}

/// Ten words 50 ms apart from `ttft`, then `pause` ms more, then ten more.
fn paused(ttft: f64, pause: f64) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(ttft * 0.5, 200, Some("text/event-stream"));
    let mut at = ttft;
    for i in 0..20 {
        if i == 10 {
            at += pause;
        }
        r.on_read(at, chunk(&format!(" w{i}")).as_bytes());
        at += 50.0;
    }
    r.on_read(at, b"data: [DONE]\n\n");
    r.finish(at)
}

#[test]
fn the_reading_chart_marks_where_the_median_request_kept_its_reader_waiting() {
    // TTFTs 300, 400, 500: the median is #1. Its reader reads ten words 400–2900 ms (250 ms
    // each at 4 words/s), then sits until word 11 arrives at 850 + 50 + 3000 = 3900 ms.
    let reqs = [(300.0, 0.0), (400.0, 3000.0), (500.0, 0.0)]
        .into_iter()
        .map(|(ttft, pause)| ("chat".to_owned(), None, paused(ttft, pause)))
        .collect();
    let r = report("chat", reqs, &MetricsConfig::default());
    let charts = report_charts(&r, &r.aggregates());
    let spec = find(&charts, "reading");
    assert!(
        spec.caption.contains("Request #1 (median TTFT)")
            && spec.caption.contains("waits once, 1.00 s"),
        "{}",
        spec.caption
    );
    let j = json(spec);
    let names = series_names(&j);
    assert_eq!(names, ["delivered", "read", "expected"]);
    // The wait is drawn on the reader's flat step, at 2.5 s of reading.
    let marks = &j["series"][1]["markLine"]["data"];
    assert_eq!(
        marks,
        &serde_json::json!([[{"name": "wait 1.00 s", "coord": [2900.0, 2.5]}, {"coord": [3900.0, 2.5]}]])
    );
    let read = j["series"][1]["data"].as_array().unwrap();
    assert_eq!(read.last().unwrap(), &serde_json::json!([6400.0, 5.0]));
    // The expected pace: nothing before 1 s, then the 5 s of reading.
    assert_eq!(
        j["series"][2]["data"],
        serde_json::json!([[0.0, 0.0], [1000.0, 0.0], [6000.0, 5.0]])
    );
    // Nothing to read, no chart.
    let mut silent = r.clone();
    for q in &mut silent.requests {
        q.replay.clear();
    }
    assert!(
        !report_charts(&silent, &silent.aggregates())
            .iter()
            .any(|c| c.id == "reading")
    );
}

/// A probe under load: nine load requests (`locust`, 3 in flight from 0 ms, 6 more from
/// 1000 ms, each 500 ms long) and six probe requests (`browser`) whose TTFT is 100 ms alone
/// and 400 ms under the heavier load.
fn probe_run() -> Report {
    let cfg = MetricsConfig::default();
    let mut requests = Vec::new();
    for i in 0..9u32 {
        let tl = stream(300.0, 20.0, 0.0, 10, 100, &[]);
        requests.push(RequestRecord {
            start_ms: if i < 3 { 0.0 } else { 1000.0 },
            client: Some("locust".into()),
            ..RequestRecord::from_timeline(i, "c=8".into(), Some(8.0), &tl, &cfg)
        });
    }
    for (k, (at, ttft)) in [
        (600.0, 100.0),
        (700.0, 100.0),
        (800.0, 105.0),
        (100.0, 200.0),
        (1100.0, 400.0),
        (1300.0, 420.0),
    ]
    .into_iter()
    .enumerate()
    {
        let tl = stream(ttft, 20.0, 0.0, 4, 100, &[]);
        requests.push(RequestRecord {
            start_ms: at,
            client: Some("browser".into()),
            ..RequestRecord::from_timeline(9 + k as u32, "chat".into(), None, &tl, &cfg)
        });
    }
    requests.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:1".into(),
        model: "sim-fast".into(),
        dialect: None,
    };
    Report::new("probe + locust", endpoint, "chat")
        .with_clock_resolution(Some(0.005))
        .with_settings(serde_json::json!({}))
        .with_requests(requests)
}

#[test]
fn a_probe_under_load_draws_its_ttft_against_the_load_in_flight() {
    let r = probe_run();
    let agg = r.aggregates();
    assert_eq!(agg.count, 6, "the headline is the probe's");
    let charts = report_charts(&r, &agg);
    assert_eq!(charts[0].id, "probe-load", "first, the point of the run");
    let c = json(&charts[0]);
    // Probe TTFT on the left axis, at each send (s).
    assert_eq!(c["series"][0]["data"][0], serde_json::json!([0.1, 200.0]));
    assert_eq!(c["series"][0]["data"].as_array().unwrap().len(), 6);
    // The load as steps on the right axis: 3 from 0 s, none from 0.5 s, 6 from 1 s to 1.5 s.
    assert_eq!(c["series"][1]["yAxisIndex"], 1.0);
    assert_eq!(
        c["series"][1]["data"],
        serde_json::json!([[0.0, 3.0], [0.5, 0.0], [1.0, 6.0], [1.5, 0.0]])
    );
    assert!(
        charts[0]
            .caption
            .contains("Probe P50 TTFT 100 ms (2 requests, too few for an interval) at ≤0 in flight, 410 ms (2 requests, too few for an interval) at ≥6."),
        "{}",
        charts[0].caption
    );
    insta::assert_json_snapshot!("report-probe-load", c);
    // Without the load, no such chart.
    let mut alone = r.clone();
    alone
        .requests
        .retain(|q| q.client.as_deref() == Some("browser"));
    assert!(
        report_charts(&alone, &alone.aggregates())
            .iter()
            .all(|c| c.id != "probe-load")
    );
}

/// A conversation's request: first token at 200 ms, five tokens, usage with `prompt` prompt
/// tokens and, when the server said, `cached` of them from its prefix cache.
fn cached_stream(prompt: u64, cached: Option<u64>) -> RequestTimeline {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(100.0, 200, Some("text/event-stream"));
    for i in 0..5 {
        r.on_read(200.0 + 20.0 * i as f64, chunk(&format!(" w{i}")).as_bytes());
    }
    let details = cached.map_or(String::new(), |c| {
        format!(",\"prompt_tokens_details\":{{\"cached_tokens\":{c}}}")
    });
    r.on_read(300.0, format!("data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":5,\"total_tokens\":0{details}}}}}\n\ndata: [DONE]\n\n").as_bytes());
    r.finish(300.0)
}

/// Two conversations of three rounds; `cached` says what round 2 and 3 reported.
fn conversation(cached: [Option<u64>; 3]) -> Report {
    let reqs =
        (0..2)
            .flat_map(|_| {
                [100u64, 200, 300].into_iter().zip(cached).enumerate().map(
                    |(round, (prompt, c))| {
                        (
                            format!("round {}", round + 1),
                            Some(round as f64 + 1.0),
                            cached_stream(prompt, c),
                        )
                    },
                )
            })
            .collect();
    report("multi_turn", reqs, &MetricsConfig::default())
}

#[test]
fn the_prompt_cache_chart_appears_exactly_when_the_server_reported_cached_tokens() {
    // Round 1 nothing cached, round 2 96 of 200 (48 %), round 3 240 of 300 (80 %): the run
    // 2 × 336 of 2 × 600 prompt tokens (56 %).
    let r = conversation([Some(0), Some(96), Some(240)]);
    let agg = r.aggregates();
    let charts = report_charts(&r, &agg);
    let spec = find(&charts, "prompt-cache");
    let c = json(spec);
    assert_eq!(
        c["xAxis"]["data"],
        serde_json::json!(["round 1", "round 2", "round 3"])
    );
    let series = &c["series"][0];
    assert_eq!(series["type"], "bar");
    assert_eq!(series["data"], serde_json::json!([0.0, 48.0, 80.0]));
    assert_eq!(mark_values(series, "yAxis"), [56.0]);
    assert!(
        spec.caption
            .starts_with("Prompt cache hit rate 56 %: 672 of 1200 prompt tokens"),
        "{}",
        spec.caption
    );
    // The chart follows the rounds' chart, after the conversation's other charts.
    let ids: Vec<&str> = charts.iter().map(|c| c.id).collect();
    assert_eq!(ids.last(), Some(&"prompt-cache"), "{ids:?}");

    // A round that did not say has no bar rather than a 0 % one.
    let r = conversation([None, Some(96), Some(240)]);
    let c = json(find(&report_charts(&r, &r.aggregates()), "prompt-cache"));
    assert_eq!(c["series"][0]["data"], serde_json::json!(["-", 48.0, 80.0]));

    // No cached tokens reported anywhere: no chart, in a conversation or a chat run.
    let r = conversation([None, None, None]);
    assert!(
        report_charts(&r, &r.aggregates())
            .iter()
            .all(|c| c.id != "prompt-cache")
    );
    let r = chat(6, 5);
    assert!(
        report_charts(&r, &r.aggregates())
            .iter()
            .all(|c| c.id != "prompt-cache")
    );
}

/// Per-request CDFs carry their DKW band at the chosen level: two dashed lines in the line's
/// colour, `F̂ ∓ ε` clipped to 0–100 % at the line's own points, with ε from the requests
/// behind the line (not the points drawn); the legend names the lines only, the caption the
/// band. Pooled gaps get none, and say why.
#[test]
fn per_request_cdfs_carry_their_dkw_band() {
    let r = varied(400, 6);
    let agg = r.aggregates();
    let charts = ttft_charts::report_charts_before_slo(&r, &agg, None, 0.9);
    let spec = find(&charts, "ttft-cdf");
    assert!(
        spec.caption.contains("90 % band of the whole curve (DKW)"),
        "{}",
        spec.caption
    );
    let j = json(spec);
    let series = j["series"].as_array().unwrap();
    let ttft = series.iter().position(|s| s["name"] == "TTFT").unwrap();
    let (lo, hi) = (&series[ttft + 1], &series[ttft + 2]);
    assert_eq!(lo["name"], "TTFT · 90 % band");
    assert_eq!(hi["name"], "TTFT · 90 % band");
    assert_eq!(lo["lineStyle"]["type"], "dashed");
    assert_eq!(lo["lineStyle"]["color"], series[ttft]["lineStyle"]["color"]);
    let eps = 100.0 * ttft_core::uncertainty::dkw_epsilon(400, 0.9).unwrap();
    let (f, l, h) = (coords(&series[ttft], 1), coords(lo, 1), coords(hi, 1));
    assert_eq!((f.len(), l.len()), (h.len(), h.len()));
    for ((f, l), h) in f.iter().zip(&l).zip(&h).skip(1) {
        assert!((l - (f - eps).max(0.0)).abs() < 0.002, "{l} vs {f} − {eps}");
        assert!(
            (h - (f + eps).min(100.0)).abs() < 0.002,
            "{h} vs {f} + {eps}"
        );
    }
    assert_eq!(
        coords(&series[ttft], 0),
        coords(lo, 0),
        "at the line's points"
    );
    let legend: Vec<&str> = j["legend"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().or(n["name"].as_str()).unwrap())
        .collect();
    assert_eq!(legend, ["TTFB (headers)", "TTFT", "meaningful first token"]);
    // Gaps are not independent draws: no band, and the caption says so.
    let itl = find(&charts, "itl-cdf");
    assert!(
        !json(itl)["series"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"].as_str().unwrap().ends_with(" band"))
    );
    assert!(itl.caption.contains("No band"), "{}", itl.caption);
}

/// The compare view's TTFT CDFs carry each run's band at the comparison's level.
#[test]
fn compared_ttft_cdfs_carry_each_runs_band_at_the_comparisons_level() {
    let (a, b) = (varied(120, 6), varied(80, 6));
    let confidence = ttft_core::differences::Confidence {
        level: 0.99,
        detect: 0.1,
    };
    let (aggs, _, cmp) = compare_reports(&["A", "B"], &[&a, &b], confidence);
    let charts = compare_charts(&["A", "B"], &[&a, &b], &aggs, &cmp);
    let spec = find(&charts, "cmp-ttft-cdf");
    assert!(spec.caption.contains("99 % band of the whole curve (DKW)"));
    let j = json(spec);
    let names = series_names(&j);
    assert_eq!(
        names,
        [
            "A",
            "A · 99 % band",
            "A · 99 % band",
            "B",
            "B · 99 % band",
            "B · 99 % band"
        ]
    );
    // Fewer requests, a wider band.
    let width = |i: usize| {
        let (l, h) = (coords(&j["series"][i], 1), coords(&j["series"][i + 1], 1));
        l.iter().zip(&h).map(|(l, h)| h - l).fold(0.0, f64::max)
    };
    assert!(width(4) > width(1));
}

/// Two requests a second for a minute, 12 tokens each: TTFT 900 ms for the first 20 s, then
/// 300 ms.
fn slow_start() -> Report {
    let reqs = (0..120)
        .map(|i| {
            let ttft = if i < 40 { 900.0 } else { 300.0 } + (i % 3) as f64;
            (
                "chat".to_owned(),
                None,
                stream(ttft, 20.0, 0.0, 12, 100, &[]),
            )
        })
        .collect();
    let mut r = report("chat", reqs, &MetricsConfig::default());
    for (i, q) in r.requests.iter_mut().enumerate() {
        q.start_ms = i as f64 * 500.0;
    }
    r
}

#[test]
fn a_run_over_time_draws_its_windows_and_marks_the_steady_state() {
    use ttft_core::time_slices::{steady_state, time_slices};
    let r = slow_start();
    let slices = time_slices(&r, None, ttft_core::uncertainty::DEFAULT_LEVEL);
    let steady = steady_state(&slices).expect("steady after 20 s");
    assert_eq!(steady.first_window, 4);
    let charts = ttft_charts::time_slices_charts(&slices, Some(&steady));
    let ids: Vec<&str> = charts.iter().map(|c| c.id).collect();
    assert_eq!(
        ids,
        ["slices-latency", "slices-throughput", "slices-in-flight"]
    );
    let latency = json(&charts[0]);
    // TTFT P50 at each window's middle; the window after the last send has none.
    let p50 = latency["series"][0]["data"].as_array().unwrap();
    assert_eq!(p50.len(), 12);
    assert_eq!(p50[0], serde_json::json!([2.5, 901.0]));
    assert_eq!(p50[11][1], serde_json::json!(301.0));
    assert_eq!(mark_values(&latency["series"][0], "xAxis"), vec![20.0]);
    // The interval's bounds are drawn beside it, ITL on the right axis.
    let lo = latency["series"][1]["data"].as_array().unwrap();
    assert!(lo[0][1].as_f64().unwrap() <= 901.0);
    assert_eq!(latency["series"][4]["yAxisIndex"], 1.0);
    assert!(
        charts[0]
            .caption
            .contains("Warm-up excluded: the first 20.0 s, 40 requests, before TTFT settled"),
        "{}",
        charts[0].caption
    );
    let throughput = json(&charts[1]);
    assert_eq!(
        throughput["series"][1]["data"][0],
        serde_json::json!([2.5, 2.0])
    );
    for c in &charts {
        insta::assert_json_snapshot!(format!("report-{}", c.id), json(c));
    }
    // No windows, no charts; no warm-up, no mark.
    let empty = time_slices(
        &report("chat", Vec::new(), &MetricsConfig::default()),
        None,
        0.95,
    );
    assert!(ttft_charts::time_slices_charts(&empty, None).is_empty());
    let unmarked = ttft_charts::time_slices_charts(&slices, None);
    assert!(mark_values(&json(&unmarked[0])["series"][0], "xAxis").is_empty());
}

/// `slow_start`'s 120 requests planned at 2 a second for a minute, sent on time for the first
/// 30 s; then the client keeps only one a second (each half a second later than the last).
fn fell_behind() -> Report {
    let mut r = slow_start();
    for (i, q) in r.requests.iter_mut().enumerate() {
        let planned = i as f64 * 500.0;
        q.planned_ms = Some(planned);
        q.start_ms = if i < 60 {
            planned + 2.0
        } else {
            30_000.0 + (i - 60) as f64 * 1000.0
        };
    }
    r
}

#[test]
fn the_rate_chart_draws_planned_against_achieved_with_its_interval() {
    let level = ttft_core::uncertainty::DEFAULT_LEVEL;
    let r = fell_behind();
    let spec = ttft_charts::rate_chart(&r, level).expect("a planned run has a rate chart");
    assert_eq!(spec.id, "rate-chart");
    let chart = json(&spec);
    let names = series_names(&chart);
    assert_eq!(
        names,
        [
            "planned",
            "achieved",
            "achieved · 95 % interval, low",
            "achieved · 95 % interval, high"
        ]
    );
    // The core's bins, drawn as they are: the plan's rate and the achieved rate with its bounds.
    let bins = ttft_core::schedule::rate_chart(&r, 5_000.0, level);
    let r3 = |x: f64| Some((x * 1e3).round() / 1e3);
    let planned = chart["series"][0]["data"].as_array().unwrap();
    let achieved = chart["series"][1]["data"].as_array().unwrap();
    assert_eq!(planned.len(), bins.len());
    for (k, b) in bins.iter().enumerate() {
        assert_eq!(planned[k][1].as_f64(), r3(b.planned_per_s));
        assert_eq!(achieved[k][1].as_f64(), r3(b.achieved.per_s));
        let i = b.achieved.interval.unwrap();
        assert_eq!(chart["series"][2]["data"][k][1].as_f64(), r3(i.lo));
        assert_eq!(chart["series"][3]["data"][k][1].as_f64(), r3(i.hi));
    }
    // On time at 2/s first; behind later, where the achieved rate is 1/s while the plan has ended.
    let rate = |k: usize, series: usize| chart["series"][series]["data"][k][1].as_f64().unwrap();
    assert!((rate(0, 1) - 2.0).abs() < 0.1, "{}", rate(0, 1));
    assert!((rate(bins.len() - 1, 1) - 1.0).abs() < 0.1);
    assert_eq!(rate(bins.len() - 1, 0), 0.0, "the plan ended at 60 s");
    assert!(
        spec.caption.contains("120 planned requests"),
        "{}",
        spec.caption
    );
    insta::assert_json_snapshot!("report-rate-chart", chart);
    // A closed loop planned nothing: no chart.
    assert!(ttft_charts::rate_chart(&slow_start(), level).is_none());
}

/// A trace of `n` updates of 40 bytes each costing `cost(k)` ms.
fn rendered(strategy: &str, n: usize, cost: impl Fn(usize) -> f64) -> ttft_core::paint::PaintTrace {
    ttft_core::paint::PaintTrace {
        strategy: strategy.into(),
        source: ttft_core::paint::PaintSource::FrameEstimate,
        updates: (0..n)
            .map(|k| ttft_core::paint::PaintedUpdate {
                text_end: 40 * (k + 1),
                released_ms: k as f64 * 10.0,
                painted_ms: k as f64 * 10.0 + 8.0,
                render_ms: cost(k),
            })
            .collect(),
        long_frames: Vec::new(),
        frames: 100,
        dropped_frames: 0,
        busy_ms: 0.0,
        span_ms: 1_000.0,
    }
}

#[test]
fn the_render_cost_chart_shows_rerendering_all_climb_and_incremental_stay_flat() {
    let all = rendered("re-render all", 2_000, |k| 0.2 + k as f64 * 0.001);
    let inc = rendered("incremental", 2_000, |k| {
        0.25 + if k == 1_234 { 3.0 } else { 0.0 }
    });
    let spec = ttft_charts::render_cost_chart(&[("re-render all", &all), ("incremental", &inc)])
        .expect("updates to draw");
    let v: Value = serde_json::from_str(&spec.options_json()).unwrap();
    let series = v["series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    for s in series {
        let n = s["data"].as_array().unwrap().len();
        assert!(
            n <= ttft_charts::MAX_POINTS / 2,
            "{n} points: thinned per strategy"
        );
    }
    // The incremental surface's one slow update (a peak) survives the thinning.
    let peak = series[1]["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p[1].as_f64())
        .fold(0.0, f64::max);
    assert!((peak - 3.25).abs() < 1e-9, "{peak}");
    // The caption gives the core's start and end costs: re-render all climbs, incremental not.
    assert!(
        spec.caption.contains("re-render all 0.40 → 2.00 ms")
            && spec.caption.contains("incremental 0.25 → 0.25 ms"),
        "{}",
        spec.caption
    );
    assert!(
        spec.caption
            .contains("updates shown (every peak and step kept)")
    );
    let empty = rendered("incremental", 0, |_| 0.0);
    assert!(ttft_charts::render_cost_chart(&[("incremental", &empty)]).is_none());
}
