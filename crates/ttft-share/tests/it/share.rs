//! Share links: a link keeps a run's measurements and the opened report shows the original's
//! headline within the link's stated precision (r3 of either layout and r2 opening as the same
//! report; streams on one server's steps coding their gaps against each other) — over many
//! random runs with errors, sweeps, multi-turn rounds, agent JSON, tool calls, reasoning, several
//! choices, openers and CJK text — a length limit makes the link keep less and say what (in a
//! probe under load, never a probe request), each request's client is kept, and hostile links (a
//! client index out of range too) fail with an error, never a panic. Links of older studios:
//! `legacy.rs`; byte-identical links: `golden.rs`.

use crate::common::*;
use proptest::prelude::*;
use ttft_core::report::{Report, RequestRecord};
use ttft_core::run_stats::RunStats;
use ttft_share::{ShareError, ShareOptions};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The opened report's headline equals the original's within the stated precision.
    #[test]
    fn a_link_reopens_with_the_same_headline(seed in 1u64.., n in 1usize..60) {
        let report = random_report(seed, n);
        let options = ShareOptions { max_chars: None, ..ShareOptions::default() };
        let link = ttft_share::encode(&report, &options);
        prop_assert!(link.text.starts_with("r3."));
        let back = ttft_share::decode(&format!("https://studio.example/#share={}", link.text)).unwrap();
        let shared = back.shared.clone().expect("an opened link says what it is");
        prop_assert_eq!(shared.format.as_str(), "r3");
        // The same measurements in an r2 link (made before r3) open as the same report.
        let r2 = ttft_share::encode_r2(&report, &options);
        prop_assert!(r2.text.starts_with("r2."));
        let mut from_r2 = ttft_share::decode(&r2.text).unwrap();
        prop_assert_eq!(from_r2.shared.as_ref().map(|s| s.format.clone()), Some("r2".to_owned()));
        from_r2.shared.as_mut().unwrap().format = "r3".into();
        prop_assert_eq!(&from_r2, &back);
        // And in an r3 link of the first layout (all but the gaps under DEFLATE).
        let first = ttft_share::encode_r3_deflate(&report, &options);
        prop_assert!(first.text.starts_with("r3."));
        prop_assert_eq!(&ttft_share::decode(&first.text).unwrap(), &back);
        prop_assert_eq!(shared.precision_ms, 0.1);
        prop_assert!(shared.headline.is_none());
        prop_assert_eq!(back.requests.len(), report.requests.len());
        prop_assert_eq!(&back.title, &report.title);
        prop_assert_eq!(&back.settings, &report.settings);
        same_headline(&back.aggregates(), &report.aggregates(), 0.1);
        // Replays kept for up to five requests, whole.
        let kept: Vec<&RequestRecord> = back.requests.iter().filter(|r| !r.replay.is_empty()).collect();
        prop_assert!(kept.len() <= 5);
        for r in kept {
            let original = &report.requests[r.index as usize];
            prop_assert_eq!(&r.metrics.text, &original.metrics.text);
            prop_assert_eq!(r.replay.len(), original.replay.len());
            for (p, o) in r.replay.iter().zip(&original.replay) {
                prop_assert_eq!(&p.text, &o.text);
                prop_assert!((p.at_ms - o.at_ms).abs() <= 0.05 + 1e-9);
            }
        }
        // Ids and wall-clock times are left out, and said to be.
        prop_assert!(back.requests.iter().all(|r| r.server_request_id.is_none() && r.sent_epoch_ms.is_none()));
        prop_assert!(shared.left_out.iter().any(|l| l.contains("request ids")));
    }
}

