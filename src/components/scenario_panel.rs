//! Scenario settings, with the runs made together (#29): an A/B run of 2–4 configurations sent
//! interleaved, and repeats.

use leptos::prelude::*;

use ttft_core::scenario::{Arm, MAX_ARMS, MAX_REPEATS, PROMPTS, ScenarioConfig, ScenarioKind};

use crate::state::{ScenarioConfigStoreFields, Studio, use_studio};

/// A labelled number input bound to one field of the scenario.
#[component]
fn NumberField(
    /// Label text.
    label: &'static str,
    /// `data-testid`.
    testid: &'static str,
    /// Reads the field.
    get: fn(&ScenarioConfig) -> f64,
    /// Writes the field.
    put: fn(&mut ScenarioConfig, f64),
) -> impl IntoView {
    let sc = use_studio().scenario;
    view! {
        <label>{label}
            <input type="number" data-testid=testid prop:value=move || sc.with(|c| get(c).to_string())
                on:change=move |ev| { if let Ok(v) = event_target_value(&ev).parse::<f64>() { sc.update(|c| put(c, v)) } } />
        </label>
    }
}

/// What the run sends.
#[component]
pub fn ScenarioPanel() -> impl IntoView {
    let studio = use_studio();
    let sc = studio.scenario;
    let kind = move || sc.kind().get();
    view! {
        <fieldset class="panel" data-testid="scenario-panel">
            <legend>"Scenario"</legend>
            <label>"Kind"
                <select data-testid="scenario-kind" prop:value=move || kind().id()
                    on:change=move |ev| { if let Some(k) = ScenarioKind::from_id(&event_target_value(&ev)) { sc.kind().set(k) } }>
                    {ScenarioKind::ALL.iter().map(|(k, l)| view! { <option value=k.id()>{*l}</option> }).collect_view()}
                </select>
            </label>
            <label>"Prompt"
                <select data-testid="prompt-preset" prop:value=move || sc.preset().get().map_or("custom".into(), |i| i.to_string())
                    on:change=move |ev| sc.preset().set(event_target_value(&ev).parse().ok())>
                    {PROMPTS.iter().enumerate().map(|(i, (l, _))| view! { <option value=i.to_string()>{*l}</option> }).collect_view()}
                    <option value="custom">"Custom…"</option>
                </select>
            </label>
            <Show when=move || sc.preset().get().is_none()>
                <textarea rows="3" data-testid="custom-prompt" bind:value=sc.custom_prompt()></textarea>
            </Show>
            <div class="grid">
                <NumberField label="Max tokens" testid="max-tokens" get=|c| f64::from(c.max_tokens) put=|c, v| c.max_tokens = v.max(1.0) as u32 />
                <NumberField label="Requests" testid="requests" get=|c| f64::from(c.requests) put=|c, v| c.requests = v.max(1.0) as u32 />
                <NumberField label="Concurrency" testid="concurrency" get=|c| f64::from(c.concurrency) put=|c, v| c.concurrency = v.max(1.0) as u32 />
                <NumberField label="Warm-up" testid="warmup" get=|c| f64::from(c.warmup) put=|c, v| c.warmup = v.max(0.0) as u32 />
                <NumberField label="Timeout (s)" testid="timeout" get=|c| c.timeout_s put=|c, v| c.timeout_s = v.max(1.0) />
                <NumberField label="Temperature (−1 = server default)" testid="temperature" get=|c| c.temperature.unwrap_or(-1.0) put=|c, v| c.temperature = (v >= 0.0).then_some(v.min(2.0)) />
                <NumberField label="Seed (−1 = none)" testid="seed" get=|c| c.seed.map_or(-1.0, |s| s as f64) put=|c, v| c.seed = (v >= 0.0).then_some(v as u64) />
            </div>
            <Show when=move || matches!(kind(), ScenarioKind::Chat | ScenarioKind::AgentJson)>
                <crate::components::load_shape::LoadShapeFields />
            </Show>
            <Show when=move || kind() == ScenarioKind::Trace>
                <crate::components::trace_replay::TraceReplayFields />
            </Show>
            <Show when=move || kind() == ScenarioKind::ConcurrencySweep>
                <label>"Concurrency levels"
                    <input data-testid="levels" bind:value=sc.levels() />
                </label>
            </Show>
            <Show when=move || kind() == ScenarioKind::PromptSweep>
                <label>"Prompt lengths (tokens)"
                    <input data-testid="prompt-levels" bind:value=sc.prompt_levels() />
                </label>
            </Show>
            <Show when=move || matches!(kind(), ScenarioKind::AgentJson | ScenarioKind::MultiTurn)>
                <label>"Required keys"
                    <input data-testid="required-keys" bind:value=sc.required_keys() />
                </label>
                <label class="inline"><input type="checkbox" data-testid="use-tools" bind:checked=sc.use_tools() />"as a tool call (function calling)"</label>
            </Show>
            <Show when=move || kind().is_conversation()>
                <NumberField label="Rounds" testid="rounds" get=|c| f64::from(c.rounds) put=|c, v| c.rounds = v.max(1.0) as u32 />
            </Show>
            <AbSection />
            <label>"Extra request fields (JSON object)"
                <input data-testid="extra-body" placeholder="{\"cache_prompt\": false}" bind:value=sc.extra_body() />
            </label>
            <label class="inline"><input type="checkbox" bind:checked=sc.continuous_usage() />"continuous usage stats (vLLM, SGLang)"</label>
            <label class="inline"><input type="checkbox" data-testid="ignore-eos" bind:checked=sc.ignore_eos() />"ignore EOS (fixed output length)"</label>
            <crate::components::saturation_stop::SaturationStopSetting />
            <button type="button" class="link" data-testid="export-locustfile" title="More load than one browser: this endpoint and scenario as a locustfile.py (no API key in it); import the workers' timeline files back here"
                on:click=move |_| crate::actions::export::export_locustfile(studio)>"Export for Locust"</button>
        </fieldset>
    }
}

