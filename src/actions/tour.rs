//! A first run that teaches: the article's comparison in one click. The studio runs `model-a`
//! (first token ≈ 0.8 s, then 65 ms a token) and `model-b` (≈ 3.5 s, then 40 ms a token) on the
//! built-in reference endpoint with answers long enough for model-b to finish first, ticks both
//! for comparison (the compare view plays their median streams side by side) and says in one
//! sentence what to look at. The user's own endpoint and scenario panels are left as they were.

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::report::Aggregates;
use ttft_core::scenario::{ScenarioConfig, ScenarioKind};

use super::{is_running, notify, run_scenario, set_compared};
use crate::state::{EndpointConfig, Studio, StudioStateStoreFields};

/// The article's two models on the reference endpoint.
pub const ARTICLE_MODELS: [&str; 2] = ["model-a", "model-b"];
/// Answer length: well past the crossover (token ≈ 109, where model-b's faster decoding has
/// made up its later start), so model-b finishes ≈ 2 s first while model-a is read ≈ 2.7 s
/// first.
pub const ARTICLE_ANSWER_TOKENS: u32 = 200;
/// Requests per model, one at a time: a request of its own shows each model's pace (requests
/// sent together wait for each other's prefill), and the two runs take ≈ 25 s.
pub const ARTICLE_REQUESTS: u32 = 1;

/// The scenario both models run: a plain chat answer of [`ARTICLE_ANSWER_TOKENS`] tokens.
pub fn article_scenario() -> ScenarioConfig {
    ScenarioConfig {
        kind: ScenarioKind::Chat,
        max_tokens: ARTICLE_ANSWER_TOKENS,
        requests: ARTICLE_REQUESTS,
        concurrency: 1,
        warmup: 0,
        ..ScenarioConfig::default()
    }
}

/// Runs the article's comparison (nothing starts while another run is in progress): `model-a`,
/// then `model-b`, then both are ticked for comparison and the guide says what to look at. A
/// cancelled run stops the tour; what ran is kept.
pub fn start_article_comparison(studio: Studio) {
    if is_running(studio) {
        return notify(
            studio,
            "a run is in progress: wait for it or cancel it first",
        );
    }
    studio.state.guide().set(None);
    spawn_local(async move {
        let mut ids = Vec::new();
        for model in ARTICLE_MODELS {
            let endpoint = EndpointConfig {
                base_url: String::new(),
                model: model.to_owned(),
                ..EndpointConfig::default()
            };
            notify(
                studio,
                format!(
                    "the article's comparison: {model} ({} of 2), an answer of {ARTICLE_ANSWER_TOKENS} tokens",
                    ids.len() + 1
                ),
            );
            let Some((id, cancelled)) = run_scenario(studio, endpoint, article_scenario()).await
            else {
                return;
            };
            ids.push(id);
            if cancelled {
                return notify(
                    studio,
                    "the article's comparison was cancelled; what ran is kept",
                );
            }
        }
        studio.state.compare().try_set(Vec::new());
        for id in &ids {
            set_compared(studio, *id, true);
        }
        let guide = studio.state.with_untracked(|s| {
            let aggs: Vec<Aggregates> = ids
                .iter()
                .filter_map(|id| s.run(*id).map(|r| r.report.aggregates()))
                .collect();
            match aggs.as_slice() {
                [a, b] => guide_sentence(a, b),
                _ => None,
            }
        });
        studio.state.guide().try_set(Some(guide.unwrap_or_else(|| {
            "Compare the two replays below: which screen would you rather read?".to_owned()
        })));
        notify(studio, "the article's comparison is ready below");
    });
}

/// What to look at, from the two runs' medians (P50 of one request is that request): the run that finishes sooner is not the one
/// whose words arrive first. Formats the core's figures; computes none of its own.
fn guide_sentence(a: &Aggregates, b: &Aggregates) -> Option<String> {
    let (ttft_a, ttft_b) = (a.ttft.as_ref()?.p50, b.ttft.as_ref()?.p50);
    let (e2e_a, e2e_b) = (a.e2e.as_ref()?.p50, b.e2e.as_ref()?.p50);
    let s = |ms: f64| format!("{:.1} s", ms / 1e3);
    let [name_a, name_b] = ARTICLE_MODELS;
    Some(if e2e_b < e2e_a && ttft_a < ttft_b {
        format!(
            "{name_b} finishes its answer {} sooner ({} against {}), yet {name_a} shows its first words {} earlier ({} against {}): play the two replays below side by side and notice whose text you are already reading while the other screen is still blank.",
            s(e2e_a - e2e_b),
            s(e2e_b),
            s(e2e_a),
            s(ttft_b - ttft_a),
            s(ttft_a),
            s(ttft_b)
        )
    } else {
        format!(
            "First token {} for {name_a} against {} for {name_b}, whole answer {} against {}: play the two replays below side by side and notice which one you would rather read.",
            s(ttft_a),
            s(ttft_b),
            s(e2e_a),
            s(e2e_b)
        )
    })
}
