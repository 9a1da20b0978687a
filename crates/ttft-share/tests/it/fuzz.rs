//! Long-running randomized robustness test of the share decoder (the `cargo fuzz` equivalent):
//! arbitrary strings, and arbitrary bytes as base64url and under DEFLATE, behind each prefix.
//! Nothing may panic. `TTFT_FUZZ_CASES` sets the number of cases per property (default 3000).

use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("TTFT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn share_decoder_never_panics(s in ".*", b in any::<Vec<u8>>()) {
        let _ = ttft_share::decode(&s);
        let _ = ttft_share::decode(&format!("r1.{s}"));
        use base64::Engine;
        let _ = ttft_share::decode(&format!("r1.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&b)));
        let packed = miniz_oxide::deflate::compress_to_vec(&b, 1);
        let _ = ttft_share::decode(&format!("r1.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(packed)));
    }
}
