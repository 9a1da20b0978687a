//! A first run that teaches: the article's comparison in one click. The studio runs `model-a`
//! (first token ≈ 0.8 s, then 65 ms a token) against `model-b` (≈ 3.5 s, then 40 ms a token)
//! as one interleaved A/B run on the built-in reference endpoint, with answers long enough for
//! model-b to finish first, opens the comparison of the two arms (their median streams played
//! side by side) and says in one sentence what to look at, each difference with its interval,
//! none claimed that cannot be told from noise (#29). The user's own endpoint and scenario
//! panels are left as they were.

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::compare::compare_reports;
use ttft_core::compare::lesson::first_words_and_finish;
use ttft_core::differences::Confidence;
use ttft_core::naming::distinguishing_names;
use ttft_core::report::Report;
use ttft_core::scenario::{Arm, ScenarioConfig, ScenarioKind};

use super::run::run_repeats;
use super::studio::{is_busy, notify};
use crate::state::{EndpointConfig, Studio, StudioStateStoreFields};

/// The article's two models on the reference endpoint.
pub const ARTICLE_MODELS: [&str; 2] = ["model-a", "model-b"];
/// Answer length: past the crossover (token ≈ 109, where model-b's faster decoding has made up
/// its later start), so model-b finishes ≈ 1.7–2.1 s first while model-a is read ≈ 2.7 s first.
pub const ARTICLE_ANSWER_TOKENS: u32 = 160;
/// Requests per model. Each pair's differences point the same way (the models are
/// deterministic on the server), so the sign test's p-value is 2⁻⁸ with 9 pairs: small enough
/// to be told from noise after Holm's correction over the table (8 pairs only just are), and
/// the intervals of TTFT (≈ 60 ms wide) and E2E (≈ 0.7 s) are narrow beside the differences.
pub const ARTICLE_REQUESTS: u32 = 9;
/// One request of each model in flight: each model's engine serves one stream at a time, but
/// for the moments a model's next request starts while its last one still decodes (that
/// prefill stalls it ≈ 0.7 s on model-a; never by enough to turn a pair around).
pub const ARTICLE_CONCURRENCY: u32 = 2;
/// How long the tour takes, measured: ≈ 11 s a pair.
pub const ARTICLE_DURATION: &str = "about 100 s";

/// The A/B run both models make: a plain chat answer of [`ARTICLE_ANSWER_TOKENS`] tokens, A
/// and B interleaved.
pub fn article_scenario() -> ScenarioConfig {
    ScenarioConfig {
        kind: ScenarioKind::Chat,
        max_tokens: ARTICLE_ANSWER_TOKENS,
        requests: ARTICLE_REQUESTS,
        concurrency: ARTICLE_CONCURRENCY,
        warmup: 0,
        arms: ARTICLE_MODELS
            .iter()
            .map(|m| Arm {
                model: (*m).to_owned(),
                ..Arm::default()
            })
            .collect(),
        ..ScenarioConfig::default()
    }
}

/// Runs the article's comparison (nothing starts while another run is in progress): one A/B
/// run of `model-a` and `model-b`, whose two arms are then compared and the guide says what to
/// look at. A cancelled run is compared on what ran, and the guide says what that tells.
pub fn start_article_comparison(studio: Studio) {
    if is_busy(studio) {
        return notify(
            studio,
            "a run is in progress: wait for it or cancel it first",
        );
    }
    studio.state.guide().set(None);
    spawn_local(async move {
        notify(
            studio,
            format!(
                "the article's comparison: {} against {}, {ARTICLE_REQUESTS} answers of {ARTICLE_ANSWER_TOKENS} tokens from each, interleaved ({ARTICLE_DURATION})",
                ARTICLE_MODELS[0], ARTICLE_MODELS[1]
            ),
        );
        let endpoint = EndpointConfig {
            base_url: String::new(),
            model: ARTICLE_MODELS[0].to_owned(),
            ..EndpointConfig::default()
        };
        let ids = run_repeats(studio, endpoint, article_scenario()).await;
        if ids.len() != 2 {
            return;
        }
        let guide = studio.state.with_untracked(|s| {
            let reports: Vec<&Report> = ids
                .iter()
                .filter_map(|id| s.run(*id).map(|r| r.report.as_ref()))
                .collect();
            // Named by what differs between them: their models.
            let names = distinguishing_names(&reports);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let (_, _, cmp) = compare_reports(&names, &reports, Confidence::default());
            guide_sentence(&names, &cmp)
        });
        studio.state.guide().try_set(Some(guide.unwrap_or_else(|| {
            "Compare the two replays below: which screen would you rather read?".to_owned()
        })));
        notify(studio, "the article's comparison is ready below");
    });
}

/// What to look at, in words: the core's sentence of who shows the first words first and who
/// finishes first, each with its interval ([`first_words_and_finish`]), then what to notice in
/// the replays.
fn guide_sentence(names: &[&str], cmp: &ttft_core::compare::Comparison) -> Option<String> {
    let said = first_words_and_finish(names, &cmp.rows, cmp.confidence)?;
    Some(if said.trade_off {
        format!(
            "{}: play the two replays below side by side and notice whose text you are already reading while the other screen is still blank.",
            said.text
        )
    } else {
        format!(
            "{}. Play the two replays below side by side and notice which one you would rather read.",
            said.text
        )
    })
}
