//! The reader and the fluidity deadlines a run's experience figures assume, where the figures
//! are: a preset (a reader, a listener, Etalon's deadlines) or typed values. Applying re-scores
//! the shown run through [`crate::actions::settings::set_experience`] (the core computes every figure)
//! and keeps the settings for new runs; values the core refuses show its reason and change
//! nothing.

use leptos::prelude::*;
use thiserror::Error;
use ttft_core::experience::{
    DeadlineConfig, ExperienceConfig, ExperienceConfigError, ReadingConfig,
};

use crate::actions;
use crate::format::ms;
use crate::state::use_studio;

/// A named starting point for the settings the panel edits, each made of the core's own
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Preset {
    /// A silent reader ([`ReadingConfig::default`]) and the reader's-pace deadlines.
    Reading,
    /// A listener to text read aloud ([`ReadingConfig::speech`]).
    Speech,
    /// A silent reader held to Etalon's own deadlines ([`DeadlineConfig::etalon`]).
    Etalon,
}

impl Preset {
    const ALL: [Self; 3] = [Self::Reading, Self::Speech, Self::Etalon];

    /// The `<option>` value.
    fn id(self) -> &'static str {
        match self {
            Self::Reading => "reading",
            Self::Speech => "speech",
            Self::Etalon => "etalon",
        }
    }

    fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.id() == id)
    }

    /// The preset's reader and deadlines.
    fn settings(self) -> (ReadingConfig, DeadlineConfig) {
        match self {
            Self::Reading => (ReadingConfig::default(), DeadlineConfig::default()),
            Self::Speech => (ReadingConfig::speech(), DeadlineConfig::default()),
            Self::Etalon => (ReadingConfig::default(), DeadlineConfig::etalon()),
        }
    }

    /// What the option says, with the preset's numbers.
    fn label(self) -> String {
        let (r, d) = self.settings();
        match self {
            Self::Reading => format!("reading ({} words/s)", r.words_per_s),
            Self::Speech => format!("speech ({} words/s)", r.words_per_s),
            Self::Etalon => format!(
                "Etalon deadlines ({}, then {})",
                ms(Some(d.first_token_ms)),
                ms(Some(d.gap_ms))
            ),
        }
    }

    /// The preset whose four edited values `cfg` has, if any.
    fn of(cfg: &ExperienceConfig) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|p| Typed::of_settings(p.settings()) == Typed::of(cfg))
    }
}

/// The four values the panel edits, as typed.
#[derive(Debug, Clone, PartialEq)]
struct Typed {
    words_per_s: String,
    cjk_chars_per_s: String,
    first_token_ms: String,
    gap_ms: String,
}

impl Typed {
    fn of(cfg: &ExperienceConfig) -> Self {
        Self::of_settings((cfg.reading, cfg.deadlines))
    }

    fn of_settings((r, d): (ReadingConfig, DeadlineConfig)) -> Self {
        Self {
            words_per_s: r.words_per_s.to_string(),
            cjk_chars_per_s: r.cjk_chars_per_s.to_string(),
            first_token_ms: d.first_token_ms.to_string(),
            gap_ms: d.gap_ms.to_string(),
        }
    }
}

