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

/// Events, truncation, last event ID string and reconnection time after the whole stream.
type StreamState = (Vec<SseEvent>, bool, String, Option<u64>);

fn parse_state(mut p: SseParser, chunks: &[&[u8]]) -> StreamState {
    let mut out = Vec::new();
    for c in chunks {
        out.extend(p.feed(c));
    }
    let truncated = p.finish().is_some();
    (
        out,
        truncated,
        p.last_event_id().to_owned(),
        p.reconnection_time_ms(),
    )
}

#[test]
fn retry_sets_the_reconnection_time_when_its_line_is_processed() {
    // A block with only `retry:` dispatches nothing but still sets the reconnection time.
    let mut p = SseParser::new();
    assert_eq!(p.reconnection_time_ms(), None);
    assert!(p.feed(b"retry: 1500\n\n").is_empty());
    assert_eq!(p.reconnection_time_ms(), Some(1500));
    // In a block that is never terminated, the line counts as soon as it is processed...
    assert!(p.feed(b"data: half\nretry: 2500\n").is_empty());
    assert_eq!(p.reconnection_time_ms(), Some(2500));
    // ...but a last line without its line ending is never processed.
    assert!(p.feed(b"retry: 3500").is_empty());
    assert_eq!(p.reconnection_time_ms(), Some(2500));
    assert!(
        p.finish().is_some(),
        "the unterminated block is a truncation"
    );
    assert_eq!(p.reconnection_time_ms(), Some(2500));

    // Only values made of ASCII digits count; anything else leaves the time as it was.
    for bad in [
        "retry: 15x\n",
        "retry: -1\n",
        "retry: +1\n",
        "retry:  1\n",
        "retry: 1 \n",
        "retry: 1.5\n",
        "retry: ١٢٣\n",
        "retry:\n",
        "retry\n",
        "Retry: 1\n",
    ] {
        let mut p = SseParser::new();
        p.feed(b"retry: 700\n");
        p.feed(bad.as_bytes());
        assert_eq!(p.reconnection_time_ms(), Some(700), "{bad:?}");
    }
    // The latest valid line wins, zero included; a value past u64 saturates.
    let (_, _, _, retry) = parse_state(SseParser::new(), &[b"retry: 10\n\nretry:0\n\n"]);
    assert_eq!(retry, Some(0));
    let (_, _, _, retry) = parse_state(
        SseParser::new(),
        &[b"retry: 99999999999999999999999\ndata: x\n\n"],
    );
    assert_eq!(retry, Some(u64::MAX));
    // A retry split across reads (mid-digits, CRLF split) is the same line.
    let (evs, _, _, retry) = parse_state(
        SseParser::new(),
        &[b"ret", b"ry: 12", b"34\r", b"\ndata: a\r", b"\n\r", b"\n"],
    );
    assert_eq!(data(&evs), ["a"]);
    assert_eq!(evs[0].retry, Some(1234));
    assert_eq!(retry, Some(1234));
    // Through the frame decoder too.
    let mut d = FrameDecoder::new(None);
    assert!(d.feed(b"retry: 42\n").is_empty());
    assert_eq!(d.reconnection_time_ms(), Some(42));
}

#[test]
fn last_event_id_is_committed_at_dispatch_and_the_buffer_persists() {
    let mut p = SseParser::new();
    assert_eq!(p.last_event_id(), "");
    // An id-only block dispatches no event but commits the id, which later events carry.
    assert!(p.feed(b"id: 42\n\n").is_empty());
    assert_eq!(p.last_event_id(), "42");
    let evs = p.feed(b"data: a\n\ndata: b\n\n");
    assert_eq!(data(&evs), ["a", "b"]);
    assert!(evs.iter().all(|e| e.id.as_deref() == Some("42")));
    // The buffer is only committed by a dispatch: an undispatched block leaves the string.
    assert!(p.feed(b"id: 43\ndata: c\n").is_empty());
    assert_eq!(p.last_event_id(), "42");
    // A NUL makes the field ignored (buffer unchanged); an empty id resets the string.
    let evs = p.feed(b"\nid: x\0y\ndata: d\n\nid\ndata: e\n\n");
    assert_eq!(data(&evs), ["c", "d", "e"]);
    assert_eq!(evs[0].id.as_deref(), Some("43"));
    assert_eq!(evs[1].id.as_deref(), Some("43"));
    assert_eq!(evs[2].id, None);
    assert_eq!(p.last_event_id(), "");
    // Only one leading space is dropped from the value.
    let (evs, _, last, _) = parse_state(SseParser::new(), &[b"id:  7\ndata: f\n\n"]);
    assert_eq!(evs[0].id.as_deref(), Some(" 7"));
    assert_eq!(last, " 7");
    // A stream that ends inside a block keeps the id of the last dispatched block.
    let (evs, truncated, last, _) =
        parse_state(SseParser::new(), &[b"id: 1\ndata: a\n\nid: 2\ndata: b\n"]);
    assert_eq!(data(&evs), ["a"]);
    assert!(truncated);
    assert_eq!(last, "1");
}

