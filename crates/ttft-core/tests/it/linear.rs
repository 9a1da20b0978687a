//! The parser stays linear (issue #13, item 5): every stage a read goes through does work in
//! proportion to the bytes, however they are split into reads or fragments. Work is counted,
//! not timed: each stage reports what it examined (`examined()`), and each test feeds inputs
//! that made the earlier code rescan (one 100 KB event in small reads, an answer that keeps the
//! opener decision open, nested invalid JSON) in pieces of 1, 7 and 64 bytes and holds the
//! count to a small multiple of the input. Rescanning would count hundreds of times more.
//! Next to them, properties check that the linear versions decide exactly as the simple ones.

use proptest::prelude::*;
use ttft_core::agent_json::{JsonProgress, JsonTracker, MAX_DEPTH};
use ttft_core::openers::{Decision, OpenerScan, Openers};
use ttft_core::timeline::RequestRecorder;

/// Piece sizes every input is fed in.
const PIECES: [usize; 3] = [1, 7, 64];

/// Cases per property: `TTFT_FUZZ_CASES` (as in `tests/fuzz.rs`), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("TTFT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `text` in pieces of about `size` bytes, cut at character boundaries.
fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// An OpenAI chat chunk carrying `content`.
fn chunk(content: &str) -> String {
    let v = serde_json::json!({
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}],
    });
    format!("data: {v}\n\n")
}

/// The end of an OpenAI chat stream.
const END: &str = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

/// Feeds `body` to a recorder in reads of `size` bytes; its work and how the stream ended.
fn record(body: &[u8], size: usize, content_type: Option<&str>) -> (u64, String) {
    let mut rec = RequestRecorder::new(0.0, None, None);
    rec.on_headers(1.0, 200, content_type);
    for (i, read) in body.chunks(size).enumerate() {
        rec.on_read(2.0 + i as f64, read);
    }
    let examined = rec.examined();
    let tl = rec.finish(1e9);
    (examined, tl.outcome.kind().to_owned())
}

#[test]
fn the_recorder_reads_each_byte_a_bounded_number_of_times() {
    let long = "lorem ipsum ".repeat(100_000 / 12);
    let mut one_event = chunk(&long);
    one_event.push_str(END);
    let mut small_events: String = pieces(&long, 10).into_iter().map(chunk).collect();
    small_events.push_str(END);
    let mut blank_first = "\n".repeat(100_000);
    blank_first.push_str(&one_event);
    let ndjson = format!(
        "{}\n{}\n",
        serde_json::json!({"model": "m", "message": {"role": "assistant", "content": long}, "done": false}),
        serde_json::json!({"model": "m", "done": true, "done_reason": "stop", "eval_count": 5}),
    );
    let whole = serde_json::json!({
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": long}, "finish_reason": "stop"}],
    })
    .to_string();
    for (name, body, content_type) in [
        ("one 100 KB event", &one_event, Some("text/event-stream")),
        ("10-byte events", &small_events, Some("text/event-stream")),
        ("100 KB of blank lines first", &blank_first, None),
        (
            "a 100 KB NDJSON line",
            &ndjson,
            Some("application/x-ndjson"),
        ),
        ("one JSON document", &whole, None),
    ] {
        for size in PIECES {
            let (examined, outcome) = record(body.as_bytes(), size, content_type);
            assert_eq!(outcome, "ok", "{name}, reads of {size}");
            // Framing, sniffing and the JSON-document check read each byte once; the frames
            // handed to the decoder and the document read at the end add at most once more.
            let bytes = body.len() as u64;
            assert!(
                examined <= 4 * bytes,
                "{name}, reads of {size}: {examined} bytes examined for {bytes}"
            );
        }
    }
}

/// Streams `head` (in one piece) then `rest` (in pieces of `size` bytes) through an
/// [`OpenerScan`]; its work, after checking its split against the one-shot one.
fn scan(openers: &Openers, head: &str, rest: &str, size: usize) -> u64 {
    let mut scan = OpenerScan::new();
    let mut so_far = String::new();
    for piece in std::iter::once(head).chain(pieces(rest, size)) {
        so_far.push_str(piece);
        scan.update(openers, &so_far);
    }
    assert_eq!(scan.finish(openers, &so_far), openers.split(&so_far));
    scan.examined()
}

