//! A server's `/metrics` during a run and the first token taken apart: the Prometheus parser
//! (escapes, special values, bad lines counted, never a panic, round trips), each server's
//! names on fixtures in its own layout (`tests/data/metrics/`, see its README), histogram
//! deltas worked by hand, a counter reset, the model filter, the decomposition worked by hand
//! and the disagreement finding's borderline and counter-cases.

use proptest::prelude::*;
use ttft_core::diagnosis::diagnose;
use ttft_core::dialect::ServerTimings;
use ttft_core::first_token::{
    Basis, FirstTokenParts, Part, RunFirstToken, ServerSide, decompose, margin_ms,
};
use ttft_core::metrics::MetricsConfig;
use ttft_core::prometheus::{Exposition, MetricType, Sample, parse, render};
use ttft_core::report::{EndpointInfo, Report, RequestRecord, read_json};
use ttft_core::run_stats::RunStats;
use ttft_core::server_metrics::{
    Concept, Coverage, Scrape, ServerKind, ServerSeries, histogram_quantile, metrics_url,
};
use ttft_core::timeline::RequestRecorder;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/data/metrics/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const VLLM_MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn assert_close(a: Option<f64>, b: f64) {
    let a = a.unwrap_or_else(|| panic!("no value, expected {b}"));
    assert!(close(a, b), "{a} != {b}");
}

// ---------------------------------------------------------------- parser

#[test]
fn parses_labels_escapes_special_values_and_timestamps() {
    let text = "# HELP m A help with \\\\ and \\n in it\n\
                # TYPE m counter\n\
                m{a=\"q\\\"uo\\\\te\\nnl\",b=\"\"} 1.5 1700000000000\n\
                m_inf{le=\"+Inf\"} +Inf\n\
                m_nan NaN\n\
                m_neg -Inf\n\
                spaced { a = \"x\" , } 2\n\
                # just a comment\n\
                \n";
    let e = parse(text);
    assert_eq!(e.skipped, 0);
    assert_eq!(e.types.get("m"), Some(&MetricType::Counter));
    assert_eq!(e.help["m"], "A help with \\ and \n in it");
    assert_eq!(e.samples.len(), 5);
    let s = &e.samples[0];
    assert_eq!(s.label("a"), Some("q\"uo\\te\nnl"));
    assert_eq!(s.label("b"), Some(""));
    assert_eq!(s.value, 1.5);
    assert_eq!(s.timestamp_ms, Some(1_700_000_000_000));
    assert_eq!(e.samples[1].value, f64::INFINITY);
    assert!(e.samples[2].value.is_nan());
    assert_eq!(e.samples[3].value, f64::NEG_INFINITY);
    assert_eq!(e.samples[4].label("a"), Some("x"));
}

#[test]
fn bad_lines_are_skipped_and_counted() {
    let text = "good 1\n\
                bad line here\n\
                m{x=\"unclosed} 1\n\
                m 1 2 3\n\
                m notanumber\n\
                9bad 1\n\
                m{9=\"x\"} 1\n\
                # TYPE\n\
                # TYPE m gauge extra\n\
                m{x=\"a\"}1\n\
                also_good{x=\"a\"} 2\n";
    let e = parse(text);
    assert_eq!(e.skipped, 9);
    let names: Vec<&str> = e.samples.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "also_good"]);
}

#[test]
fn a_long_pathological_line_is_read_once() {
    // An unclosed label value a megabyte long: one bad line, in linear time.
    let text = format!("m{{a=\"{}\n", "\\\"".repeat(500_000));
    let e = parse(&text);
    assert_eq!((e.samples.len(), e.skipped), (0, 1));
}

fn same_value(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b
}

