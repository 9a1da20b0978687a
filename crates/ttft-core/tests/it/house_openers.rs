//! A team's opener list (#30, item 4): edits to the defaults, kept by reports; house phrases
//! learned from a run's recurring leading clauses, with their evidence; and a run scored again
//! from its raw captures once one is accepted.

use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
use ttft_core::house_openers::{accept, can_rescore, offers, rescore};
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::openers::{
    Language, OpenerEditError, OpenerEdits, Openers, Origin, learn, learn::MIN_ANSWERS,
};
use ttft_core::raw::RawCapture;
use ttft_core::report::{EndpointInfo, Report, RequestRecord, read_json};
use ttft_core::run_stats::RunStats;
use ttft_core::timeline::Read;

/// Content that differs from answer to answer (as answers to different prompts do).
const CONTENT: &[&str] = &[
    "Prefill grows with the prompt.",
    "Decoding is bound by memory bandwidth.",
    "Batching trades latency for throughput.",
    "Users forgive a slow typewriter.",
    "Quantizing halves the bytes read per token.",
    "Long system prompts inflate prefill.",
    "A full KV cache preempts a sequence.",
];

/// `n` answers, the first `with` of them starting with `house`.
fn answers(house: &str, with: usize, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let content = CONTENT[i % CONTENT.len()];
            if i < with {
                format!("{house} {content}")
            } else {
                content.to_owned()
            }
        })
        .collect()
}

#[test]
fn a_team_adds_and_removes_phrases_and_its_list_decides() {
    let answer = "Per our style guide, here is the answer. Prefill dominates.";
    assert_eq!(Openers::default().skip_len(answer), 0);
    let mut edits = OpenerEdits::default();
    assert_eq!(
        edits.add("  Per our   Style guide! ").as_deref(),
        Ok("per our style guide")
    );
    assert_eq!(
        &answer[..edits.openers().skip_len(answer)],
        "Per our style guide, here is the answer. "
    );
    // A lead-in skips its whole clause.
    assert_eq!(
        edits.add("According to the handbook...").as_deref(),
        Ok("according to the handbook …")
    );
    let text = "According to the handbook the answer is: 42";
    assert_eq!(
        &text[..edits.openers().skip_len(text)],
        "According to the handbook the answer is: "
    );
    // Adding twice changes nothing.
    edits.add("per our style guide").unwrap();
    assert_eq!(edits.added.len(), 2);
    // A default removed is no longer skipped; added back, it is a default again.
    let great = "Great! The cache is warm.";
    edits.remove("Great");
    assert_eq!(edits.openers().skip_len(great), 0);
    assert_eq!(Openers::default().skip_len(great), "Great! ".len());
    edits.add("great!").unwrap();
    assert!(edits.removed.is_empty());
    assert_eq!(edits.openers().skip_len(great), "Great! ".len());
    // Removing an added phrase drops it.
    edits.remove("According to the handbook …");
    assert_eq!(edits.added, vec!["per our style guide".to_owned()]);
    // Bad phrases are refused with what to do.
    assert_eq!(edits.add(" ,!! "), Err(OpenerEditError::NoWords));
    assert_eq!(
        edits.add(&"word ".repeat(30)),
        Err(OpenerEditError::TooLong)
    );
    assert!(
        OpenerEditError::NoWords
            .to_string()
            .contains("type the opener")
    );
}

#[test]
fn the_list_is_shown_by_language_kind_and_origin() {
    let mut edits = OpenerEdits::default();
    edits.add("感谢您联系客服").unwrap();
    edits.add("Per our style guide").unwrap();
    edits.remove("当然");
    let listed = edits.listed();
    let find = |p: &str| listed.iter().find(|l| l.phrase == p).unwrap();
    let added = find("感谢您联系客服");
    assert_eq!(
        (added.language, added.lead_in, added.origin),
        (Language::Chinese, false, Origin::Added)
    );
    assert_eq!(find("per our style guide").language, Language::English);
    assert_eq!(find("当然").origin, Origin::Removed);
    let lead_in = find("以下是…");
    assert!(lead_in.lead_in && lead_in.origin == Origin::Default);
    assert!(find("here's …").lead_in);
    assert_eq!(
        edits.describe().unwrap(),
        "2 house phrases added (“感谢您联系客服”, “per our style guide”); 1 default removed (“当然”)"
    );
    assert_eq!(OpenerEdits::default().describe(), None);
}

