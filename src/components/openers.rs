//! Openers a team can teach: the opener list by language ([`OpenerSettings`]: the defaults, the
//! team's own phrases, the defaults it set aside; add and remove), the house openers a run
//! offers with their evidence ([`HouseOpeners`], one click accepts one) and the list a run was
//! measured with ([`RunOpeners`]). The core decides and learns
//! ([`ttft_core::openers`], [`ttft_core::house_openers`]); changes go through
//! [`crate::actions::settings`].

use std::sync::Arc;

use leptos::prelude::*;
use ttft_core::openers::{Language, Learned, ListedPhrase, Origin};
use ttft_core::report::Report;

use crate::actions;
use crate::state::use_studio;

/// The team's opener list, by language, with a box to add a house phrase; kept on this device
/// and used for new runs.
#[component]
pub fn OpenerSettings() -> impl IntoView {
    let studio = use_studio();
    let draft = RwSignal::new(String::new());
    let (error, set_error) = signal(None::<String>);
    let add = move || match actions::settings::add_opener(studio, &draft.get_untracked()) {
        Ok(_) => {
            draft.set(String::new());
            set_error.set(None);
        }
        Err(e) => set_error.set(Some(e.to_string())),
    };
    let changes = move || {
        studio.openers.with(|e| {
            e.describe()
                .unwrap_or_else(|| "the defaults, unchanged".into())
        })
    };
    view! {
        <details class="panel opener-settings" data-testid="opener-settings">
            <summary>"Openers"</summary>
            <p class="muted">"Phrases skipped before the meaningful first token (“Sure!”, “好的，”). A phrase ending in … skips the rest of its sentence. Your list is kept on this device, used for new runs and carried by their reports and share links."</p>
            <p class="muted" data-testid="opener-changes">{changes}</p>
            <div class="opener-add">
                <input data-testid="opener-new" placeholder="Thanks for the details" bind:value=draft
                    on:keydown=move |ev| if ev.key() == "Enter" { add() } />
                <button data-testid="opener-add" on:click=move |_| add()>"Add"</button>
            </div>
            {move || error.get().map(|e| view! { <p class="error" data-testid="opener-error">{e}</p> })}
            <OpenerList language=Language::English />
            <OpenerList language=Language::Chinese />
        </details>
    }
}

/// One language's phrases: standalone, then lead-ins.
#[component]
fn OpenerList(
    /// The language shown.
    language: Language,
) -> impl IntoView {
    let studio = use_studio();
    let listed = Memo::new(move |_| {
        studio.openers.with(|e| {
            e.listed()
                .into_iter()
                .filter(|l| l.language == language)
                .collect::<Vec<_>>()
        })
    });
    let of_kind = move |lead_in: bool| {
        Signal::derive(move || {
            listed.with(|l| l.iter().filter(|p| p.lead_in == lead_in).cloned().collect())
        })
    };
    view! {
        <section class="opener-list" data-testid="opener-list" data-language=language.name()>
            <h4>{language.name()}</h4>
            <PhraseGroup title="Standalone" phrases=of_kind(false) />
            <PhraseGroup title="Lead-ins (skip the rest of the sentence)" phrases=of_kind(true) />
        </section>
    }
}

/// A group of phrases, each with its remove (or restore) button.
#[component]
fn PhraseGroup(
    /// What kind of phrase.
    title: &'static str,
    /// The phrases.
    phrases: Signal<Vec<ListedPhrase>>,
) -> impl IntoView {
    view! {
        <div class="phrase-group">
            <span class="muted">{title}</span>
            <ul class="phrases">
                <For each=move || phrases.get() key=|l| (l.phrase.clone(), l.origin) let:phrase>
                    <Phrase phrase=phrase />
                </For>
            </ul>
        </div>
    }
}

/// One phrase: a default, the team's own, or a default set aside.
#[component]
fn Phrase(
    /// The phrase as listed.
    phrase: ListedPhrase,
) -> impl IntoView {
    let studio = use_studio();
    let origin = match phrase.origin {
        Origin::Default => "default",
        Origin::Added => "added",
        Origin::Removed => "removed",
    };
    let removed = phrase.origin == Origin::Removed;
    let (label, title) = if removed {
        ("restore", "Skip this default phrase again")
    } else {
        ("×", "Stop skipping this phrase in new runs")
    };
    let text = phrase.phrase.clone();
    let toggle = move |_| {
        if removed {
            let _ = actions::settings::add_opener(studio, &text);
        } else {
            actions::settings::remove_opener(studio, &text);
        }
    };
    view! {
        <li class=format!("phrase {origin}") data-testid="opener-phrase" data-origin=origin>
            <span>{phrase.phrase}</span>
            <button class="link" title=title on:click=toggle>{label}</button>
        </li>
    }
}

/// The house openers the run offers (leading clauses that recur while what follows differs),
/// each with its evidence and a button that accepts it; shown only for a run that can be scored
/// again (it kept its raw captures).
#[component]
pub fn HouseOpeners(
    /// The run.
    report: Arc<Report>,
) -> impl IntoView {
    let offers = if ttft_core::house_openers::can_rescore(&report) {
        ttft_core::house_openers::offers(&report)
    } else {
        Vec::new()
    };
    (!offers.is_empty()).then(|| {
        view! {
            <section class="house-openers" data-testid="house-openers">
                <h3>"Openers learned from this run"</h3>
                <p class="muted">"These clauses start many of the run's answers while what follows them differs: your product's boilerplate, on no list yet. Skip one and it joins your openers; this run's meaningful first token is recomputed from its raw bytes and times."</p>
                <ul>{offers.into_iter().map(|offer| view! { <HouseOffer offer=offer /> }).collect_view()}</ul>
            </section>
        }
    })
}

/// One offered house opener with its evidence.
#[component]
fn HouseOffer(
    /// The offer.
    offer: Learned,
) -> impl IntoView {
    let studio = use_studio();
    let phrase = offer.phrase.clone();
    view! {
        <li data-testid="opener-offer" data-phrase=offer.phrase.clone()>
            <q>{offer.example.clone()}</q>" "
            <span class="muted" data-testid="opener-evidence">{offer.evidence()}</span>" "
            <button data-testid="opener-accept" on:click=move |_| actions::settings::accept_house_opener(studio, &phrase)>
                "Skip it as an opener"
            </button>
        </li>
    }
}

/// The opener list a run was measured with, when it is not the defaults (a shared link's
/// reader sees the list its figures were decided with).
#[component]
pub fn RunOpeners(
    /// The run.
    report: Arc<Report>,
) -> impl IntoView {
    report.openers.describe().map(|d| {
        view! {
            <p class="muted" data-testid="run-openers">{format!("Openers: the defaults with {d}.")}</p>
        }
    })
}
