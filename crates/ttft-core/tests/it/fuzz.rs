//! Long-running randomized robustness test (the `cargo fuzz` equivalent): arbitrary bytes with
//! arbitrary read splits through framing, dialect decoding, the recorder and metrics; arbitrary
//! bytes through the report reader (the share decoder's fuzzing is in
//! `crates/ttft-share/tests/fuzz.rs`). Nothing may panic. `TTFT_FUZZ_CASES` sets the number of
//! cases per property (default 3000; the notes report a run with 1,000,000).

use proptest::prelude::*;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::timeline::RequestRecorder;

fn cases() -> u32 {
    std::env::var("TTFT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

/// Bytes that look like streams often enough to reach deep code paths.
fn streamish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        any::<Vec<u8>>(),
        Just(b"data: ".to_vec()),
        Just(b"\n\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"event: content_block_delta\n".to_vec()),
        Just(b"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\",\"tool_calls\":[{\"index\":4294967296}]}}],\"usage\":{\"completion_tokens\":-1}}".to_vec()),
        Just(b"{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{[\"}}".to_vec()),
        Just(b"{\"message\":{\"content\":\"a\"},\"done\":true,\"eval_count\":0,\"eval_duration\":1e308}".to_vec()),
        Just(b"{\"token\":{\"text\":\"\\ud800\"},\"generated_text\":\"\"}".to_vec()),
        Just(b"{\"index\":4294967296,\"content\":\"x\",\"tokens\":[1,2],\"stop\":false}".to_vec()),
        Just(b"{\"content\":\"\",\"stop\":true,\"stop_type\":\"none\",\"timings\":{\"predicted_n\":-1,\"prompt_n\":18446744073709551615,\"cache_n\":18446744073709551615}}".to_vec()),
        Just(b"[DONE]".to_vec()),
        Just("好的，😀".as_bytes().to_vec()),
        Just(b"{\"error\":null}".to_vec()),
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn recorder_never_panics(bytes in streamish(), cuts in proptest::collection::vec(any::<usize>(), 0..16), content_type in prop_oneof![Just(None), Just(Some("application/x-ndjson")), Just(Some("text/event-stream"))]) {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(1.0, 200, content_type);
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut last = 0;
        for (i, p) in points.into_iter().enumerate() {
            r.on_read(2.0 + i as f64, &bytes[last..p]);
            last = p;
        }
        r.on_read(100.0, &bytes[last..]);
        let tl = r.finish(101.0);
        let cfg = MetricsConfig { track_json: true, required_keys: vec!["a".into()], ..MetricsConfig::default() };
        let m = RequestMetrics::compute(&tl, &cfg);
        prop_assert!(m.output_events as usize <= tl.events.len());
    }

    #[test]
    fn report_reader_never_panics(b in any::<Vec<u8>>()) {
        let _ = ttft_core::report::read_json(&b);
    }
}
