//! Roofline panel: the lowest ITL memory bandwidth allows for a model, against the measured one.

use leptos::prelude::*;
use ttft_core::roofline::{GPU_PRESETS, Precision, RooflineInput};

use crate::format::ms;

fn precision_of(s: &str) -> Precision {
    match s {
        "fp8" => Precision::Fp8,
        "int8" => Precision::Int8,
        "int4" => Precision::Int4,
        _ => Precision::Fp16,
    }
}

/// Model size, quantization and GPU → theoretical ITL, against the run's measured per-token time.
#[component]
pub fn RooflinePanel(
    /// Measured per-token time of the run (TPOT P50, else ITL P50), ms.
    measured_ms: Option<f64>,
    /// Context length to assume (prompt + half the output), tokens.
    context_tokens: f64,
) -> impl IntoView {
    let params = RwSignal::new(7.0);
    let precision = RwSignal::new("fp16".to_owned());
    let bandwidth = RwSignal::new(GPU_PRESETS[0].1);
    let kv_kb = RwSignal::new(128.0);
    let context = RwSignal::new(context_tokens.round());
    let result = Memo::new(move |_| {
        RooflineInput {
            params_billion: params.get(),
            precision: precision_of(&precision.get()),
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
                    <select data-testid="roofline-precision" on:change=move |ev| precision.set(event_target_value(&ev))>
                        <option value="fp16" selected>"FP16 / BF16 (2 bytes)"</option>
                        <option value="fp8">"FP8 (1 byte)"</option>
                        <option value="int8">"INT8 (1 byte)"</option>
                        <option value="int4">"INT4 (0.5 byte)"</option>
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
            <p data-testid="roofline-result">{move || {
                let r = result.get();
                let mut text = format!(
                    "Lowest possible ITL: {} per token ({:.0} tokens/s) for one stream.",
                    ms(Some(r.bound_ms)),
                    r.max_tokens_per_s
                );
                match (measured_ms, r.efficiency) {
                    (Some(m), Some(e)) => text.push_str(&format!(
                        " Measured {} per token: {:.0} % of the roofline{}",
                        ms(Some(m)),
                        e * 100.0,
                        if e > 1.0 { " — faster than the bound, so the inputs are wrong (smaller model, quantized, or speculative decoding)." } else if e > 0.7 { ": decoding is bandwidth-bound, as it should be." } else { ": well below the bound (batching, overheads, network or a slower GPU)." }
                    )),
                    _ => text.push_str(" No per-token time measured in this run."),
                }
                text
            }}</p>
        </section>
    }
}
