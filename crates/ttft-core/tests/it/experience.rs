//! Experience scores (issue #14): Etalon deadline fluidity and the Andes-style reading
//! experience, by hand-worked examples and properties.

use proptest::prelude::*;
use ttft_core::experience::{
    DeadlineConfig, ExperienceConfig, ExperienceConfigError, ExperienceSummary, Fluidity,
    ReadingConfig, ReadingExperience, RequestExperience, fluid_token_rate,
};
use ttft_core::metrics::MetricsConfig;
use ttft_core::record_experience::{reading_arrivals, request_experience, summarize, token_times};
use ttft_core::report::{ReplayPiece, RequestRecord};
use ttft_core::timeline::RequestRecorder;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Token times from a first token and the gaps after it.
fn times(first: f64, gaps: &[f64]) -> Vec<f64> {
    let mut t = first;
    let mut out = vec![first];
    for g in gaps {
        t += g;
        out.push(t);
    }
    out
}

fn cfg(first_token_ms: f64, gap_ms: f64) -> DeadlineConfig {
    DeadlineConfig {
        first_token_ms,
        gap_ms,
        ..DeadlineConfig::default()
    }
}

// ---------------------------------------------------------------- fluidity, worked by hand

#[test]
fn an_early_stall_scores_lower_than_the_same_stall_late() {
    // Etalon's defaults: D_p = 100 ms, D_d = 50 ms. First token at 100 ms (met, slack 0), then
    // 20 gaps: 19 of 40 ms (each met, banking 10 ms of slack) and one stall of 200 ms. Same
    // TTFT, same gaps, so the same TPOT, mean and P90 gap; only the stall's place differs.
    let c = DeadlineConfig::etalon();
    let with_stall_after = |normal: usize| {
        let mut gaps = vec![40.0; normal];
        gaps.push(200.0);
        gaps.extend(vec![40.0; 19 - normal]);
        Fluidity::of(&times(100.0, &gaps), &c).unwrap()
    };
    // Early: no slack yet; 200 > 50 + 0 → ⌊200 / 50⌋ = 4 missed; then 19 met.
    // N = 1 + 4 + 19 = 24, M = 4.
    let early = with_stall_after(0);
    assert_eq!((early.deadlines, early.missed), (24, 4));
    assert!(close(early.miss_rate, 4.0 / 24.0));
    assert!(close(early.fluidity_index, 20.0 / 24.0));
    // Middle: 10 × 40 ms banked 100 ms; 200 > 50 + 100 → ⌊(200 − 100) / 50⌋ = 2 missed; 9 met.
    // N = 1 + 10 + 2 + 9 = 22, M = 2.
    let middle = with_stall_after(10);
    assert_eq!((middle.deadlines, middle.missed), (22, 2));
    // Late: 19 × 40 ms banked 190 ms; 200 ≤ 50 + 190 → met. N = 21, M = 0.
    let late = with_stall_after(19);
    assert_eq!((late.deadlines, late.missed), (21, 0));
    assert_eq!(late.fluidity_index, 1.0);
    assert!(early.fluidity_index < middle.fluidity_index);
    assert!(middle.fluidity_index < late.fluidity_index);
}

#[test]
fn a_late_first_token_misses_every_deadline_that_elapsed() {
    // D_p = 1000, D_d = 50. First token at 1234: 1 + ⌊(1234 − 1000) / 50⌋ = 1 + 4 = 5 missed,
    // slack 0; then two gaps of exactly 50 ms, met. N = 7, M = 5.
    let f = Fluidity::of(&times(1234.0, &[50.0, 50.0]), &cfg(1000.0, 50.0)).unwrap();
    assert_eq!((f.deadlines, f.missed), (7, 5));
    assert!(close(f.miss_rate, 5.0 / 7.0));
    // An early first token banks its slack: at 400 ms it banks 600; a 600 ms stall after it is
    // within 50 + 600. N = 2, M = 0.
    let f = Fluidity::of(&times(400.0, &[600.0]), &cfg(1000.0, 50.0)).unwrap();
    assert_eq!((f.deadlines, f.missed), (2, 0));
}

