//! Trace replay (#32): the three formats read from their fixtures, each kind of bad file named
//! by line and column, windows, speed and sampling planned and said, prompts whose blocks share
//! text exactly where the trace's hash ids do, and the expected prefix-cache hit rate.

use proptest::prelude::*;
use ttft_core::dialect::Dialect;
use ttft_core::request::GenerationParams;
use ttft_core::trace::{
    BLOCK_TOKENS, Trace, TraceError, TraceFormat, TracePlan, TracePlanError, TracePlanOptions,
    TraceRow, detect, eos_note, parse, plan, prefix_reuse,
};
use ttft_fixtures::traces;

fn fixture(name: &str) -> Trace {
    parse(traces::read(name).as_bytes(), None).unwrap()
}

fn opts(window_start_s: f64, window_s: Option<f64>, speed: f64, cap: usize) -> TracePlanOptions {
    TracePlanOptions {
        window_start_s,
        window_s,
        speed,
        max_requests: cap,
        seed: 7,
    }
}

fn row(arrival_ms: f64, input_tokens: u32, output_tokens: u32, hash_ids: &[u64]) -> TraceRow {
    TraceRow {
        arrival_ms,
        input_tokens,
        output_tokens,
        hash_ids: hash_ids.to_vec(),
    }
}

fn mooncake(rows: Vec<TraceRow>) -> Trace {
    Trace {
        format: TraceFormat::Mooncake,
        rows,
        failed_rows: 0,
    }
}

fn azure(rows: Vec<TraceRow>) -> Trace {
    Trace {
        format: TraceFormat::Azure,
        rows,
        failed_rows: 0,
    }
}

fn whole(trace: &Trace) -> TracePlan {
    plan(trace, &opts(0.0, None, 1.0, usize::MAX)).unwrap()
}

fn words(prompt: &str) -> Vec<&str> {
    assert!(prompt.starts_with(' '), "every word has its leading space");
    prompt[1..].split(' ').collect()
}

#[test]
fn the_fixture_files_are_what_their_generators_write() {
    let write = std::env::var_os("TTFT_WRITE_FIXTURES").is_some();
    for (name, text) in traces::all() {
        let path = format!("{}/{name}", traces::DATA);
        if write {
            std::fs::write(&path, &text).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            text,
            "{name} differs from its generator (crates/ttft-fixtures/src/traces.rs): run this test with TTFT_WRITE_FIXTURES=1"
        );
    }
}

#[test]
fn the_mooncake_fixture_parses_with_its_shared_blocks() {
    let text = traces::read(traces::MOONCAKE);
    assert_eq!(detect(text.as_bytes()), Some(TraceFormat::Mooncake));
    let t = fixture(traces::MOONCAKE);
    assert_eq!(t.format, TraceFormat::Mooncake);
    assert_eq!(t.rows.len(), 200);
    assert_eq!(t.rows[0].arrival_ms, 0.0);
    assert!(
        t.rows
            .windows(2)
            .all(|w| w[0].arrival_ms <= w[1].arrival_ms)
    );
    // Each row as written, read independently of the parser.
    for (line, r) in text.lines().zip(&t.rows) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(r.input_tokens as u64, v["input_length"].as_u64().unwrap());
        assert_eq!(r.output_tokens as u64, v["output_length"].as_u64().unwrap());
        assert_eq!(r.arrival_ms, v["timestamp"].as_f64().unwrap());
        assert_eq!(
            r.hash_ids.len(),
            r.input_tokens.div_ceil(BLOCK_TOKENS) as usize
        );
    }
    let mean_input = t
        .rows
        .iter()
        .map(|r| f64::from(r.input_tokens))
        .sum::<f64>()
        / t.rows.len() as f64;
    assert!(
        (600.0..=2000.0).contains(&mean_input),
        "mean input {mean_input}"
    );
    let reuse = whole(&t).prefix_reuse().share().unwrap();
    assert!(
        (0.2..0.8).contains(&reuse),
        "the fixture shares prefix blocks: {reuse}"
    );
}

