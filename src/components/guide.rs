//! What teaches a new user and frames a shared report: the empty studio's one-click article
//! comparison, the sentence that says what to look at once it ran, and the reader's-view bar a
//! shared link opens with.

use leptos::prelude::*;

use crate::actions;
use crate::actions::tour::{
    ARTICLE_ANSWER_TOKENS, ARTICLE_DURATION, ARTICLE_MODELS, ARTICLE_REQUESTS,
};
use crate::state::{StudioStateStoreFields, use_studio};

/// The empty studio's first step: what the studio is for, and the article's comparison in one
/// click against the built-in reference endpoint.
#[component]
pub fn FirstRun() -> impl IntoView {
    let studio = use_studio();
    let [a, b] = ARTICLE_MODELS;
    view! {
        <div class="first-run" data-testid="empty-report">
            <p>"Total latency lies: a model that starts answering in 0.8 s and then writes 65 ms a token feels faster than one that starts at 3.5 s and writes 40 ms a token, though it finishes later."</p>
            <button class="primary" data-testid="tour-start" disabled=move || actions::studio::is_busy(studio)
                on:click=move |_| actions::tour::start_article_comparison(studio)>
                {format!("See it: run the article's comparison ({ARTICLE_DURATION})")}
            </button>
            <p class="muted">{format!(
                "Runs {a} against {b} on the built-in reference endpoint as one A/B run, their requests interleaved ({ARTICLE_REQUESTS} answers of {ARTICLE_ANSWER_TOKENS} tokens from each, {ARTICLE_DURATION}: enough for every difference to carry its interval), then compares them with both streams replayed side by side. Or configure your own endpoint and scenario on the left and press Run."
            )}</p>
        </div>
    }
}

/// The sentence that says what to look at after the article's comparison ran.
#[component]
pub fn Guide() -> impl IntoView {
    let studio = use_studio();
    move || {
        studio.state.guide().get().map(|g| {
            view! {
                <div class="guide" data-testid="guide">
                    <p>{g}</p>
                    <button data-testid="guide-dismiss" on:click=move |_| actions::studio::dismiss_guide(studio)>"Got it"</button>
                </div>
            }
        })
    }
}

/// Shown in the reader's view (a shared link): the report is all there is on the page until
/// the reader asks for the studio's panels.
#[component]
pub fn ReaderBar() -> impl IntoView {
    let studio = use_studio();
    move || {
        studio.state.reader_view().get().then(|| {
            view! {
                <div class="reader-bar" data-testid="reader-bar">
                    <span>"A shared report: every figure below was measured by whoever shared it, and travels in the link."</span>
                    <button data-testid="leave-reader-view" on:click=move |_| actions::studio::leave_reader_view(studio)>
                        "Measure your own"
                    </button>
                </div>
            }
        })
    }
}