#[test]
fn a_100_request_run_fits_in_a_short_link_and_a_1000_request_run_under_the_limit() {
    let report = random_report(7, 100);
    let link = ttft_share::encode(&report, &ShareOptions::default());
    let r1 = ttft_share::encode_r1(&ttft_share::compact_for_share(&report, 5));
    println!(
        "100 random requests: r3 {} characters, r1 {} characters",
        link.text.len(),
        r1.len()
    );
    assert!(link.text.len() * 2 < r1.len(), "r3 is far shorter than r1");
    let r2 = ttft_share::encode_r2(
        &report,
        &ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        },
    );
    assert!(
        link.text.len() < r2.text.len(),
        "r3 ({}) is shorter than r2 ({})",
        link.text.len(),
        r2.text.len()
    );
    assert!(
        link.text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    );
    let big = random_report(8, 1000);
    let link = ttft_share::encode(&big, &ShareOptions::default());
    assert!(link.text.len() <= 64_000, "{}", link.text.len());
}

/// Asserts that a report opened from a link says it left out `what`.
fn says_left_out(opened: &Report, what: &str) {
    let left_out = &opened.shared.as_ref().expect("opened from a link").left_out;
    assert!(
        left_out.iter().any(|l| l.contains(what)),
        "{what:?} not in {left_out:?}"
    );
}

/// The link of `report` limited to a `part`-th of its whole link's length, checked to fit.
fn link_within(report: &Report, part: f64) -> ttft_share::SharedLink {
    let full = ttft_share::encode(
        report,
        &ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        },
    );
    let limit = (full.text.len() as f64 / part) as usize;
    let link = ttft_share::encode(
        report,
        &ShareOptions {
            max_chars: Some(limit),
            ..ShareOptions::default()
        },
    );
    assert!(link.text.len() <= limit, "{} > {limit}", link.text.len());
    link
}

#[test]
fn a_length_limit_keeps_less_says_what_and_keeps_the_headline_exact() {
    let report = random_report(11, 400);
    let link = link_within(&report, 4.0);
    assert!(
        link.requests_kept < report.requests.len() || link.gaps_kept_for < report.requests.len()
    );
    let back = ttft_share::decode(&link.text).unwrap();
    says_left_out(&back, "the headline figures are the whole run's");
    assert_eq!(back.requests.len(), link.requests_kept);
    // The headline is the whole run's, exactly (to the last digit JSON keeps).
    same_headline(&back.aggregates(), &report.aggregates(), 1e-9);
    // Sharing the opened report again keeps that headline.
    let again =
        ttft_share::decode(&ttft_share::encode(&back, &ShareOptions::default()).text).unwrap();
    same_headline(&again.aggregates(), &report.aggregates(), 1e-9);
}

#[test]
fn damaged_and_hostile_r2_links_fail_with_an_error() {
    use base64::Engine;
    let b64 = |bytes: &[u8]| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(miniz_oxide::deflate::compress_to_vec(bytes, 6))
    };
    let report = random_report(5, 40);
    let link = ttft_share::encode_r2(&report, &ShareOptions::default()).text;
    assert_eq!(
        ttft_share::decode(&link[..link.len() / 2]),
        Err(ShareError::Inflate)
    );
    assert!(matches!(
        ttft_share::decode("r2.ab$c"),
        Err(ShareError::Base64(_))
    ));
    assert_eq!(ttft_share::decode("x2.abc"), Err(ShareError::BadPrefix));
    // Valid DEFLATE around bytes that are not an r2 report.
    for junk in [
        &b""[..],
        b"\x02",
        b"\x02\x05{}",
        b"\x02\x02{}\x00",
        b"\x03abc",
    ] {
        assert!(
            matches!(
                ttft_share::decode(&format!("r2.{}", b64(junk))),
                Err(ShareError::Damaged(_))
            ),
            "{junk:?}"
        );
    }
    // Every single-byte corruption of a real payload decodes or fails cleanly.
    let packed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&link[3..])
        .unwrap();
    let raw = miniz_oxide::inflate::decompress_to_vec(&packed).unwrap();
    let mut rng = Rng(99);
    for _ in 0..2000 {
        let mut bad = raw.clone();
        let i = rng.below(bad.len());
        bad[i] = (rng.unit() * 256.0) as u8;
        let _ = ttft_share::decode(&format!("r2.{}", b64(&bad)));
        let cut = rng.below(raw.len());
        assert!(ttft_share::decode(&format!("r2.{}", b64(&raw[..cut]))).is_err());
    }
    // A header claiming two million requests over the same few columns.
    let forged = with_header(&raw, |h| h["requests"] = serde_json::json!(2_000_000));
    assert!(matches!(
        ttft_share::decode(&format!("r2.{}", b64(&forged))),
        Err(ShareError::Damaged(_))
    ));
}

