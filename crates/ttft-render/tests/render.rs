//! The surface's markdown and release pacing, without a screen.

use proptest::prelude::*;
use ttft_render::release::gaps_ms;
use ttft_render::{
    Arrival, FRAME_MS, Pacing, RenderMode, Smoothing, SmoothingError, Strategy, Surface, Update,
    release, render_html,
};

/// Blocks a chat answer is made of; `i` varies their text.
fn block(kind: u8, i: usize) -> String {
    match kind % 8 {
        0 => format!("Paragraph {i} with *emphasis*, `code` and a [link](https://x.test/{i})."),
        1 => format!("## Heading {i}"),
        2 => format!("```rust\nfn f{i}() {{\n\n    let x = {i};\n}}\n```"),
        3 => format!("- item {i}\n- item {}\n  continued", i + 1),
        4 => format!("| a | b |\n|---|---|\n| {i} | ~~{}~~ |", i * 2),
        5 => format!("> quoted {i}\n> still quoted"),
        6 => format!("1. first {i}\n2. second\n\n   with a second paragraph"),
        _ => "- [x] done\n- [ ] open".to_owned(),
    }
}

/// An answer of `kinds` blocks, separated by blank lines.
fn answer(kinds: &[u8]) -> String {
    kinds
        .iter()
        .enumerate()
        .map(|(i, k)| block(*k, i))
        .collect::<Vec<_>>()
        .join("\n\n")
        + "\n"
}

/// `text` cut into chunks of the given sizes in characters (cycled), never inside a character.
fn chunks(text: &str, sizes: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    for n in sizes.iter().cycle() {
        if at >= chars.len() {
            break;
        }
        let end = (at + (*n).max(1)).min(chars.len());
        out.push(chars[at..end].iter().collect());
        at = end;
    }
    out
}