#[test]
fn the_opener_decision_reads_the_answer_a_bounded_number_of_times() {
    let o = Openers::default();
    let n = 100_000;
    let cjk = "天气很好，我们去公园散步吧。".repeat(n / 42);
    let blank_lines = format!("Here's the plan:\n{}Sure", "\n".repeat(n / 2));
    for (name, head, rest) in [
        // Each keeps the first clause undecided to the end: a run of spaces after a
        // standalone phrase (also inside one, "Of course"), of blank lines and punctuation,
        // of sentence marks after a lead-in clause.
        ("Sure + spaces", "", format!("Sure{}", " ".repeat(n))),
        (
            "Of + spaces",
            "",
            format!("Of{}course{}", " ".repeat(n / 2), " ".repeat(n / 2)),
        ),
        (
            "Sure, + blank lines",
            "",
            format!("Sure,{}", "\n \n".repeat(n / 3)),
        ),
        ("Sure + dots", "", format!("Sure{}", ". -".repeat(n / 3))),
        (
            "lead-in + marks",
            "",
            format!("Here's the list!{}", "!?。".repeat(n / 5)),
        ),
        // An opener clause and blank lines arriving at once, then a clause kept open.
        (
            "blank lines at once, Sure + spaces",
            &blank_lines,
            " ".repeat(n / 2),
        ),
        ("blank answer", "", " \n\t".repeat(n / 3)),
        (
            "lead-in + one long word",
            "",
            format!("Let me {}", "a".repeat(n)),
        ),
        ("CJK", "", format!("好的，我来帮你总结一下：{cjk}")),
        (
            "CJK opener + spaces",
            "",
            format!("好的{}", "　 ".repeat(n / 4)),
        ),
        (
            "prose",
            "",
            "The quick brown fox jumps over the lazy dog. ".repeat(n / 45),
        ),
    ] {
        for size in PIECES {
            let examined = scan(&o, head, &rest, size);
            // Per update the undecided clause's own words are read again (a few dozen
            // characters here); the runs after them only as far as they grew.
            let bytes = (head.len() + rest.len()) as u64;
            assert!(
                examined <= 64 * bytes,
                "{name}, pieces of {size}: {examined} characters read for {bytes} bytes"
            );
        }
    }
}

/// The tracker as it was before it was made linear: on an invalid candidate it scans again
/// from the byte after its opening bracket. Kept as the reference the linear one must match;
/// it counts the bytes it reads, to show that the inputs below are the costly ones.
#[derive(Default)]
struct Rescanning {
    text: String,
    scan_pos: usize,
    start: Option<usize>,
    depth: u32,
    in_string: bool,
    escape: bool,
    required: Vec<String>,
    progress: JsonProgress,
    read: u64,
}

