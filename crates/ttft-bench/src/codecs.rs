//! `ttft-bench ROOT --codecs` (#28): the share links' codec (r3: per-gap timings range-coded,
//! the rest context-mixed) against mainstream codecs on the same columns, the r2 bytes.
//!
//! Runs: the real 100-request run of the fixture link `reference-100-first-models.r3.txt`
//! (decoded), 1,000 requests resampled from it as the bench resamples (`resampled_report`,
//! seed 11), and any real 1,000-request run kept as `ROOT/target/bench/links-1000*.json`.
//! Each is measured at the layout of the whole link (0.1 ms steps, 5 replays, nothing left
//! out) and, where the studio's default link keeps less, at that link's layout too.
//!
//! The r2 bytes come through the public API: `encode_r2` is `r2.` + base64url of raw DEFLATE of
//! them. They are then coded by DEFLATE (r2 itself), brotli at quality 11 and zstd at 19 and 22,
//! each without and with a dictionary, and by a hybrid: r3's own gap coder for the gaps column
//! (its length from `breakdown`) and brotli for the rest. The dictionary is part of a format,
//! so it is trained on runs that are not measured: the probe-under-load fixture and synthetic
//! runs (`synthetic_report`, other seeds). Every coded form is decoded again by the pure-Rust
//! decoder a browser would use (brotli-decompressor, ruzstd, miniz_oxide) and compared.
//!
//! Prints a Markdown table and writes `ROOT/bench/codecs.json`; the dictionary is written to
//! `ROOT/target/bench/codecs-dict.zstd` (for measuring a decoder's wasm size with it).

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, ensure};
use serde_json::{Value, json};
use ttft_core::report::Report;
use ttft_share::{ShareOptions, breakdown, decode, encode, encode_r2};

use crate::synthetic::{resampled_report, synthetic_report};

/// Where the fixture links are: the core's tests, or the share crate's once the codec has
/// moved there.
const LINK_DIRS: [&str; 2] = [
    "crates/ttft-core/tests/data/links",
    "crates/ttft-share/tests/data/links",
];
/// The real 100-request run, as a link made by the studio at `ae3c2c7`.
const REFERENCE_LINK: &str = "reference-100-first-models.r3.txt";
/// A run that is not measured, for the dictionary: the probe-under-load fixture.
const PROBE_LINK: &str = "probe-under-load-before-clients.r3.txt";

/// A fixture link's report.
fn fixture(root: &Path, name: &str) -> Result<Report> {
    let text = LINK_DIRS
        .iter()
        .find_map(|dir| std::fs::read_to_string(root.join(dir).join(name)).ok())
        .with_context(|| format!("{name} under {}", LINK_DIRS.join(" or ")))?;
    decode(&text).with_context(|| format!("{name} does not decode"))
}
/// The dictionary's size (bytes; `TTFT_CODECS_DICT_BYTES` overrides).
const DICT_BYTES: usize = 16 * 1024;
/// Brotli's quality and window (log2 bytes).
const BROTLI_QUALITY: i32 = 11;
const BROTLI_WINDOW: i32 = 24;
/// The r2 columns (`docs/share-link-format.md`, 5.4): the gaps are column 6.
const COLUMNS: usize = 12;
const GAPS_COLUMN: usize = 6;

/// One run measured at one layout.
struct Case {
    name: String,
    report: Report,
    options: ShareOptions,
}

