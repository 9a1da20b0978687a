//! Whether a finding that compares two groups of requests (a load level against the first, the
//! last round of a conversation against the first, the probe at high load against low) may
//! say that one is higher: the Hodges–Lehmann shift of the second group's per-request values
//! from the first's, with its distribution-free interval ([`hodges_lehmann`]). A rise is stated
//! only when the interval lies above zero, and always with that interval; otherwise the
//! sentence says the groups are not told apart yet and how many requests per group would tell
//! (a [`DEFAULT_DETECT`] difference at [`POWER`](crate::uncertainty::sample_size::POWER), or
//! the fewest that give an interval at all).

use crate::differences::DEFAULT_DETECT;
use crate::format::{ms, ms_range};
use crate::stats::{percentile_sorted, sorted};
use crate::uncertainty::sample_size::requests_to_detect;
use crate::uncertainty::shift::{hodges_lehmann, shift_requests_needed};
use crate::uncertainty::{DEFAULT_LEVEL, Interval};

/// The shift of a later group from an earlier one (`later − earlier`, ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shift {
    /// The Hodges–Lehmann estimate.
    pub estimate: f64,
    /// Its interval at [`DEFAULT_LEVEL`]; `None` when the groups are too small for one.
    pub interval: Option<Interval>,
    /// Requests per group that would show a [`DEFAULT_DETECT`] difference (with an interval)
    /// or give an interval at all (without one).
    pub needs: Option<usize>,
}

impl Shift {
    /// The shift of `later` from `earlier` (per-request values, any order; non-finite ones
    /// are left out); `None` when either has no value.
    pub(crate) fn between(earlier: &[f64], later: &[f64]) -> Option<Self> {
        let (a, b) = (sorted(earlier), sorted(later));
        let d = hodges_lehmann(&a, &b, DEFAULT_LEVEL)?;
        let base = percentile_sorted(&a, 50.0)?;
        let needs = match d.interval {
            Some(i) => requests_to_detect(&i, a.len(), b.len(), DEFAULT_DETECT * base.abs()),
            None => Some(shift_requests_needed(DEFAULT_LEVEL)),
        };
        Some(Self {
            estimate: d.estimate,
            interval: d.interval,
            needs,
        })
    }

    /// The later group is told to be higher: the interval lies above zero.
    pub(crate) fn rose(&self) -> bool {
        self.interval.is_some_and(|i| i.lo > 0.0)
    }

    /// `by 640 ms (95 % interval 410–900 ms)` (without an interval: `by 640 ms`).
    pub(crate) fn by(&self) -> String {
        match self.interval {
            Some(i) => format!(
                "by {} ({} interval {})",
                ms(self.estimate),
                pct(i.level),
                ms_range(i.lo, i.hi)
            ),
            None => format!("by {}", ms(self.estimate)),
        }
    }

    /// Why a rise is not stated, and what would tell: `the 95 % interval of the difference,
    /// −20 to 85 ms, includes zero; about 120 requests per level would show a 10 %
    /// difference`, or `too few requests for an interval: at least 4 per level`. `per`
    /// names a group (`level`, `round`, `band`).
    pub(crate) fn untold(&self, per: &str) -> String {
        match self.interval {
            Some(i) => {
                let side = if i.hi < 0.0 {
                    "lies below zero"
                } else if i.lo > 0.0 {
                    "lies above zero"
                } else {
                    "includes zero"
                };
                let advice = self.needs.map_or(String::new(), |n| {
                    format!(
                        "; about {n} requests per {per} would show a {:.0} % difference",
                        DEFAULT_DETECT * 100.0
                    )
                });
                format!(
                    "the {} interval of the difference, {}, {side}{advice}",
                    pct(i.level),
                    ms_range(i.lo, i.hi)
                )
            }
            None => format!(
                "too few requests for an interval: at least {} per {per}",
                self.needs
                    .unwrap_or_else(|| shift_requests_needed(DEFAULT_LEVEL))
            ),
        }
    }
}

fn pct(level: f64) -> String {
    format!("{:.0} %", level * 100.0)
}