/// An r2 payload (uncompressed) with the JSON of its header changed by `change`.
fn with_header(raw: &[u8], change: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    // After the format byte: the header's length (LEB128), then its JSON.
    let (len, at) = {
        let (mut v, mut shift, mut at) = (0usize, 0, 1);
        loop {
            let b = raw[at];
            v |= usize::from(b & 0x7F) << shift;
            shift += 7;
            at += 1;
            if b & 0x80 == 0 {
                break (v, at);
            }
        }
    };
    let mut header: serde_json::Value = serde_json::from_slice(&raw[at..at + len]).unwrap();
    change(&mut header);
    let header = serde_json::to_vec(&header).unwrap();
    let mut forged = vec![2u8];
    let mut n = header.len();
    while n >= 0x80 {
        forged.push((n as u8) | 0x80);
        n >>= 7;
    }
    forged.push(n as u8);
    forged.extend_from_slice(&header);
    forged.extend_from_slice(&raw[at + len..]);
    forged
}

#[test]
fn links_keep_each_request_s_client_and_a_probe_s_headline() {
    for seed in 1..=12 {
        let report = probe_report(seed, 60);
        assert!(report.is_probe_under_load());
        let options = ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        };
        for link in [
            ttft_share::encode(&report, &options),
            ttft_share::encode_r2(&report, &options),
        ] {
            let back = ttft_share::decode(&link.text).unwrap();
            let clients: Vec<Option<&str>> =
                back.requests.iter().map(|r| r.client.as_deref()).collect();
            let expected: Vec<Option<&str>> = report
                .requests
                .iter()
                .map(|r| r.client.as_deref())
                .collect();
            assert_eq!(clients, expected, "seed {seed}");
            assert!(back.is_probe_under_load());
            // Recomputed over the probe's requests alone, not carried.
            assert!(back.shared.as_ref().unwrap().headline.is_none());
            same_headline(&back.aggregates(), &report.aggregates(), 0.1);
        }
    }
}

#[test]
fn a_sampled_probe_link_keeps_every_probe_request_and_samples_the_load() {
    let report = probe_report(11, 400);
    let probe = |r: &Report| -> Vec<u32> {
        r.requests
            .iter()
            .filter(|q| q.client.as_deref() == Some("browser"))
            .map(|q| q.index)
            .collect()
    };
    let link = link_within(&report, 2.5);
    let back = ttft_share::decode(&link.text).unwrap();
    // Two fifths of the length: the load is sampled.
    assert!(link.requests_kept < report.requests.len());
    assert_eq!(back.requests.len(), link.requests_kept);
    says_left_out(&back, "every probe request");
    // Every probe request, each with its gaps.
    assert_eq!(probe(&back), probe(&report));
    for r in back
        .requests
        .iter()
        .filter(|q| q.client.as_deref() == Some("browser"))
    {
        let original = &report.requests[r.index as usize];
        assert_eq!(r.metrics.itl_ms.len(), original.metrics.itl_ms.len());
    }
    same_headline(&back.aggregates(), &report.aggregates(), 1e-9);
    // A link too short for the probe whole samples it with the load, and still fits.
    let short = ttft_share::decode(&link_within(&report, 8.0).text).unwrap();
    assert!(probe(&short).len() < probe(&report).len());
    says_left_out(&short, "every ");
    same_headline(&short.aggregates(), &report.aggregates(), 1e-9);
}

