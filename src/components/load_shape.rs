//! When a chat or agent JSON run sends (#32): the load shape's select (closed loop, Poisson,
//! gamma, linear and exponential rate ramps, steps, a concurrency ramp) and the fields of the
//! shape chosen, written to [`ScenarioConfig::load`]; the core describes the shape and says
//! what is wrong with it ([`LoadShape::describe`], [`LoadShape::check`]). Older settings keep
//! their meaning: no shape and a rate above 0 is Poisson at that rate.

use leptos::prelude::*;
use ttft_core::arrivals::{Curve, LoadShape};
use ttft_core::scenario::ScenarioConfig;

use crate::state::use_studio;

/// The select's choices: value and label.
const SHAPES: [(&str, &str); 7] = [
    ("closed", "closed loop"),
    ("poisson", "Poisson"),
    ("gamma", "gamma (burstiness)"),
    ("linear_ramp", "linear ramp"),
    ("exp_ramp", "exponential ramp"),
    ("steps", "steps"),
    ("concurrency_ramp", "concurrency ramp"),
];

/// The select's value of the scenario's shape.
fn shape_id(c: &ScenarioConfig) -> &'static str {
    match c.load_shape() {
        None => "closed",
        Some(LoadShape::Poisson { .. }) => "poisson",
        Some(LoadShape::Gamma { .. }) => "gamma",
        Some(LoadShape::Ramp {
            curve: Curve::Exponential,
            ..
        }) => "exp_ramp",
        Some(LoadShape::Ramp { .. }) => "linear_ramp",
        Some(LoadShape::Steps { .. }) => "steps",
        Some(LoadShape::ConcurrencyRamp { .. }) => "concurrency_ramp",
    }
}

/// Sets the shape chosen, starting from the scenario's rate (1 req/s when none) and
/// concurrency; "closed loop" clears the rate too.
fn choose(c: &mut ScenarioConfig, id: &str) {
    let rate = c
        .load_shape()
        .map_or(c.rate_per_s, |s| s.settled_rate_per_s());
    let rate = if rate > 0.0 { rate } else { 1.0 };
    let ramp = |curve| LoadShape::Ramp {
        from_per_s: 1.0,
        to_per_s: rate.max(2.0),
        over_s: 10.0,
        curve,
        burstiness: 1.0,
    };
    c.load = match id {
        "poisson" => Some(LoadShape::Poisson { rate_per_s: rate }),
        "gamma" => Some(LoadShape::Gamma {
            rate_per_s: rate,
            burstiness: 0.5,
        }),
        "linear_ramp" => Some(ramp(Curve::Linear)),
        "exp_ramp" => Some(ramp(Curve::Exponential)),
        "steps" => Some(LoadShape::Steps {
            rates_per_s: vec![rate, rate * 2.0, rate * 4.0],
            step_s: 10.0,
            burstiness: 1.0,
        }),
        "concurrency_ramp" => Some(LoadShape::ConcurrencyRamp {
            from: 1,
            to: c.concurrency.max(1),
            over_s: 10.0,
            curve: Curve::Linear,
        }),
        _ => None,
    };
    if c.load.is_none() {
        c.rate_per_s = 0.0;
    }
}

/// The rate of a constant-rate shape, or the older rate setting.
fn rate_of(c: &ScenarioConfig) -> f64 {
    match &c.load {
        Some(LoadShape::Poisson { rate_per_s } | LoadShape::Gamma { rate_per_s, .. }) => {
            *rate_per_s
        }
        _ => c.rate_per_s,
    }
}

/// Writes the rate: the constant-rate shape's as typed (its check says if it is wrong), else
/// the older rate setting (above 0: Poisson).
fn put_rate(c: &mut ScenarioConfig, v: f64) {
    match &mut c.load {
        Some(LoadShape::Poisson { rate_per_s } | LoadShape::Gamma { rate_per_s, .. }) => {
            *rate_per_s = v;
        }
        _ => c.rate_per_s = if v.is_finite() { v.max(0.0) } else { 0.0 },
    }
}

/// A number field of the shape, shown when the shape has it (`get` gives `Some`); what the
/// user types is written as it is, so the shape's check can say what is wrong.
#[component]
fn ShapeField(
    /// Label text.
    label: &'static str,
    /// `data-testid`.
    testid: &'static str,
    /// Reads the field, `None` when the shape has none.
    get: fn(&LoadShape) -> Option<f64>,
    /// Writes the field.
    put: fn(&mut LoadShape, f64),
) -> impl IntoView {
    let sc = use_studio().scenario;
    let value = move || sc.with(|c| c.load.as_ref().and_then(get));
    view! {
        <Show when=move || value().is_some()>
            <label>{label}
                <input type="number" step="any" data-testid=testid
                    prop:value=move || value().filter(|v| v.is_finite()).map(|v| v.to_string()).unwrap_or_default()
                    on:change=move |ev| {
                        let v = event_target_value(&ev).trim().parse::<f64>().unwrap_or(f64::NAN);
                        sc.update(|c| if let Some(s) = c.load.as_mut() { put(s, v) });
                    } />
            </label>
        </Show>
    }
}