/// `--codecs`: measures, prints the table and writes `bench/codecs.json`.
pub fn run(root: &Path) -> Result<()> {
    let dict_bytes = std::env::var("TTFT_CODECS_DICT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DICT_BYTES);
    let (dict, dict_info) = dictionary(root, dict_bytes)?;
    let kept = root.join("target/bench");
    std::fs::create_dir_all(&kept)?;
    std::fs::write(kept.join("codecs-dict.zstd"), &dict.zstd)?;
    std::fs::write(kept.join("codecs-dict.raw"), &dict.content)?;
    let mut cases = Vec::new();
    for (name, report) in inputs(root)? {
        cases.extend(layouts(&name, report));
    }
    let mut rows = Vec::new();
    for case in &cases {
        eprintln!("codecs: {}…", case.name);
        rows.push(measure(case, &dict)?);
    }
    println!("{}", markdown(&rows, &dict_info));
    let out = json!({
        "dictionary": dict_info,
        "brotli": { "quality": BROTLI_QUALITY, "lgwin": BROTLI_WINDOW, "crate": "brotli 9.1.3 (encoder), brotli-decompressor 6.3.2 (decoder)" },
        "zstd": { "encoder": "zstd 0.14.4 (C libzstd 1.5.7, native, bench only)", "decoder": "ruzstd 0.9.1 (pure Rust)" },
        "cases": rows,
    });
    std::fs::create_dir_all(root.join("bench"))?;
    std::fs::write(
        root.join("bench/codecs.json"),
        serde_json::to_string_pretty(&out)? + "\n",
    )?;
    // Into the last results too, and BENCHMARKS.md re-rendered with them (section 4).
    if root.join("bench/results.json").exists() {
        crate::bench_report::merge_section(root, "codecs", out)?;
    }
    Ok(())
}

/// The runs measured: the real 100-request run, 1,000 requests resampled from it, and real
/// 1,000-request runs kept under `ROOT/target/bench/links-1000*.json`, if any.
fn inputs(root: &Path) -> Result<Vec<(String, Report)>> {
    let real = fixture(root, REFERENCE_LINK)?;
    let resampled = resampled_report(&real, 1000, 11);
    let mut out = vec![
        ("100, a real run (fixture link)".to_owned(), real),
        ("1000, resampled from the fixture".to_owned(), resampled),
    ];
    // The bench's own resampling template (every request with its replay), where kept.
    let template = root.join("target/bench/links-100.json");
    if let Ok(bytes) = std::fs::read(&template) {
        let template = ttft_core::report::read_json(&bytes)?;
        let report = resampled_report(&template, 1000, 11);
        out.push(("1000, resampled from links-100.json".to_owned(), report));
    }
    let dir = root.join("target/bench");
    let mut kept: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    kept.sort();
    for path in kept {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|n| n.starts_with("links-1000") && n.ends_with(".json"))
        else {
            continue;
        };
        let report = ttft_core::report::read_json(&std::fs::read(&path)?)?;
        out.push((
            format!("{}, a real run ({name})", report.requests.len()),
            report,
        ));
    }
    Ok(out)
}

/// The layouts `report` is measured at: the whole link's, and the default link's if it keeps
/// less (the same precision and replays, without a limit, so that every codec codes the same
/// columns).
fn layouts(name: &str, report: Report) -> Vec<Case> {
    let whole = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    let link = encode(&report, &ShareOptions::default());
    let mut out = Vec::new();
    if link.precision_ms != whole.precision_ms || link.replays != whole.replays.min(link.replays) {
        let options = ShareOptions {
            precision_ms: link.precision_ms,
            replays: link.replays,
            max_chars: None,
        };
        out.push(Case {
            name: format!("{name}, at the default link's layout"),
            report: report.clone(),
            options,
        });
    }
    out.insert(
        0,
        Case {
            name: format!("{name}, whole"),
            report,
            options: whole,
        },
    );
    out
}

/// The dictionary: zstd's trained one, and its content alone (brotli's custom dictionary).
struct Dict {
    zstd: Vec<u8>,
    content: Vec<u8>,
}