#[test]
fn a_parser_resumes_from_the_last_event_id_of_an_earlier_connection() {
    let mut p = SseParser::new().with_last_event_id("41");
    assert_eq!(p.last_event_id(), "41");
    let evs = p.feed(b"data: a\n\nid: 42\ndata: b\n\ndata: c\n\n");
    let ids: Vec<_> = evs.iter().map(|e| e.id.as_deref()).collect();
    assert_eq!(ids, [Some("41"), Some("42"), Some("42")]);
    assert_eq!(p.last_event_id(), "42");
    // A block that sets no id keeps the given one; the server can reset it.
    let (_, _, last, _) = parse_state(
        SseParser::new().with_last_event_id("41"),
        &[b"retry: 5\n\n"],
    );
    assert_eq!(last, "41");
    let (evs, _, last, _) = parse_state(
        SseParser::new().with_last_event_id("41"),
        &[b"id:\ndata: x\n\n"],
    );
    assert_eq!((evs[0].id.clone(), last.as_str()), (None, ""));
    // The frame decoder passes it through, sniffing or not.
    for framing in [None, Some(Framing::Sse)] {
        let mut d = FrameDecoder::new(framing).with_last_event_id("41");
        assert_eq!(d.last_event_id(), "41");
        let evs = d.feed(b"data: a\n\nid: 43\n\n");
        assert_eq!(evs[0].id.as_deref(), Some("41"));
        assert_eq!(d.last_event_id(), "43");
    }
}

/// One `data:` line of `n` bytes, terminated and dispatched, then a short event.
fn long_event(n: usize, eol: &str) -> Vec<u8> {
    let mut s = b"data: ".to_vec();
    s.extend((0..n).map(|i| b'a' + (i % 26) as u8));
    s.extend_from_slice(format!("{eol}{eol}data: tail{eol}{eol}").as_bytes());
    s
}

/// Framing must stay linear in the input however it is split: a parser that searched its whole
/// pending buffer on every read would examine ~10^11 bytes here and run for many minutes.
#[test]
fn a_multi_megabyte_line_in_small_reads_frames_like_one_read() {
    for (n, read, eol) in [
        (4 << 20, 64, "\r\n"),
        (1 << 20, 1, "\r\n"),
        (1 << 20, 16, "\n"),
        (1 << 20, 7, "\r"),
    ] {
        let bytes = long_event(n, eol);
        let whole = parse_state(SseParser::new(), &[&bytes]);
        assert_eq!(whole.0.len(), 2);
        assert_eq!(whole.0[0].data.len(), n);
        assert_eq!(whole.0[1].data, "tail");
        let reads: Vec<&[u8]> = bytes.chunks(read).collect();
        assert!(
            parse_state(SseParser::new(), &reads) == whole,
            "{n} bytes in reads of {read} with {eol:?}"
        );
        // The same through the sniffing frame decoder.
        let mut d = FrameDecoder::new(None);
        let evs: Vec<SseEvent> = reads.iter().flat_map(|r| d.feed(r)).collect();
        assert!(evs == whole.0, "frame decoder, reads of {read}");
    }
    // NDJSON: one 4 MB line in 64-byte reads.
    let mut line = b"{\"x\":\"".to_vec();
    line.extend(std::iter::repeat_n(b'y', 4 << 20));
    line.extend_from_slice(b"\"}\n{\"z\":1}\n");
    let mut p = NdjsonParser::new();
    let mut evs: Vec<SseEvent> = line.chunks(64).flat_map(|r| p.feed(r)).collect();
    evs.extend(p.finish());
    assert_eq!(evs.len(), 2);
    assert_eq!(evs[0].data.len(), (4 << 20) + 8);
    assert_eq!(evs[1].data, "{\"z\":1}");
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

    /// Reconnection time and last event ID do not depend on the split either.
    #[test]
    fn any_split_gives_the_same_reconnection_state(bytes in state_strategy(), cuts in proptest::collection::vec(any::<usize>(), 0..12)) {
        let whole = parse_state(SseParser::new().with_last_event_id("0"), &[&bytes]);
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut last = 0;
        for p in points { chunks.push(&bytes[last..p]); last = p; }
        chunks.push(&bytes[last..]);
        prop_assert_eq!(parse_state(SseParser::new().with_last_event_id("0"), &chunks), whole.clone());
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(parse_state(SseParser::new().with_last_event_id("0"), &singles), whole);
    }
}

/// Streams rich in `retry:` and `id:` lines, valid and not, possibly ending inside a line.
fn state_strategy() -> impl Strategy<Value = Vec<u8>> {
    let line = prop_oneof![
        "[0-9]{0,5}".prop_map(|s| format!("retry: {s}")),
        "[0-9a ]{0,3}".prop_map(|s| format!("retry:{s}")),
        "[0-9]{0,3}".prop_map(|s| format!("id: {s}")),
        Just("id: a\0b".to_owned()),
        Just("id".to_owned()),
        "[a-z]{0,4}".prop_map(|s| format!("data: {s}")),
        Just(String::new()),
    ];
    let eol = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
    (
        proptest::collection::vec((line, eol), 0..16),
        "(retry: [0-9]{1,3})?",
    )
        .prop_map(|(lines, tail)| {
            let mut s = String::new();
            for (l, e) in lines {
                s.push_str(&l);
                s.push_str(e);
            }
            s.push_str(&tail);
            s.into_bytes()
        })
}