/// A new arm of an A/B run: the endpoint's model, labelled after it unless another arm is.
fn new_arm(studio: Studio) -> Arm {
    Arm {
        model: studio.endpoint.with_untracked(|e| e.model.clone()),
        ..Arm::default()
    }
}

/// Turns the A/B run on (two arms of the endpoint's model, to be changed) or off (no arms).
fn set_ab(studio: Studio, on: bool) {
    let arms = if on {
        vec![new_arm(studio), new_arm(studio)]
    } else {
        Vec::new()
    };
    studio.scenario.arms().set(arms);
}

/// One text field of arm `i`, written when the user leaves it.
#[component]
fn ArmField(
    /// The arm.
    i: usize,
    /// `data-testid` prefix (the arm's index follows).
    testid: &'static str,
    /// Placeholder.
    placeholder: &'static str,
    /// Suggestions (`datalist` id), if any.
    #[prop(optional)]
    list: Option<&'static str>,
    /// Reads the field.
    get: fn(&Arm) -> String,
    /// Writes the field.
    put: fn(&mut Arm, String),
) -> impl IntoView {
    let arms = use_studio().scenario.arms();
    view! {
        <input data-testid=format!("{testid}-{i}") placeholder=placeholder list=list
            prop:value=move || arms.with(|a| a.get(i).map(get).unwrap_or_default())
            on:change=move |ev| {
                let v = event_target_value(&ev);
                arms.update(|a| if let Some(arm) = a.get_mut(i) { put(arm, v) });
            } />
    }
}

/// "Compare configurations (A/B)" and "Repeat N times": the arms (label, model, another base
/// URL), added and removed, with what stops them from running; the repeats.
#[component]
fn AbSection() -> impl IntoView {
    let studio = use_studio();
    let sc = studio.scenario;
    let arms = sc.arms();
    let count = move || arms.with(Vec::len);
    let on = move || count() > 0;
    let full = move || count() >= MAX_ARMS;
    let problem = move || sc.with(|c| c.validate_group().err().map(|e| e.to_string()));
    view! {
        <div class="ab" data-testid="ab-section">
            <label class="inline" title="The same prompts to 2–4 models or endpoints, sent A, B, A, B… so that drift and warm-up hit each alike; each becomes a run of its own, compared side by side">
                <input type="checkbox" data-testid="ab-enable" prop:checked=on
                    on:change=move |ev| set_ab(studio, event_target_checked(&ev)) />
                "Compare configurations (A/B)"
            </label>
            <Show when=on>
                <p class="muted">"Sent interleaved: A, B, A, B… Concurrency and rate are the whole run's (starts still alternate); the API key and headers are the endpoint's."</p>
                <For each=move || 0..count() key=|i| *i let:i>
                    <div class="arm grid" data-testid=format!("ab-arm-{i}")>
                        <ArmField i testid="ab-arm-label" placeholder="label (default: the model)"
                            get=|a| a.label.clone() put=|a, v| a.label = v />
                        <ArmField i testid="ab-arm-model" placeholder="model" list="model-list"
                            get=|a| a.model.clone() put=|a, v| a.model = v />
                        <ArmField i testid="ab-arm-base" placeholder="base URL (default: the endpoint's)"
                            get=|a| a.base_url.clone().unwrap_or_default()
                            put=|a, v| a.base_url = Some(v.trim().to_owned()).filter(|b| !b.is_empty()) />
                        <button type="button" class="link" data-testid=format!("ab-remove-arm-{i}")
                            on:click=move |_| arms.update(|a| if i < a.len() { a.remove(i); })>"remove"</button>
                    </div>
                </For>
                <button type="button" class="link" data-testid="ab-add-arm" disabled=full
                    on:click=move |_| arms.update(|a| a.push(new_arm(studio)))>"+ add a configuration"</button>
            </Show>
            <label>{format!("Repeat N times (1–{MAX_REPEATS})")}
                <input type="number" min="1" max=MAX_REPEATS.to_string() data-testid="scenario-repeats"
                    prop:value=move || sc.repeats().get().to_string()
                    on:change=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                            sc.repeats().set(v.clamp(1.0, f64::from(MAX_REPEATS)) as u32);
                        }
                    } />
            </label>
            {move || problem().map(|p| view! { <p class="warning" data-testid="ab-problem">{p}</p> })}
        </div>
    }
}
