//! A first run that teaches: the article's comparison in one click. The studio runs `model-a`
//! (first token ≈ 0.8 s, then 65 ms a token) and `model-b` (≈ 3.5 s, then 40 ms a token) on the
//! built-in reference endpoint with answers long enough for model-b to finish first, ticks both
//! for comparison (the compare view plays their median streams side by side) and says in one
//! sentence what to look at. The user's own endpoint and scenario panels are left as they were.

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::compare::head_start;
use ttft_core::naming::distinguishing_names;
use ttft_core::report::{Aggregates, Report};
use ttft_core::scenario::{ScenarioConfig, ScenarioKind};

use super::run::run_scenario;
use super::studio::{is_busy, notify, set_compared};
use crate::state::{EndpointConfig, Studio, StudioStateStoreFields};
use ttft_core::run_stats::RunStats;

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
    if is_busy(studio) {
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
            let reports: Vec<&Report> = ids
                .iter()
                .filter_map(|id| s.run(*id).map(|r| r.report.as_ref()))
                .collect();
            let aggs: Vec<Aggregates> = reports.iter().map(|r| r.aggregates()).collect();
            // Named by what differs between them: their models.
            let names = distinguishing_names(&reports);
            match (aggs.as_slice(), names.as_slice()) {
                ([a, b], [na, nb]) => guide_sentence(a, b, [na.as_str(), nb.as_str()]),
                _ => None,
            }
        });
        studio.state.guide().try_set(Some(guide.unwrap_or_else(|| {
            "Compare the two replays below: which screen would you rather read?".to_owned()
        })));
        notify(studio, "the article's comparison is ready below");
    });
}

/// What to look at, in words, from the core's [`head_start`] of the two runs named `names`
/// (the P50 of one request is that request).
fn guide_sentence(a: &Aggregates, b: &Aggregates, names: [&str; 2]) -> Option<String> {
    let h = head_start(a, b)?;
    let s = |ms: f64| format!("{:.1} s", ms / 1e3);
    Some(if h.trades_off() {
        let (first, finish) = (h.first_token, h.finish);
        format!(
            "{} finishes its answer {} sooner ({} against {}), yet {} shows its first words {} earlier ({} against {}): play the two replays below side by side and notice whose text you are already reading while the other screen is still blank.",
            names[finish],
            s(h.finish_by_ms),
            s(h.e2e_ms[finish]),
            s(h.e2e_ms[first]),
            names[first],
            s(h.first_token_by_ms),
            s(h.ttft_ms[first]),
            s(h.ttft_ms[finish])
        )
    } else {
        format!(
            "First token {} for {} against {} for {}, whole answer {} against {}: play the two replays below side by side and notice which one you would rather read.",
            s(h.ttft_ms[0]),
            names[0],
            s(h.ttft_ms[1]),
            names[1],
            s(h.e2e_ms[0]),
            s(h.e2e_ms[1])
        )
    })
}
