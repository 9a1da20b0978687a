//! A run's opener list travels with its link (#30): a link of a run whose team added house
//! phrases or removed defaults opens with the same list and the same meaningful first token, in
//! every format; links made before the list open with the defaults.

use crate::common::*;
use ttft_core::openers::OpenerEdits;
use ttft_core::run_stats::RunStats;
use ttft_share::ShareOptions;

fn edits() -> OpenerEdits {
    let mut e = OpenerEdits::default();
    e.add("Per our style guide").unwrap();
    e.add("按照我们的规范…").unwrap();
    e.remove("great");
    e
}

#[test]
fn a_link_carries_the_run_s_opener_list() {
    let mut report = random_report(11, 20);
    report.openers = edits();
    let options = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    for text in [
        ttft_share::encode(&report, &options).text,
        ttft_share::encode_r2(&report, &options).text,
        ttft_share::encode_r3_deflate(&report, &options).text,
        ttft_share::encode_r1(&ttft_share::compact_for_share(&report, 5)),
    ] {
        let back = ttft_share::decode(&text).unwrap();
        assert_eq!(back.openers, report.openers, "{}", &text[..3]);
        close_summary(
            "meaningful",
            &back.aggregates().meaningful,
            &report.aggregates().meaningful,
            0.1,
        );
    }
    // A run with the defaults writes nothing for them: its link is as before.
    let plain = random_report(11, 20);
    let with = ttft_share::encode(&report, &options).text;
    let without = ttft_share::encode(&plain, &options).text;
    assert!(without.len() < with.len());
    assert!(ttft_share::decode(&without).unwrap().openers.is_empty());
}

#[test]
fn links_made_before_the_list_open_with_the_defaults() {
    for (name, opened) in older_links() {
        assert!(opened.openers.is_empty(), "{name}");
    }
}
