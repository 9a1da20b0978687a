//! Number formatting for the UI.

/// `812 ms`, `3.48 s`, `12.3 ms`, `0.42 ms`, or `—`.
pub fn ms(v: Option<f64>) -> String {
    v.map_or("—".into(), ttft_core::format::ms)
}

/// A fraction as a percentage.
pub fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// A score 0–1 with two decimals (`0.93`), or `—`.
pub fn score(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or("—".into(), |x| format!("{x:.2}"))
}

/// A rate.
pub fn per_s(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or("—".into(), |x| format!("{x:.1}/s"))
}

/// How a run's requests travelled and where they were stamped: `over HTTP/2 · stamped in 1
/// stamping worker`, or `over HTTP/2 (30), HTTP/1.1 (2)` when they differ.
pub fn transport_line(transports: &[(String, usize)], stamping: Option<&str>) -> String {
    let over = match transports {
        [] => String::new(),
        [(one, _)] => format!("over {one}"),
        many => format!(
            "over {}",
            many.iter()
                .map(|(name, n)| format!("{name} ({n})"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match stamping {
        Some(s) if over.is_empty() => format!("stamped in {s}"),
        Some(s) => format!("{over} · stamped in {s}"),
        None => over,
    }
}