/// Trains a `size`-byte zstd dictionary on runs that are not measured: the probe-under-load
/// fixture and synthetic runs (100 requests, seeds 1–8; 1,000 requests, seed 9), each run's r2
/// bytes cut into its header and columns, and those into pieces of at most 4 KiB.
fn dictionary(root: &Path, size: usize) -> Result<(Dict, Value)> {
    let whole = ShareOptions {
        max_chars: None,
        ..ShareOptions::default()
    };
    let mut runs = vec![fixture(root, PROBE_LINK)?];
    runs.extend((1..=8).map(|seed| synthetic_report(100, 100, seed)));
    runs.push(synthetic_report(1000, 100, 9));
    let mut samples: Vec<Vec<u8>> = Vec::new();
    for run in &runs {
        let bytes = r2_bytes(run, &whole)?;
        let (header, columns) = sections(&bytes)?;
        for range in std::iter::once(header).chain(columns) {
            samples.extend(bytes[range].chunks(4096).map(<[u8]>::to_vec));
        }
    }
    let zstd = zstd::dict::from_samples(&samples, size)?;
    let content = ruzstd::decoding::Dictionary::decode_dict(&zstd)
        .map_err(|e| anyhow!("the trained dictionary does not read: {e:?}"))?
        .dict_content;
    let info = json!({
        "trained_on": "r2 bytes (whole links) of the probe-under-load fixture link and of synthetic runs (synthetic_report: 100 requests × 100 tokens, seeds 1-8; 1,000 requests, seed 9), cut into header and columns, pieces of at most 4 KiB; zstd::dict::from_samples (C ZDICT, default fastCover)",
        "samples": samples.len(),
        "sample_bytes": samples.iter().map(Vec::len).sum::<usize>(),
        "zstd_dict_bytes": zstd.len(),
        "zstd_dict_gzip_bytes": gzip(&zstd),
        "brotli_dict_bytes": content.len(),
        "brotli_dict_gzip_bytes": gzip(&content),
    });
    Ok((Dict { zstd, content }, info))
}

fn gzip(bytes: &[u8]) -> usize {
    crate::gzip_len(bytes)
}

/// The r2 bytes of `report`'s r2 link with `options`: the columns every codec codes.
fn r2_bytes(report: &Report, options: &ShareOptions) -> Result<Vec<u8>> {
    let link = encode_r2(report, options);
    let body = link.text.strip_prefix("r2.").context("not an r2 link")?;
    let packed = base64url_decode(body)?;
    miniz_oxide::inflate::decompress_to_vec(&packed).map_err(|e| anyhow!("inflate: {e:?}"))
}

fn base64url_decode(text: &str) -> Result<Vec<u8>> {
    use base64::Engine;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text)?)
}

/// Characters of a link whose payload is `bytes` long: a 3-character prefix and unpadded
/// base64url.
fn link_chars(bytes: usize) -> usize {
    3 + bytes / 3 * 4 + [0, 2, 3][bytes % 3]
}

/// An unsigned LEB128 number (`docs/share-link-format.md`, 1) at `at`, and the byte after it.
fn leb128(bytes: &[u8], at: usize) -> Result<(usize, usize)> {
    let mut value = 0usize;
    for (i, &b) in bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .take(10)
    {
        value |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, at + i + 1));
        }
    }
    Err(anyhow!("a bad number at byte {at}"))
}

fn leb128_len(mut value: usize) -> usize {
    let mut n = 1;
    while value >= 0x80 {
        value >>= 7;
        n += 1;
    }
    n
}

/// Where r2 bytes keep their header JSON and each of their 12 columns (`docs/
/// share-link-format.md`, 4).
fn sections(bytes: &[u8]) -> Result<(std::ops::Range<usize>, Vec<std::ops::Range<usize>>)> {
    ensure!(bytes.first() == Some(&2), "not r2 bytes");
    let (len, at) = leb128(bytes, 1)?;
    let header = at..at + len;
    let (count, mut at) = leb128(bytes, header.end)?;
    ensure!(count == COLUMNS, "{count} columns");
    let mut columns = Vec::with_capacity(COLUMNS);
    for _ in 0..COLUMNS {
        let (len, start) = leb128(bytes, at)?;
        columns.push(start..start + len);
        at = start + len;
    }
    ensure!(at == bytes.len(), "bytes after the last column");
    Ok((header, columns))
}