/// The page's HTML after applying `updates` as the app does.
fn applied(updates: &[Update]) -> String {
    let mut closed = String::new();
    let mut rest = String::new();
    for u in updates {
        match u {
            Update::All(html) => rest.clone_from(html),
            Update::Tail { closed: c, tail } => {
                closed.push_str(&c.concat());
                rest.clone_from(tail);
            }
        }
    }
    closed + &rest
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Incremental rendering draws exactly what re-rendering everything draws, after every
    /// chunk, whatever the blocks and however the stream is cut.
    #[test]
    fn incremental_draws_what_rerendering_all_draws(
        kinds in prop::collection::vec(any::<u8>(), 1..14),
        sizes in prop::collection::vec(1usize..40, 1..8),
    ) {
        let text = answer(&kinds);
        let mut all = Surface::new(RenderMode::All);
        let mut inc = Surface::new(RenderMode::Incremental);
        let mut updates = Vec::new();
        for piece in chunks(&text, &sizes) {
            all.push(&piece);
            updates.push(inc.push(&piece));
            prop_assert_eq!(inc.html(), all.html(), "after {:?}", inc.text());
        }
        prop_assert_eq!(applied(&updates), render_html(&text));
    }

    /// Releases never come before their text arrived, keep its order and add up to it.
    #[test]
    fn releases_keep_the_text_and_never_run_ahead(
        gaps in prop::collection::vec(0.0f64..300.0, 1..60),
        lens in prop::collection::vec(0usize..12, 1..60),
        pace in 20.0f64..2000.0,
        prebuffer in 0.0f64..400.0,
    ) {
        let mut t = 50.0;
        let arrivals: Vec<Arrival> = gaps.iter().zip(lens.iter().cycle()).enumerate().map(|(i, (g, n))| {
            t += g;
            Arrival { at_ms: t, text: "é·x".repeat(*n).chars().take(*n + i % 3).collect() }
        }).collect();
        let whole: String = arrivals.iter().map(|a| a.text.as_str()).collect();
        let smoothing = Smoothing { chars_per_s: pace, prebuffer_ms: prebuffer, max_lag_ms: prebuffer + 600.0 };
        for pacing in [
            Pacing::Immediate,
            Pacing::PerFrame { frame_ms: FRAME_MS },
            Pacing::Smoothed { smoothing, frame_ms: FRAME_MS },
        ] {
            let out = release(&arrivals, pacing);
            prop_assert_eq!(out.iter().map(|r| r.text.as_str()).collect::<String>(), whole.clone());
            prop_assert!(out.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
            prop_assert!(out.iter().all(|r| r.at_ms >= r.oldest_arrival_ms));
            if !matches!(pacing, Pacing::Immediate) {
                // No text waits longer than smoothing allows (per frame: one frame).
                let bound = match pacing { Pacing::Smoothed { .. } => prebuffer + 600.0, _ => 0.0 } + FRAME_MS + 1e-9;
                prop_assert!(out.iter().all(|r| r.at_ms - r.oldest_arrival_ms <= bound));
            }
        }
    }
}

#[test]
fn renders_what_chat_answers_use() {
    let html = render_html(&answer(&[1, 2, 4, 7]));
    for needle in [
        "<h2>",
        "<pre><code class=\"language-rust\">",
        "<table>",
        "<del>",
        "type=\"checkbox\"",
    ] {
        assert!(html.contains(needle), "{needle} in {html}");
    }
}

#[test]
fn rerendering_all_parses_the_whole_answer_and_incremental_only_its_tail() {
    // About 2,000 tokens: 220 blocks, streamed four characters at a time.
    let kinds: Vec<u8> = (0..220).map(|i| (i * 5 % 8) as u8).collect();
    let text = answer(&kinds);
    assert!(text.len() > 8_000, "{}", text.len());
    let mut all = Surface::new(RenderMode::All);
    let mut inc = Surface::new(RenderMode::Incremental);
    let (mut all_first, mut inc_max) = (0, 0);
    for (i, piece) in chunks(&text, &[4]).iter().enumerate() {
        all.push(piece);
        inc.push(piece);
        if i == 50 {
            all_first = all.last_parsed_bytes();
        }
        inc_max = inc_max.max(inc.last_parsed_bytes());
    }
    assert_eq!(all.last_parsed_bytes(), text.len());
    assert!(all.last_parsed_bytes() > 30 * all_first);
    let longest_block = (0..8).map(|k| block(k, 219).len()).max().unwrap();
    // A list followed by a list may still be one (loose) list, so they close together: at
    // most three of these blocks at once, whatever the answer's length.
    assert!(
        inc_max <= 3 * longest_block + 8 && inc_max * 20 < text.len(),
        "incremental parsed up to {inc_max} bytes, a block is at most {longest_block}"
    );
}

#[test]
fn per_frame_releases_one_update_per_frame_at_its_end() {
    // Ten chunks 2 ms apart fall into two frames.
    let arrivals: Vec<Arrival> = (0..10)
        .map(|i| Arrival {
            at_ms: 10.0 + 2.0 * f64::from(i),
            text: format!("w{i} "),
        })
        .collect();
    let out = release(&arrivals, Pacing::PerFrame { frame_ms: FRAME_MS });
    assert_eq!(out.len(), 2, "{out:?}");
    assert!((out[0].at_ms - FRAME_MS).abs() < 1e-9);
    assert!((out[1].at_ms - 2.0 * FRAME_MS).abs() < 1e-9);
    assert_eq!(out[0].text, "w0 w1 w2 w3 ");
}

/// `arrivals` smoothed by `smoothing` in 60 Hz frames.
fn smoothed(arrivals: &[Arrival], smoothing: Smoothing) -> Vec<ttft_render::Release> {
    release(
        arrivals,
        Pacing::Smoothed {
            smoothing,
            frame_ms: FRAME_MS,
        },
    )
}

#[test]
fn smoothing_delays_the_first_token_by_its_buffer_and_removes_the_networks_gaps() {
    // A bursty stream: 30 characters every 100 ms (300 characters/s), 5 s long.
    let arrivals: Vec<Arrival> = (0..50)
        .map(|i| Arrival {
            at_ms: 800.0 + 100.0 * f64::from(i),
            text: "abcde fghi".repeat(3),
        })
        .collect();
    let immediate = release(&arrivals, Pacing::Immediate);
    assert!(
        gaps_ms(&immediate)
            .iter()
            .all(|g| (*g - 100.0).abs() < 1e-9)
    );
    let smoothing = Smoothing {
        chars_per_s: 280.0,
        prebuffer_ms: 150.0,
        max_lag_ms: 2_000.0,
    };
    let out = smoothed(&arrivals, smoothing);
    let first_delay = out[0].at_ms - arrivals[0].at_ms;
    assert!(
        first_delay <= smoothing.prebuffer_ms + FRAME_MS,
        "first token delayed {first_delay} ms"
    );
    let worst = gaps_ms(&out).into_iter().fold(0.0, f64::max);
    assert!(
        worst <= 1.01 * FRAME_MS,
        "a {worst} ms pause is left (network: 100 ms)"
    );
    // And the reader gets text at the pace asked: 280 characters/s ± a frame's worth.
    let span_s = (out.last().unwrap().at_ms - out[0].at_ms) / 1e3;
    let rate = 1_500.0 / span_s;
    assert!((rate - 280.0).abs() < 10.0, "{rate} characters/s");
}

#[test]
fn smoothing_never_falls_further_behind_than_asked() {
    // 2,000 characters/s into a 100 characters/s pace: the lag is capped at 300 ms.
    let arrivals: Vec<Arrival> = (0..100)
        .map(|i| Arrival {
            at_ms: 5.0 * f64::from(i),
            text: "0123456789".to_owned(),
        })
        .collect();
    let s = Smoothing {
        chars_per_s: 100.0,
        prebuffer_ms: 0.0,
        max_lag_ms: 300.0,
    };
    let out = smoothed(&arrivals, s);
    let worst = out
        .iter()
        .map(|r| r.at_ms - r.oldest_arrival_ms)
        .fold(0.0, f64::max);
    assert!(worst <= 300.0 + FRAME_MS + 1e-6, "{worst}");
    assert!(worst >= 250.0, "the cap is reached: {worst}");
}

#[test]
fn smoothing_settings_that_cannot_pace_say_what_to_change() {
    assert!(Smoothing::DEFAULT.check().is_ok());
    let bad = |chars_per_s, prebuffer_ms, max_lag_ms| {
        Smoothing {
            chars_per_s,
            prebuffer_ms,
            max_lag_ms,
        }
        .check()
        .unwrap_err()
    };
    assert!(matches!(bad(0.0, 0.0, 10.0), SmoothingError::Pace(_)));
    assert!(matches!(bad(f64::NAN, 0.0, 10.0), SmoothingError::Pace(_)));
    assert!(matches!(
        bad(100.0, -1.0, 10.0),
        SmoothingError::Prebuffer(_)
    ));
    let e = bad(100.0, 200.0, 100.0);
    assert!(e.to_string().contains("at least the buffer"), "{e}");
}

#[test]
fn strategies_have_distinct_ids_and_travel_as_json() {
    let ids: std::collections::BTreeSet<&str> = Strategy::ALL.iter().map(|s| s.id()).collect();
    assert_eq!(ids.len(), 4);
    for s in Strategy::ALL {
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Strategy>(&json).unwrap(), s);
    }
    assert_eq!(Strategy::RerenderAll.mode(), RenderMode::All);
    assert_eq!(Strategy::Incremental.pacing(FRAME_MS), Pacing::Immediate);
}