/// Why typed values cannot score a run.
#[derive(Debug, Clone, Copy, Error, PartialEq)]
enum ReaderInputError {
    /// A field holds no number (a browser leaves a number field empty for text).
    #[error("{0} must be a number")]
    NotANumber(&'static str),
    /// The core refuses the value.
    #[error(transparent)]
    Refused(#[from] ExperienceConfigError),
}

fn number(text: &str, what: &'static str) -> Result<f64, ReaderInputError> {
    text.trim()
        .parse()
        .map_err(|_| ReaderInputError::NotANumber(what))
}

/// `base` with the four typed values in place (the settings the panel does not show kept).
fn settings_of(
    base: ExperienceConfig,
    words: &str,
    cjk: &str,
    first_token: &str,
    gap: &str,
) -> Result<ExperienceConfig, ReaderInputError> {
    let mut cfg = base;
    cfg.reading.words_per_s = number(words, "words/s")?;
    cfg.reading.cjk_chars_per_s = number(cjk, "CJK characters/s")?;
    cfg.deadlines.first_token_ms = number(first_token, "the first-token deadline")?;
    cfg.deadlines.gap_ms = number(gap, "the gap deadline")?;
    Ok(cfg)
}

/// One number field of the panel.
#[component]
fn NumberField(
    /// What it is.
    label: &'static str,
    /// What it means (the tooltip).
    hint: &'static str,
    /// `data-testid`.
    testid: &'static str,
    /// The text typed.
    value: RwSignal<String>,
    /// Called on Enter.
    on_enter: Callback<()>,
) -> impl IntoView {
    view! {
        <label class="inline" title=hint>{label}
            <input type="number" step="any" min="0" data-testid=testid bind:value=value
                on:keydown=move |ev| if ev.key() == "Enter" { on_enter.run(()) } />
        </label>
    }
}

/// The reader and deadlines of the shown run's experience figures, to change: a preset applies
/// at once, typed values on Apply; either re-scores the run and is kept for new runs.
#[component]
pub fn ReaderSettings(
    /// The settings the run is scored with.
    config: ExperienceConfig,
    /// The run's experience figures are the original run's, carried by a share link that
    /// sampled its detail: they cannot be scored again here.
    carried: bool,
) -> impl IntoView {
    let studio = use_studio();
    let typed = Typed::of(&config);
    let words = RwSignal::new(typed.words_per_s);
    let cjk = RwSignal::new(typed.cjk_chars_per_s);
    let first_token = RwSignal::new(typed.first_token_ms);
    let gap = RwSignal::new(typed.gap_ms);
    let error = RwSignal::new(None::<ReaderInputError>);
    let apply = Callback::new(move |()| {
        let applied = settings_of(
            config,
            &words.get_untracked(),
            &cjk.get_untracked(),
            &first_token.get_untracked(),
            &gap.get_untracked(),
        )
        .and_then(|cfg| Ok(actions::settings::set_experience(studio, cfg)?));
        error.set(applied.err());
    });
    let pick = move |id: String| {
        if let Some(p) = Preset::from_id(&id) {
            let t = Typed::of_settings(p.settings());
            words.set(t.words_per_s);
            cjk.set(t.cjk_chars_per_s);
            first_token.set(t.first_token_ms);
            gap.set(t.gap_ms);
            apply.run(());
        }
    };
    let current = Preset::of(&config);
    let sentence = format!(
        "Scored for a reader at {} words/s ({} CJK characters/s) expecting the first word by {}; fluidity deadlines: the first token by {}, then one every {}.",
        config.reading.words_per_s,
        config.reading.cjk_chars_per_s,
        ms(Some(config.reading.expected_ttft_ms)),
        ms(Some(config.deadlines.first_token_ms)),
        ms(Some(config.deadlines.gap_ms)),
    );
    if carried {
        return view! {
            <section class="reader-settings" data-testid="reader-settings">
                <p class="muted" data-testid="reader-sentence">{sentence}" This link carries its run's scores (its detail is sampled), so they cannot be scored again with another reader here."</p>
            </section>
        }
        .into_any();
    }
    view! {
        <section class="reader-settings" data-testid="reader-settings">
            <p class="muted" data-testid="reader-sentence">{sentence}</p>
            <div class="reader-edit">
                <select data-testid="reader-preset" aria-label="who reads the stream" title="Who reads the stream: the reading figures, the reading chart and the replay's pace follow"
                    on:change=move |ev| pick(event_target_value(&ev))>
                    {Preset::ALL.into_iter().map(|p| view! {
                        <option value=p.id() selected=current == Some(p)>{p.label()}</option>
                    }).collect_view()}
                    <option value="" selected=current.is_none()>"your own"</option>
                </select>
                <NumberField label="words/s" testid="reader-words" value=words on_enter=apply
                    hint="Words a reader gets through per second (text written with spaces)" />
                <NumberField label="CJK chars/s" testid="reader-cjk" value=cjk on_enter=apply
                    hint="Chinese and Japanese characters read per second" />
                <NumberField label="first token ms" testid="reader-first-token" value=first_token on_enter=apply
                    hint="Fluidity: the deadline of the first token (D_p, ms from sending)" />
                <NumberField label="gap ms" testid="reader-gap" value=gap on_enter=apply
                    hint="Fluidity: the deadline of each later token after the one before it (D_d)" />
                <button data-testid="reader-apply" on:click=move |_| apply.run(())>"Apply"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="error" data-testid="reader-error">{e.to_string()}</p> })}
        </section>
    }
    .into_any()
}
