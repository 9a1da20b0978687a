//! The settings: the endpoint's (kept on this device with its secrets only when the user opts
//! in), the scenario's, and the reader, deadlines and SLO set a run is scored with. Changing
//! the last two rescores the shown run ([`set_experience`], [`set_slo`]) and holds new runs to
//! them. [`set_confidence`] sets the level every interval is shown at. [`test_connection`] asks
//! the endpoint for its models.
//!
//! The team's opener list (its changes to the default phrases, not secrets) is kept on this
//! device and used for new runs ([`add_opener`], [`remove_opener`]); accepting a house opener a
//! run offered adds it and scores the shown run again through the core
//! ([`accept_house_opener`]).

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::differences::Confidence;
use ttft_core::experience::{ExperienceConfig, ExperienceConfigError};
use ttft_core::openers::{OpenerEditError, OpenerEdits};
use ttft_core::report::Report;
use ttft_core::request::HeaderLineError;
use ttft_core::slo::SloSet;

use crate::browser::fetch::{ModelsError, list_models};
use crate::browser::storage::{self, read_text, write_text};
use crate::state::{EndpointConfig, Shown, Studio, StudioStateStoreFields};

/// Key of the endpoint settings (no secrets in it).
const ENDPOINT: &str = "ttft-studio.endpoint";
/// The API key, kept only when the user opted in.
const KEY: &str = "ttft-studio.key";
/// The extra headers, kept only when the user opted in (as the key).
const HEADERS: &str = "ttft-studio.headers";
/// The team's opener list: its changes to the default phrases.
const OPENERS: &str = "ttft-studio.openers";
/// How the live chat surface draws (`null` = off).
const SURFACE: &str = "ttft-studio.surface";

/// Saved endpoint settings, with the key and the extra headers only if the user opted in.
///
/// Settings saved by older builds held the extra headers' values in the settings entry itself:
/// they are taken out and the entry written again at once, so a secret typed before this build
/// does not stay on the device (kept in the secrets' own entry only if the user had opted in).
pub fn load_endpoint() -> Option<EndpointConfig> {
    let raw = read_text(ENDPOINT)?;
    let mut e: EndpointConfig = serde_json::from_str(&raw).ok()?;
    let legacy_headers = legacy_extra_headers(&raw);
    if e.remember_secrets {
        e.api_key = read_text(KEY).unwrap_or_default();
        e.extra_headers = read_text(HEADERS)
            .or_else(|| legacy_headers.clone())
            .unwrap_or_default();
    }
    if legacy_headers.is_some() {
        save_endpoint(&e);
    }
    Some(e)
}

/// The extra headers an older build wrote into the settings entry, if it did.
fn legacy_extra_headers(raw: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(raw).ok()?;
    v.get("extra_headers")
        .map(|h| h.as_str().unwrap_or_default().to_owned())
}

/// Saves endpoint settings; the key and the extra headers only when `remember_secrets`.
pub fn save_endpoint(e: &EndpointConfig) {
    write_text(
        ENDPOINT,
        Some(&serde_json::to_string(e).unwrap_or_default()),
    );
    for (entry, secret) in [(KEY, &e.api_key), (HEADERS, &e.extra_headers)] {
        let kept = e.remember_secrets && !secret.is_empty();
        write_text(entry, kept.then_some(secret.as_str()));
    }
}

/// Keeps the endpoint and scenario settings on this device whenever they change.
pub fn keep_settings(studio: Studio) {
    Effect::new(move |_| save_endpoint(&studio.endpoint.get()));
    Effect::new(move |_| storage::save_scenario(&studio.scenario.get()));
}

