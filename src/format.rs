//! Number formatting for the UI.

/// `812 ms`, `3.48 s`, `12.3 ms`, `0.42 ms`, or `—`.
pub fn ms(v: Option<f64>) -> String {
    v.map_or("—".into(), ttft_core::format::ms)
}

/// A fraction as a percentage.
pub fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// A rate.
pub fn per_s(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or("—".into(), |x| format!("{x:.1}/s"))
}