/// The r2 bytes with an empty gaps column: what r3 context-mixes (its "rest").
fn without_gaps(bytes: &[u8]) -> Result<Vec<u8>> {
    let (_, columns) = sections(bytes)?;
    let gaps = &columns[GAPS_COLUMN];
    let length_at = gaps.start - leb128_len(gaps.len());
    let mut rest = bytes[..length_at].to_vec();
    rest.push(0);
    rest.extend_from_slice(&bytes[gaps.end..]);
    Ok(rest)
}

/// Brotli at quality 11, with `dict` as its custom dictionary (none if empty).
fn brotli(data: &[u8], dict: &[u8]) -> Result<Vec<u8>> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: BROTLI_QUALITY,
        lgwin: BROTLI_WINDOW,
        size_hint: data.len(),
        ..Default::default()
    };
    let (mut input, mut out) = (data, Vec::new());
    let (mut ib, mut ob) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    let mut nop =
        |_: &mut brotli::interface::PredictionModeContextMap<brotli::InputReferenceMut>,
         _: &mut [brotli::interface::StaticCommand],
         _: brotli::InputPair,
         _: &mut brotli::enc::StandardAlloc| ();
    brotli::BrotliCompressCustomIoCustomDict(
        &mut brotli::IoReaderWrapper(&mut input),
        &mut brotli::IoWriterWrapper(&mut out),
        &mut ib,
        &mut ob,
        &params,
        brotli::enc::StandardAlloc::default(),
        &mut nop,
        dict,
        std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "unexpected end"),
    )?;
    Ok(out)
}

/// Brotli's pure-Rust decoder (`brotli-decompressor`), as a browser would run it.
fn unbrotli(coded: &[u8], dict: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    brotli_decompressor::BrotliDecompressCustomDict(
        &mut &coded[..],
        &mut out,
        &mut [0u8; 4096],
        &mut [0u8; 4096],
        dict.to_vec(),
    )?;
    Ok(out)
}

/// zstd (C libzstd, natively) at `level`, with the trained dictionary if given.
fn zstd(data: &[u8], level: i32, dict: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut c = match dict {
        Some(d) => zstd::bulk::Compressor::with_dictionary(level, d)?,
        None => zstd::bulk::Compressor::new(level)?,
    };
    Ok(c.compress(data)?)
}

/// zstd's pure-Rust decoder (`ruzstd`), as a browser would run it.
fn unzstd(coded: &[u8], dict: Option<&[u8]>) -> Result<Vec<u8>> {
    let mut decoder = ruzstd::decoding::FrameDecoder::new();
    if let Some(d) = dict {
        let d = ruzstd::decoding::Dictionary::decode_dict(d).map_err(|e| anyhow!("{e:?}"))?;
        decoder.add_dict(d).map_err(|e| anyhow!("{e:?}"))?;
    }
    let mut stream = ruzstd::decoding::StreamingDecoder::new_with_decoder(coded, decoder)
        .map_err(|e| anyhow!("{e:?}"))?;
    let mut out = Vec::new();
    stream.read_to_end(&mut out)?;
    Ok(out)
}