/// Why the endpoint could not be reached for its model list.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConnectionError {
    /// The extra headers are malformed.
    #[error(transparent)]
    Headers(#[from] HeaderLineError),
    /// The model list could not be had.
    #[error(transparent)]
    Models(#[from] ModelsError),
}

/// Asks the endpoint for its models.
pub async fn test_connection(endpoint: EndpointConfig) -> Result<Vec<String>, ConnectionError> {
    let headers = endpoint.secret_headers()?;
    Ok(list_models(&endpoint.effective_base(), &headers).await?)
}

/// Shows and exports every interval at another confidence level, and the advice on requests per
/// side for another difference to detect (brought into range first); kept on this device.
pub fn set_confidence(studio: Studio, confidence: Confidence) {
    let confidence = storage::sane_confidence(confidence);
    storage::save_confidence(&confidence);
    studio.confidence.set(confidence);
}

/// Holds the shown run to another SLO set: its report keeps the set (saved again when stored)
/// and new runs are held to it too.
pub fn set_slo(studio: Studio, set: SloSet) {
    storage::save_slo(&set);
    change_shown_report(studio, |r| r.slo != set, |r| r.slo = set.clone());
}

/// Scores the shown run with another reader and fluidity deadlines: its report keeps them (saved
/// again when stored), every experience figure, the reading chart, an SLO on QoE or fluidity and
/// the replay's reading pace follow, and new runs are scored with them too. Settings the core
/// refuses ([`ExperienceConfig::validate`]) change nothing and are returned.
pub fn set_experience(studio: Studio, cfg: ExperienceConfig) -> Result<(), ExperienceConfigError> {
    cfg.validate()?;
    storage::save_experience(&cfg);
    change_shown_report(studio, |r| r.experience != cfg, |r| r.experience = cfg);
    Ok(())
}

/// The team's opener list as last kept on this device (the defaults when none).
pub fn load_openers() -> OpenerEdits {
    storage::load_setting(OPENERS).unwrap_or_default()
}

/// Adds a phrase to the team's list (a lead-in when it ends in `…`), kept on this device and
/// used for new runs; returns the phrase as kept, or why it cannot be added.
pub fn add_opener(studio: Studio, phrase: &str) -> Result<String, OpenerEditError> {
    let mut edits = studio.openers.get_untracked();
    let kept = edits.add(phrase)?;
    keep_openers(studio, edits);
    Ok(kept)
}

/// Stops skipping a phrase in new runs (an added one is dropped, a default one set aside).
pub fn remove_opener(studio: Studio, phrase: &str) {
    let mut edits = studio.openers.get_untracked();
    edits.remove(phrase);
    keep_openers(studio, edits);
}

/// How the live surface draws, as last chosen on this device (off when never chosen).
pub fn load_surface() -> Option<ttft_render::Strategy> {
    storage::load_setting(SURFACE).flatten()
}

/// Chooses how the live surface draws the next runs' answers (`None` = not at all), kept on
/// this device.
pub fn choose_surface(studio: Studio, strategy: Option<ttft_render::Strategy>) {
    storage::save_setting(SURFACE, &strategy);
    studio.surface.set(strategy);
}

fn keep_openers(studio: Studio, edits: OpenerEdits) {
    storage::save_setting(OPENERS, &edits);
    studio.openers.set(edits);
}

/// Accepts a house opener the shown run offered: the team's list gets it, and the run is
/// scored again with it added to its own list ([`ttft_core::house_openers::accept`]: every
/// request's meaningful first token recomputed by the core from its raw bytes and times), saved
/// again when stored; a notice says what moved.
pub fn accept_house_opener(studio: Studio, phrase: &str) {
    if let Err(e) = add_opener(studio, phrase) {
        super::studio::notify(studio, format!("“{phrase}” was not added: {e}"));
        return;
    }
    let mut done = None;
    change_shown_report(
        studio,
        |_| true,
        |r| done = Some(ttft_core::house_openers::accept(r, phrase)),
    );
    let message = match done {
        Some(Ok(d)) => format!("“{phrase}” is now one of your openers; {}", d.sentence()),
        Some(Err(e)) => format!("“{phrase}” was not added to this run: {e}"),
        None => format!("“{phrase}” is now one of your openers, for new runs"),
    };
    super::studio::notify(studio, message);
}

/// Changes the shown run's report when `differs` says it differs from what `change` makes of it
/// (re-applying a setting the run has changes nothing and redraws nothing), then saves it again
/// when it is stored or being stored.
fn change_shown_report(
    studio: Studio,
    differs: impl Fn(&Report) -> bool,
    change: impl FnOnce(&mut Report),
) {
    let Shown::Run(id) = studio.state.shown().get_untracked() else {
        return;
    };
    let changed = studio
        .state
        .with_untracked(|s| s.run(id).is_some_and(|r| differs(&r.report)));
    if !changed {
        return;
    }
    studio.state.runs().update(|runs| {
        if let Some(r) = runs.iter_mut().find(|r| r.id == id) {
            // Copies the report only while a view still holds it.
            change(Arc::make_mut(&mut r.report));
        }
    });
    super::storage::save_if_stored(studio, id);
}

/// Key of the saturation stop's setting (on unless the user turned it off).
const SATURATION_STOP: &str = "ttft-studio.saturation-stop";

/// Whether open-loop runs stop on their own when the server is past saturation
/// ([`ttft_core::saturation_guard`]); on unless the user turned it off on this device.
pub fn saturation_stop_enabled() -> bool {
    storage::load_setting::<bool>(SATURATION_STOP).unwrap_or(true)
}

/// Turns the saturation stop on or off for new runs, kept on this device.
pub fn set_saturation_stop(on: bool) {
    storage::save_setting(SATURATION_STOP, &on);
}
