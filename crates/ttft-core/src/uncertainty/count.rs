//! The exact (Garwood) interval for the mean of a Poisson count, and so for a rate measured
//! as events in a window: the bounds are gamma quantiles, `Γ(k, 1)` at `(1 − level)/2` and
//! `Γ(k + 1, 1)` at `(1 + level)/2`, whose coverage is at least the level for every true mean
//! (conservative, like the order-statistic intervals).

use statrs::distribution::{ContinuousCDF, Gamma};

use super::{Interval, sane_level};

/// The interval for the mean of a Poisson variable observed as `count`, at `level`.
pub fn poisson_mean_interval(count: u64, level: f64) -> Interval {
    let level = sane_level(level);
    let tail = (1.0 - level) / 2.0;
    let k = count as f64;
    let lo = if count == 0 {
        0.0
    } else {
        // Shape k ≥ 1 and rate 1 are valid: `new` cannot fail.
        Gamma::new(k, 1.0).map_or(0.0, |g| g.inverse_cdf(tail))
    };
    let hi = Gamma::new(k + 1.0, 1.0).map_or(f64::INFINITY, |g| g.inverse_cdf(1.0 - tail));
    Interval { lo, hi, level }
}

/// The interval for a rate (events per second) from `count` events in `seconds` (> 0), at
/// `level`; `None` for a window that is not positive and finite.
pub fn rate_interval(count: u64, seconds: f64, level: f64) -> Option<Interval> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return None;
    }
    let i = poisson_mean_interval(count, level);
    Some(Interval {
        lo: i.lo / seconds,
        hi: i.hi / seconds,
        level: i.level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garwood_matches_the_published_table() {
        // Garwood (1936) / the usual tables at 95 %: 0 → 0–3.689, 1 → 0.0253–5.572,
        // 10 → 4.795–18.39.
        let near = |a: f64, b: f64| (a - b).abs() < 5e-3;
        let i = poisson_mean_interval(0, 0.95);
        assert!(i.lo == 0.0 && near(i.hi, 3.689), "{i:?}");
        let i = poisson_mean_interval(1, 0.95);
        assert!(near(i.lo, 0.0253) && near(i.hi, 5.572), "{i:?}");
        let i = poisson_mean_interval(10, 0.95);
        assert!(near(i.lo, 4.795) && near(i.hi, 18.39), "{i:?}");
    }
}