#[test]
fn untrusted_lists_are_bounded() {
    let edits = OpenerEdits {
        added: vec![
            "x".repeat(500),
            String::new(),
            "?!".into(),
            "ok then".into(),
        ],
        removed: vec![String::new()],
    };
    let o = edits.openers();
    assert_eq!(
        o.patterns.len(),
        Openers::default().patterns.len() + 1,
        "only the valid phrase is added"
    );
    assert_eq!(o.skip_len("Ok then, go."), "Ok then, ".len());
}

#[test]
fn reports_keep_their_list_and_old_reports_load_with_the_defaults() {
    let mut r = Report::new("t", EndpointInfo::default(), "chat");
    let plain = serde_json::to_string(&r).unwrap();
    assert!(!plain.contains("openers"), "no changes, nothing written");
    let old = read_json(plain.as_bytes()).unwrap();
    assert!(old.openers.is_empty());
    r.openers.add("Per our style guide").unwrap();
    r.openers.remove("great");
    let back = read_json(serde_json::to_string(&r).unwrap().as_bytes()).unwrap();
    assert_eq!(back.openers, r.openers);
}

#[test]
fn a_recurring_leading_clause_is_offered_with_its_evidence() {
    let texts = answers("Per our style guide,", 14, 20);
    let offered = learn(&texts, &Openers::default());
    assert_eq!(offered.len(), 1, "{offered:?}");
    assert_eq!(offered[0].phrase, "per our style guide");
    assert_eq!(offered[0].example, "Per our style guide,");
    assert_eq!(offered[0].evidence(), "starts 14 of 20 answers");
    // Chinese, the same.
    let zh: Vec<String> = (0..10)
        .map(|i| format!("感谢您联系 Acme 客服！第{i}个原因是预填充。"))
        .collect();
    let offered = learn(&zh, &Openers::default());
    assert_eq!(offered[0].phrase, "感谢您联系 acme 客服");
    assert_eq!(offered[0].evidence(), "starts 10 of 10 answers");
}

#[test]
fn a_clause_already_handled_is_not_offered_and_the_next_one_is() {
    let texts = answers("Thanks for the details! Per our style guide:", 10, 12);
    let offered = learn(&texts, &Openers::default());
    let phrases: Vec<&str> = offered.iter().map(|o| o.phrase.as_str()).collect();
    assert_eq!(phrases, ["per our style guide"]);
    // Once on the list, nothing is left to offer.
    let mut edits = OpenerEdits::default();
    edits.add(&offered[0].phrase).unwrap();
    assert!(learn(&texts, &edits.openers()).is_empty());
}

#[test]
fn content_that_repeats_because_the_prompt_repeats_is_not_offered() {
    // The same prompt twenty times: the same answer, clause and all.
    let same = vec!["The three causes are: prefill, decode and queueing."; 20];
    assert!(learn(&same, &Openers::default()).is_empty());
    // Two answers, alternating: still one continuation per clause.
    let two: Vec<&str> = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                "In short, prefill dominates."
            } else {
                "Put simply, decode dominates."
            }
        })
        .collect();
    assert!(learn(&two, &Openers::default()).is_empty());
}

#[test]
fn rare_clauses_and_non_clauses_are_not_offered() {
    // Below the share (30 %) or the count (3).
    assert!(learn(&answers("Per our style guide,", 5, 20), &Openers::default()).is_empty());
    assert_eq!(
        learn(&answers("Per our style guide,", 6, 20), &Openers::default()).len(),
        1
    );
    assert!(
        learn(
            &answers("Per our style guide,", MIN_ANSWERS - 1, 4),
            &Openers::default()
        )
        .is_empty()
    );
    // Headings, numbers, questions, markup and long sentences are no leading clause.
    for house in [
        "## Overview\n",
        "Step 1:",
        "Why does prefill dominate?",
        "**Note:**",
        "This sentence is much too long to be a house opener as it goes on and on and on,",
    ] {
        let offered = learn(&answers(house, 10, 10), &Openers::default());
        assert!(offered.is_empty(), "{house:?}: {offered:?}");
    }
}

