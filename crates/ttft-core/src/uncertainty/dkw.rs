//! A band around a whole empirical CDF: the Dvoretzky–Kiefer–Wolfowitz inequality (with
//! Massart's constant) says that the empirical CDF of `n` independent draws lies within `ε` of
//! the true CDF *everywhere at once* with probability at least `1 − α`, where
//! `ε = sqrt(ln(2/α) / (2n))`. So `[F̂ − ε, F̂ + ε]`, clipped to `[0, 1]`, covers the whole true
//! curve at the level `1 − α`: a band for reading any percentile or share off the chart, not
//! one point's interval. It assumes independent draws (requests, not the gaps within one).

use super::sane_level;

/// The band's half-width `ε` for `n` independent values at `level` (0.95 = 95 %); `None`
/// without values.
pub fn dkw_epsilon(n: usize, level: f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let alpha = 1.0 - sane_level(level);
    Some(((2.0 / alpha).ln() / (2.0 * n as f64)).sqrt())
}

/// `F̂ ± ε`, clipped to `[0, 1]`: the band's `(lower, upper)` at a point whose empirical CDF is
/// `f`.
pub fn dkw_band(f: f64, epsilon: f64) -> (f64, f64) {
    ((f - epsilon).max(0.0), (f + epsilon).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsilon_follows_the_inequality() {
        // 100 values at 95 %: sqrt(ln(40) / 200) ≈ 0.1358.
        let e = dkw_epsilon(100, 0.95).unwrap();
        assert!((e - (40f64.ln() / 200.0).sqrt()).abs() < 1e-12, "{e}");
        assert!((e - 0.1358).abs() < 1e-3);
        // Four times the values halve it; a higher level widens it.
        assert!((dkw_epsilon(400, 0.95).unwrap() - e / 2.0).abs() < 1e-12);
        assert!(dkw_epsilon(100, 0.99).unwrap() > e);
        assert_eq!(dkw_epsilon(0, 0.95), None);
        assert_eq!(dkw_band(0.05, 0.1), (0.0, 0.15000000000000002));
        assert_eq!(dkw_band(0.95, 0.1).1, 1.0);
    }
}
