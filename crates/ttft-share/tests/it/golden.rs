//! Byte-identical links: every link the writer makes of a few deterministic runs, in every
//! format (r3, and the old writers' r2, r3 first layout and r1), is the golden file captured from
//! the codec before it moved out of `ttft-core` (`tests/data/links/golden-*.txt`), byte for byte;
//! every golden link and every older studio's link opens to the same report as it did then (the
//! digest of its JSON); what each link says it kept and where its bytes go are as they were. A
//! change that moves one byte of a link fails here: a new format needs a new prefix or layout
//! byte, and new golden files beside these.

use crate::common::*;
use ttft_core::report::Report;
use ttft_share::ShareOptions;

/// Where the golden links live: links this codec wrote, kept byte for byte.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/links");

/// FNV-1a (64 bits) of `bytes`: a report's JSON in a line of `golden-opened.txt`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Asserts that `actual` is, byte for byte, the golden file `name` of [`GOLDEN`]. With
/// `TTFT_BLESS_GOLDEN` set a missing file is written (an existing one never is: a golden file
/// changes only by deleting it on purpose, with a new format or layout byte).
fn golden(name: &str, actual: &str) {
    let path = std::path::Path::new(GOLDEN).join(name);
    if !path.exists() && std::env::var_os("TTFT_BLESS_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (TTFT_BLESS_GOLDEN=1 writes it)", path.display()));
    if expected != actual {
        let at = expected
            .bytes()
            .zip(actual.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.len().min(actual.len()));
        panic!(
            "{name}: differs from the golden file at byte {at} ({} bytes now, {} golden)",
            actual.len(),
            expected.len()
        );
    }
}

/// The golden links' reports: deterministic runs that take every path of the writer (mixed
/// kinds of request, replays, CJK text, shared server steps, a probe sampled to a limit, a
/// run laddered under the default limit).
fn golden_runs() -> Vec<(&'static str, Report, ShareOptions)> {
    let whole = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    vec![
        (
            "random-7-100",
            random_report(7, 100),
            ShareOptions::default(),
        ),
        ("random-3-30-whole", random_report(3, 30), whole.clone()),
        ("batched-1-48", batched_report(1, 48), whole),
        (
            "probe-11-400-6000",
            probe_report(11, 400),
            ShareOptions {
                max_chars: Some(6_000),
                ..ShareOptions::default()
            },
        ),
        (
            "random-8-1000",
            random_report(8, 1000),
            ShareOptions::default(),
        ),
    ]
}

/// Every link the writer makes of the golden runs, in every format, is the golden file written
/// by the codec before it moved out of the core (byte for byte), and opens to the same report (its JSON's
/// digest); the older studios' links of `tests/data/links` open to the same reports too.
#[test]
fn links_are_byte_identical_to_the_golden_links_and_open_to_the_same_reports() {
    let mut opened = String::new();
    let mut open = |name: String, link: &str| {
        let report = ttft_share::decode(link).unwrap_or_else(|e| panic!("{name}: {e}"));
        let json = serde_json::to_vec(&report).unwrap();
        opened.push_str(&format!(
            "{name} {:016x} {} requests\n",
            fnv1a(&json),
            report.requests.len()
        ));
    };
    for (name, report, options) in golden_runs() {
        let links = [
            ("r3", ttft_share::encode(&report, &options).text),
            ("r2", ttft_share::encode_r2(&report, &options).text),
            (
                "r3-deflate",
                ttft_share::encode_r3_deflate(&report, &options).text,
            ),
        ];
        for (format, text) in links {
            let file = format!("golden-{name}.{format}.txt");
            golden(&file, &text);
            open(file, &text);
        }
    }
    let r1 = ttft_share::encode_r1(&ttft_share::compact_for_share(&random_report(7, 100), 5));
    golden("golden-random-7-100.r1.txt", &r1);
    open("golden-random-7-100.r1.txt".into(), &r1);
    for old in [
        "probe-under-load-before-clients.r3.txt",
        "probe-under-load-before-clients.r2.txt",
        "reference-100-first-models.r3.txt",
        "random-7-100-before-per-choice.r1.txt",
    ] {
        let text = std::fs::read_to_string(std::path::Path::new(GOLDEN).join(old)).unwrap();
        open(old.into(), &text);
    }
    golden("golden-opened.txt", &opened);
}

/// What the golden runs' links say they kept, and where their bytes go ([`ttft_share::breakdown`],
/// what the bench prints), are as before it moved.
#[test]
fn link_summaries_and_breakdowns_are_as_golden() {
    let mut out = String::new();
    for (name, report, options) in golden_runs() {
        let (link, parts) = ttft_share::breakdown(&report, &options);
        out.push_str(&format!(
            "{name}: {} characters, precision {:?} ms, {} replays, {} requests kept, gaps of {}\n",
            link.text.len(),
            link.precision_ms,
            link.replays,
            link.requests_kept,
            link.gaps_kept_for
        ));
        for l in &link.left_out {
            out.push_str(&format!("  left out: {l}\n"));
        }
        for p in &parts {
            out.push_str(&format!(
                "  {}: raw {}, coded {:?}, deflated alone {}\n",
                p.name, p.raw_bytes, p.coded_bytes, p.deflated_alone_bytes
            ));
        }
    }
    golden("golden-summaries.txt", &out);
}
