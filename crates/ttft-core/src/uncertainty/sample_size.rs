//! Requests per side to detect a difference: a difference `Δ` is detected at `level` with
//! power `1 − β` when `Δ ≥ (z_{level} + z_{power})·SE`. The standard error of the
//! difference is read off the interval at hand (`SE = half-width / z_level`: whatever the
//! method) and shrinks as `√(1/n₁ + 1/n₂)`, so with `n` per side it becomes
//! `SE·√(2/n / (1/n₁ + 1/n₂))`. This is an approximation: the spread itself was estimated from
//! the runs at hand, so treat the advice as a size to plan for, not a guarantee.

use super::{Interval, z_quantile, z_two_sided};

/// The power the advice aims for.
pub const POWER: f64 = 0.8;

/// Requests per side at which a difference of `delta` (in the interval's unit, > 0) would be
/// detected with [`POWER`], given the interval found with `n1` and `n2` requests; `None` when
/// the interval has no width or `delta` is not positive.
pub fn requests_to_detect(interval: &Interval, n1: usize, n2: usize, delta: f64) -> Option<usize> {
    let z = z_two_sided(interval.level);
    let se = interval.half_width() / z;
    if se.is_nan() || se <= 0.0 || delta.is_nan() || delta <= 0.0 || n1 == 0 || n2 == 0 {
        return None;
    }
    let inv = 1.0 / n1 as f64 + 1.0 / n2 as f64;
    let k = z + z_quantile(POWER);
    let n = 2.0 * se * se * k * k / (delta * delta * inv);
    Some(n.ceil().max(2.0) as usize)
}