/// The steps' rates as a comma list; an item that is no number is kept as NaN, which the
/// shape's check names.
#[component]
fn StepRates() -> impl IntoView {
    let sc = use_studio().scenario;
    let rates = move || {
        sc.with(|c| match &c.load {
            Some(LoadShape::Steps { rates_per_s, .. }) => Some(
                rates_per_s
                    .iter()
                    .map(f64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            _ => None,
        })
    };
    view! {
        <Show when=move || rates().is_some()>
            <label>"Step rates (req/s, comma list)"
                <input data-testid="step-rates" prop:value=move || rates().unwrap_or_default()
                    on:change=move |ev| {
                        let v: Vec<f64> = event_target_value(&ev)
                            .split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(|s| s.parse().unwrap_or(f64::NAN))
                            .collect();
                        sc.update(|c| if let Some(LoadShape::Steps { rates_per_s, .. }) = c.load.as_mut() { *rates_per_s = v });
                    } />
            </label>
        </Show>
    }
}

/// The load shape's select, its fields, its description and what is wrong with it.
#[component]
pub fn LoadShapeFields() -> impl IntoView {
    let sc = use_studio().scenario;
    let status = move || {
        sc.with(|c| {
            c.load_shape()
                .map(|s| (s.describe(), s.check().err().map(|e| e.to_string())))
        })
    };
    view! {
        <div class="grid" data-testid="load-shape-fields">
            <label>"Load shape"
                <select data-testid="load-shape" prop:value=move || sc.with(shape_id)
                    on:change=move |ev| { let id = event_target_value(&ev); sc.update(|c| choose(c, &id)) }>
                    {SHAPES.iter().map(|(v, l)| view! { <option value=*v>{*l}</option> }).collect_view()}
                </select>
            </label>
            <Show when=move || matches!(sc.with(shape_id), "closed" | "poisson" | "gamma")>
                <label>"Rate (req/s, 0 = closed loop)"
                    <input type="number" step="any" data-testid="rate" prop:value=move || sc.with(|c| rate_of(c).to_string())
                        on:change=move |ev| { let v = event_target_value(&ev).trim().parse::<f64>().unwrap_or(f64::NAN); sc.update(|c| put_rate(c, v)) } />
                </label>
            </Show>
            <ShapeField label="Burstiness (1 = Poisson, < 1 burstier)" testid="burstiness"
                get=|s| match s { LoadShape::Gamma { burstiness, .. } | LoadShape::Ramp { burstiness, .. } | LoadShape::Steps { burstiness, .. } => Some(*burstiness), _ => None }
                put=|s, v| if let LoadShape::Gamma { burstiness, .. } | LoadShape::Ramp { burstiness, .. } | LoadShape::Steps { burstiness, .. } = s { *burstiness = v } />
            <ShapeField label="From (req/s, or lanes)" testid="ramp-from"
                get=|s| match s { LoadShape::Ramp { from_per_s, .. } => Some(*from_per_s), LoadShape::ConcurrencyRamp { from, .. } => Some(f64::from(*from)), _ => None }
                put=|s, v| match s { LoadShape::Ramp { from_per_s, .. } => *from_per_s = v, LoadShape::ConcurrencyRamp { from, .. } => *from = v.max(0.0) as u32, _ => {} } />
            <ShapeField label="To (req/s, or lanes)" testid="ramp-to"
                get=|s| match s { LoadShape::Ramp { to_per_s, .. } => Some(*to_per_s), LoadShape::ConcurrencyRamp { to, .. } => Some(f64::from(*to)), _ => None }
                put=|s, v| match s { LoadShape::Ramp { to_per_s, .. } => *to_per_s = v, LoadShape::ConcurrencyRamp { to, .. } => *to = v.max(0.0) as u32, _ => {} } />
            <ShapeField label="Over (s)" testid="ramp-over"
                get=|s| match s { LoadShape::Ramp { over_s, .. } | LoadShape::ConcurrencyRamp { over_s, .. } => Some(*over_s), _ => None }
                put=|s, v| if let LoadShape::Ramp { over_s, .. } | LoadShape::ConcurrencyRamp { over_s, .. } = s { *over_s = v } />
            <StepRates />
            <ShapeField label="Each step (s)" testid="step-seconds"
                get=|s| match s { LoadShape::Steps { step_s, .. } => Some(*step_s), _ => None }
                put=|s, v| if let LoadShape::Steps { step_s, .. } = s { *step_s = v } />
        </div>
        {move || status().map(|(describe, error)| view! {
            <p class="muted" data-testid="load-shape-describe">{describe}</p>
            {error.map(|e| view! { <p class="warning" data-testid="load-shape-error">{e}</p> })}
        })}
    }
}
