//! How durations and counts are written for people: one rule for the UI, chart labels and
//! sentences.

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

/// `n` with commas between thousands: `12,345,678`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A range of durations, the unit written once when both ends share it: `2.62–2.90 s`,
/// `−1.20 to 3.40 ms`.
pub fn ms_range(lo: f64, hi: f64) -> String {
    let (a, b) = (ms(lo), ms(hi));
    let unit = |s: &str| s.rsplit_once(' ').map(|(_, u)| u.to_owned());
    match (unit(&a), unit(&b)) {
        (Some(ua), Some(ub)) if ua == ub => {
            let head = a.trim_end_matches(&format!(" {ua}")).to_owned();
            if lo < 0.0 || hi < 0.0 {
                format!("{head} to {b}")
            } else {
                format!("{head}–{b}")
            }
        }
        _ if lo >= 0.0 && hi >= 0.0 => format!("{a}–{b}"),
        _ => format!("{a} to {b}"),
    }
}