#[test]
fn tokens_of_one_arrival_each_bank_a_gap_deadline() {
    // As Etalon's client records a chunk of k tokens (one gap, then k − 1 zero gaps).
    // D_p = 0, D_d = 50. Four tokens at 0 (met; three zero gaps bank 150), four at 120:
    // 120 ≤ 50 + 150 → met (slack 80), then three zero gaps. N = 8, M = 0.
    let c = cfg(0.0, 50.0);
    let f = Fluidity::of(&[0.0, 0.0, 0.0, 0.0, 120.0, 120.0, 120.0, 120.0], &c).unwrap();
    assert_eq!((f.deadlines, f.missed), (8, 0));
    // One token each: 120 > 50 → ⌊120 / 50⌋ = 2 missed. N = 3, M = 2.
    let f = Fluidity::of(&[0.0, 120.0], &c).unwrap();
    assert_eq!((f.deadlines, f.missed), (3, 2));
}

#[test]
fn etalons_reset_rule_lets_one_later_token_lower_the_miss_rate() {
    // Pinned on purpose (see the module doc): the schedule restarts at a late token.
    // D_p = 0, D_d = 10. Tokens at 0, 19, 30: 0 met; 19 → ⌊19/10⌋ = 1 missed, reset;
    // 11 → ⌊11/10⌋ = 1 missed. N = 3, M = 2.
    let c = cfg(0.0, 10.0);
    let a = Fluidity::of(&[0.0, 19.0, 30.0], &c).unwrap();
    assert_eq!((a.deadlines, a.missed), (3, 2));
    // Tokens at 0, 20, 30: 20 → 2 missed, reset; 10 ≤ 10 met. N = 4, M = 2.
    let b = Fluidity::of(&[0.0, 20.0, 30.0], &c).unwrap();
    assert_eq!((b.deadlines, b.missed), (4, 2));
    assert!(b.miss_rate < a.miss_rate);
}

#[test]
fn fluid_token_rate_is_the_pace_99_percent_of_requests_keep() {
    // 99 requests with 20 ms gaps and one with 100 ms gaps (first token left out). Uniform
    // gaps g: any deadline below g misses every gap (miss rate 1), g meets them all, so g* = g.
    // P99 (type 7) of 99 × 20 and 1 × 100: h = 0.99 × 99 = 98.01 → 20 + 0.01 × 80 = 20.8 ms,
    // so 1000 / 20.8 = 48.08 tokens/s.
    let c = DeadlineConfig::default();
    let mut requests: Vec<RequestExperience> = (0..99)
        .map(|_| RequestExperience {
            fluidity: Fluidity::of(&times(300.0, &[20.0; 10]), &c),
            reading: None,
        })
        .collect();
    requests.push(RequestExperience {
        fluidity: Fluidity::of(&times(300.0, &[100.0; 10]), &c),
        reading: None,
    });
    let g = requests[0].fluidity.unwrap().fluid_gap_ms.unwrap();
    assert!((20.0..=20.002).contains(&g), "{g}");
    let s = ExperienceSummary::of(&requests, &c);
    assert_eq!((s.fluidity_requests, s.fluid_requests), (100, 100));
    let rate = s.fluid_token_rate.unwrap();
    assert!((rate - 1000.0 / 20.8).abs() < 0.01, "{rate}");
    assert_eq!(s.fluidity_p99_miss_rate, Some(0.0));
    assert_eq!(s.reading_requests, 0);
    assert_eq!(s.qoe_p50, None);
    assert_eq!(fluid_token_rate(&[], 0.99), None);
}

#[test]
fn a_stall_needs_a_looser_gap_deadline_to_stay_fluid() {
    // 19 gaps of 20 ms, then one of 200 ms (first token left out). Below D = 20 every gap
    // misses. With D ≥ 20 the 19 gaps are met, banking 19 (D − 20), and the stall misses
    // m = ⌊(200 − 19 (D − 20)) / D⌋ = ⌊580 / D⌋ − 19 deadlines (none from D = 29 on). The miss
    // rate m / (19 + m) stays ≤ 0.1 while m ≤ 2, i.e. 580 / D < 22: g* = 580 / 22 ≈ 26.36 ms,
    // not the 20 ms of every other gap.
    let mut gaps = vec![20.0; 19];
    gaps.push(200.0);
    let f = Fluidity::of(&times(300.0, &gaps), &DeadlineConfig::default()).unwrap();
    let g = f.fluid_gap_ms.unwrap();
    assert!((580.0 / 22.0..=580.0 / 22.0 + 0.002).contains(&g), "{g}");
}

