//! Differences between runs, each with its interval, the figures that cannot be told from
//! noise marked, and how many requests would tell them: the numbers behind every sentence
//! that compares runs ([`crate::compare`]). Methods: [`crate::uncertainty`].
//!
//! A difference is *second run − first run*, in the figure's unit. It is called different
//! only when its interval excludes zero and, in a table of many, its Holm-adjusted p-value is
//! below `1 − level` ([`mark_table`]): so a table of twenty figures of two identical runs
//! shows a false "different" in at most about 5 % of comparisons, not in most of them.

use serde::{Deserialize, Serialize};

use crate::run_intervals::{Figure, RunSamples, itl_requests_needed};
use crate::uncertainty::bootstrap::{self, LARGE};
use crate::uncertainty::holm::holm_adjust;
use crate::uncertainty::proportion::proportion_difference;
use crate::uncertainty::quantile::requests_needed;
use crate::uncertainty::sample_size::requests_to_detect;
use crate::uncertainty::shift::{Difference, hodges_lehmann, paired_median, shift_requests_needed};
use crate::uncertainty::{DEFAULT_LEVEL, Interval, sane_level};

/// The relative difference the sample-size advice is for unless the user chooses another.
pub const DEFAULT_DETECT: f64 = 0.10;

/// Fewer pairs than this and paired requests are compared as independent ones.
pub const MIN_PAIRS: usize = 6;

/// How sure a comparison must be, and what difference its advice is for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    /// Confidence level of every interval (0.95 = 95 %).
    pub level: f64,
    /// The relative difference (0.10 = 10 %) the "requests per side" advice is for.
    pub detect: f64,
}

impl Default for Confidence {
    fn default() -> Self {
        Self {
            level: DEFAULT_LEVEL,
            detect: DEFAULT_DETECT,
        }
    }
}

/// How a difference was estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Hodges–Lehmann shift, Mann–Whitney interval.
    Shift,
    /// Median of paired differences, sign-test interval.
    Paired,
    /// Bootstrap of each run's requests.
    Bootstrap,
    /// Cluster bootstrap of each run's requests' gaps.
    ClusterBootstrap,
    /// Difference of proportions, Newcombe's interval.
    Proportions,
}

impl Method {
    /// In words, for a tooltip.
    pub fn describe(self) -> &'static str {
        match self {
            Method::Shift => {
                "Hodges–Lehmann shift with its distribution-free (Mann–Whitney) interval"
            }
            Method::Paired => {
                "median of paired differences (same prompt, interleaved) with the sign test's interval"
            }
            Method::Bootstrap => {
                "bootstrap of each run's requests (1,000 replicates, seeded; from 500 requests its large-sample form)"
            }
            Method::ClusterBootstrap => {
                "cluster bootstrap over requests of their gaps (1,000 replicates, seeded)"
            }
            Method::Proportions => "difference of shares with Newcombe's interval",
        }
    }
}

/// One figure's difference between two runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DiffCell {
    /// Second run − first run.
    pub estimate: f64,
    /// Its interval; `None` when the runs are too small for one.
    pub interval: Option<Interval>,
    /// The first run's value of the figure (what relative differences are relative to).
    pub baseline: f64,
    /// Two-sided p-value of no difference; `None` without an interval.
    pub p_value: Option<f64>,
    /// Holm-adjusted over the table it is in (the p-value itself until [`mark_table`]).
    pub adjusted_p: Option<f64>,
    /// Whether it is told from noise (see the module doc).
    pub different: bool,
    /// How it was estimated.
    pub method: Method,
    /// Requests per side: with an interval, to detect the chosen relative difference at this
    /// spread (when not different); without one, to have an interval at all.
    pub needs_per_side: Option<usize>,
}

impl DiffCell {
    /// The relative difference and its interval (over the first run's value); `None` when that
    /// value is 0.
    pub fn relative(&self) -> Option<(f64, Option<Interval>)> {
        let b = self.baseline.abs();
        (b > 0.0).then(|| {
            (
                self.estimate / b,
                self.interval.map(|i| Interval {
                    lo: i.lo / b,
                    hi: i.hi / b,
                    level: i.level,
                }),
            )
        })
    }
}