#[test]
fn the_azure_fixture_parses_its_seven_digit_times() {
    let text = traces::read(traces::AZURE);
    assert_eq!(detect(text.as_bytes()), Some(TraceFormat::Azure));
    let t = fixture(traces::AZURE);
    assert_eq!(
        (t.format, t.rows.len(), t.failed_rows),
        (TraceFormat::Azure, 50, 0)
    );
    // Seconds of the day as written (all rows fall on one day), 7 fractional digits.
    let seconds = |line: &str| {
        let time = &line[11..27];
        let (h, m, s) = (&time[0..2], &time[3..5], &time[6..]);
        h.parse::<f64>().unwrap() * 3600.0
            + m.parse::<f64>().unwrap() * 60.0
            + s.parse::<f64>().unwrap()
    };
    let lines: Vec<&str> = text.lines().skip(1).collect();
    for (line, r) in lines.iter().zip(&t.rows) {
        let expected_ms = (seconds(line) - seconds(lines[0])) * 1e3;
        assert!(
            (r.arrival_ms - expected_ms).abs() < 1e-3,
            "{line}: {}",
            r.arrival_ms
        );
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(r.input_tokens.to_string(), cells[1]);
        assert_eq!(r.output_tokens.to_string(), cells[2]);
        assert!(r.hash_ids.is_empty());
    }
    let reuse = whole(&t).prefix_reuse();
    assert_eq!(reuse.reused_tokens, 0, "Azure prompts are all their own");
}

#[test]
fn the_burstgpt_fixture_leaves_out_its_failures() {
    let text = traces::read(traces::BURSTGPT);
    assert_eq!(detect(text.as_bytes()), Some(TraceFormat::BurstGpt));
    let t = fixture(traces::BURSTGPT);
    let kept: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| c[3] != "0")
        .collect();
    assert_eq!(t.failed_rows, 3);
    assert_eq!(t.rows.len(), 47);
    let t0: f64 = kept[0][0].parse().unwrap();
    for (c, r) in kept.iter().zip(&t.rows) {
        assert_eq!(r.arrival_ms, (c[0].parse::<f64>().unwrap() - t0) * 1e3);
        assert_eq!(r.input_tokens.to_string(), c[2]);
        assert_eq!(r.output_tokens.to_string(), c[3]);
    }
    let p = whole(&t);
    assert!(
        p.notes.iter().any(|n| n.contains("failed requests (3:")),
        "{:?}",
        p.notes
    );
}

#[test]
fn an_explicit_format_is_used_and_a_wrong_one_names_the_missing_column() {
    let azure = traces::read(traces::AZURE);
    assert_eq!(
        parse(azure.as_bytes(), Some(TraceFormat::Azure))
            .unwrap()
            .rows
            .len(),
        50
    );
    match parse(azure.as_bytes(), Some(TraceFormat::BurstGpt)) {
        // Column names are compared without case: TIMESTAMP is BurstGPT's Timestamp too.
        Err(TraceError::MissingColumn {
            line: 1, column, ..
        }) => {
            assert_eq!(column, "Request tokens")
        }
        other => panic!("{other:?}"),
    }
    let burst =
        "\u{feff}Timestamp,Model,Request tokens,Log Type\r\n5,ChatGPT,472,Conversation log\r\n";
    let e = parse(burst.as_bytes(), None).unwrap_err();
    assert!(
        matches!(e, TraceError::UnknownFormat { line: 1, .. }),
        "{e:?}"
    );
    let e = parse(burst.as_bytes(), Some(TraceFormat::BurstGpt)).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::MissingColumn {
                column: "Response tokens",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("line 1"), "{e}");
}