#[test]
fn no_tokens_no_score_and_one_token_has_no_gap_to_judge() {
    let c = DeadlineConfig::default();
    assert_eq!(Fluidity::of(&[], &c), None);
    assert_eq!(Fluidity::of(&[f64::NAN], &c), None);
    let one = Fluidity::of(&[500.0], &c).unwrap();
    assert_eq!((one.deadlines, one.missed, one.fluid_gap_ms), (1, 0, None));
    // Every token in one arrival: no cadence either.
    let burst = Fluidity::of(&[700.0; 5], &c).unwrap();
    assert_eq!(burst.fluid_gap_ms, None);
}

// ---------------------------------------------------------------- reading, worked by hand

/// One word per arrival: `n` words, the first at `first`, then one every `every` ms.
fn words(n: usize, first: f64, every: f64) -> Vec<(f64, String)> {
    (0..n)
        .map(|i| (first + every * i as f64, "word ".to_owned()))
        .collect()
}

fn read(arrivals: &[(f64, String)], cfg: &ReadingConfig) -> ReadingExperience {
    let a: Vec<(f64, &str)> = arrivals.iter().map(|(t, s)| (*t, s.as_str())).collect();
    ReadingExperience::of(&a, cfg).unwrap()
}

#[test]
fn a_stream_faster_than_reading_has_full_qoe_and_no_waits() {
    // 4 words/s: 250 ms a word. 20 words from 500 ms, one every 50 ms: the reader is never
    // caught up, reading from 500 to 500 + 20 × 250 = 5500. Expected: from T_e = 1000 to
    // 1000 + 5000 = 6000. R(t) = t − 500 ≥ E(t) = t − 1000 throughout, so QoE = 1.
    let r = read(&words(20, 500.0, 50.0), &ReadingConfig::default());
    assert!(close(r.qoe, 1.0), "{}", r.qoe);
    assert_eq!((r.waits, r.wait_total_ms, r.wait_longest_ms), (0, 0.0, 0.0));
    assert_eq!(r.idle_ms, 0.0);
    assert!(close(r.reading_ms, 5000.0));
    assert!(close(r.read_by_ms, 5500.0));
    assert!(close(r.expected_by_ms, 6000.0));
    assert_eq!((r.words, r.cjk_chars), (20, 0));
}

#[test]
fn a_long_ttft_lowers_qoe() {
    // The same stream starting at 3000 ms, 2 s after T_e. L = 5000, window [0, 6000]:
    // ∫ min(R, E) = ∫_3000^6000 (t − 3000) dt = 3000² / 2 = 4.5e6; ∫ E = 5000² / 2 = 12.5e6;
    // QoE = 0.36 = ((L − Δ) / L)². No reader waits: waiting for the first text is the TTFT.
    let r = read(&words(20, 3000.0, 50.0), &ReadingConfig::default());
    assert!(close(r.qoe, 0.36), "{}", r.qoe);
    assert_eq!(r.waits, 0);
    let on_time = read(&words(20, 1000.0, 50.0), &ReadingConfig::default());
    assert!(close(on_time.qoe, 1.0));
}

