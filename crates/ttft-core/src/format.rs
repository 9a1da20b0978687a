//! How durations are written for people: one rule for the UI, chart labels and sentences.

/// `812 ms`, `3.48 s`, `12.3 ms`, `0.42 ms`; `—` when not finite.
pub fn ms(x: f64) -> String {
    match x {
        x if !x.is_finite() => "—".into(),
        x if x.abs() >= 10_000.0 => format!("{:.1} s", x / 1e3),
        x if x.abs() >= 1_000.0 => format!("{:.2} s", x / 1e3),
        x if x.abs() >= 100.0 => format!("{x:.0} ms"),
        x if x.abs() >= 10.0 => format!("{x:.1} ms"),
        x => format!("{x:.2} ms"),
    }
}
