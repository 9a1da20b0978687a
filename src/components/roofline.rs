//! Roofline panel: the lowest ITL memory bandwidth allows for a model, against the measured one.

use leptos::prelude::*;
use ttft_core::roofline::{GPU_PRESETS, Precision, RooflineInput};

/// Model size, quantization and GPU → theoretical ITL, against the run's measured per-token time.
#[component]
pub fn RooflinePanel(
    /// Measured per-token time of the run (TPOT P50, else ITL P50), ms.
    measured_ms: Option<f64>,
    /// Context length to assume (prompt + half the output), tokens.
    context_tokens: f64,
) -> impl IntoView {
    let params = RwSignal::new(7.0);
    let precision = RwSignal::new(Precision::Fp16);
    let bandwidth = RwSignal::new(GPU_PRESETS[0].1);
    let kv_kb = RwSignal::new(128.0);
    let context = RwSignal::new(context_tokens.round());
    let result = Memo::new(move |_| {
        RooflineInput {
            params_billion: params.get(),
            precision: precision.get(),
            kv_bytes_per_token: kv_kb.get() * 1024.0,
            context_tokens: context.get(),
            bandwidth_tb_s: bandwidth.get(),
        }
        .evaluate(measured_ms)
    });
    let num = |sig: RwSignal<f64>| {
        move |ev| {
            if let Ok(v) = event_target_value(&ev).trim().parse::<f64>()
                && v.is_finite()
                && v >= 0.0
            {
                sig.set(v);
            }
        }
    };
    view! {
        <section class="roofline" data-testid="roofline">
            <h3>"Roofline: how close decoding is to memory bandwidth"</h3>
            <div class="roofline-inputs">
                <label>"Parameters (billions, active for MoE)"
                    <input type="number" min="0" step="0.1" data-testid="roofline-params" prop:value=move || params.get().to_string() on:change=num(params) /></label>
                <label>"Weights"
                    <select data-testid="roofline-precision" on:change=move |ev| {
                        if let Some(p) = Precision::from_id(&event_target_value(&ev)) { precision.set(p) }
                    }>
                        {Precision::ALL.iter().map(|(p, id, label)| view! { <option value=*id selected=*p == Precision::Fp16>{*label}</option> }).collect_view()}
                    </select></label>
                <label>"GPU"
                    <select data-testid="roofline-gpu" on:change=move |ev| {
                        if let Some((_, bw)) = GPU_PRESETS.iter().find(|(n, _)| *n == event_target_value(&ev)) { bandwidth.set(*bw) }
                    }>
                        {GPU_PRESETS.iter().map(|(n, bw)| view! { <option value=*n>{format!("{n} ({bw} TB/s)")}</option> }).collect_view()}
                    </select></label>
                <label>"Memory bandwidth (TB/s)"
                    <input type="number" min="0" step="0.01" data-testid="roofline-bandwidth" prop:value=move || bandwidth.get().to_string() on:change=num(bandwidth) /></label>
                <label>"KV cache per token (KiB)"
                    <input type="number" min="0" step="1" data-testid="roofline-kv" prop:value=move || kv_kb.get().to_string() on:change=num(kv_kb) /></label>
                <label>"Context (tokens)"
                    <input type="number" min="0" step="1" prop:value=move || context.get().to_string() on:change=num(context) /></label>
            </div>
            <p data-testid="roofline-result">{move || result.get().verdict(measured_ms)}</p>
        </section>
    }
}