#[test]
fn a_stall_mid_answer_makes_one_wait_once_the_reader_catches_up() {
    // Words 1–10 at 1000, 1050, …, 1450; words 11–20 at 6000, …, 6450. The reader reads the
    // first ten from 1000 to 3500, catches up, and waits until 6000: one wait of 2500 ms.
    // Then reads 6000–8500.
    let mut a = words(10, 1000.0, 50.0);
    a.extend(words(10, 6000.0, 50.0));
    let r = read(&a, &ReadingConfig::default());
    assert_eq!(r.waits, 1);
    assert!(close(r.wait_total_ms, 2500.0));
    assert!(close(r.wait_longest_ms, 2500.0));
    assert!(close(r.idle_ms, 2500.0));
    assert!(close(r.read_by_ms, 8500.0));
    // QoE over [0, 6000]: R = E on [1000, 3500] (2500² / 2 = 3.125e6), then R = 2500 ≤ E on
    // [3500, 6000] (2500 × 2500 = 6.25e6): 9.375e6 / 12.5e6 = 0.75.
    assert!(close(r.qoe, 0.75), "{}", r.qoe);
    // The curves behind it.
    let arrivals: Vec<(f64, &str)> = a.iter().map(|(t, s)| (*t, s.as_str())).collect();
    let c = ReadingExperience::curves(&arrivals, &ReadingConfig::default()).unwrap();
    assert_eq!(
        c.expected,
        vec![(0.0, 0.0), (1000.0, 0.0), (6000.0, 5000.0)]
    );
    assert_eq!(
        c.readable,
        vec![
            (0.0, 0.0),
            (1000.0, 0.0),
            (3500.0, 2500.0),
            (6000.0, 2500.0),
            (8500.0, 5000.0)
        ]
    );
    assert_eq!(c.delivered.first(), Some(&(0.0, 0.0)));
    assert_eq!(c.delivered.last(), Some(&(6450.0, 5000.0)));
    // The wait, where a chart marks it: the flat step of `readable`.
    assert_eq!(c.waits, vec![(3500.0, 6000.0, 2500.0)]);
    let patient = ReadingConfig {
        min_wait_ms: 3000.0,
        ..ReadingConfig::default()
    };
    let c = ReadingExperience::curves(&arrivals, &patient).unwrap();
    assert!(c.waits.is_empty(), "a wait under min_wait_ms is not marked");
}

#[test]
fn an_early_reading_stall_costs_more_than_a_late_one() {
    // Both: 20 words on time, one 2500 ms wait. Early: 2 words at 1000, 1050, 18 from 4000.
    // Read 1000–1500, wait to 4000, read 4000–8500. ∫ min(R, E) over [0, 6000]:
    // [1000, 1500] R = E: 500² / 2 = 0.125e6; [1500, 4000] R = 500: 1.25e6;
    // [4000, 6000] R = 500 → 2500 (below E): 3e6. Total 4.375e6 / 12.5e6 = 0.35.
    let mut early = words(2, 1000.0, 50.0);
    early.extend(words(18, 4000.0, 50.0));
    let early = read(&early, &ReadingConfig::default());
    // Late: 18 words from 1000, 2 at 8000. Read 1000–5500, wait to 8000.
    // [1000, 5500] R = E: 4500² / 2 = 10.125e6; [5500, 6000] R = 4500: 2.25e6.
    // Total 12.375e6 / 12.5e6 = 0.99.
    let mut late = words(18, 1000.0, 50.0);
    late.extend(words(2, 8000.0, 50.0));
    let late = read(&late, &ReadingConfig::default());
    assert!(close(early.qoe, 0.35), "{}", early.qoe);
    assert!(close(late.qoe, 0.99), "{}", late.qoe);
    assert_eq!((early.waits, late.waits), (1, 1));
    assert!(close(early.wait_total_ms, 2500.0) && close(late.wait_total_ms, 2500.0));
}

#[test]
fn cjk_counts_by_characters_and_words_by_their_first_letter() {
    let c = ReadingConfig::default();
    let of = |pieces: &[&str]| {
        let a: Vec<(f64, &str)> = pieces.iter().map(|p| (1000.0, *p)).collect();
        ReadingExperience::of(&a, &c).unwrap()
    };
    // 4 Han characters (the full-width comma reads as nothing) at 6/s: 4 × 166.67 ms.
    let r = of(&["你好，", "世界"]);
    assert_eq!((r.words, r.cjk_chars), (0, 4));
    assert!(close(r.reading_ms, 4000.0 / 6.0));
    // Kana too; Latin words in CJK text count as words: 1 word + 2 characters.
    assert_eq!(of(&["こんにちは"]).cjk_chars, 5);
    let r = of(&["Rust 很快"]);
    assert_eq!((r.words, r.cjk_chars), (1, 2));
    assert!(close(r.reading_ms, 250.0 + 2000.0 / 6.0));
    // A word split across pieces counts once; bullets and emphasis marks cost nothing.
    assert_eq!(of(&["Hel", "lo wor", "ld"]).words, 2);
    assert_eq!(of(&["- **bold** text"]).words, 2);
    // Nothing readable: no score.
    assert_eq!(ReadingExperience::of(&[(1000.0, " — ")], &c), None);
    assert_eq!(ReadingExperience::of(&[], &c), None);
}