/// A streamed answer as the studio captures it: each piece a read 10 ms apart.
fn capture(pieces: &[&str]) -> Capture {
    let mut body = String::new();
    let mut reads = Vec::new();
    for (i, p) in pieces.iter().enumerate() {
        let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": p}}]});
        let line = format!("data: {chunk}\n\n");
        reads.push(Read {
            at: 100.0 + 10.0 * i as f64,
            bytes: line.len() as u32,
        });
        body.push_str(&line);
    }
    let done = "data: [DONE]\n\n";
    let end = 100.0 + 10.0 * pieces.len() as f64;
    reads.push(Read {
        at: end,
        bytes: done.len() as u32,
    });
    body.push_str(done);
    Capture {
        sent_at: 0.0,
        head: Some(CapturedHead {
            at: 50.0,
            status: 200,
            content_type: Some("text/event-stream".into()),
        }),
        body: body.into_bytes(),
        reads,
        end: CaptureEnd::Finished { at: end },
    }
}

/// A run of `n` requests, the first `with` starting with the house phrase; `raw` says which
/// keep their raw capture.
fn run(with: usize, n: usize, raw: impl Fn(usize) -> bool) -> Report {
    let mut r = Report::new("house", EndpointInfo::default(), "chat");
    for i in 0..n {
        let content = CONTENT[i % CONTENT.len()];
        let (first, rest) = content.split_at(content.find(' ').unwrap());
        let mut pieces = vec![first, rest];
        if i < with {
            pieces.splice(0..0, ["Per our", " style guide,", " "]);
        }
        let c = capture(&pieces);
        let tl = c.record(None).unwrap();
        let mut rec = RequestRecord::from_timeline(
            i as u32,
            "chat".into(),
            None,
            &tl,
            &MetricsConfig::default(),
        );
        if raw(i) {
            rec.raw = Some(RawCapture::from_capture(&c, 0.0));
        }
        r.requests.push(rec);
    }
    r
}

#[test]
fn accepting_an_offer_scores_the_run_again_from_its_raw_captures() {
    let mut r = run(8, 10, |i| i != 1);
    assert!(can_rescore(&r));
    let offered = offers(&r);
    assert_eq!(offered.len(), 1, "{offered:?}");
    assert_eq!(offered[0].evidence(), "starts 8 of 10 answers");
    let before: Vec<Option<f64>> = r.requests.iter().map(|q| q.metrics.meaningful_ms).collect();
    assert_eq!(
        before[0],
        Some(100.0),
        "the house phrase counted as content"
    );
    let done = accept(&mut r, &offered[0].phrase).unwrap();
    assert_eq!((done.rescored, done.kept, done.moved), (9, 1, 7));
    assert!(done.sentence().contains("1 kept their figures"));
    assert_eq!(r.openers.added, vec!["per our style guide".to_owned()]);
    // Each recomputed request is what the core computes with the run's list.
    let config = MetricsConfig {
        openers: r.openers.openers(),
        ..MetricsConfig::default()
    };
    for (i, q) in r.requests.iter().enumerate() {
        if i == 1 {
            assert_eq!(q.metrics.meaningful_ms, before[1], "no raw capture: kept");
            continue;
        }
        let c = q.raw.as_ref().unwrap().to_capture().unwrap();
        let fresh = RequestMetrics::compute(&c.record(None).unwrap(), &config);
        assert_eq!(q.metrics.meaningful_ms, fresh.meaningful_ms);
        assert_eq!(q.metrics.opener_text, fresh.opener_text);
    }
    assert_eq!(r.requests[0].metrics.meaningful_ms, Some(130.0));
    assert_eq!(r.requests[0].metrics.opener_text, "Per our style guide, ");
    assert_eq!(
        r.requests[9].metrics.meaningful_ms, before[9],
        "no house phrase"
    );
    let agg = r.aggregates();
    assert!(agg.meaningful.unwrap().p50 > 100.0);
    // Accepted: not offered again; scoring again changes nothing.
    assert!(offers(&r).is_empty());
    let again = rescore(&mut r);
    assert_eq!(again.moved, 0);
    // A run without raw captures cannot be scored again.
    assert!(!can_rescore(&run(8, 10, |_| false)));
}

#[test]
fn a_default_the_team_removed_is_not_offered_again() {
    let mut r = run(0, 10, |_| true);
    for (i, q) in r.requests.iter_mut().enumerate() {
        q.metrics.text = format!("Great! {}", CONTENT[i % CONTENT.len()]);
    }
    r.openers.remove("great");
    assert!(offers(&r).is_empty());
}