/// The difference of `figure` from run `a` to run `b` (`b − a`), with `pairs` the values of
/// requests that pair up (interleaved runs; used for medians when there are enough); `None`
/// when either run has no value.
pub fn difference(
    a: &RunSamples,
    b: &RunSamples,
    figure: Figure,
    pairs: Option<&[(f64, f64)]>,
    confidence: Confidence,
) -> Option<DiffCell> {
    let level = sane_level(confidence.level);
    let base = a.value(figure)?;
    b.value(figure)?;
    let (diff, method, needs) = match figure {
        Figure::Percentile { of, pct: 50 } => match pairs.filter(|p| p.len() >= MIN_PAIRS) {
            Some(p) => (
                paired_median(p, level)?,
                Method::Paired,
                requests_needed(0.5, level),
            ),
            None => (
                hodges_lehmann(a.values(of), b.values(of), level)?,
                Method::Shift,
                shift_requests_needed(level),
            ),
        },
        Figure::Percentile { pct, .. } => {
            let needs = requests_needed(f64::from(pct) / 100.0, level);
            (
                boot_difference(a, b, figure, level, needs)?,
                Method::Bootstrap,
                needs,
            )
        }
        Figure::Itl { pct } => {
            let needs = itl_requests_needed(f64::from(pct) / 100.0, level);
            (
                boot_difference(a, b, figure, level, needs)?,
                Method::ClusterBootstrap,
                needs,
            )
        }
        Figure::Share { of } => {
            let (d, interval, p_value) = proportion_difference(a.share(of), b.share(of), level)?;
            (
                Difference {
                    estimate: d,
                    interval: Some(interval),
                    p_value,
                },
                Method::Proportions,
                1,
            )
        }
    };
    let n = |s: &RunSamples| match figure {
        Figure::Itl { .. } => s.itl().groups(),
        Figure::Share { of } => s.share(of).1,
        Figure::Percentile { of, .. } => s.values(of).len(),
    };
    let p_value = diff.interval.map(|_| diff.p_value);
    let different = diff.interval.is_some_and(|i| i.excludes_zero())
        && p_value.is_some_and(|p| p < 1.0 - level);
    let needs_per_side = match diff.interval {
        None => Some(needs),
        Some(_) if different => None,
        Some(i) => requests_to_detect(&i, n(a), n(b), confidence.detect * base.abs()),
    };
    Some(DiffCell {
        estimate: diff.estimate,
        interval: diff.interval,
        baseline: base,
        p_value,
        adjusted_p: p_value,
        different,
        method,
        needs_per_side,
    })
}

/// A bootstrap difference of a percentile figure between two runs (each run's own replicates,
/// drawn once and kept); without an interval when either run has fewer groups than `needs`.
fn boot_difference(
    a: &RunSamples,
    b: &RunSamples,
    figure: Figure,
    level: f64,
    needs: usize,
) -> Option<Difference> {
    let estimate = b.value(figure)? - a.value(figure)?;
    let groups = |s: &RunSamples| match figure {
        Figure::Itl { .. } => s.itl().groups(),
        Figure::Percentile { of, .. } => s.values(of).len(),
        Figure::Share { .. } => 0,
    };
    if groups(a) < needs || groups(b) < needs {
        return Some(Difference {
            estimate,
            interval: None,
            p_value: 1.0,
        });
    }
    if groups(a) >= LARGE && groups(b) >= LARGE {
        let p = match figure {
            Figure::Itl { pct } | Figure::Percentile { pct, .. } => f64::from(pct) / 100.0,
            Figure::Share { .. } => return None,
        };
        return bootstrap::large_sample_difference(
            &*a.clusters(figure)?,
            &*b.clusters(figure)?,
            p,
            level,
        );
    }
    let (ra, rb) = (a.replicates(figure)?, b.replicates(figure)?);
    let d: Vec<f64> = rb.iter().zip(ra.iter()).map(|(y, x)| y - x).collect();
    Some(Difference {
        estimate,
        interval: bootstrap::expanded_interval(&d, estimate, level, groups(a).min(groups(b))),
        p_value: bootstrap::p_value(&d),
    })
}

/// Holm's correction over every cell of a table: each cell's `adjusted_p` is set, and a cell
/// stays `different` only if its adjusted p-value is below `1 − level` too.
pub fn mark_table<'a>(cells: impl IntoIterator<Item = &'a mut DiffCell>, level: f64) {
    let mut cells: Vec<&mut DiffCell> = cells.into_iter().collect();
    let p: Vec<Option<f64>> = cells.iter().map(|c| c.p_value).collect();
    let alpha = 1.0 - sane_level(level);
    for (c, adj) in cells.iter_mut().zip(holm_adjust(&p)) {
        c.adjusted_p = adj;
        c.different &= adj.is_some_and(|a| a < alpha);
    }
}