#[test]
fn an_arrival_with_nothing_to_read_does_not_end_a_wait() {
    // "a" read 1000–1250; whitespace at 2000 is nothing new; "b" at 3000: one wait of 1750.
    let r = read(
        &[
            (1000.0, "a ".to_owned()),
            (2000.0, "  ".to_owned()),
            (3000.0, "b".to_owned()),
        ],
        &ReadingConfig::default(),
    );
    assert_eq!(r.waits, 1);
    assert!(close(r.wait_total_ms, 1750.0));
}

#[test]
fn between_listening_and_reading_speed_a_listener_is_served_and_a_reader_waits() {
    // 12 words from 500 ms, one every 333⅓ ms (3 words/s). A listener at 2.5 words/s (400 ms a
    // word) always has the next word: QoE 1, no idle time. A reader at 4 words/s finishes each
    // word 83⅓ ms before the next: 11 short idle moments, none a counted wait (< 250 ms), and
    // falls behind the expected pace (E = t − 1000): at word i the reader has 250 (i + 1)
    // against 333⅓ i − 250 expected, behind from i = 7 on.
    let a = words(12, 500.0, 1000.0 / 3.0);
    let speech = read(&a, &ReadingConfig::speech());
    assert!(close(speech.qoe, 1.0), "{}", speech.qoe);
    assert_eq!(speech.idle_ms, 0.0);
    let reading = read(&a, &ReadingConfig::default());
    assert_eq!(reading.waits, 0);
    assert!((reading.idle_ms - 11.0 * 250.0 / 3.0).abs() < 1e-6);
    assert!(reading.qoe < 1.0);
    // With every idle moment counted, the same 11 become waits.
    let every = ReadingConfig {
        min_wait_ms: 0.0,
        ..ReadingConfig::default()
    };
    assert_eq!(read(&a, &every).waits, 11);
}

// ---------------------------------------------------------------- settings

#[test]
fn settings_validate_and_partial_settings_take_the_defaults() {
    let bad = DeadlineConfig {
        gap_ms: 0.0,
        ..DeadlineConfig::default()
    };
    assert_eq!(bad.validate(), Err(ExperienceConfigError::GapDeadline(0.0)));
    assert!(DeadlineConfig::default().validate().is_ok());
    assert!(DeadlineConfig::etalon().validate().is_ok());
    // An unusable setting is replaced by its default, never a panic or NaN.
    let t = times(400.0, &[60.0, 60.0]);
    assert_eq!(
        Fluidity::of(&t, &bad),
        Fluidity::of(&t, &DeadlineConfig::default())
    );
    let slow = ReadingConfig {
        words_per_s: -1.0,
        ..ReadingConfig::default()
    };
    assert_eq!(
        slow.validate(),
        Err(ExperienceConfigError::ReadingSpeed(-1.0))
    );
    assert!(ReadingConfig::speech().validate().is_ok());
    let c: ExperienceConfig = serde_json::from_str(r#"{"reading": {"words_per_s": 5}}"#).unwrap();
    assert_eq!(c.reading.words_per_s, 5.0);
    assert_eq!(
        c.reading.cjk_chars_per_s,
        ReadingConfig::default().cjk_chars_per_s
    );
    assert_eq!(c.deadlines, DeadlineConfig::default());
    let back: ExperienceConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
}

// ---------------------------------------------------------------- adapters from a record

/// A single-choice chat stream with vLLM continuous usage: "Hello" (1 token) at 100 ms,
/// " wonderful world" (3 tokens so far) at 200, "!" (4) at 300, the finish at 301.
fn usage_record() -> RequestRecord {
    let chunk = |content: &str, finish: &str, n: u64| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}},\"finish_reason\":{finish}}}],\"usage\":{{\"prompt_tokens\":4,\"completion_tokens\":{n},\"total_tokens\":{}}}}}\n\n",
            n + 4
        )
    };
    let mut r = RequestRecorder::new(0.0, None, None);
    r.on_headers(1.0, 200, Some("text/event-stream"));
    r.on_read(100.0, chunk("Hello", "null", 1).as_bytes());
    r.on_read(200.0, chunk(" wonderful world", "null", 3).as_bytes());
    r.on_read(300.0, chunk("!", "null", 4).as_bytes());
    r.on_read(
        301.0,
        (chunk("", "\"stop\"", 4) + "data: [DONE]\n\n").as_bytes(),
    );
    let tl = r.finish(301.0);
    RequestRecord::from_timeline(0, "c=1".into(), None, &tl, &MetricsConfig::default())
}

