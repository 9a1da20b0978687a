//! SSE and NDJSON framing: spec rules and split invariance.

use proptest::prelude::*;
use ttft_core::sse::{FrameDecoder, Framing, NdjsonParser, SseEvent, SseParser};

fn parse_all(chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        out.extend(p.feed(c));
    }
    let truncated = p.finish().is_some();
    (out, truncated)
}

fn data(evs: &[SseEvent]) -> Vec<&str> {
    evs.iter().map(|e| e.data.as_str()).collect()
}

#[test]
fn lf_crlf_and_lone_cr_line_endings_are_equivalent() {
    let lf = parse_all(&[b"data: a\n\ndata: b\n\n"]).0;
    let crlf = parse_all(&[b"data: a\r\n\r\ndata: b\r\n\r\n"]).0;
    let cr = parse_all(&[b"data: a\r\rdata: b\r\r"]).0;
    assert_eq!(data(&lf), ["a", "b"]);
    assert_eq!(lf, crlf);
    assert_eq!(lf, cr);
}

#[test]
fn crlf_split_across_reads_is_one_line_ending() {
    let (evs, truncated) = parse_all(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]);
    assert_eq!(data(&evs), ["a", "b"]);
    assert!(!truncated);
}

#[test]
fn bom_is_stripped_only_at_stream_start_even_when_split() {
    let (evs, _) = parse_all(&[b"\xEF", b"\xBB\xBFdata: x\n\n"]);
    assert_eq!(data(&evs), ["x"]);
    // A BOM later in the stream is content (it makes an unknown field name).
    let (evs, _) = parse_all(&[b"data: x\n\n\xEF\xBB\xBFdata: y\n\n"]);
    assert_eq!(data(&evs), ["x"]);
}

#[test]
fn comments_multiline_data_event_id_retry() {
    let mut p = SseParser::new();
    let evs = p.feed(
        b": keep-alive\n\nevent: delta\nid: 7\nretry: 1500\ndata: line1\ndata:line2\ndata\n\n",
    );
    assert_eq!(p.comments(), 1);
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0].event, "delta");
    assert_eq!(evs[0].data, "line1\nline2\n");
    assert_eq!(evs[0].id.as_deref(), Some("7"));
    assert_eq!(evs[0].retry, Some(1500));
    // id persists, event type resets, bad retry and NUL ids ignored, unknown field ignored
    let evs = p.feed(b"retry: 15x\nid: a\0b\nfoo: bar\ndata: next\n\n");
    assert_eq!(evs[0].event, "message");
    assert_eq!(evs[0].id.as_deref(), Some("7"));
    assert_eq!(evs[0].retry, None);
}

#[test]
fn only_one_leading_space_is_dropped_and_empty_data_dispatches() {
    let (evs, _) = parse_all(&[b"data:  two\n\ndata:\n\nevent: x\n\n"]);
    assert_eq!(data(&evs), [" two", ""]);
}

#[test]
fn utf8_split_inside_a_character_across_reads() {
    let s = "data: 好的，我来\n\n".as_bytes();
    for cut in 0..s.len() {
        let (evs, _) = parse_all(&[&s[..cut], &s[cut..]]);
        assert_eq!(data(&evs), ["好的，我来"], "cut at {cut}");
    }
}

#[test]
fn unterminated_final_event_is_reported_as_truncated_not_dispatched() {
    let (evs, truncated) = parse_all(&[b"data: a\n\ndata: {\"half\":"]);
    assert_eq!(data(&evs), ["a"]);
    assert!(truncated);
    let (_, truncated) = parse_all(&[b"data: a\n\ndata: b\n"]);
    assert!(truncated, "a data line without its blank line is truncated");
    let (_, truncated) = parse_all(&[b"data: a\n\n"]);
    assert!(!truncated);
}

#[test]
fn ndjson_lines_crlf_and_missing_final_newline() {
    let mut p = NdjsonParser::new();
    let mut evs = p.feed(b"{\"a\":1}\r\n\n{\"b\":");
    evs.extend(p.feed(b"2}\n{\"c\":3}"));
    evs.extend(p.finish());
    assert_eq!(data(&evs), ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
}

#[test]
fn frame_decoder_sniffs_ndjson_and_sse() {
    let mut d = FrameDecoder::new(None);
    assert!(d.feed(b"  ").is_empty());
    let evs = d.feed(b"{\"x\":1}\n");
    assert_eq!(d.framing(), Some(Framing::Ndjson));
    assert_eq!(evs.len(), 1);
    let mut d = FrameDecoder::new(None);
    let evs = d.feed(b"data: {\"x\":1}\n\n");
    assert_eq!(d.framing(), Some(Framing::Sse));
    assert_eq!(evs[0].data, "{\"x\":1}");
    assert_eq!(
        Framing::from_content_type("text/event-stream; charset=utf-8"),
        Some(Framing::Sse)
    );
    assert_eq!(
        Framing::from_content_type("application/x-ndjson"),
        Some(Framing::Ndjson)
    );
}

fn stream_strategy() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        "[a-z ]{0,8}".prop_map(|s| format!("data: {s}")),
        "[a-z]{0,4}".prop_map(|s| format!("event: {s}")),
        "[0-9]{0,3}".prop_map(|s| format!("id: {s}")),
        Just(": ping".to_owned()),
        Just("data: 好的😀".to_owned()),
        Just(String::new()),
        Just("retry: 10".to_owned()),
    ];
    let eol = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
    (proptest::collection::vec((line, eol), 0..20), any::<bool>()).prop_map(|(lines, bom)| {
        let mut s = if bom {
            "\u{feff}".to_owned()
        } else {
            String::new()
        };
        for (l, e) in lines {
            s.push_str(&l);
            s.push_str(e);
        }
        s.into_bytes()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Every way of splitting the bytes into reads yields the same events.
    #[test]
    fn any_split_gives_the_same_events(bytes in stream_strategy(), cuts in proptest::collection::vec(any::<usize>(), 0..12)) {
        let whole = parse_all(&[&bytes]);
        let mut points: Vec<usize> = cuts.iter().map(|c| if bytes.is_empty() { 0 } else { c % (bytes.len() + 1) }).collect();
        points.sort_unstable();
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut last = 0;
        for p in points { chunks.push(&bytes[last..p]); last = p; }
        chunks.push(&bytes[last..]);
        prop_assert_eq!(parse_all(&chunks), whole);
    }

    /// Byte-at-a-time is the extreme split.
    #[test]
    fn byte_at_a_time_gives_the_same_events(bytes in stream_strategy()) {
        let whole = parse_all(&[&bytes]);
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(parse_all(&singles), whole);
    }
}
