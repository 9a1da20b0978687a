//! Number formatting for the UI.

/// `812 ms`, `3.48 s`, `12.3 ms`, `0.42 ms`, or `—`.
pub fn ms(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(x) if !x.is_finite() => "—".into(),
        Some(x) if x.abs() >= 10_000.0 => format!("{:.1} s", x / 1e3),
        Some(x) if x.abs() >= 1_000.0 => format!("{:.2} s", x / 1e3),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0} ms"),
        Some(x) if x.abs() >= 10.0 => format!("{x:.1} ms"),
        Some(x) => format!("{x:.2} ms"),
    }
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