fn sample_strategy() -> impl Strategy<Value = Sample> {
    (
        "[a-zA-Z_:][a-zA-Z0-9_:]{0,12}",
        prop::collection::vec(
            ("[a-zA-Z_][a-zA-Z0-9_]{0,6}", "(\\PC|[\\\\\"\n{}=, ]){0,12}"),
            0..4,
        ),
        prop_oneof![
            any::<f64>(),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            (-1e6f64..1e6),
        ],
        proptest::option::of(any::<i64>()),
    )
        .prop_map(|(name, labels, value, timestamp_ms)| Sample {
            name,
            labels,
            value,
            timestamp_ms,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn never_panics_on_arbitrary_input(text in "(\\PC|[\\\\\"\n{}=,# ]){0,200}") {
        let e = parse(&text);
        prop_assert!(e.samples.len() + e.skipped <= text.lines().count());
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
        let _ = ServerSeries::from_scrapes(&[Scrape::new(0.0, &text), Scrape::new(1.0, &text)], None);
    }

    #[test]
    fn generated_expositions_round_trip(
        samples in prop::collection::vec(sample_strategy(), 0..8),
        help in prop::collection::btree_map("[a-z_]{1,6}", "[^\r\n]{0,20}", 0..3),
        types in prop::collection::btree_map("[a-z_]{1,6}", prop_oneof![
            Just(MetricType::Counter), Just(MetricType::Gauge), Just(MetricType::Histogram),
            Just(MetricType::Summary), Just(MetricType::Untyped)], 0..3),
    ) {
        let e = Exposition { samples, types, help, skipped: 0 };
        let back = parse(&render(&e));
        prop_assert_eq!(back.skipped, 0);
        prop_assert_eq!(&back.types, &e.types);
        prop_assert_eq!(&back.help, &e.help);
        prop_assert_eq!(back.samples.len(), e.samples.len());
        for (a, b) in back.samples.iter().zip(&e.samples) {
            prop_assert_eq!(&a.name, &b.name);
            prop_assert_eq!(&a.labels, &b.labels);
            prop_assert_eq!(a.timestamp_ms, b.timestamp_ms);
            prop_assert!(same_value(a.value, b.value), "{} vs {}", a.value, b.value);
        }
    }
}

// ---------------------------------------------------------------- quantiles

#[test]
fn histogram_quantile_interpolates_like_prometheus() {
    let inf = f64::INFINITY;
    // 10 observations: 4 in (0, 1], 4 in (1, 2], 2 above 2.
    let b = [(1.0, 4.0), (2.0, 8.0), (inf, 10.0)];
    assert_close(histogram_quantile(0.2, &b), 0.5); // rank 2 of 4 in the first bucket, from 0
    assert_close(histogram_quantile(0.5, &b), 1.25); // rank 5: 1 + 1 × (5 − 4) / 4
    assert_close(histogram_quantile(0.8, &b), 2.0); // rank 8 reaches the second bucket's top
    assert_close(histogram_quantile(0.9, &b), 2.0); // in +Inf: the highest finite bound
    assert_eq!(histogram_quantile(0.5, &[(1.0, 0.0), (inf, 0.0)]), None);
    assert_eq!(
        histogram_quantile(0.5, &[(1.0, 3.0)]),
        None,
        "no +Inf bucket"
    );
}

// ---------------------------------------------------------------- each server's names

fn series(files: &[(f64, &str)], model: Option<&str>) -> ServerSeries {
    let scrapes: Vec<Scrape> = files
        .iter()
        .map(|(t, f)| Scrape::new(*t, &fixture(f)))
        .collect();
    ServerSeries::from_scrapes(&scrapes, model)
}

fn last_value(s: &ServerSeries, c: Concept) -> f64 {
    s.series(c).unwrap().points.last().unwrap().value
}

#[test]
fn vllm_histogram_deltas_worked_by_hand() {
    let s = series(
        &[
            (0.0, "vllm-before.txt"),
            (1000.0, "vllm-during.txt"),
            (3000.0, "vllm-after.txt"),
        ],
        Some(VLLM_MODEL),
    );
    assert_eq!(s.server, Some(ServerKind::Vllm));
    assert_eq!((s.scrapes, s.skipped_lines, s.reset_at_ms), (3, 0, None));
    // TTFT, cumulative before → after: ≤0.1 2→2, ≤0.25 4→8, ≤0.5 5→13, ≤0.75 5→14,
    // ≤1 5→15: the run's 10 observations are 4 in (0.1, 0.25], 4 in (0.25, 0.5], 1 in
    // (0.5, 0.75] and 1 in (0.75, 1].
    let t = s.latency(Concept::Ttft).unwrap();
    assert_eq!(t.metric, "vllm:time_to_first_token_seconds");
    assert!(close(t.count, 10.0));
    assert_close(t.mean_ms, 360.0); // (4.5 − 0.9) s / 10
    assert_close(t.p50_ms, 312.5); // rank 5: 250 + 250 × (5 − 4) / 4
    assert_close(t.p90_ms, 750.0); // rank 9: 500 + 250 × (9 − 8) / 1
    assert_close(t.p99_ms, 975.0); // rank 9.9: 750 + 250 × 0.9
    assert_eq!(t.p50_bucket_ms, Some((250.0, 500.0)));
    // ITL: 1,000 in (25, 50] ms, 500 in (50, 75], 100 in (75, 100].
    let i = s.latency(Concept::Itl).unwrap();
    assert_eq!(i.metric, "vllm:inter_token_latency_seconds");
    assert!(close(i.count, 1600.0));
    assert_close(i.mean_ms, 50.0);
    assert_close(i.p50_ms, 45.0); // rank 800: 25 + 25 × 800 / 1000
    assert_close(i.p90_ms, 72.0); // rank 1440: 50 + 25 × 440 / 500
    assert_close(i.p99_ms, 96.0); // rank 1584: 75 + 25 × 84 / 100
    assert_close(s.latency(Concept::QueueTime).unwrap().p50_ms, 187.5); // 300 × 5 / 8
    assert_close(s.latency(Concept::PrefillTime).unwrap().p50_ms, 150.0); // 300 × 5 / 10
    assert_close(s.latency(Concept::E2e).unwrap().p50_ms, 2500.0);
    // Gauges as read, counters as rates, hit rate from the counters' deltas.
    let q: Vec<f64> = s
        .series(Concept::QueueDepth)
        .unwrap()
        .points
        .iter()
        .map(|p| p.value)
        .collect();
    assert_eq!(q, [0.0, 4.0, 0.0]);
    assert_eq!(last_value(&s, Concept::KvCacheRatio), 0.05);
    let pre = s.series(Concept::Preemptions).unwrap();
    assert!(pre.rate);
    let rates: Vec<(f64, f64)> = pre.points.iter().map(|p| (p.at_ms, p.value)).collect();
    assert_eq!(rates, [(1000.0, 2.0), (3000.0, 0.5)]); // 1 → 3 in 1 s, 3 → 4 in 2 s
    let hit = s.series(Concept::PrefixCacheHitRate).unwrap();
    assert!(close(hit.points[0].value, 0.6)); // 3000 of 5000 queried tokens
    assert!(close(hit.points[1].value, 2000.0 / 3000.0));
}

#[test]
fn vllm_deprecated_names_are_read() {
    let s = series(&[(0.0, "vllm-v0.txt")], None);
    assert_eq!(
        s.series(Concept::KvCacheRatio).unwrap().metric,
        "vllm:gpu_cache_usage_perc"
    );
    assert_eq!(last_value(&s, Concept::KvCacheRatio), 0.3);
    assert_eq!(last_value(&s, Concept::PrefixCacheHitRate), 0.42);
    let two = ServerSeries::from_scrapes(
        &[
            Scrape::new(0.0, ""),
            Scrape::new(1.0, &fixture("vllm-v0.txt")),
        ],
        None,
    );
    assert_eq!(
        two.latency(Concept::Itl).unwrap().metric,
        "vllm:time_per_output_token_seconds"
    );
    assert_eq!(s.notes.len(), 1, "one scrape: no percentiles, said so");
    assert!(s.latency.is_empty());
}

#[test]
fn sglang_names() {
    let s = series(&[(0.0, "sglang.txt")], Some("Qwen/Qwen2.5-7B-Instruct"));
    assert_eq!(s.server, Some(ServerKind::Sglang));
    assert_eq!(last_value(&s, Concept::QueueDepth), 3.0);
    assert_eq!(last_value(&s, Concept::Running), 6.0);
    assert_eq!(last_value(&s, Concept::KvCacheRatio), 0.27);
    assert_eq!(last_value(&s, Concept::KvCacheTokens), 18234.0);
    assert_eq!(last_value(&s, Concept::PrefixCacheHitRate), 0.61);
    // From an empty server to this scrape: histograms count from 0.
    let scrapes = [
        Scrape::new(0.0, ""),
        Scrape::new(1000.0, &fixture("sglang.txt")),
    ];
    let s = ServerSeries::from_scrapes(&scrapes, None);
    let t = s.latency(Concept::Ttft).unwrap();
    assert!(close(t.count, 12.0));
    assert_close(t.p50_ms, 150.0); // rank 6 of 3 ≤ 0.1 s, 9 ≤ 0.2 s: 100 + 100 × 3 / 6
    assert_eq!(
        s.latency(Concept::Itl).unwrap().metric,
        "sglang:inter_token_latency_seconds"
    );
    assert_close(
        s.latency(Concept::QueueTime).unwrap().p50_ms,
        100.0 * 2.0 / 6.0,
    );
}

#[test]
fn tgi_names() {
    let scrapes = [
        Scrape::new(0.0, ""),
        Scrape::new(1000.0, &fixture("tgi.txt")),
    ];
    let s = ServerSeries::from_scrapes(&scrapes, Some("any"));
    assert_eq!(s.server, Some(ServerKind::Tgi));
    assert_eq!(last_value(&s, Concept::QueueDepth), 5.0);
    assert_eq!(last_value(&s, Concept::Running), 4.0);
    assert!(
        s.latency(Concept::Ttft).is_none(),
        "TGI has no TTFT histogram"
    );
    // Buckets 0.0001 × 1.5^(i+1); queue: 2 by bucket 8, 8 by bucket 10, 12 by bucket 12.
    let b = |i: i32| 0.0001 * 1.5f64.powi(i + 1) * 1e3;
    let q = s.latency(Concept::QueueTime).unwrap();
    assert!(close(q.count, 12.0));
    assert_close(q.p50_ms, b(9) + (b(10) - b(9)) * (6.0 - 2.0) / 6.0);
    assert_eq!(
        s.latency(Concept::E2e).unwrap().metric,
        "tgi_request_duration"
    );
    assert_eq!(
        s.latency(Concept::Itl).unwrap().metric,
        "tgi_request_mean_time_per_token_duration"
    );
}

#[test]
fn llamacpp_names() {
    let s = series(&[(0.0, "llamacpp.txt")], Some("whatever"));
    assert_eq!(s.server, Some(ServerKind::LlamaCpp));
    assert_eq!(last_value(&s, Concept::QueueDepth), 3.0);
    assert_eq!(last_value(&s, Concept::Running), 2.0);
    assert_eq!(last_value(&s, Concept::KvCacheRatio), 0.125);
    assert_eq!(last_value(&s, Concept::KvCacheTokens), 512.0);
    assert_eq!(s.work, None, "one scrape: no delta");

    // Its work counters over a run: 500 prompt tokens in 2 s of prompt processing, 256
    // generated in 5.12 s, 128 decode calls, 2 s apart.
    let run = series(
        &[(0.0, "llamacpp-before.txt"), (2000.0, "llamacpp.txt")],
        None,
    );
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    let w = run.work.expect("llama.cpp's work counters");
    assert_close(w.prompt_tokens, 500.0);
    assert_close(w.prompt_seconds, 2.0);
    assert_close(w.generated_tokens, 256.0);
    assert_close(w.generation_seconds, 5.12);
    assert_close(w.decodes, 128.0);
    assert_close(w.prefill_tokens_per_s(), 250.0);
    assert_close(w.decode_ms_per_token(), 20.0);
    assert_close(w.tokens_per_decode(), 2.0);
    assert_eq!(
        w.sentence().as_deref(),
        Some(
            "Over the run the server prefilled 500 prompt tokens at 250 tokens/s and generated 256 tokens at 20.0 ms per token, 2.0 per decode call (its own timing; each request's time is counted apart, so these are what one request saw)."
        )
    );
    // The counters as rates between scrapes too.
    let generated = run.series(Concept::GeneratedTokens).unwrap();
    assert_eq!(generated.metric, "llamacpp:tokens_predicted_total");
    assert!(generated.rate);
    assert_eq!(last_value(&run, Concept::GeneratedTokens), 128.0);
    assert_eq!(
        run.series(Concept::Decodes).unwrap().metric,
        "llamacpp:n_decode_total"
    );
    // A restart (counters back to lower values) leaves the work out, as the percentiles.
    let restarted = series(
        &[(0.0, "llamacpp.txt"), (2000.0, "llamacpp-before.txt")],
        None,
    );
    assert!(restarted.reset_at_ms.is_some());
    assert_eq!(restarted.work, None);
    // No work counted, no rate.
    let idle = series(&[(0.0, "llamacpp.txt"), (2000.0, "llamacpp.txt")], None);
    let w = idle.work.unwrap();
    assert_eq!(w.generated_tokens, Some(0.0));
    assert_eq!(w.decode_ms_per_token(), None);
    assert_eq!(w.prefill_tokens_per_s(), None);
    assert_eq!(w.sentence(), None);
}

#[test]
fn reference_endpoint_real_scrapes() {
    let s = series(
        &[
            (0.0, "reference-before.txt"),
            (500.0, "reference-after.txt"),
        ],
        Some("sim-fast"),
    );
    assert_eq!(s.server, Some(ServerKind::Reference));
    assert_eq!(s.skipped_lines, 0);
    let t = s.latency(Concept::Ttft).unwrap();
    // Three requests: 1 in (40, 60] ms, 2 in (60, 80]; rank 1.5: 60 + 20 × 0.5 / 2.
    assert!(close(t.count, 3.0));
    assert_close(t.p50_ms, 65.0);
    assert!(s.series(Concept::KvCacheTokens).is_some());
    let other = series(
        &[
            (0.0, "reference-before.txt"),
            (500.0, "reference-after.txt"),
        ],
        Some("model-a"),
    );
    assert!(
        other.latency.is_empty(),
        "another model's histogram is not ours"
    );
}

#[test]
fn model_filter_keeps_one_model() {
    let after = fixture("vllm-after.txt");
    let both = format!("{after}{}", after.replace(VLLM_MODEL, "other-model"));
    let scrapes = [
        Scrape::new(0.0, &fixture("vllm-before.txt")),
        Scrape::new(1000.0, &both),
    ];
    let one = ServerSeries::from_scrapes(&scrapes, Some(VLLM_MODEL));
    assert!(close(one.latency(Concept::Ttft).unwrap().count, 10.0));
    let all = ServerSeries::from_scrapes(&scrapes, None);
    assert!(close(all.latency(Concept::Ttft).unwrap().count, 25.0)); // 15 + 15 − 5
}

#[test]
fn counter_reset_is_said_not_computed() {
    let s = series(
        &[
            (0.0, "vllm-after.txt"),
            (1000.0, "vllm-before.txt"),
            (2000.0, "vllm-after.txt"),
        ],
        Some(VLLM_MODEL),
    );
    assert_eq!(s.reset_at_ms, Some(1000.0));
    assert!(s.latency.is_empty());
    assert!(
        s.notes.iter().any(|n| n.contains("restarted")),
        "{:?}",
        s.notes
    );
    // No rate across the restart; the one after it stands.
    let pre: Vec<(f64, f64)> = s
        .series(Concept::Preemptions)
        .unwrap()
        .points
        .iter()
        .map(|p| (p.at_ms, p.value))
        .collect();
    assert_eq!(pre, [(2000.0, 3.0)]);
}

#[test]
fn scrape_keeps_only_known_families() {
    let full = fixture("vllm-after.txt");
    let kept = Scrape::new(0.0, &full);
    assert!(kept.text.len() < full.len());
    assert!(!kept.text.contains("python_gc"));
    assert!(!kept.text.contains("_created"));
    assert!(
        kept.text
            .contains("# TYPE vllm:time_to_first_token_seconds histogram")
    );
    assert_eq!(
        ServerSeries::from_scrapes(&[Scrape::new(0.0, &fixture("vllm-before.txt")), kept], None)
            .latency(Concept::Ttft)
            .unwrap()
            .p50_ms,
        Some(312.5)
    );
}

#[test]
fn metrics_url_from_base_url() {
    assert_eq!(metrics_url("http://h:8000/v1"), "http://h:8000/metrics");
    assert_eq!(metrics_url("http://h:8000/v1/"), "http://h:8000/metrics");
    assert_eq!(metrics_url("https://h/api/"), "https://h/api/metrics");
}

// ---------------------------------------------------------------- first token

#[test]
fn ground_truth_decomposition_worked_by_hand() {
    let truth = ServerSide::from_truth_json(&fixture("reference-truth.json")).unwrap();
    let received = truth.received_unix_ms.unwrap();
    let (queue, prefill, write) = (
        truth.queue_ms.unwrap(),
        truth.prefill_ms.unwrap(),
        truth.first_write_ms.unwrap(),
    );
    assert!(close(queue, 36.328553) && close(prefill, 41.0) && close(write, 77.731314));
    // Sent 5 ms before receipt, stamped 3 ms after the first write.
    let ttft = 5.0 + write + 3.0;
    let p = decompose(ttft, Some(received - 5.0), &truth);
    assert!(!p.split_estimated);
    assert!(close(p.reach_ms.unwrap(), 5.0));
    assert!(close(p.delivery_ms.unwrap(), 3.0));
    assert!(close(p.server_other_ms.unwrap(), write - queue - prefill));
    let sum: f64 = p.parts().iter().map(|x| x.1).sum();
    assert!(close(sum, ttft), "the parts add up to TTFT");
    let run = RunFirstToken::from_parts(&[p]).unwrap();
    assert_eq!(run.dominant, Some(Part::Prefill));
    assert_eq!(
        run.basis,
        Basis::PerRequest {
            requests: 1,
            shared_clock: 1
        }
    );
}

#[test]
fn without_a_shared_clock_the_network_is_split() {
    let side = ServerSide {
        first_write_ms: Some(60.0),
        queue_ms: Some(10.0),
        prefill_ms: Some(40.0),
        ..Default::default()
    };
    let p = decompose(100.0, None, &side);
    assert!(p.split_estimated);
    assert_eq!((p.reach_ms, p.delivery_ms), (Some(20.0), Some(20.0)));
    assert_eq!(
        p.parts(),
        [
            (Part::Network, 40.0),
            (Part::Queue, 10.0),
            (Part::Prefill, 40.0),
            (Part::ServerOther, 10.0)
        ]
    );
}

#[test]
fn llamacpp_timings_give_prefill_and_a_rest() {
    let t = ServerTimings {
        prompt_ms: Some(120.0),
        ..Default::default()
    };
    let p = decompose(200.0, Some(1.0), &ServerSide::from_timings(&t));
    assert_eq!(p.parts(), [(Part::Prefill, 120.0), (Part::Rest, 80.0)]);
    let run = RunFirstToken::from_parts(&[p]).unwrap();
    assert_eq!(run.dominant, Some(Part::Prefill));
    assert_eq!(
        run.excess_ms, None,
        "no first write: no disagreement to test"
    );
    assert!(!run.disagrees());
}

fn with_write(ttft: f64, write: f64) -> FirstTokenParts {
    decompose(
        ttft,
        None,
        &ServerSide {
            first_write_ms: Some(write),
            ..Default::default()
        },
    )
}

#[test]
fn per_request_disagreement_borderline() {
    // Allowance = the fastest trip (100 − 60 = 40); margin 20 (floor: 10 % of 120 is 12).
    // Client P50 120, server P50 60: 120 − 60 − 40 − 20 = 0 → does not fire.
    let at = RunFirstToken::from_parts(&[
        with_write(100.0, 60.0),
        with_write(120.0, 60.0),
        with_write(120.0, 60.0),
    ])
    .unwrap();
    assert_eq!(at.allowance_ms, Some(40.0));
    assert_eq!(margin_ms(120.0), 20.0);
    assert_eq!(at.excess_ms, Some(0.0));
    assert!(!at.disagrees());
    assert!(
        at.findings()
            .iter()
            .all(|f| f.id != "client_server_disagree")
    );
    // 10 ms more at the median → fires, and says by how much.
    let over = RunFirstToken::from_parts(&[
        with_write(100.0, 60.0),
        with_write(130.0, 60.0),
        with_write(130.0, 60.0),
    ])
    .unwrap();
    assert_eq!(over.excess_ms, Some(10.0));
    let f = over.findings();
    let d = f.iter().find(|f| f.id == "client_server_disagree").unwrap();
    assert!(d.title.contains("10"), "{}", d.title);
    assert!(d.evidence.contains("client P50 TTFT 130"), "{}", d.evidence);
    // A constant network, however slow, is explained: no flag.
    let slow =
        RunFirstToken::from_parts(&[with_write(560.0, 60.0), with_write(570.0, 70.0)]).unwrap();
    assert!(!slow.disagrees());
    assert_eq!(slow.dominant, Some(Part::Network));
}

#[test]
fn histogram_decomposition_and_disagreement() {
    let s = series(
        &[(0.0, "vllm-before.txt"), (3000.0, "vllm-after.txt")],
        Some(VLLM_MODEL),
    );
    // Server: queue 187.5, prefill 150, TTFT 312.5 (in (250, 500]); the remainder
    // 312.5 − 337.5 < 0 is left out.
    let run = RunFirstToken::from_histograms(700.0, Some(40.0), &s).unwrap();
    assert_eq!(run.basis, Basis::Histograms);
    assert_eq!(
        run.parts,
        [
            (Part::Queue, 187.5),
            (Part::Prefill, 150.0),
            (Part::Network, 387.5)
        ]
    );
    assert_eq!(run.dominant, Some(Part::Network));
    // 700 − 500 (the bucket's top) − 40 − max(20, 70) = 90.
    assert_eq!(run.server_ttft_p50_upper_ms, Some(500.0));
    assert!(close(run.excess_ms.unwrap(), 90.0));
    assert!(run.disagrees());
    // Inside the bucket: a client P50 of 500 may be the server's own median → no flag.
    let inside = RunFirstToken::from_histograms(500.0, Some(0.0), &s).unwrap();
    assert!(!inside.disagrees());
    // Without TTFT histogram (TGI), the rest is client − queue − prefill.
    let tgi = ServerSeries::from_scrapes(
        &[
            Scrape::new(0.0, ""),
            Scrape::new(1000.0, &fixture("tgi.txt")),
        ],
        None,
    );
    let run = RunFirstToken::from_histograms(300.0, Some(5.0), &tgi).unwrap();
    assert_eq!(run.parts.last().unwrap().0, Part::Rest);
    assert_eq!(run.dominant, Some(Part::Rest));
    assert_eq!(run.excess_ms, None);
    // Nothing to decompose with.
    let none = series(&[(0.0, "llamacpp.txt"), (1.0, "llamacpp.txt")], None);
    assert!(RunFirstToken::from_histograms(300.0, Some(5.0), &none).is_none());
}

// ---------------------------------------------------------------- report and diagnosis

fn report_with_ttft(ttft: f64, scrapes: Vec<Scrape>) -> Report {
    let cfg = MetricsConfig::default();
    let endpoint = EndpointInfo {
        base_url: "http://127.0.0.1:1/v1".into(),
        model: VLLM_MODEL.into(),
        dialect: None,
    };
    let chunk = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi \"}}]}\n\n";
    let stop = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let records = (0..5)
        .map(|i| {
            let mut r = RequestRecorder::new(0.0, None, None);
            r.on_headers(0.5, 200, Some("text/event-stream"));
            r.on_read(ttft, chunk.as_bytes());
            r.on_read(ttft + 10.0, stop.as_bytes());
            RequestRecord::from_timeline(i, "c=1".into(), None, &r.finish(ttft + 11.0), &cfg)
        })
        .collect();
    Report::new("metrics", endpoint, "chat")
        .with_requests(records)
        .with_server_scrapes(metrics_url("http://127.0.0.1:1/v1"), scrapes)
}

fn vllm_scrapes() -> Vec<Scrape> {
    vec![
        Scrape::new(0.0, &fixture("vllm-before.txt")),
        Scrape::new(3000.0, &fixture("vllm-after.txt")),
    ]
}

#[test]
fn diagnosis_names_the_dominant_part_and_flags_disagreement() {
    let report = report_with_ttft(700.0, vllm_scrapes());
    let findings = diagnose(&report, &report.aggregates());
    let parts = findings
        .iter()
        .find(|f| f.id == "first_token_parts")
        .unwrap();
    assert!(parts.title.contains("network"), "{}", parts.title);
    // 700 − 500 − 0.5 (TTFB) − 70 = 129.5 ms beyond what the network explains.
    let d = findings
        .iter()
        .find(|f| f.id == "client_server_disagree")
        .unwrap();
    assert!(d.title.contains("130"), "{}", d.title);

    // Counter-case: a client median within the server's bucket → no flag; queue dominates.
    let report = report_with_ttft(300.0, vllm_scrapes());
    let findings = diagnose(&report, &report.aggregates());
    assert!(findings.iter().all(|f| f.id != "client_server_disagree"));
    let parts = findings
        .iter()
        .find(|f| f.id == "first_token_parts")
        .unwrap();
    assert!(parts.title.contains("queue"), "{}", parts.title);

    // No scrapes, no server timings: no first-token finding at all.
    let report = report_with_ttft(300.0, Vec::new());
    assert!(
        diagnose(&report, &report.aggregates())
            .iter()
            .all(|f| f.id != "first_token_parts")
    );
}

/// A vLLM TTFT histogram with buckets ≤ 0.1 s, ≤ 0.5 s and `+Inf` (cumulative counts).
fn ttft_histogram(le: [f64; 3], sum: f64) -> String {
    let name = "vllm:time_to_first_token_seconds";
    let m = format!("model_name=\"{VLLM_MODEL}\"");
    format!(
        "# TYPE {name} histogram\n\
         {name}_bucket{{{m},le=\"0.1\"}} {}\n\
         {name}_bucket{{{m},le=\"0.5\"}} {}\n\
         {name}_bucket{{{m},le=\"+Inf\"}} {}\n\
         {name}_sum{{{m}}} {sum}\n\
         {name}_count{{{m}}} {}\n",
        le[0], le[1], le[2], le[2]
    )
}

#[test]
fn the_servers_figures_start_after_the_warm_ups() {
    // One warm-up observed at 0.3 s, then four measured requests at 0.05 s.
    let scrapes = |marked: bool| {
        let after = Scrape::new(500.0, &ttft_histogram([0.0, 1.0, 1.0], 0.3));
        vec![
            Scrape::new(0.0, &ttft_histogram([0.0, 0.0, 0.0], 0.0)),
            if marked {
                after.marked_after_warmups()
            } else {
                after
            },
            Scrape::new(3000.0, &ttft_histogram([4.0, 5.0, 5.0], 0.5)),
        ]
    };
    let with_warmup = |scrapes: Vec<Scrape>| {
        let mut r = report_with_ttft(50.0, scrapes);
        r.requests[0].warmup = true;
        r
    };
    let report = with_warmup(scrapes(true));
    let s = report.server_series().unwrap();
    assert_eq!(s.coverage, Coverage::Measured { warmups: 1 });
    let t = s.latency(Concept::Ttft).unwrap();
    assert!(
        close(t.count, 4.0),
        "only the measured requests: {}",
        t.count
    );
    assert_eq!(t.count as usize, report.measured().count());
    assert_close(t.mean_ms, 50.0); // (0.5 − 0.3) s / 4
    assert_close(t.p50_ms, 50.0); // rank 2 of 4 in (0, 0.1]
    assert!(s.coverage.sentence().contains("measured requests only"));
    // The gauges' and rates' series still start before the warm-ups.
    assert_eq!(s.scrapes, 3);

    // Without the marked scrape the warm-up is in, and the series says so.
    let s = (with_warmup(scrapes(false))).server_series().unwrap();
    assert_eq!(s.coverage, Coverage::WithWarmups { warmups: 1 });
    assert!(close(s.latency(Concept::Ttft).unwrap().count, 5.0));
    assert!(
        s.coverage
            .sentence()
            .contains("include the run's 1 warm-up request,")
    );
    // A run without warm-ups covers the whole run.
    let s = (report_with_ttft(50.0, scrapes(false)))
        .server_series()
        .unwrap();
    assert_eq!(s.coverage, Coverage::WholeRun);
    // A marked last scrape is no baseline (nothing after it to count).
    let mut last = scrapes(false);
    last[2].after_warmups = true;
    let s = (with_warmup(last)).server_series().unwrap();
    assert_eq!(s.coverage, Coverage::WithWarmups { warmups: 1 });
    // The first-token decomposition and the diagnosis read the same series.
    let agg = report.aggregates();
    let series = report.server_series();
    assert_eq!(
        ttft_core::first_token::of_report(&report, &agg),
        ttft_core::first_token::of_report_with(&report, &agg, series.as_ref())
    );
    assert_eq!(
        diagnose(&report, &agg),
        ttft_core::diagnosis::diagnose_with(&report, &agg, series.as_ref())
    );
    // One scrape: no series at all.
    assert!(
        (report_with_ttft(50.0, scrapes(true)[..1].to_vec()))
            .server_series()
            .is_none()
    );
    // The mark is kept in the file, and absent when not set.
    let back = read_json(&serde_json::to_vec(&report).unwrap()).unwrap();
    assert_eq!(back.server_scrapes, report.server_scrapes);
    let value = serde_json::to_value(&report).unwrap();
    let marks: Vec<bool> = value["server_scrapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.get("after_warmups").is_some())
        .collect();
    assert_eq!(marks, [false, true, false]);
}

#[test]
fn ground_truth_takes_each_measured_request_apart_by_its_id() {
    // Five requests r0–r4: r0 a warm-up, r4 without a record in the server's list.
    let mut report = report_with_ttft(300.0, Vec::new());
    for (i, r) in report.requests.iter_mut().enumerate() {
        r.server_request_id = Some(format!("r{i}"));
    }
    report.requests[0].warmup = true;
    let record = |id: &str, queue: f64| {
        serde_json::json!({
            "id": id, "queue_ms": queue, "prefill_ms": 100.0,
            "chunks": [{"written_ms": 150.0 + queue}],
        })
    };
    let list = serde_json::json!({
        "object": "list",
        "data": [record("r0", 900.0), record("r1", 10.0), record("r2", 20.0), record("r3", 30.0), {"queue_ms": 1.0}],
    });
    let truths = ServerSide::list_from_truth_json(&list.to_string()).unwrap();
    assert_eq!(truths.len(), 4, "a record without an id is left out");
    let run = ttft_core::first_token::with_ground_truth(&report, &truths).unwrap();
    assert_eq!(
        run.basis,
        Basis::PerRequest {
            requests: 3,
            shared_clock: 0
        }
    );
    let part = |p: Part| run.parts.iter().find(|(q, _)| *q == p).map(|x| x.1);
    assert_eq!(
        part(Part::Queue),
        Some(20.0),
        "the warm-up's 900 ms queue is left out"
    );
    assert_eq!(part(Part::Prefill), Some(100.0));
    assert_eq!(run.server_ttft_p50_ms, Some(170.0));
    // No record matches: nothing to show.
    assert!(ttft_core::first_token::with_ground_truth(&report, &Default::default()).is_none());
}

#[test]
fn scrapes_are_stored_raw_and_old_reports_still_read() {
    let report = report_with_ttft(300.0, vllm_scrapes());
    let json = serde_json::to_vec(&report).unwrap();
    let back = read_json(&json).unwrap();
    assert_eq!(back.server_scrapes, report.server_scrapes);
    assert_eq!(
        back.metrics_url.as_deref(),
        Some("http://127.0.0.1:1/metrics")
    );
    // Without scrapes neither field is written, and a file without them reads.
    let plain = report_with_ttft(300.0, Vec::new());
    let mut value = serde_json::to_value(&plain).unwrap();
    assert!(value.get("server_scrapes").is_none());
    value.as_object_mut().unwrap().remove("metrics_url");
    let old = read_json(value.to_string().as_bytes()).unwrap();
    assert!(old.server_scrapes.is_empty() && old.metrics_url.is_none());
}

#[test]
fn a_declared_type_that_contradicts_the_dictionary_is_not_that_metric() {
    let text = "# TYPE vllm:num_requests_waiting histogram\nvllm:num_requests_waiting 7\n\
                # TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 2\n";
    let s = ServerSeries::from_scrapes(&[Scrape::new(0.0, text)], None);
    assert!(s.series(Concept::QueueDepth).is_none());
    assert_eq!(last_value(&s, Concept::Running), 2.0);
}

#[test]
fn refused_scrape_advice_names_url_origin_and_switches() {
    let a = ttft_core::server_metrics::scrape_refused_advice(
        "http://gpu:8000/metrics",
        "http://localhost:8080",
    );
    for needle in [
        "http://gpu:8000/metrics",
        "http://localhost:8080",
        "--allowed-origins",
        "--cors-allow-origin",
        "--metrics",
    ] {
        assert!(a.contains(needle), "{needle}: {a}");
    }
}

/// A scrape shares the browser's HTTP/1.1 connections with the run only on the same plain-http
/// origin, once the run fills that origin's six connections.
#[test]
fn a_scrape_waits_for_the_run_only_when_it_would_take_a_busy_connection() {
    use ttft_core::server_metrics::scrape_would_share_connections as shares;
    let one = vec!["http://127.0.0.1:8080".to_owned()];
    assert!(!shares("http://127.0.0.1:8080/metrics", &one, 5));
    assert!(shares("http://127.0.0.1:8080/metrics", &one, 6));
    assert!(shares(
        "HTTP://127.0.0.1:8080/metrics",
        &["http://127.0.0.1:8080/v1".to_owned()],
        8
    ));
    // Another origin, or HTTPS (HTTP/2 multiplexes), leaves the run's connections alone.
    assert!(!shares("http://127.0.0.1:9090/metrics", &one, 64));
    assert!(!shares(
        "https://gpu:8000/metrics",
        &["https://gpu:8000".to_owned()],
        64
    ));
    // Twelve shards at 64 streams: 6 per origin, so the one the metrics URL shares is full.
    let shards: Vec<String> = (0..12)
        .map(|i| format!("http://127.0.0.1:{}", 8080 + i))
        .collect();
    assert!(shares("http://127.0.0.1:8080/metrics", &shards, 64));
    assert!(!shares("http://127.0.0.1:8080/metrics", &shards, 48));
}