/// One codec's result on one case: its payload, decoded again by the browser's decoder.
fn row(name: &str, payload: usize, r3_chars: usize, decode_ms: Option<f64>) -> Value {
    let chars = link_chars(payload);
    json!({
        "codec": name,
        "payload_bytes": payload,
        "link_chars": chars,
        "vs_r3_percent": round1(100.0 * (chars as f64 / r3_chars as f64 - 1.0)),
        "decode_ms": decode_ms.map(round1),
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Times `f` (ms) and checks that it gives back `original`.
fn timed_check(original: &[u8], what: &str, f: impl Fn() -> Result<Vec<u8>>) -> Result<f64> {
    let started = Instant::now();
    let back = f()?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    ensure!(back == original, "{what} does not decode to the same bytes");
    Ok(ms)
}

/// Every codec on one case, each coded form checked against the r2 bytes.
fn measure(case: &Case, dict: &Dict) -> Result<Value> {
    let today = encode(&case.report, &ShareOptions::default());
    let r3 = encode(&case.report, &case.options);
    let r3_bytes = base64url_decode(r3.text.strip_prefix("r3.").context("not r3")?)?;
    let r3_payload = r3_bytes.len();
    // r3's second layout (byte 0) context-mixes the rest; it falls back to the first (DEFLATE
    // for the rest) when the rest is over 64 bytes per coded byte.
    let r3_layout = if r3_bytes.first() == Some(&0) {
        "context-mixed"
    } else {
        "DEFLATE (first layout)"
    };
    ensure!(link_chars(r3_payload) == r3.text.len(), "link length");
    let r2_link = encode_r2(&case.report, &case.options);
    let bytes = r2_bytes(&case.report, &case.options)?;
    let rest = without_gaps(&bytes)?;
    let (_, parts) = breakdown(&case.report, &case.options);
    let part = |prefix: &str| parts.iter().find(|p| p.name.starts_with(prefix));
    let gaps_coded = part("gaps (range-coded)")
        .context("no gaps part")?
        .coded_bytes as usize;
    let rest_part = part("(not a part)").context("no rest part")?;
    ensure!(
        rest_part.raw_bytes == rest.len(),
        "r3's rest is not the r2 bytes less their gaps"
    );
    let opened = |text: &str| -> Result<f64> {
        let started = Instant::now();
        decode(text)?;
        Ok(round1(started.elapsed().as_secs_f64() * 1e3))
    };
    let r3_chars = r3.text.len();
    let r2_payload = base64url_decode(r2_link.text.strip_prefix("r2.").context("not r2")?)?;
    let mut rows = vec![
        row("r3: gap coder + context mixer", r3_payload, r3_chars, None),
        row("DEFLATE level 9 (r2)", r2_payload.len(), r3_chars, None),
    ];
    rows.extend(mainstream(&bytes, &rest, gaps_coded, dict, r3_chars)?);
    Ok(json!({
        "case": case.name,
        "requests": case.report.requests.len(),
        "r3_layout": r3_layout,
        "layout": { "precision_ms": r3.precision_ms, "replays": r3.replays,
                    "requests_kept": r3.requests_kept, "gaps_kept_for": r3.gaps_kept_for },
        "default_link": { "chars": today.text.len(), "precision_ms": today.precision_ms,
                          "replays": today.replays, "requests_kept": today.requests_kept,
                          "gaps_kept_for": today.gaps_kept_for },
        "r2_bytes": bytes.len(),
        "gaps_column_bytes": sections(&bytes)?.1[GAPS_COLUMN].len(),
        "r3_gaps_coded_bytes": gaps_coded,
        "r3_rest_context_mixed_bytes": rest_part.coded_bytes,
        "r3_rest_deflated_bytes": rest_part.deflated_alone_bytes,
        "opened_ms": { "r3_link": opened(&r3.text)?, "r2_link": opened(&r2_link.text)? },
        "codecs": rows,
    }))
}

/// Brotli and zstd on the r2 bytes, and the hybrid (r3's coded gaps, brotli for the rest);
/// each decoded again by the pure-Rust decoder.
fn mainstream(
    bytes: &[u8],
    rest: &[u8],
    gaps_coded: usize,
    dict: &Dict,
    r3_chars: usize,
) -> Result<Vec<Value>> {
    let mut rows = Vec::new();
    for (name, d) in [("", &[][..]), (" + dictionary", &dict.content[..])] {
        let coded = brotli(bytes, d)?;
        let ms = timed_check(bytes, "brotli", || unbrotli(&coded, d))?;
        rows.push(row(
            &format!("brotli q11{name}"),
            coded.len(),
            r3_chars,
            Some(ms),
        ));
    }
    for (name, d) in [("", None), (" + dictionary", Some(&dict.zstd[..]))] {
        for level in [19, 22] {
            let coded = zstd(bytes, level, d)?;
            let ms = timed_check(bytes, "zstd", || unzstd(&coded, d))?;
            rows.push(row(
                &format!("zstd {level}{name}"),
                coded.len(),
                r3_chars,
                Some(ms),
            ));
        }
    }
    for (name, d) in [("", &[][..]), (" + dictionary", &dict.content[..])] {
        let coded = brotli(rest, d)?;
        let ms = timed_check(rest, "brotli (rest)", || unbrotli(&coded, d))?;
        // A layout byte, the brotli part's length, that part, then r3's coded gaps.
        let payload = 1 + leb128_len(coded.len()) + coded.len() + gaps_coded;
        rows.push(row(
            &format!("hybrid: r3 gap coder + brotli q11{name} for the rest"),
            payload,
            r3_chars,
            Some(ms),
        ));
    }
    Ok(rows)
}

/// The table: a column per case, a row per codec (link characters, difference from r3).
fn markdown(cases: &[Value], dict: &Value) -> String {
    let mut out = String::from("| Codec |");
    for c in cases {
        out += &format!(" {} |", c["case"].as_str().unwrap_or("?"));
    }
    out += &format!("\n|---|{}\n", "---|".repeat(cases.len()));
    out += "| Layout (steps, replays) |";
    for c in cases {
        out += &format!(
            " {} ms, {} |",
            c["layout"]["precision_ms"], c["layout"]["replays"]
        );
    }
    out += "\n| r3's layout for the rest |";
    for c in cases {
        out += &format!(" {} |", c["r3_layout"].as_str().unwrap_or("?"));
    }
    out += "\n| r2 bytes (raw columns) |";
    for c in cases {
        out += &format!(" {} B |", c["r2_bytes"]);
    }
    out += "\n";
    let names: Vec<&str> = cases[0]["codecs"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["codec"].as_str()).collect())
        .unwrap_or_default();
    for (i, name) in names.iter().enumerate() {
        out += &format!("| {name} |");
        for c in cases {
            let r = &c["codecs"][i];
            out += &format!(" {} chars ({:+}%) |", r["link_chars"], r["vs_r3_percent"]);
        }
        out += "\n";
    }
    out += "| (today's default link, 64,000-char limit) |";
    for c in cases {
        out += &format!(" {} chars |", c["default_link"]["chars"]);
    }
    out += &format!(
        "\n\nDictionary: {} B as zstd's (gzip {} B), its content {} B as brotli's (gzip {} B).",
        dict["zstd_dict_bytes"],
        dict["zstd_dict_gzip_bytes"],
        dict["brotli_dict_bytes"],
        dict["brotli_dict_gzip_bytes"]
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_lengths_are_unpadded_base64_and_the_rest_is_r3_s() {
        for n in 0..10 {
            let text = base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                vec![7u8; n],
            );
            assert_eq!(link_chars(n), 3 + text.len());
        }
        let report = synthetic_report(20, 30, 3);
        let whole = ShareOptions {
            max_chars: None,
            ..ShareOptions::default()
        };
        let bytes = r2_bytes(&report, &whole).unwrap();
        let rest = without_gaps(&bytes).unwrap();
        let (_, parts) = breakdown(&report, &whole);
        let r3_rest = parts.iter().find(|p| p.name.starts_with("(not a part)"));
        assert_eq!(r3_rest.unwrap().raw_bytes, rest.len());
        assert!(sections(&rest).unwrap().1[GAPS_COLUMN].is_empty());
        let dict = b"the cache decode step".repeat(20);
        assert_eq!(
            unbrotli(&brotli(&bytes, &dict).unwrap(), &dict).unwrap(),
            bytes
        );
        assert_eq!(
            unzstd(&zstd(&bytes, 19, None).unwrap(), None).unwrap(),
            bytes
        );
    }
}