#[test]
fn a_link_naming_a_client_it_does_not_list_is_refused() {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let link = ttft_share::encode_r2(&probe_report(4, 30), &ShareOptions::default()).text;
    let raw = miniz_oxide::inflate::decompress_to_vec(&engine.decode(&link[3..]).unwrap()).unwrap();
    for clients in [serde_json::json!(["browser"]), serde_json::json!([])] {
        let forged = with_header(&raw, |h| h["clients"] = clients.clone());
        let packed = miniz_oxide::deflate::compress_to_vec(&forged, 6);
        match ttft_share::decode(&format!("r2.{}", engine.encode(packed))) {
            Err(ShareError::Damaged(why)) => {
                assert!(why.contains("names client"), "{why}");
                assert!(
                    ShareError::Damaged(why)
                        .to_string()
                        .contains("copy it again in full")
                );
            }
            other => panic!("{clients}: {other:?}"),
        }
    }
}

#[test]
fn damaged_and_hostile_r3_links_fail_with_an_error() {
    let report = random_report(6, 40);
    // (A context-coded payload decodes whole before it is checked: fewer rounds keep the test
    // quick.)
    damaged_r3_links_fail(
        &ttft_share::encode(&report, &ShareOptions::default()).text,
        150,
    );
    damaged_r3_links_fail(
        &ttft_share::encode_r3_deflate(&report, &ShareOptions::default()).text,
        2000,
    );
    // Second layout (first byte 0, then whether gaps are coded against other streams): each
    // forged payload reaches the check it names and fails with that check's error.
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let varint = |mut v: u64| {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    };
    // [0, flag, sections, each length, code length, code…]
    let payload = |lengths: &[u64], code_len: u64, code: usize| {
        let mut p = vec![0u8, 0];
        p.extend(varint(lengths.len() as u64));
        lengths.iter().for_each(|l| p.extend(varint(*l)));
        p.extend(varint(code_len));
        p.extend(std::iter::repeat_n(0u8, code));
        p
    };
    let decode = |bytes: &[u8]| ttft_share::decode(&format!("r3.{}", engine.encode(bytes)));
    let damaged = |bytes: &[u8], says: &str| match decode(bytes) {
        Err(ShareError::Damaged(m)) => assert!(m.contains(says), "{m:?}, not {says:?}"),
        other => panic!("{:?}: {other:?}", &bytes[..bytes.len().min(16)]),
    };
    let too_large = |bytes: &[u8]| {
        assert!(
            matches!(decode(bytes), Err(ShareError::TooLarge)),
            "{:?}",
            &bytes[..bytes.len().min(16)]
        )
    };
    // No flag; more sections than a payload has.
    assert!(decode(&[0]).is_err());
    damaged(&payload(&[1; 65], 0, 0), "a count larger than the data");
    // A code length past the end.
    damaged(&payload(&[5], 9, 2), "a count larger than the data");
    // More bytes than 4 coded bytes may stand for (64 each).
    damaged(
        &payload(&[4 * 64 + 1], 4, 4),
        "more bytes than its code can hold",
    );
    // Within 32 MiB and its code's expansion, but more than 8 MiB to context-mix: refused
    // before any is decoded.
    let nine_mib = 9 << 20;
    too_large(&payload(
        &[nine_mib],
        nine_mib / 64 + 1,
        (nine_mib / 64 + 1) as usize,
    ));
    // Lengths past 32 MiB.
    too_large(&payload(&[32 << 20, 32 << 20], 32_768, 32_768));
    // A length past 64 bits' worth of varint.
    let mut long = vec![0u8, 0, 1];
    long.extend([0xFF; 11]);
    assert!(decode(&long).is_err());
}

