//! The page's clocks: `performance.now()` and its resolution (5 µs when cross-origin
//! isolated, 100 µs otherwise in Chromium: every figure depends on it), and the wall clock.

/// Clock facts shown in the status line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockInfo {
    /// Smallest step of `performance.now()` observed (ms).
    pub resolution_ms: f64,
    /// `crossOriginIsolated`.
    pub isolated: bool,
}

/// `performance.now()` of the page (ms), 0 without a performance clock.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The wall clock (`Date.now()`, unix ms).
pub fn unix_now_ms() -> f64 {
    js_sys::Date::now()
}

/// The wall clock as `Date.toISOString()` writes it (`2025-03-14T09:26:53.589Z`, UTC).
pub fn iso_now() -> String {
    js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default()
}

/// Smallest positive step seen over a short busy loop.
pub fn measure() -> Option<ClockInfo> {
    let w = web_sys::window()?;
    let perf = w.performance()?;
    let mut smallest = f64::INFINITY;
    let mut last = perf.now();
    let start = last;
    let mut steps = 0;
    while steps < 50 && perf.now() - start < 20.0 {
        let t = perf.now();
        if t > last {
            smallest = smallest.min(t - last);
            last = t;
            steps += 1;
        }
    }
    let isolated = js_sys::Reflect::get(&w, &"crossOriginIsolated".into())
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    smallest.is_finite().then_some(ClockInfo {
        resolution_ms: smallest,
        isolated,
    })
}