impl Rescanning {
    fn push(&mut self, at: f64, fragment: &str) {
        if self.progress.valid_at.is_some() {
            return;
        }
        self.text.push_str(fragment);
        let bytes = self.text.as_bytes();
        let mut i = self.scan_pos;
        while i < bytes.len() {
            self.read += 1;
            let b = bytes[i];
            match self.start {
                None => {
                    if b == b'{' || b == b'[' {
                        self.start = Some(i);
                        self.depth = 1;
                        self.in_string = false;
                        self.escape = false;
                        self.progress.first_bracket_at.get_or_insert(at);
                    }
                }
                Some(start) => {
                    if self.in_string {
                        if self.escape {
                            self.escape = false;
                        } else if b == b'\\' {
                            self.escape = true;
                        } else if b == b'"' {
                            self.in_string = false;
                        }
                    } else {
                        match b {
                            b'"' => self.in_string = true,
                            b'{' | b'[' => self.depth += 1,
                            b'}' | b']' => {
                                self.depth -= 1;
                                if self.depth == 0 {
                                    let candidate = &self.text[start..=i];
                                    match serde_json::from_str::<serde_json::Value>(candidate) {
                                        Ok(v) => {
                                            self.progress.valid_at = Some(at);
                                            self.progress.missing_keys = self
                                                .required
                                                .iter()
                                                .filter(|k| v.get(k.as_str()).is_none())
                                                .cloned()
                                                .collect();
                                            self.progress.value = Some(v.to_string());
                                            self.scan_pos = i + 1;
                                            return;
                                        }
                                        Err(_) => {
                                            self.progress.invalid_candidates += 1;
                                            self.start = None;
                                            i = start + 1;
                                            continue;
                                        }
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            i += 1;
        }
        self.scan_pos = bytes.len();
    }
}

/// Feeds `text` in pieces of `size` bytes (a piece per ms) to a tracker: what it found and
/// its work.
fn track(text: &str, size: usize) -> (JsonProgress, u64) {
    let mut tracker = JsonTracker::new(&[]);
    for (i, piece) in pieces(text, size).into_iter().enumerate() {
        tracker.push(i as f64, piece);
    }
    (tracker.progress().clone(), tracker.examined())
}

/// The same with the rescanning tracker: its progress and the bytes it read.
fn track_rescanning(text: &str, size: usize) -> (JsonProgress, u64) {
    let mut tracker = Rescanning::default();
    for (i, piece) in pieces(text, size).into_iter().enumerate() {
        tracker.push(i as f64, piece);
    }
    (tracker.progress, tracker.read)
}

/// Agent answers of about `n` bytes, named, and whether they hold a valid value. All but the
/// first and the last made the rescanning tracker read them about `n / 4` times or more.
fn json_answers(n: usize) -> Vec<(&'static str, String, bool)> {
    let mut items = String::from("```json\n{\"items\": [");
    for i in 0.. {
        if items.len() > n {
            break;
        }
        items.push_str(&format!("{{\"k\": {i}, \"v\": \"[{{value}}] {i}\"}}, "));
    }
    items.push_str("null]}\n```");
    let nested = |open: &str, middle: &str, close: &str| {
        let k = n / (open.len() + close.len());
        format!("{}{middle}{}", open.repeat(k), close.repeat(k))
    };
    vec![
        ("a 100 KB value", items, true),
        // Each candidate is invalid and holds the next one.
        (
            "nested arrays around a bad token",
            nested("[", "x", "]"),
            false,
        ),
        (
            "nested objects, trailing comma",
            nested("{\"a\":", "1,", "}"),
            false,
        ),
        // The first restart lands in a string, whose brackets the next scan reads as code.
        (
            "brackets in a string",
            nested("[", "\" x]\"x", "]").replacen('[', "[\"", 1),
            false,
        ),
        // Restarts in strings and after escapes.
        (
            "quotes around braces",
            nested("\"{", "\"\"x", "x}\""),
            false,
        ),
        (
            "escapes and braces",
            nested("{\"x", "\\}\"", "}\"\\"),
            false,
        ),
        ("prose with braces", "a {b} c [d e] ".repeat(n / 14), false),
    ]
}

#[test]
fn the_json_tracker_reads_the_text_a_bounded_number_of_times() {
    // Small, the rescanning tracker shows what these answers cost it, and agrees.
    for (name, text, _) in json_answers(4_000) {
        let (linear, _) = track(&text, 64);
        let (rescanning, read) = track_rescanning(&text, 64);
        assert_eq!(linear, rescanning, "{name}");
        let bytes = text.len() as u64;
        let costly = !name.starts_with("a ") && !name.starts_with("prose");
        assert!(!costly || read > 200 * bytes, "{name}: {read} for {bytes}");
    }
    for (name, text, valid) in json_answers(100_000) {
        for size in PIECES {
            let (progress, examined) = track(&text, size);
            assert_eq!(progress.valid_at.is_some(), valid, "{name}");
            let bytes = text.len() as u64;
            // Each byte is read at most once per lexical state (three), plus the search for
            // candidates and the bracket lookups that replace reading again.
            assert!(
                examined <= 6 * bytes,
                "{name}, pieces of {size}: {examined} bytes read for {bytes}"
            );
        }
    }
}

#[test]
fn a_candidate_nested_deeper_than_serde_json_parses_is_invalid() {
    let nested =
        |depth: usize, inner: &str| format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth));
    let max = MAX_DEPTH as usize;
    assert!(serde_json::from_str::<serde_json::Value>(&nested(max, "")).is_ok());
    assert!(serde_json::from_str::<serde_json::Value>(&nested(max + 1, "")).is_err());
    // The outer candidates are too deep, the first one that is not is valid.
    let text = nested(max + 2, "1");
    let (progress, _) = track(&text, 7);
    assert_eq!(progress, track_rescanning(&text, 7).0);
    assert_eq!(progress.invalid_candidates, 2);
    assert_eq!(progress.value, Some(nested(max, "1")));
}

/// Text rich in what the JSON tracker looks at: brackets, quotes, escapes, separators.
fn jsonish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        proptest::sample::select(
            &[
                "{", "}", "[", "]", "\"", "\\", "\\\"", ":", ",", " ", "1", "x", "\"a\"", "{}",
                "[]", "```", "\n", "null", "\"k\":", "好",
            ][..]
        )
        .prop_map(str::to_owned),
        "[{}\\[\\]\"\\\\:,a1 ]{1,4}",
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// Answers rich in what keeps the opener decision open: phrases, runs of spaces, blank
/// lines, punctuation and sentence marks, and characters that end them.
fn openerish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        proptest::sample::select(
            &[
                "Sure",
                "Of",
                " course",
                "Here's",
                " the list",
                "Let me",
                " not",
                " but",
                "好的",
                "以下是",
                "当然",
                "Thanks for",
                " asking",
                "OK",
                "   ",
                "\t",
                "\n",
                "\n\n",
                ",",
                "，",
                "!",
                "!!",
                "?",
                "。",
                "！",
                "…",
                ".",
                "...",
                "-",
                "—",
                ":",
                "：",
                "a",
                "x",
                "10",
                "\u{2019}",
                "'d",
                "　",
                "但是",
            ][..]
        )
        .prop_map(str::to_owned),
        "[a-z .!\n-]{1,3}",
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

/// `text` cut at the character boundaries picked by `at`.
fn cut(text: &str, at: &[usize]) -> Vec<String> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let mut byte: Vec<usize> = at
        .iter()
        .filter(|_| !bounds.is_empty())
        .map(|a| bounds[a % bounds.len()])
        .collect();
    byte.push(0);
    byte.push(text.len());
    byte.sort_unstable();
    byte.dedup();
    byte.windows(2)
        .map(|w| text[w[0]..w[1]].to_owned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1024), failure_persistence: None, ..ProptestConfig::default() })]

    /// The linear tracker finds what the rescanning one found (first bracket, the valid value
    /// and when, missing keys, invalid candidates counted), after every fragment of any
    /// fragmentation.
    #[test]
    fn the_linear_json_tracker_decides_like_the_rescanning_one(
        text in jsonish(),
        at in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let required = vec!["k".to_owned(), "a".to_owned()];
        let mut linear = JsonTracker::new(&required);
        let mut reference = Rescanning { required: required.clone(), ..Rescanning::default() };
        for (i, piece) in cut(&text, &at).iter().enumerate() {
            linear.push(i as f64, piece);
            reference.push(i as f64, piece);
            prop_assert_eq!(linear.progress(), &reference.progress, "{:?} after piece {}", text, i);
        }
    }

    /// What `OpenerScan` remembers between updates changes nothing: every update equals the
    /// one-shot decision on the text so far, and the end equals the split of the whole.
    #[test]
    fn the_streamed_opener_decision_equals_the_one_shot_one(
        text in openerish(),
        at in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let o = Openers::default();
        let mut scan = OpenerScan::new();
        let mut so_far = String::new();
        for piece in cut(&text, &at) {
            so_far.push_str(&piece);
            let d = scan.update(&o, &so_far);
            prop_assert_eq!(d, o.decide(&so_far, false), "{:?}", so_far);
        }
        prop_assert_eq!(scan.finish(&o, &text), o.split(&text));
        prop_assert_eq!(scan.decision(), Decision::Decided(o.split(&text)));
    }
}
