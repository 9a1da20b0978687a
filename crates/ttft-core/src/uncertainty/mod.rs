//! How sure a figure is: intervals for percentiles, proportions and differences between runs,
//! and how many requests a figure or a verdict needs. Pure statistics over plain samples; the
//! analysis layer ([`crate::run_intervals`], [`crate::differences`]) applies them to runs.
//!
//! **Methods and what they assume** (the README's "How sure is a figure?" says it for users):
//! - *A percentile of per-request values* (TTFT and its variants, E2E, TPOT, decode rate,
//!   reading QoE, time to valid JSON): the distribution-free interval between two order
//!   statistics, whose ranks come from the binomial distribution ([`quantile`]). It assumes
//!   only that requests are independent draws from one distribution; its coverage is at least
//!   the level, exactly (conservative by design: with 100 requests a 95 % interval for the
//!   median covers about 96.5 %). When no pair of ranks reaches the level (a P99 from 40
//!   requests) there is no interval, and [`quantile::requests_needed`] says how many requests
//!   one needs.
//! - *A percentile of per-gap ITL*: gaps within one request are correlated (one request runs
//!   in one batch, behind one connection), so requests, not gaps, are the independent units:
//!   a cluster bootstrap resamples whole requests ([`bootstrap`]), 1,000 replicates, seeded from
//!   the run's data so a report always shows the same interval; the interval is the expanded,
//!   bias-corrected percentile interval (the plain one covered 89–93 % in the simulations).
//!   From [`bootstrap::LARGE`] requests up its large-sample form, Woodruff's interval with
//!   cluster-robust standard errors, gives the same interval in one pass. Both are
//!   approximate (measured coverage 92.5–96 %); with fewer than [`bootstrap::MIN_CLUSTERS`]
//!   requests, or fewer than a per-request percentile would need, there is none.
//! - *A count or a rate in a window* (requests completed in a time window, sends per second in
//!   a time bin): the exact Poisson (Garwood) interval of the count, divided by the window for
//!   a rate ([`count`]).
//! - *A proportion* (SLO attainment, goodput, error rate, requests with reader waits): the
//!   Wilson score interval ([`proportion`]); a difference of two: Newcombe's hybrid score
//!   interval.
//! - *A difference of medians between two runs*: the Hodges–Lehmann shift with the
//!   distribution-free interval from the Mann–Whitney statistic (normal approximation of its
//!   ranks; [`shift`]); requests that pair up across interleaved runs use the median of their
//!   paired differences with the sign test's order-statistic interval. *A difference of tail
//!   percentiles*: a bootstrap of each run's requests (cluster bootstrap for ITL); from
//!   [`bootstrap::LARGE`] requests a side, the normal difference of Woodruff standard errors.
//! - *Many metrics at once*: Holm's step-down correction keeps the chance of any false
//!   "different" in a table at or below 1 − level ([`holm`]).
//! - *Whether a short series rises* (a time window's median TTFT, window over window): the
//!   Mann–Kendall rank test of an upward trend ([`trend`]).
//! - *A whole CDF*: the Dvoretzky–Kiefer–Wolfowitz band `F̂ ± ε`, `ε = sqrt(ln(2/α)/(2n))`,
//!   covers the whole true curve at once ([`dkw`]); it assumes independent draws, so the
//!   charts draw it for per-request values, not for pooled gaps.
//! - *Requests needed to see a difference*: from the interval's width at this spread, the
//!   requests per side at which a chosen relative difference would be detected with 80 %
//!   power ([`sample_size`]).
//!
//! Distributions and their quantile functions are `statrs`'; the bootstrap draws with
//! `fastrand`. The seeded simulation tests of coverage, false-positive rate and power are in
//! `tests/it/uncertainty.rs`.

pub mod bootstrap;
pub mod count;
pub mod dkw;
pub mod holm;
pub mod proportion;
pub mod quantile;
pub mod sample_size;
pub mod shift;
pub mod trend;

pub use dkw::{dkw_band, dkw_epsilon};

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// The confidence level used unless the user chooses another.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// The levels a user may choose (the setting's range): below 0.5 an interval says little,
/// above 0.999 no run is long enough.
pub const LEVEL_RANGE: (f64, f64) = (0.5, 0.999);

/// A level brought into [`LEVEL_RANGE`] (a NaN becomes [`DEFAULT_LEVEL`]).
pub fn sane_level(level: f64) -> f64 {
    if level.is_nan() {
        DEFAULT_LEVEL
    } else {
        level.clamp(LEVEL_RANGE.0, LEVEL_RANGE.1)
    }
}

/// The standard normal quantile of `p` (0 < p < 1).
pub fn z_quantile(p: f64) -> f64 {
    // Normal::new(0, 1) cannot fail.
    Normal::standard().inverse_cdf(p)
}

/// The two-sided standard normal critical value of a level (1.96 at 95 %).
pub fn z_two_sided(level: f64) -> f64 {
    z_quantile(0.5 + sane_level(level) / 2.0)
}

/// The two-sided p-value of a standard normal statistic.
pub fn normal_p_value(z: f64) -> f64 {
    if !z.is_finite() {
        return if z.is_nan() { 1.0 } else { 0.0 };
    }
    (2.0 * Normal::standard().sf(z.abs())).min(1.0)
}

/// A confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Its confidence level (0.95 = 95 %).
    pub level: f64,
}

impl Interval {
    /// Whether `x` lies within it (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Whether it lies wholly on one side of zero.
    pub fn excludes_zero(&self) -> bool {
        self.lo > 0.0 || self.hi < 0.0
    }

    /// Half its width.
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }
}

/// A figure with how sure it is: its interval, or, when there cannot be one, how many samples
/// it needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The figure itself.
    pub value: f64,
    /// Its interval; `None` when the sample is too small for one.
    pub interval: Option<Interval>,
    /// The sample it was computed from (requests; for per-gap figures, the requests whose gaps
    /// were pooled).
    pub n: usize,
    /// When there is no interval: the sample size at which there would be one.
    pub needs: Option<usize>,
}

impl Estimate {
    /// An estimate with no interval, for want of `needs` samples.
    pub fn without_interval(value: f64, n: usize, needs: Option<usize>) -> Self {
        Self {
            value,
            interval: None,
            n,
            needs,
        }
    }
}