#[test]
fn a_bad_header_is_named() {
    let e = parse(b"time,prompt,answer\n1,2,3\n", None).unwrap_err();
    assert!(matches!(e, TraceError::UnknownFormat { line: 1, .. }));
    assert!(
        e.to_string()
            .contains("TIMESTAMP,ContextTokens,GeneratedTokens")
    );
    let e = parse(b"TIMESTAMP,ContextTokens\n", Some(TraceFormat::Azure)).unwrap_err();
    assert!(
        matches!(
            e,
            TraceError::MissingColumn {
                column: "GeneratedTokens",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn a_bad_number_names_its_line_column_and_text() {
    let azure = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n\n2023-11-16 18:15:50.9951690,39x6,109\n";
    assert_eq!(
        parse(azure.as_bytes(), None).unwrap_err(),
        TraceError::BadNumber {
            line: 4,
            column: 2,
            field: "ContextTokens".into(),
            text: "39x6".into(),
            expected: "a whole number of tokens (0 to 10,000,000)",
        }
    );
    let azure_time =
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 25:15:46.6805900,374,44\n";
    match parse(azure_time.as_bytes(), None).unwrap_err() {
        TraceError::BadNumber {
            line: 2,
            column: 1,
            text,
            ..
        } => assert_eq!(text, "2023-11-16 25:15:46.6805900"),
        other => panic!("{other:?}"),
    }
    let burst = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\nsoon,ChatGPT,1,2,3,API log\n";
    match parse(burst.as_bytes(), None).unwrap_err() {
        TraceError::BadNumber {
            line: 3,
            column: 1,
            field,
            text,
            ..
        } => assert_eq!((field.as_str(), text.as_str()), ("Timestamp", "soon")),
        other => panic!("{other:?}"),
    }
    let jsonl = "{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 5}\n{\"timestamp\": 3, \"input_length\": -5, \"output_length\": 5}\n";
    let e = parse(jsonl.as_bytes(), None).unwrap_err();
    assert_eq!(
        e,
        TraceError::BadNumber {
            line: 2,
            column: 34,
            field: "input_length".into(),
            text: "-5".into(),
            expected: "a whole number of tokens (0 to 10,000,000)",
        }
    );
    assert_eq!(&jsonl.lines().nth(1).unwrap()[33..35], "-5");
    assert!(
        e.to_string()
            .starts_with("line 2, column 34 (input_length): '-5'")
    );
    let ids =
        "{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 5, \"hash_ids\": [1, \"x\"]}\n";
    match parse(ids.as_bytes(), None).unwrap_err() {
        TraceError::BadNumber { line: 1, field, .. } => assert_eq!(field, "hash_ids[1]"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_broken_or_incomplete_line_is_named() {
    let jsonl = "{\"timestamp\": 0, \"input_length\": 6, \"output_length\": 5}\n{\"timestamp\": 3, \"input_length\": 6,\n";
    match parse(jsonl.as_bytes(), None).unwrap_err() {
        TraceError::BadLine {
            line: 2, column, ..
        } => assert!(column > 1),
        other => panic!("{other:?}"),
    }
    let missing = "{\"timestamp\": 0, \"input_length\": 6}\n";
    let e = parse(missing.as_bytes(), None).unwrap_err();
    assert!(matches!(e, TraceError::BadLine { line: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("output_length"), "{e}");
    let short = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374\n";
    let e = parse(short.as_bytes(), None).unwrap_err();
    assert!(matches!(e, TraceError::BadLine { line: 2, .. }), "{e:?}");
}

#[test]
fn time_that_goes_back_is_named_in_every_format() {
    let cases = [
        (
            "{\"timestamp\": 10, \"input_length\": 6, \"output_length\": 5}\n{\"timestamp\": 10, \"input_length\": 6, \"output_length\": 5}\n{\"timestamp\": 9, \"input_length\": 6, \"output_length\": 5}\n",
            3,
            "timestamp",
        ),
        (
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:46.6805899,374,44\n",
            3,
            "TIMESTAMP",
        ),
        (
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n7,ChatGPT,472,18,490,Conversation log\n6,GPT-4,472,18,490,API log\n",
            4,
            "Timestamp",
        ),
    ];
    for (text, want_line, want_field) in cases {
        let e = parse(text.as_bytes(), None).unwrap_err();
        match &e {
            TraceError::NotMonotonic { line, field, .. } => {
                assert_eq!((*line, *field), (want_line, want_field));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("sort the rows"), "{e}");
    }
}

#[test]
fn empty_and_request_less_traces_say_so() {
    assert_eq!(parse(b"", None).unwrap_err(), TraceError::Empty);
    assert_eq!(parse(b" \n\r\n", None).unwrap_err(), TraceError::Empty);
    assert_eq!(
        parse(b"TIMESTAMP,ContextTokens,GeneratedTokens\n", None).unwrap_err(),
        TraceError::NoRequests { failed: 0 }
    );
    let failed = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,0,472,Conversation log\n";
    let e = parse(failed.as_bytes(), None).unwrap_err();
    assert_eq!(e, TraceError::NoRequests { failed: 1 });
    assert!(e.to_string().contains("failed"), "{e}");
}

#[test]
fn the_window_and_speed_set_the_planned_times() {
    let t = azure(
        (0..10)
            .map(|i| row(f64::from(i) * 1000.0, 100, 10, &[]))
            .collect(),
    );
    let p = plan(&t, &opts(2.0, Some(5.0), 10.0, 100)).unwrap();
    assert_eq!(
        p.in_window, 5,
        "rows at 2, 3, 4, 5 and 6 s; 7 s is the window's end"
    );
    let rows: Vec<usize> = p.jobs.iter().map(|j| j.row).collect();
    assert_eq!(rows, vec![2, 3, 4, 5, 6]);
    let planned: Vec<f64> = p.jobs.iter().map(|j| j.planned_ms).collect();
    assert_eq!(planned, vec![0.0, 100.0, 200.0, 300.0, 400.0]);
    assert_eq!(p.duration_ms, 400.0);
    assert!(p.notes[0].contains("10× speed"), "{:?}", p.notes);
    // A window reaching past the trace's end says so; one past it all is an error.
    let p = plan(&t, &opts(8.0, Some(60.0), 1.0, 100)).unwrap();
    assert_eq!(p.jobs.len(), 2);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("the trace ends at 9.0 s"))
    );
    assert!(matches!(
        plan(&t, &opts(9.5, None, 1.0, 100)),
        Err(TracePlanError::EmptyWindow { .. })
    ));
    for bad in [
        opts(0.0, None, 0.0, 1),
        opts(0.0, None, f64::NAN, 1),
        opts(-1.0, None, 1.0, 1),
        opts(0.0, Some(0.0), 1.0, 1),
        opts(0.0, None, 1.0, 0),
    ] {
        assert!(plan(&t, &bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_window_over_the_cap_is_sampled_evenly_and_says_so() {
    let n = 23_608;
    let t = azure((0..n).map(|i| row(i as f64 * 10.0, 50, 5, &[])).collect());
    let p = plan(&t, &opts(0.0, None, 1.0, 5_000)).unwrap();
    assert_eq!((p.jobs.len(), p.in_window), (5_000, n));
    assert!(
        p.notes[1].starts_with("sampled 5,000 of 23,608 requests (every 4.7th)"),
        "{:?}",
        p.notes
    );
    let rows: Vec<usize> = p.jobs.iter().map(|j| j.row).collect();
    assert!(rows.windows(2).all(|w| w[0] < w[1]), "distinct, in order");
    // Every tenth of the window keeps a tenth of the sample (± 1).
    for k in 0..10 {
        let (lo, hi) = (k * n / 10, (k + 1) * n / 10);
        let kept = rows.iter().filter(|r| (lo..hi).contains(*r)).count();
        assert!((499..=501).contains(&kept), "tenth {k}: {kept}");
    }
    // The same seed, the same sample; the window that keeps the trace's rate holds ≤ the cap.
    assert_eq!(plan(&t, &opts(0.0, None, 1.0, 5_000)).unwrap().jobs, p.jobs);
    let keep: f64 = p.notes[1]
        .split("shorten the window to ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    let q = plan(&t, &opts(0.0, Some(keep), 1.0, 5_000)).unwrap();
    assert!(
        q.in_window <= 5_000 && q.in_window > 4_990,
        "{}",
        q.in_window
    );
    assert_eq!(q.notes.len(), 1, "not sampled: {:?}", q.notes);
}

#[test]
fn shared_hash_ids_share_their_text_exactly_and_others_differ() {
    let t = mooncake(vec![
        row(0.0, 1024, 10, &[1, 2]),
        row(10.0, 1000, 10, &[1, 3]),
        row(20.0, 512, 10, &[4]),
        row(30.0, 300, 10, &[2]),
    ]);
    let p = whole(&t);
    let prompts: Vec<String> = p.jobs.iter().map(|j| j.prompt()).collect();
    let w: Vec<Vec<&str>> = prompts.iter().map(|s| words(s)).collect();
    let b = BLOCK_TOKENS as usize;
    assert_eq!(w[0][..b], w[1][..b], "hash id 1 is the same text");
    assert_ne!(
        w[0][b..b + 8],
        w[1][b..b + 8],
        "ids 2 and 3 differ in their first words"
    );
    assert_ne!(w[0][..8], w[2][..8], "ids 1 and 4 differ");
    assert_eq!(
        w[3][..],
        w[0][b..b + 300],
        "a shorter block 2 is the start of block 2"
    );
    // Another seed, other text; prompts of formats without ids are all different.
    let other = plan(
        &t,
        &TracePlanOptions {
            seed: 8,
            ..opts(0.0, None, 1.0, 10)
        },
    )
    .unwrap();
    assert_ne!(other.jobs[0].prompt(), prompts[0]);
    let p = whole(&fixture(traces::AZURE));
    let firsts: std::collections::HashSet<String> = p
        .jobs
        .iter()
        .map(|j| words(&j.prompt())[..8].join(" "))
        .collect();
    assert_eq!(firsts.len(), p.jobs.len());
}

#[test]
fn every_prompt_has_its_input_length_in_one_token_words() {
    for name in [traces::MOONCAKE, traces::AZURE, traces::BURSTGPT] {
        for j in &whole(&fixture(name)).jobs {
            let prompt = j.prompt();
            let w = words(&prompt);
            assert_eq!(w.len(), j.input_tokens as usize, "{name} row {}", j.row);
            assert!(
                w.iter().all(
                    |x| (1..=4).contains(&x.len()) && x.bytes().all(|b| b.is_ascii_lowercase())
                ),
                "{name} row {}",
                j.row
            );
            let blocks: u32 = j.blocks.iter().map(|b| b.tokens).sum();
            assert_eq!(blocks, j.input_tokens);
        }
    }
}

#[test]
fn zero_lengths_are_clamped_and_said() {
    let t = mooncake(vec![row(0.0, 0, 0, &[]), row(5.0, 700, 3, &[9])]);
    let p = whole(&t);
    assert_eq!((p.jobs[0].input_tokens, p.jobs[0].output_tokens), (1, 1));
    assert_eq!(words(&p.jobs[0].prompt()).len(), 1);
    let notes = p.notes.join("\n");
    assert!(notes.contains("1 request has 0 input tokens"), "{notes}");
    assert!(notes.contains("1 request has 0 output tokens"), "{notes}");
    assert!(notes.contains("1 request has fewer hash ids"), "{notes}");
    assert!(notes.contains("1 request has no hash ids"), "{notes}");
    assert_eq!(
        p.jobs[1].blocks.len(),
        2,
        "512 of hash id 9, 188 of its own"
    );
}

#[test]
fn a_job_sends_the_prompt_with_the_output_length_held() {
    let p = whole(&fixture(traces::MOONCAKE));
    let template = GenerationParams {
        model: "sim-cache".into(),
        messages: vec![("system".into(), "dropped".into())],
        temperature: Some(0.0),
        ..GenerationParams::default()
    };
    let j = &p.jobs[3];
    let job = j.to_job(&template, Some(Dialect::OpenAiChat));
    assert_eq!(job.planned_ms, Some(j.planned_ms));
    assert_eq!(job.params.messages, vec![("user".to_owned(), j.prompt())]);
    assert_eq!(job.params.max_tokens, j.output_tokens);
    assert!(job.params.ignore_eos);
    assert_eq!(
        (job.params.model.as_str(), job.params.temperature),
        ("sim-cache", Some(0.0))
    );
    assert!(
        !j.to_job(&template, Some(Dialect::Anthropic))
            .params
            .ignore_eos
    );
    assert_eq!(eos_note(Some(Dialect::OpenAiChat)), None);
    assert_eq!(eos_note(None), None);
    assert!(eos_note(Some(Dialect::OllamaNative)).is_some_and(|n| n.contains("ignore_eos")));
}

#[test]
fn the_expected_hit_rate_counts_prefixes_seen_before() {
    let t = mooncake(vec![
        row(0.0, 1024, 1, &[1, 2]),    // 0 of 1024: all new
        row(1.0, 1000, 1, &[1, 3]),    // block 1: 512
        row(2.0, 1024, 1, &[1, 2]),    // the first again: 1024
        row(3.0, 100, 1, &[5]),        // 0
        row(4.0, 1100, 1, &[1, 2, 6]), // 1024
        row(5.0, 300, 1, &[7]),        // 0
        row(6.0, 800, 1, &[7, 8]),     // only the 300 tokens of block 7 seen: 300
        row(7.0, 800, 1, &[7, 8]),     // now all of it: 800
        row(8.0, 512, 1, &[3]),        // id 3 was seen, but not at a prompt's start: 0
    ]);
    let r = whole(&t).prefix_reuse();
    assert_eq!(
        r.prompt_tokens,
        1024 + 1000 + 1024 + 100 + 1100 + 300 + 800 + 800 + 512
    );
    assert_eq!(r.reused_tokens, 512 + 1024 + 1024 + 300 + 800);
    assert_eq!(r.share(), Some(3660.0 / 6660.0));
    // Without the first two requests, the third shares nothing: the hit rate is the plan's.
    let later = &whole(&t).jobs[2..];
    assert_eq!(prefix_reuse(later).reused_tokens, 1024 + 300 + 800);
}

/// The expected reuse is the text's: each prompt's longest common prefix (in words) with any
/// earlier prompt, found by brute force, agrees within the chance that two different blocks'
/// first words coincide.
#[test]
fn the_expected_hit_rate_is_the_prompts_longest_common_prefixes() {
    let p = whole(&fixture(traces::MOONCAKE));
    let prompts: Vec<String> = p.jobs.iter().map(|j| j.prompt()).collect();
    let w: Vec<Vec<&str>> = prompts.iter().map(|s| words(s)).collect();
    let mut lcp_sum = 0;
    for i in 0..w.len() {
        let best = (0..i)
            .map(|k| w[i].iter().zip(&w[k]).take_while(|(a, b)| a == b).count())
            .max()
            .unwrap_or(0);
        lcp_sum += best as u64;
    }
    let r = p.prefix_reuse();
    assert!(lcp_sum >= r.reused_tokens);
    assert!(
        lcp_sum - r.reused_tokens <= r.prompt_tokens / 1000,
        "{lcp_sum} vs {}",
        r.reused_tokens
    );
}

fn tracish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        any::<Vec<u8>>(),
        Just(b"TIMESTAMP,ContextTokens,GeneratedTokens\n".to_vec()),
        Just(b"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n".to_vec()),
        Just(b"2023-11-16 18:15:46.6805900,374,44\n".to_vec()),
        Just(b"9999-12-31 23:59:60.99999999-23:59,4294967295,0\n".to_vec()),
        Just(b"5,ChatGPT,472,0,490,API log\n".to_vec()),
        Just(b"1e308,\"a,b\",18446744073709551616,-0,\n".to_vec()),
        Just(b"{\"timestamp\": 1e300, \"input_length\": 4294967295, \"output_length\": 0, \"hash_ids\": [0, 18446744073709551615]}\n".to_vec()),
        Just(b"{\"timestamp\": -5, \"input_length\": 512.0, \"output_length\": 1, \"hash_ids\": null}\n".to_vec()),
        Just("\u{feff}\r\n\"\n好的，😀".as_bytes().to_vec()),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Nothing a file holds makes the reader or the planner panic.
    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in tracish(),
        format in prop_oneof![Just(None), Just(Some(TraceFormat::Mooncake)), Just(Some(TraceFormat::Azure)), Just(Some(TraceFormat::BurstGpt))],
        start in prop_oneof![Just(0.0), any::<f64>()],
        window in proptest::option::of(any::<f64>()),
        speed in prop_oneof![Just(1.0), any::<f64>()],
        cap in 0usize..50,
    ) {
        let _ = detect(&bytes);
        if let Ok(t) = parse(&bytes, format) {
            prop_assert!(!t.rows.is_empty());
            let o = TracePlanOptions { window_start_s: start, window_s: window, speed, max_requests: cap, seed: 1 };
            if let Ok(p) = plan(&t, &o) {
                let _ = p.prefix_reuse();
                for j in p.jobs.iter().filter(|j| j.input_tokens < 100_000).take(3) {
                    prop_assert_eq!(j.prompt().split(' ').count() - 1, j.input_tokens as usize);
                }
            }
        }
    }
}