#[test]
fn token_times_follow_the_servers_counts_with_or_without_replay() {
    let rec = usage_record();
    assert_eq!(rec.metrics.gap_tokens, vec![Some(2), Some(1)]);
    // The read at 200 carried 2 tokens: both at 200, as Etalon records a chunk.
    assert_eq!(token_times(&rec), vec![100.0, 200.0, 200.0, 300.0]);
    // A share link without this request's replay: the same from TTFT and gaps.
    let mut bare = rec.clone();
    bare.replay.clear();
    assert_eq!(token_times(&bare), vec![100.0, 200.0, 200.0, 300.0]);
    let e = request_experience(&rec, &ExperienceConfig::default());
    // 100 ≤ 1000 banks 900; every later gap is within 50 + slack.
    let f = e.fluidity.unwrap();
    assert_eq!((f.deadlines, f.missed), (4, 0));
    // "Hello wonderful world!": 3 words from 100 ms, read by 100 + 750 = 850 ≤ T_e + L.
    let r = e.reading.unwrap();
    assert_eq!(r.words, 3);
    assert!(close(r.qoe, 1.0));
    assert!(close(r.read_by_ms, 850.0));
    // Without replay there is no text to read.
    assert_eq!(
        request_experience(&bare, &ExperienceConfig::default()).reading,
        None
    );
}

#[test]
fn the_reader_reads_the_answer_and_reasoning_only_when_shown() {
    let mut rec = usage_record();
    // A hand-made replay: the server's per-read counts no longer describe it.
    rec.metrics.gap_tokens.clear();
    rec.replay = vec![
        ReplayPiece {
            at_ms: 200.0,
            kind: 'r',
            text: "Let me think".into(),
        },
        ReplayPiece {
            at_ms: 900.0,
            kind: 't',
            text: "search({".into(),
        },
        ReplayPiece {
            at_ms: 1500.0,
            kind: 'a',
            text: "Paris.".into(),
        },
    ];
    let answer = ReadingConfig::default();
    assert_eq!(reading_arrivals(&rec, &answer), vec![(1500.0, "Paris.")]);
    let shown = ReadingConfig {
        read_reasoning: true,
        ..ReadingConfig::default()
    };
    assert_eq!(reading_arrivals(&rec, &shown).len(), 2);
    // Fluidity counts every output piece as a token (the studio's TTFT counts reasoning).
    assert_eq!(token_times(&rec), vec![200.0, 900.0, 1500.0]);
}

#[test]
fn summarize_leaves_out_warm_up_requests() {
    let rec = usage_record();
    let mut warm = rec.clone();
    warm.warmup = true;
    let s = summarize([&rec, &warm], &ExperienceConfig::default());
    assert_eq!((s.fluidity_requests, s.reading_requests), (1, 1));
    assert!(s.qoe_p50.is_some_and(|q| close(q, 1.0)));
    assert!(s.qoe_p10.is_some_and(|q| close(q, 1.0)));
    assert_eq!(s.with_waits, 0);
    assert_eq!(s.wait_longest_ms, None);
}

// ---------------------------------------------------------------- properties

/// First token and gaps in whole milliseconds (exact in f64, so comparisons are exact).
fn token_stream() -> impl Strategy<Value = Vec<f64>> {
    (0u32..3000, proptest::collection::vec(0u32..300, 0..40)).prop_map(|(first, gaps)| {
        let gaps: Vec<f64> = gaps.into_iter().map(f64::from).collect();
        times(f64::from(first), &gaps)
    })
}

fn deadlines() -> impl Strategy<Value = DeadlineConfig> {
    (0u32..2000, 1u32..200).prop_map(|(p, d)| cfg(f64::from(p), f64::from(d)))
}

const PIECES: &[&str] = &[
    "word ",
    "two words ",
    "你好",
    "",
    " ",
    "a",
    "b.",
    "世界！",
    "- ",
];

