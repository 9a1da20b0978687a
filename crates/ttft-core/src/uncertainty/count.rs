//! Intervals for a count of events in a stretch of time (requests completed in a time window):
//! Garwood's exact Poisson interval, from the chi-squared quantiles
//! `χ²(α/2; 2k)/2 ≤ λ ≤ χ²(1 − α/2; 2k + 2)/2`. It assumes the events arrive as a Poisson
//! process; more regular arrivals (a closed loop's completions) make it wider than it need
//! be, never narrower.

use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::{Interval, sane_level};

/// Garwood's interval for the mean of a Poisson count observed as `count`, at `level`.
pub fn poisson_interval(count: u64, level: f64) -> Interval {
    let level = sane_level(level);
    let tail = (1.0 - level) / 2.0;
    let k = count as f64;
    let chi = |dof: f64, p: f64| {
        ChiSquared::new(dof)
            .map(|d| d.inverse_cdf(p) / 2.0)
            .unwrap_or(f64::NAN)
    };
    let lo = if count == 0 { 0.0 } else { chi(2.0 * k, tail) };
    let hi = chi(2.0 * k + 2.0, 1.0 - tail);
    Interval {
        lo: if lo.is_finite() { lo } else { 0.0 },
        hi: if hi.is_finite() { hi } else { f64::INFINITY },
        level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garwood_matches_the_published_table() {
        // Garwood (1936) / the usual tables at 95 %: 0 → 0–3.689, 1 → 0.0253–5.572,
        // 10 → 4.795–18.39.
        let near = |a: f64, b: f64| (a - b).abs() < 5e-3;
        let i = poisson_interval(0, 0.95);
        assert!(i.lo == 0.0 && near(i.hi, 3.689), "{i:?}");
        let i = poisson_interval(1, 0.95);
        assert!(near(i.lo, 0.0253) && near(i.hi, 5.572), "{i:?}");
        let i = poisson_interval(10, 0.95);
        assert!(near(i.lo, 4.795) && near(i.hi, 18.39), "{i:?}");
    }
}
