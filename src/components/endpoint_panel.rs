//! Endpoint settings: URL, API style, model, key, extra headers, test connection.

use leptos::prelude::*;
use ttft_core::dialect::Dialect;

use crate::actions;
use crate::state::{EndpointConfig, EndpointConfigStoreFields, use_studio};

const FLAVOURS: &[&str] = &[
    "vllm", "sglang", "trtllm", "llamacpp", "ollama", "tgi", "openai",
];

/// The select's value for an API style (`auto` = OpenAI chat with stream detection).
fn dialect_id(d: Option<Dialect>) -> &'static str {
    d.map_or("auto", Dialect::id)
}

/// Where the requests go.
#[component]
pub fn EndpointPanel() -> impl IntoView {
    let studio = use_studio();
    let ep = studio.endpoint;
    let connect =
        Action::new_local(|e: &EndpointConfig| actions::settings::test_connection(e.clone()));
    let test = move |_| {
        connect.dispatch_local(ep.get_untracked());
    };
    // The models of the last successful test.
    let models = Memo::new(move |_| {
        connect
            .value()
            .with(|v| v.as_ref().and_then(|r| r.as_ref().ok().cloned()))
            .unwrap_or_default()
    });
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
                    bind:value=ep.base_url() />
            </label>
            <label>"API style"
                <select data-testid="dialect" on:change=move |ev| ep.dialect().set(Dialect::from_id(&event_target_value(&ev)))
                    prop:value=move || dialect_id(ep.dialect().get())>
                    <option value="auto">"OpenAI chat (auto-detect stream)"</option>
                    {Dialect::ALL.into_iter().map(|d| view! { <option value=dialect_id(Some(d))>{d.label()}</option> }).collect_view()}
                </select>
            </label>
            <label>"Model"
                <input data-testid="model" list="model-list" bind:value=ep.model() />
                <datalist id="model-list">
                    {move || models.get().into_iter().map(|m| { let label = m.clone(); view! { <option value=m>{label}</option> } }).collect_view()}
                </datalist>
            </label>
            <Show when=move || ep.with(|e| e.is_reference())>
                <label>"Server framing (reference endpoint)"
                    <select data-testid="flavour" prop:value=move || ep.flavour().get()
                        on:change=move |ev| ep.flavour().set(event_target_value(&ev))>
                        {FLAVOURS.iter().map(|f| view! { <option value=*f>{*f}</option> }).collect_view()}
                    </select>
                </label>
            </Show>
            <label>"API key (kept in memory only)"
                <input type="password" data-testid="api-key" autocomplete="off" bind:value=ep.api_key() />
            </label>
            <label class="inline">
                <input type="checkbox" data-testid="remember-secrets" bind:checked=ep.remember_secrets() />
                "remember the key and extra headers on this device"
            </label>
            <label>"Extra headers (Name: value per line, kept in memory only)"
                <textarea rows="2" data-testid="extra-headers" bind:value=ep.extra_headers()></textarea>
            </label>
            <label>"Shard base URLs (optional, one per line)"
                <textarea rows="2" data-testid="shards" bind:value=ep.shards()></textarea>
            </label>
            <label class="inline">
                <input type="checkbox" data-testid="scrape-metrics" bind:checked=ep.scrape_metrics() />
                "read the server's metrics during runs (queue, KV cache, its own TTFT/ITL)"
            </label>
            <Show when=move || ep.scrape_metrics().get()>
                <label>"Metrics URL"
                    <input data-testid="metrics-url" placeholder=move || ep.with(|e| ttft_core::server_metrics::metrics_url(&e.effective_base()))
                        bind:value=ep.metrics_url() />
                </label>
            </Show>
            <button data-testid="test-connection" on:click=move |_| test(())>"Test connection"</button>
            <Show when=move || connect.pending().get()>
                <p class="ok" data-testid="connection-result">"testing…"</p>
            </Show>
            // A failed test is an error the boundary shows with what to do; the next
            // successful test clears it.
            <ErrorBoundary fallback=|errors| view! {
                <p class="error" data-testid="connection-result">
                    {move || errors.with(|e| e.iter().map(|(_, e)| e.to_string()).collect::<Vec<_>>().join("; "))}
                </p>
            }>
                {move || (!connect.pending().get()).then(|| connect.value().get()).flatten().map(|r| r.map(|ids| view! {
                    <p class="ok" data-testid="connection-result">{format!("connected: {} model(s)", ids.len())}</p>
                }))}
            </ErrorBoundary>
        </fieldset>
    }
}
