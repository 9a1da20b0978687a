//! Endpoint settings: URL, API style, model, key, extra headers, test connection.

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::dialect::Dialect;

use crate::state::{EndpointConfig, use_studio};

const FLAVOURS: &[&str] = &[
    "vllm", "sglang", "trtllm", "llamacpp", "ollama", "tgi", "openai",
];

fn dialect_id(d: Option<Dialect>) -> &'static str {
    match d {
        None => "auto",
        Some(Dialect::OpenAiChat) => "openai_chat",
        Some(Dialect::OpenAiCompletions) => "openai_completions",
        Some(Dialect::OpenAiResponses) => "openai_responses",
        Some(Dialect::Anthropic) => "anthropic",
        Some(Dialect::OllamaNative) => "ollama",
        Some(Dialect::TgiNative) => "tgi",
    }
}

fn dialect_from(id: &str) -> Option<Dialect> {
    Dialect::ALL
        .into_iter()
        .find(|d| dialect_id(Some(*d)) == id)
}

/// Where the requests go.
#[component]
pub fn EndpointPanel() -> impl IntoView {
    let studio = use_studio();
    let ep = studio.endpoint;
    let models = RwSignal::new(Vec::<String>::new());
    let conn = RwSignal::new(None::<Result<String, String>>);
    let set = move |f: &dyn Fn(&mut EndpointConfig)| ep.update(|e| f(e));
    let test = move |_| {
        let e = ep.get_untracked();
        conn.set(Some(Ok("testing…".into())));
        spawn_local(async move {
            let headers = match e.secret_headers() {
                Ok(h) => h,
                Err(m) => {
                    conn.set(Some(Err(m)));
                    return;
                }
            };
            match crate::runner::list_models(&e.effective_base(), &headers).await {
                Ok(ids) => {
                    conn.set(Some(Ok(format!("connected: {} model(s)", ids.len()))));
                    models.set(ids);
                }
                Err(m) => conn.set(Some(Err(m))),
            }
        });
    };
    // The reference endpoint's profiles are offered from the start.
    Effect::new(move |_| {
        if ep.with(|e| e.is_reference()) && models.with_untracked(Vec::is_empty) {
            test(());
        }
    });
    view! {
        <fieldset class="panel" data-testid="endpoint-panel">
            <legend>"Endpoint"</legend>
            <label>"Base URL"
                <input data-testid="base-url" placeholder="empty = built-in reference endpoint"
                    prop:value=move || ep.with(|e| e.base_url.clone())
                    on:change=move |ev| set(&|e| e.base_url = event_target_value(&ev)) />
            </label>
            <label>"API style"
                <select data-testid="dialect" on:change=move |ev| set(&|e| e.dialect = dialect_from(&event_target_value(&ev)))
                    prop:value=move || dialect_id(ep.with(|e| e.dialect))>
                    <option value="auto">"OpenAI chat (auto-detect stream)"</option>
                    {Dialect::ALL.into_iter().map(|d| view! { <option value=dialect_id(Some(d))>{d.label()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Model"
                <input data-testid="model" list="model-list" prop:value=move || ep.with(|e| e.model.clone())
                    on:change=move |ev| set(&|e| e.model = event_target_value(&ev)) />
                <datalist id="model-list">
                    {move || models.get().into_iter().map(|m| { let label = m.clone(); view! { <option value=m>{label}</option> } }).collect_view()}
                </datalist>
            </label>
            <Show when=move || ep.with(|e| e.is_reference())>
                <label>"Server framing (reference endpoint)"
                    <select data-testid="flavour" prop:value=move || ep.with(|e| e.flavour.clone())
                        on:change=move |ev| set(&|e| e.flavour = event_target_value(&ev))>
                        {FLAVOURS.iter().map(|f| view! { <option value=*f>{*f}</option> }).collect_view()}
                    </select>
                </label>
            </Show>
            <label>"API key (kept in memory only)"
                <input type="password" data-testid="api-key" autocomplete="off" prop:value=move || ep.with(|e| e.api_key.clone())
                    on:change=move |ev| set(&|e| e.api_key = event_target_value(&ev)) />
            </label>
            <label class="inline">
                <input type="checkbox" prop:checked=move || ep.with(|e| e.remember_key)
                    on:change=move |ev| set(&|e| e.remember_key = event_target_checked(&ev)) />
                "remember the key on this device"
            </label>
            <label>"Extra headers (Name: value per line)"
                <textarea rows="2" prop:value=move || ep.with(|e| e.extra_headers.clone())
                    on:change=move |ev| set(&|e| e.extra_headers = event_target_value(&ev))></textarea>
            </label>
            <label>"Shard base URLs (optional, one per line)"
                <textarea rows="2" data-testid="shards" prop:value=move || ep.with(|e| e.shards.clone())
                    on:change=move |ev| set(&|e| e.shards = event_target_value(&ev))></textarea>
            </label>
            <button data-testid="test-connection" on:click=move |_| test(())>"Test connection"</button>
            {move || conn.get().map(|r| match r {
                Ok(m) => view! { <p class="ok" data-testid="connection-result">{m}</p> }.into_any(),
                Err(m) => view! { <p class="error" data-testid="connection-result">{m}</p> }.into_any(),
            })}
        </fieldset>
    }
}
