//! The meaningful first token (issue #17, item 8): one test per kind of disagreement with a
//! careful reviewer, each with its case and its counter-case in English and Chinese, and the
//! streamed decision (the same answer in any chunking gives the same opener and the arrival of
//! the chunk holding the first content character).

use proptest::prelude::*;
use ttft_core::metrics::{MetricsConfig, RequestMetrics};
use ttft_core::openers::Openers;
use ttft_core::timeline::RequestRecorder;

/// Cases per property: `TTFT_FUZZ_CASES` (as in `tests/fuzz.rs`), else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("TTFT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The opener the default rules skip at the start of a complete answer.
fn opener(text: &str) -> &str {
    &text[..Openers::default().skip_len(text)]
}

/// Asserts each `(answer, expected opener)` pair, reporting every mismatch at once.
fn check(cases: &[(&str, &str)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(t, want)| opener(t) != *want)
        .map(|(t, want)| format!("{t:?}: skipped {:?}, want {want:?}", opener(t)))
        .collect();
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn kind_a_cjk_opener_counts_only_before_punctuation() {
    check(&[
        // Content words that begin with an opener character.
        ("好吃的菜有：饺子和面条。", ""),
        ("好消息是：服务已经恢复。", ""),
        ("好的设计需要三个要素。", ""),
        ("当然性是一个哲学概念。", ""),
        ("收到的邮件一共有三封。", ""),
        // Latin openers already needed a word boundary.
        ("Okapis live in the Congo.", ""),
        ("Surely not.", ""),
        // Counter-cases: the same openers followed by punctuation or the end of the answer.
        ("好的，我们开始。", "好的，"),
        ("当然！这很简单。", "当然！"),
        ("收到。文件已经处理完毕。", "收到。"),
        ("好，下面是步骤：\n1. 安装", "好，下面是步骤：\n"),
        ("好的", "好的"),
        ("OK, the build passes.", "OK, "),
    ]);
}

#[test]
fn kind_b_the_whole_opener_sentence_is_skipped() {
    check(&[
        ("Sure thing! The GIL serialises bytecode.", "Sure thing! "),
        (
            "I'd be happy to help you with that! Python's GIL serialises bytecode.",
            "I'd be happy to help you with that! ",
        ),
        (
            "Let me explain how this works. A hash map stores buckets.",
            "Let me explain how this works. ",
        ),
        (
            "Of course I can help with that. The error means the file is missing.",
            "Of course I can help with that. ",
        ),
        ("我来帮你总结一下。本文讨论了缓存。", "我来帮你总结一下。"),
        ("让我来解释一下。哈希表把键映射到桶。", "让我来解释一下。"),
        (
            "好的，我来为你详细说明一下。首先，安装依赖。",
            "好的，我来为你详细说明一下。",
        ),
        // Counter-cases: the clause after the opener is content.
        ("Sure, the answer is 42.", "Sure, "),
        ("Of course, Paris is the capital of France.", "Of course, "),
        ("好的，答案是42。", "好的，"),
        ("当然，巴黎是法国的首都。", "当然，"),
    ]);
}

#[test]
fn kind_c_common_boilerplate_sentences_are_in_the_defaults() {
    check(&[
        ("Great question! Rust has no GC.", "Great question! "),
        ("Let me explain. Rust has no GC.", "Let me explain. "),
        ("Thanks for asking! Rust has no GC.", "Thanks for asking! "),
        (
            "Excellent question. Rust has no GC.",
            "Excellent question. ",
        ),
        ("Absolutely. Rust has no GC.", "Absolutely. "),
        ("Of course! Rust has no GC.", "Of course! "),
        (
            "I'd be happy to help. Rust has no GC.",
            "I'd be happy to help. ",
        ),
        (
            "Certainly! Here is the fix:\n\nfn main() {}",
            "Certainly! Here is the fix:\n\n",
        ),
        (
            "Here's a quick overview:\n- ownership",
            "Here's a quick overview:\n",
        ),
        ("没问题！Rust 没有垃圾回收。", "没问题！"),
        ("很高兴为您解答。Rust 没有垃圾回收。", "很高兴为您解答。"),
        ("问得好！Rust 没有垃圾回收。", "问得好！"),
        ("感谢您的提问！Rust 没有垃圾回收。", "感谢您的提问！"),
        ("当然可以。Rust 没有垃圾回收。", "当然可以。"),
        (
            "好的，下面是具体步骤：\n1. 安装",
            "好的，下面是具体步骤：\n",
        ),
        ("以下是示例代码：\nfn main() {}", "以下是示例代码：\n"),
        // Counter-cases: the same words starting content.
        ("Thanks to the borrow checker, Rust has no GC.", ""),
        ("Excellent questions remain open in number theory.", ""),
        ("问得好不好，取决于提问的人。", ""),
        ("很高兴的是，实验成功了。", ""),
    ]);
}

#[test]
fn kind_d_colons_in_clock_times_and_urls_do_not_end_a_lead_in() {
    check(&[
        ("Sure — the meeting is at 10:30.", "Sure — "),
        ("OK, see https://example.com/docs for details.", "OK, "),
        ("好的，会议在10:30开始。", "好的，"),
        ("好的，会议在10：30开始。", "好的，"),
        ("当然，文档在 https://example.com/zh 上。", "当然，"),
        // Counter-cases: the lead-in's own colon still ends it.
        (
            "Here's the agenda for the 10:30 meeting:\n- intro",
            "Here's the agenda for the 10:30 meeting:\n",
        ),
        (
            "Here is the link to https://example.com/docs:\n\nSection 2",
            "Here is the link to https://example.com/docs:\n\n",
        ),
        (
            "以下是10:30会议的议程：\n1. 开场",
            "以下是10:30会议的议程：\n",
        ),
        (
            "以下是 https://example.com 的摘要：\n第一节",
            "以下是 https://example.com 的摘要：\n",
        ),
    ]);
}

#[test]
fn kind_e_a_content_clause_ending_in_a_colon_is_content() {
    check(&[
        ("Sure, the three causes are:\n1. Heat", "Sure, "),
        ("OK, the steps are as follows:\n1. Build", "OK, "),
        ("好的，原因有三个：\n1. 过热", "好的，"),
        ("当然，主要区别如下：\n- 速度", "当然，"),
        ("The three causes are:\n1. Heat", ""),
        ("原因有三个：\n1. 过热", ""),
        // Counter-cases: a lead-in clause ending in a colon is boilerplate.
        (
            "Sure, here are the three causes:\n1. Heat",
            "Sure, here are the three causes:\n",
        ),
        ("Below are the steps:\n1. Build", "Below are the steps:\n"),
        (
            "好的，以下是三个原因：\n1. 过热",
            "好的，以下是三个原因：\n",
        ),
        ("下面是主要区别：\n- 速度", "下面是主要区别：\n"),
    ]);
}

#[test]
fn kind_f_an_opener_word_that_belongs_to_the_answer_is_content() {
    check(&[
        (
            "Absolutely not. You should never store passwords in plain text.",
            "",
        ),
        ("Sure enough, the bug was in the parser.", ""),
        ("OK Computer is an album by Radiohead.", ""),
        ("Okay-ish results at best.", ""),
        ("Of course not: the cache is per process.", ""),
        ("当然不是。这个函数是纯的。", ""),
        ("没问题的代码也需要测试。", ""),
        ("收到货后请先检查包装。", ""),
        ("好的坏的都要记录。", ""),
        // Counter-cases: the opener word on its own.
        ("Absolutely! You should hash passwords.", "Absolutely! "),
        ("Sure, the bug was in the parser.", "Sure, "),
        ("当然，这个函数是纯的。", "当然，"),
        ("没问题，代码已经通过测试。", "没问题，"),
    ]);
}

#[test]
fn kind_g_a_hyphenated_word_is_not_an_opener() {
    check(&[
        ("Sure-footed goats climb cliffs easily.", ""),
        ("Absolutely-continuous measures have densities.", ""),
        ("OK-rated hotels are cheaper.", ""),
        // Counter-cases: a dash (spaced, or an em dash) after the opener is punctuation.
        (
            "Sure - here's the code:\nfn main() {}",
            "Sure - here's the code:\n",
        ),
        ("Okay—the build passes now.", "Okay—"),
        ("Sure -- the build passes now.", "Sure -- "),
    ]);
}

#[test]
fn kind_h_typographic_apostrophes_match() {
    check(&[
        (
            "Here\u{2019}s a summary:\n\nThe report says latency fell.",
            "Here\u{2019}s a summary:\n\n",
        ),
        (
            "I\u{2019}d be happy to help! Rust has no GC.",
            "I\u{2019}d be happy to help! ",
        ),
        (
            "Let\u{2019}s break it down:\n1. Parse",
            "Let\u{2019}s break it down:\n",
        ),
        (
            "Sure, here\u{2019}s the fix:\nfn main() {}",
            "Sure, here\u{2019}s the fix:\n",
        ),
        // Counter-cases: an apostrophe inside content changes nothing.
        ("Sure, it\u{2019}s 42.", "Sure, "),
        ("I\u{2019}d rather use a B-tree here.", ""),
        ("OK\u{2019}d changes are merged nightly.", ""),
    ]);
}

#[test]
fn kind_i_lead_ins_longer_than_80_characters_are_skipped_whole() {
    let en1 = "Here's a detailed, step-by-step summary of everything the quarterly report says about latency, throughput, cost and reliability:\n\n";
    let en2 = "I'd be happy to walk you through every step of configuring the reverse proxy, the TLS certificates and the health checks:\n\n";
    let zh1 = "好的，以下是根据您提供的会议纪要、项目计划书、技术评审意见以及上线复盘报告，按照时间顺序和责任人整理出来的全部关键结论、风险事项、待办清单、每一项的截止日期和后续跟进计划的详细汇总：\n";
    let zh2 = "我来帮你把这份长达三十页的技术方案按照背景、目标、架构设计、接口定义、数据迁移、灰度发布、监控告警、回滚预案和人员分工这几个方面逐一梳理清楚，并给出每一部分的关键要点和需要注意的风险：\n";
    let cases = [
        (format!("{en1}Latency fell."), en1),
        (format!("{en2}First, install nginx."), en2),
        (format!("{zh1}1. 上线延期"), zh1),
        (format!("{zh2}背景：旧系统扩容困难。"), zh2),
        // Counter-cases: a long content clause, and lead-ins that end before a later colon.
        (
            "Sure, the quarterly report spends most of its forty pages on latency, throughput, cost and reliability, and it concludes:\n\nLatency fell.".to_owned(),
            "Sure, ",
        ),
        (
            "Here's what changed in the release\nThe parser now handles: tabs".to_owned(),
            "Here's what changed in the release\n",
        ),
        (
            "好的，这份报告用了整整四十页的篇幅讨论延迟、吞吐、成本和可靠性这四个方面，并且在最后一章里给出了它对下一季度容量规划、采购节奏和预算分配的三条结论：\n1. 扩容".to_owned(),
            "好的，",
        ),
        (
            "以下是本季度的总结。报告的结论有三条：\n1. 扩容".to_owned(),
            "以下是本季度的总结。",
        ),
    ];
    let cases: Vec<(&str, &str)> = cases.iter().map(|(t, o)| (t.as_str(), *o)).collect();
    check(&cases);
}

#[test]
fn kind_j_the_openers_of_widely_used_assistants_are_skipped_and_their_look_alikes_are_not() {
    check(&[
        (
            "Thanks for the details! The cache is cold.",
            "Thanks for the details! ",
        ),
        ("Good catch! The loop is off by one.", "Good catch! "),
        ("Great point, the tail matters more.", "Great point, "),
        ("Thank you. Prefill dominates.", "Thank you. "),
        (
            "Got it! Here's the fix:\nfn main() {}",
            "Got it! Here's the fix:\n",
        ),
        (
            "You're absolutely right, the index is wrong.",
            "You're absolutely right, ",
        ),
        ("Perfect! The build passes.", "Perfect! "),
        (
            "Let's unpack this. Prefill comes first.",
            "Let's unpack this. ",
        ),
        ("好的，我来整理一下：\n1. 预填充", "好的，我来整理一下：\n"),
        ("没问题！首令牌延迟由预填充决定。", "没问题！"),
        ("收到！文件已经处理完毕。", "收到！"),
        ("明白了，问题在缓存。", "明白了，"),
        ("感谢你的详细说明！原因有两个。", "感谢你的详细说明！"),
        ("谢谢，原因有两个。", "谢谢，"),
        // Look-alikes: the same words starting the answer's content.
        ("Good catch rates depend on the net.", ""),
        ("Thanks to the cache, TTFT drops.", ""),
        ("Thank you notes are still polite.", ""),
        ("Perfect forward secrecy protects old sessions.", ""),
        ("Excellent results need warm caches.", ""),
        ("Awesome-looking dashboards can hide tails.", ""),
        ("I see three causes: prefill, decode, queueing.", ""),
        ("You're right to worry about the tail.", ""),
        ("Sounds good enough for a demo, but not for production.", ""),
        ("Great point estimates hide their spread.", ""),
        ("感谢信要写得真诚。", ""),
        ("谢谢的拼音是 xièxie。", ""),
        ("懂了吗？再读一遍。", ""),
        ("说得对不对要看数据。", ""),
    ]);
}

/// The answer streamed as `pieces`, piece i arriving at 100 + 10·i ms in its own read.
fn stream(pieces: &[&str]) -> RequestMetrics {
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(50.0, 200, Some("text/event-stream"));
    for (i, p) in pieces.iter().enumerate() {
        let chunk = serde_json::json!({
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": p}}],
        });
        r.on_read(
            100.0 + 10.0 * i as f64,
            format!("data: {chunk}\n\n").as_bytes(),
        );
    }
    let end = 100.0 + 10.0 * pieces.len() as f64;
    r.on_read(end, b"data: [DONE]\n\n");
    RequestMetrics::compute(&r.finish(end), &MetricsConfig::default())
}

/// Arrival time of the piece holding byte `k` of the joined answer.
fn arrival_of_byte(pieces: &[&str], k: usize) -> Option<f64> {
    let mut start = 0;
    for (i, p) in pieces.iter().enumerate() {
        if k < start + p.len() {
            return Some(100.0 + 10.0 * i as f64);
        }
        start += p.len();
    }
    None
}

/// `text` cut at the given char positions (sorted, deduplicated), keeping empty pieces out.
fn cut(text: &str, mut at: Vec<usize>) -> Vec<&str> {
    let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if bounds.is_empty() {
        return Vec::new();
    }
    let mut byte: Vec<usize> = at.drain(..).map(|a| bounds[a % bounds.len()]).collect();
    byte.push(0);
    byte.push(text.len());
    byte.sort_unstable();
    byte.dedup();
    byte.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

/// Answers with the opener the rules must find, whatever the chunking.
const STREAMED: &[(&str, &str)] = &[
    (
        "Sure, here's a summary of the key points:\n\nThe report says latency fell.",
        "Sure, here's a summary of the key points:\n\n",
    ),
    (
        "好的，我来帮你总结一下：本文讨论了缓存。",
        "好的，我来帮你总结一下：",
    ),
    ("Sure enough, the bug was in the parser.", ""),
    ("Absolutely not. Never do that.", ""),
    ("当然不是。这个函数是纯的。", ""),
    (
        "Certainly! I\u{2019}d be happy to help.\n\n  Rust has no GC.",
        "Certainly! I\u{2019}d be happy to help.\n\n  ",
    ),
];

#[test]
fn streamed_meaningful_time_is_the_arrival_of_the_chunk_holding_the_first_content_character() {
    for (text, want) in STREAMED {
        let chars: Vec<usize> = (0..text.chars().count()).collect();
        let words: Vec<&str> = text.split_inclusive([' ', '，', '：']).collect();
        let chunkings: Vec<Vec<&str>> = vec![
            vec![text],
            cut(text, chars.clone()),
            cut(text, chars.iter().copied().step_by(3).collect()),
            cut(text, chars.iter().copied().step_by(7).collect()),
            words,
        ];
        for pieces in chunkings {
            let m = stream(&pieces);
            assert_eq!(m.text, *text);
            assert_eq!(m.opener_text, *want, "{pieces:?}");
            let k = want.len();
            assert_eq!(
                m.meaningful_ms,
                arrival_of_byte(&pieces, k),
                "{pieces:?}: the first content character is byte {k}"
            );
            assert_eq!(m.first_answer_ms, Some(100.0));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_same_opener_and_meaningful_time(which in 0..STREAMED.len(), at in proptest::collection::vec(any::<usize>(), 0..12)) {
        let (text, want) = STREAMED[which];
        let pieces = cut(text, at);
        let m = stream(&pieces);
        prop_assert_eq!(&m.opener_text, want);
        prop_assert_eq!(m.meaningful_ms, arrival_of_byte(&pieces, want.len()));
    }
}

#[test]
fn an_answer_that_is_all_opener_has_no_meaningful_token() {
    let m = stream(&["Sure", "!"]);
    assert_eq!(m.opener_text, "Sure!");
    assert_eq!(m.meaningful_ms, None);
    let m = stream(&["好的，", "我来帮你总结一下：", "\n"]);
    assert_eq!(m.opener_text, "好的，我来帮你总结一下：\n");
    assert_eq!(m.meaningful_ms, None);
    assert_eq!(m.opener_cost_ms(), None);
}

#[test]
fn custom_patterns_are_standalone_or_lead_ins() {
    let o = Openers::from_lines("howdy\n\nAs an AI language model …\n好滴\n温馨提示...\n");
    assert_eq!(
        o.patterns,
        ["howdy", "As an AI language model …", "好滴", "温馨提示..."]
    );
    let skip = |t: &str| t[..o.skip_len(t)].to_owned();
    assert_eq!(skip("Howdy! Rust has no GC."), "Howdy! ");
    assert_eq!(skip("Howdy partner"), "");
    assert_eq!(
        skip("As an AI language model, I have no opinions.\nRust has no GC."),
        "As an AI language model, I have no opinions.\n"
    );
    assert_eq!(skip("好滴～Rust 没有垃圾回收。"), "好滴～");
    assert_eq!(
        skip("温馨提示：请先备份。Rust 没有垃圾回收。"),
        "温馨提示："
    );
    assert_eq!(skip("Sure, x"), "", "the defaults are replaced");
}

#[test]
fn decide_waits_for_the_text_that_settles_the_clause() {
    use ttft_core::openers::{Decision, Split};
    let o = Openers::default();
    let undecided = |t: &str| o.decide(t, false) == Decision::Undecided;
    // A phrase that could still grow or lose its boundary, a run of punctuation, a colon
    // whose next character is unknown, an unfinished lead-in clause.
    for t in [
        "Sure",
        "Sure ",
        "Sure,",
        "Sure, ",
        "Of cou",
        "OK\u{2019}",
        "好",
        "好的，",
        "Here's the agenda for 10:",
        "Here's the summary:",
        "以下是要点",
        "Let me explain.",
    ] {
        assert!(undecided(t), "{t:?}: {:?}", o.decide(t, false));
    }
    let decided = |t: &str, opener: usize, content: usize| {
        assert_eq!(
            o.decide(t, false),
            Decision::Decided(Split {
                opener,
                content: Some(content)
            }),
            "{t:?}"
        );
    };
    decided("Sure e", 0, 0);
    decided("好吃", 0, 0);
    decided("Sure, R", 6, 6);
    decided("Here's the summary:\n\nR", 21, 21);
    // "T" could still start "Thanks for asking".
    assert!(undecided("Sure, T"));
    decided("  The", 0, 2);
    // The complete answer is always decided.
    assert_eq!(
        o.decide("Sure", true),
        Decision::Decided(Split {
            opener: 4,
            content: None
        })
    );
    assert_eq!(
        o.split("   "),
        Split {
            opener: 0,
            content: None
        }
    );
}

/// Text built from pieces that exercise the rules' edges.
fn openerish() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "Sure",
        "sure",
        " ",
        ",",
        "，",
        "!",
        "。",
        ".",
        ":",
        "：",
        "\n",
        "-",
        "—",
        "\u{2019}",
        "'d",
        "10",
        "https://x.com",
        "好的",
        "好",
        "的",
        "当然",
        "不",
        "但是",
        "以下是",
        "我来帮你",
        "总结",
        "OK",
        "Here",
        "here's",
        " a summary",
        "Of course",
        " I can help",
        "I'd be happy to",
        " help",
        " but",
        " not",
        " enough",
        " thing",
        "x",
    ];
    let piece = prop_oneof![
        proptest::sample::select(PIECES).prop_map(str::to_owned),
        "[a-z好，：:. \n]{1,3}",
    ];
    proptest::collection::vec(piece, 0..16).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), failure_persistence: None, ..ProptestConfig::default() })]

    /// A decision on a prefix is final: it is what the complete answer gives, and streaming it
    /// through `OpenerScan` in any chunking gives that too.
    #[test]
    fn a_decision_on_a_prefix_is_final(text in openerish(), at in proptest::collection::vec(any::<usize>(), 0..8)) {
        use ttft_core::openers::{Decision, OpenerScan};
        let o = Openers::default();
        let full = o.split(&text);
        for (i, _) in text.char_indices() {
            let d = o.decide(&text[..i], false);
            prop_assert!(d == Decision::Undecided || d == Decision::Decided(full), "{:?} at {}: {:?} vs {:?}", text, i, d, full);
        }
        if let Some(c) = full.content {
            prop_assert!(!text[c..].starts_with(char::is_whitespace));
            prop_assert!(full.opener == 0 || full.opener == c);
        }
        let mut scan = OpenerScan::new();
        let mut so_far = String::new();
        for piece in cut(&text, at) {
            so_far.push_str(piece);
            let d = scan.update(&o, &so_far);
            prop_assert!(d == Decision::Undecided || d == Decision::Decided(full));
        }
        prop_assert_eq!(scan.finish(&o, &text), full);
    }
}