/// Arrivals at whole milliseconds with pieces of text.
fn text_stream() -> impl Strategy<Value = Vec<(f64, &'static str)>> {
    (
        0u32..4000,
        proptest::collection::vec((0u32..800, 0..PIECES.len()), 0..30),
    )
        .prop_map(|(first, steps)| {
            let mut t = f64::from(first);
            steps
                .into_iter()
                .map(|(gap, i)| {
                    t += f64::from(gap);
                    (t, PIECES[i])
                })
                .collect()
        })
}

fn reading_cfg() -> impl Strategy<Value = ReadingConfig> {
    (1u32..10, 1u32..12, 0u32..3000, 0u32..500).prop_map(|(w, c, te, min)| ReadingConfig {
        words_per_s: f64::from(w),
        cjk_chars_per_s: f64::from(c),
        expected_ttft_ms: f64::from(te),
        min_wait_ms: f64::from(min),
        read_reasoning: false,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Fluidity is a rate: in [0, 1], index + miss rate = 1, at least one deadline per token.
    #[test]
    fn fluidity_is_bounded(t in token_stream(), c in deadlines()) {
        let f = Fluidity::of(&t, &c).unwrap();
        prop_assert!((0.0..=1.0).contains(&f.miss_rate));
        prop_assert!((0.0..=1.0).contains(&f.fluidity_index));
        prop_assert!(close(f.miss_rate + f.fluidity_index, 1.0));
        prop_assert!(f.missed <= f.deadlines);
        prop_assert!(f.deadlines >= t.len() as u64);
        let has_gap = t.windows(2).any(|w| w[1] > w[0]);
        prop_assert_eq!(f.fluid_gap_ms.is_some(), has_gap);
        if let Some(g) = f.fluid_gap_ms {
            prop_assert!(g > 0.0);
        }
    }

    /// A stall (a token and everything after it arriving later) never lowers the miss rate.
    #[test]
    fn a_stall_never_improves_fluidity(
        t in token_stream(), c in deadlines(), at in any::<prop::sample::Index>(), delay in 1u32..2000,
    ) {
        let k = at.index(t.len());
        let mut later = t.clone();
        for x in &mut later[k..] {
            *x += f64::from(delay);
        }
        let (before, after) = (Fluidity::of(&t, &c).unwrap(), Fluidity::of(&later, &c).unwrap());
        prop_assert!(after.miss_rate >= before.miss_rate, "{:?} → {:?}", before, after);
    }

    /// QoE in [0, 1]; the waits add up.
    #[test]
    fn reading_is_bounded(a in text_stream(), c in reading_cfg()) {
        if let Some(r) = ReadingExperience::of(&a, &c) {
            prop_assert!((0.0..=1.0).contains(&r.qoe), "{}", r.qoe);
            prop_assert!(r.wait_longest_ms <= r.wait_total_ms + 1e-9);
            prop_assert!(r.wait_total_ms <= r.idle_ms + 1e-9);
            prop_assert_eq!(r.waits == 0, r.wait_total_ms == 0.0);
            prop_assert!(r.reading_ms > 0.0);
            prop_assert!(r.read_by_ms >= r.reading_ms);
            let curves = ReadingExperience::curves(&a, &c).unwrap();
            prop_assert!(curves.readable.windows(2).all(|w| w[1].0 >= w[0].0 && w[1].1 >= w[0].1));
        }
    }

    /// Delaying one piece (not past the next) or a whole tail never raises QoE.
    #[test]
    fn delaying_text_never_improves_qoe(
        a in text_stream(), c in reading_cfg(), at in any::<prop::sample::Index>(),
        delay in 1u32..3000, tail in any::<bool>(),
    ) {
        prop_assume!(!a.is_empty());
        let k = at.index(a.len());
        let mut later = a.clone();
        if tail {
            for x in &mut later[k..] {
                x.0 += f64::from(delay);
            }
        } else {
            let limit = a.get(k + 1).map_or(f64::INFINITY, |n| n.0);
            later[k].0 = (a[k].0 + f64::from(delay)).min(limit);
        }
        if let (Some(before), Some(after)) = (ReadingExperience::of(&a, &c), ReadingExperience::of(&later, &c)) {
            prop_assert!(after.qoe <= before.qoe + 1e-9, "{} → {}", before.qoe, after.qoe);
            prop_assert!(after.read_by_ms >= before.read_by_ms - 1e-9);
        }
    }

    /// Any times and text, however odd, give an answer or nothing, never a panic or NaN.
    #[test]
    fn odd_input_never_panics(
        t in proptest::collection::vec(any::<f64>(), 0..8),
        texts in proptest::collection::vec(".{0,12}", 0..8),
        dp in any::<f64>(), dd in any::<f64>(), w in any::<f64>(),
    ) {
        let c = DeadlineConfig { first_token_ms: dp, gap_ms: dd, ..DeadlineConfig::default() };
        if let Some(f) = Fluidity::of(&t, &c) {
            prop_assert!((0.0..=1.0).contains(&f.fluidity_index));
        }
        let arrivals: Vec<(f64, &str)> = t.iter().copied().zip(texts.iter().map(String::as_str)).collect();
        let rc = ReadingConfig { words_per_s: w, ..ReadingConfig::default() };
        if let Some(r) = ReadingExperience::of(&arrivals, &rc) {
            prop_assert!((0.0..=1.0).contains(&r.qoe));
        }
        let _ = ReadingExperience::curves(&arrivals, &rc);
    }
}

// ---------------------------------------------------------------- the reader's pace, for replay

#[test]
fn the_reader_pace_reads_in_order_never_ahead_of_delivery() {
    use ttft_core::experience::ReaderPace;
    // 4 words/s: 250 ms a word. "Hello " and "world " arrive at 0, "again" at 1000 ms. The
    // reader reads the first two words over 0–500 ms, waits 500 ms (a counted wait, ≥ 250),
    // then reads "again" over 1000–1250 ms.
    let cfg = ReadingConfig::default();
    let pace =
        ReaderPace::of(&[(0.0, "Hello "), (0.0, "world "), (1000.0, "again")], &cfg).unwrap();
    let read = |t: f64| &pace.text()[..pace.read_bytes_at(t)];
    assert_eq!(read(0.0), "");
    assert_eq!(read(125.0), "Hel", "half of the first piece's 6 bytes");
    assert_eq!(read(250.0), "Hello ");
    assert_eq!(read(600.0), "Hello world ");
    assert_eq!(pace.wait_at(600.0), Some((500.0, 1000.0)));
    assert_eq!(pace.wait_at(400.0), None);
    assert_eq!(pace.delivered_bytes_at(999.0), 12);
    assert_eq!(pace.delivered_bytes_at(1000.0), 17);
    assert_eq!(read(1000.0), "Hello world ", "delivered is not read yet");
    assert_eq!(read(1125.0), "Hello world ag");
    assert_eq!(read(5000.0), "Hello world again");
    assert_eq!(pace.read_by_ms(), 1250.0);
    assert_eq!(pace.waits(), &[(500.0, 1000.0)]);
    // Chinese by characters, 6 a second: "你好" takes 333 ms; halfway the first one is read,
    // and a cut never splits a character.
    let zh = ReaderPace::of(&[(0.0, "你好")], &cfg).unwrap();
    assert_eq!(&zh.text()[..zh.read_bytes_at(1000.0 / 6.0)], "你");
    assert_eq!(&zh.text()[..zh.read_bytes_at(200.0)], "你");
    // Nothing to read, nothing to pace.
    assert!(ReaderPace::of(&[(0.0, " ** ")], &cfg).is_none());
}

proptest! {
    #[test]
    fn the_reader_pace_never_panics_and_never_reads_ahead(
        pieces in proptest::collection::vec((0.0f64..5000.0, "\\PC{0,6}"), 0..20),
        t in -100.0f64..20000.0,
    ) {
        use ttft_core::experience::ReaderPace;
        let arrivals: Vec<(f64, &str)> = pieces.iter().map(|(a, s)| (*a, s.as_str())).collect();
        if let Some(p) = ReaderPace::of(&arrivals, &ReadingConfig::default()) {
            let (r, d) = (p.read_bytes_at(t), p.delivered_bytes_at(t));
            prop_assert!(r <= d, "read {} > delivered {}", r, d);
            prop_assert!(p.text().is_char_boundary(r));
            prop_assert!(p.read_bytes_at(t + 100.0) >= r);
        }
    }
}