/// Prints where the bytes of a link go, part by part (`TTFT_LINK_RUN` = a report's JSON, else
/// a random run of 100 requests): `cargo test -p ttft-share --test share -- --ignored
/// link_breakdown --nocapture`.
#[test]
#[ignore]
fn link_breakdown() {
    let report = match std::env::var_os("TTFT_LINK_RUN") {
        Some(path) => ttft_core::report::read_json(&std::fs::read(path).unwrap()).unwrap(),
        None => random_report(7, 100),
    };
    let (link, parts) = ttft_share::breakdown(&report, &ShareOptions::default());
    println!(
        "{} requests: {} characters ({} requests kept, {} replays, {} ms)",
        report.requests.len(),
        link.text.len(),
        link.requests_kept,
        link.replays,
        link.precision_ms
    );
    println!(
        "{:<66} {:>9} {:>9} {:>9}",
        "part", "raw", "coded", "deflated"
    );
    for p in &parts {
        println!(
            "{:<66} {:>9} {:>9.0} {:>9}",
            p.name, p.raw_bytes, p.coded_bytes, p.deflated_alone_bytes
        );
    }
    let old = ttft_share::encode_r3_deflate(&report, &ShareOptions::default());
    println!("first r3 layout (DEFLATE): {} characters", old.text.len());
    assert!(ttft_share::decode(&link.text).is_ok());
}

#[test]
fn streams_on_shared_server_steps_code_their_gaps_against_each_other() {
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let options = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    for seed in 1..=4 {
        let report = batched_report(seed, 48);
        let link = ttft_share::encode(&report, &options);
        let payload = engine.decode(&link.text[3..]).unwrap();
        // Second layout, refined models, gaps against the latest arrival of each step.
        assert_eq!(&payload[..2], &[0, 5], "seed {seed}");
        let back = ttft_share::decode(&link.text).unwrap();
        same_headline(&back.aggregates(), &report.aggregates(), 0.1);
        let mut from_r2 =
            ttft_share::decode(&ttft_share::encode_r2(&report, &options).text).unwrap();
        from_r2.shared.as_mut().unwrap().format = "r3".into();
        assert_eq!(from_r2, back, "seed {seed}");
        let first = ttft_share::encode_r3_deflate(&report, &options).text;
        assert!(link.text.len() < first.len(), "seed {seed}");
        damaged_r3_links_fail(&link.text, 60);
    }
    // A random run's streams share no steps: each request's gaps are coded on their own.
    let link = ttft_share::encode(&random_report(3, 40), &options);
    assert_eq!(engine.decode(&link.text[3..]).unwrap()[1], 3);
}

/// A link stores no interval: opening it recomputes them from the requests it kept, as for a
/// saved report. The whole run's TTFT P50 interval comes back within the link's precision; a
/// link laddered to a length limit that left out per-gap timings (it carries the headline)
/// keeps its TTFT interval and says its ITL has none: the gaps are not in the link.
#[test]
fn an_opened_link_has_its_intervals_recomputed() {
    use ttft_core::summary_file::{NoInterval, report_summary_rows};
    let report = random_report(8, 1000);
    let row = |r: &Report, key: &str| {
        report_summary_rows(r, 0.95)
            .into_iter()
            .find(|x| x.key == key)
            .unwrap()
    };
    let whole = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    let back = ttft_share::decode(&ttft_share::encode(&report, &whole).text).unwrap();
    let (a, b) = (
        row(&report, "ttft_p50").estimate.unwrap().interval.unwrap(),
        row(&back, "ttft_p50").estimate.unwrap().interval.unwrap(),
    );
    assert!(
        (a.lo - b.lo).abs() <= 0.05 && (a.hi - b.hi).abs() <= 0.05,
        "{a:?} vs {b:?}"
    );
    assert!(row(&back, "itl_p50").estimate.unwrap().interval.is_some());
    // Under a tight limit the link keeps the gaps of some requests only.
    let tight = ShareOptions {
        max_chars: Some(12_000),
        ..ShareOptions::default()
    };
    let link = ttft_share::encode(&report, &tight);
    let short = ttft_share::decode(&link.text).unwrap();
    assert!(short.shared.as_ref().unwrap().headline.is_some());
    assert!(row(&short, "ttft_p50").estimate.unwrap().interval.is_some());
    let itl = row(&short, "itl_p50");
    assert!(itl.value.is_some());
    assert_eq!(itl.no_interval, Some(NoInterval::GapsNotInLink));
}
