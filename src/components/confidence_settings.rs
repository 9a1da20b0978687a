//! How sure the figures must be: the confidence level of every interval the studio shows and
//! exports (80, 90, 95 or 99 %) and the relative difference the "requests per side" advice is
//! for, in one line above the comparison and the report. Changing either goes through
//! [`crate::actions::settings::set_confidence`] (kept on this device); the compare table, the
//! headline tiles, the CDF bands and the summary exports follow.

use leptos::prelude::*;
use ttft_core::differences::Confidence;

use crate::actions;
use crate::state::{Shown, StudioStateStoreFields, use_studio};

/// The levels offered.
const LEVELS: [f64; 4] = [0.80, 0.90, 0.95, 0.99];

/// A level as the option says it: `95 %`.
fn level_label(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// The confidence level and the difference to detect; shown once there is a run or a
/// comparison to read.
#[component]
pub fn ConfidenceSettings() -> impl IntoView {
    let studio = use_studio();
    let confidence = studio.confidence;
    let shown = move || {
        studio.state.shown().get() != Shown::Nothing
            || studio.state.compare().with(|c| c.len() >= 2)
    };
    let set_level = move |text: String| {
        if let Ok(level) = text.parse::<f64>() {
            let c = confidence.get_untracked();
            actions::settings::set_confidence(studio, Confidence { level, ..c });
        }
    };
    let set_detect = move |text: String| {
        if let Ok(pct) = text.trim().parse::<f64>() {
            let c = confidence.get_untracked();
            actions::settings::set_confidence(
                studio,
                Confidence {
                    detect: pct / 100.0,
                    ..c
                },
            );
        }
    };
    // The stored level, offered even when it is none of the usual four.
    let levels = move || {
        let current = confidence.get().level;
        let mut all = LEVELS.to_vec();
        if !all.iter().any(|l| (l - current).abs() < 1e-9) {
            all.push(current);
            all.sort_by(f64::total_cmp);
        }
        all.into_iter()
            .map(|l| {
                let selected = (l - current).abs() < 1e-9;
                view! { <option value=l.to_string() selected=selected>{level_label(l)}</option> }
            })
            .collect_view()
    };
    view! {
        <Show when=shown>
            <div class="confidence-settings muted" data-testid="confidence-settings">
                <label class="inline" title="The confidence level of every interval shown and exported: a higher level gives wider intervals and fewer differences told from noise">
                    "Intervals at "
                    <select data-testid="confidence-level" on:change=move |ev| set_level(event_target_value(&ev))>
                        {levels}
                    </select>
                </label>
                <label class="inline" title="The relative difference the comparison's advice is for: how many requests per side would show a difference this large">
                    " · advice for a difference of "
                    <input type="number" min="0.1" max="100" step="any" data-testid="detect-difference"
                        prop:value=move || format!("{}", (confidence.get().detect * 1000.0).round() / 10.0)
                        on:change=move |ev| set_detect(event_target_value(&ev)) />
                    " %"
                </label>
            </div>
        </Show>
    }
}
