//! How sure each of a run's figures is: the samples behind its headline figures, taken once
//! from the report ([`RunSamples`]), and each figure's estimate with its interval
//! ([`RunSamples::estimate`]) by the methods of [`crate::uncertainty`]. Share links recompute
//! them on opening (they store nothing new); a link that left out per-gap timings carries
//! the original run's figures without the gaps, so its ITL has no interval.

use serde::{Deserialize, Serialize};

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use crate::experience::{ExperienceSummary, RequestExperience};
use crate::metrics::RequestMetrics;
use crate::record_experience::score;
use crate::report::{Aggregates, Report, RequestRecord};
use crate::run_stats::RunStats;
use crate::stats::sorted;
use crate::uncertainty::bootstrap::{self, Clusters, LARGE, MIN_CLUSTERS, REPLICATES, seed_of};
use crate::uncertainty::proportion::proportion_estimate;
use crate::uncertainty::quantile::{percentile_estimate, requests_needed};
use crate::uncertainty::{Estimate, sane_level};

/// A per-request value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PerRequest {
    /// Time to first byte.
    Ttfb,
    /// Time to first token.
    Ttft,
    /// Time to the first answer token.
    FirstAnswer,
    /// Time to the meaningful first token.
    Meaningful,
    /// Time per output token.
    Tpot,
    /// End to end.
    E2e,
    /// Decode rate (tokens/s).
    DecodeRate,
    /// Time to valid JSON.
    JsonValid,
    /// Reading QoE.
    Qoe,
    /// Fluidity miss rate.
    FluidityMiss,
    /// Time to second token.
    Ttst,
    /// Per-user output tokens/s.
    UserOutputRate,
    /// Per-user prefill tokens/s.
    PrefillRate,
}

impl PerRequest {
    /// Every per-request value.
    pub const ALL: [PerRequest; 13] = [
        PerRequest::Ttfb,
        PerRequest::Ttft,
        PerRequest::FirstAnswer,
        PerRequest::Meaningful,
        PerRequest::Tpot,
        PerRequest::E2e,
        PerRequest::DecodeRate,
        PerRequest::JsonValid,
        PerRequest::Qoe,
        PerRequest::FluidityMiss,
        PerRequest::Ttst,
        PerRequest::UserOutputRate,
        PerRequest::PrefillRate,
    ];

    /// Whether its values seed the run's bootstrap replicates: the values added with issue #32
    /// (time to second token, per-user rates) do not, so a run keeps the replicates, hence the
    /// intervals, it had before them.
    fn seeds(self) -> bool {
        !matches!(
            self,
            PerRequest::Ttst | PerRequest::UserOutputRate | PerRequest::PrefillRate
        )
    }

    /// The value of a successful request's metrics (the experience scores are not there).
    fn of(self, m: &RequestMetrics) -> Option<f64> {
        match self {
            PerRequest::Ttfb => m.ttfb_ms,
            PerRequest::Ttft => m.ttft_ms,
            PerRequest::FirstAnswer => m.first_answer_ms,
            PerRequest::Meaningful => m.meaningful_ms,
            PerRequest::Tpot => m.tpot_ms,
            PerRequest::E2e => m.e2e_ms,
            PerRequest::DecodeRate => m.decode_tokens_per_s,
            PerRequest::JsonValid => m.json_valid_ms(),
            PerRequest::Ttst => m.ttst_ms(),
            PerRequest::UserOutputRate => m.user_output_tokens_per_s(),
            PerRequest::PrefillRate => m.prefill_tokens_per_s(),
            PerRequest::Qoe | PerRequest::FluidityMiss => None,
        }
    }
}

/// A share of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Share {
    /// Requests that succeeded within the thresholds.
    Goodput,
    /// Requests that failed.
    Errors,
    /// Requests whose reader waited mid-answer (of those with a reading score).
    ReaderWaits,
}

/// A figure of a run that is a statistic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Figure {
    /// Percentile `pct` (0–100) of a per-request value.
    Percentile {
        /// The value.
        of: PerRequest,
        /// The percentile.
        pct: u8,
    },
    /// Percentile `pct` of the per-token gaps (ITL), pooled over requests.
    Itl {
        /// The percentile.
        pct: u8,
    },
    /// A share of requests.
    Share {
        /// Which share.
        of: Share,
    },
}

/// The samples behind a run's figures: sorted per-request values, the per-token gaps grouped
/// by request, and the counts behind its shares. Bootstrap replicates are drawn once per
/// figure and kept, so a figure's interval and its differences from other runs share them.
#[derive(Debug, Default)]
pub struct RunSamples {
    /// Per value, the successful measured requests' values, ascending.
    per_request: Vec<(PerRequest, Vec<f64>)>,
    /// Per-token gaps by request.
    itl: Clusters,
    /// Measured requests the server is judged on (those the client cut at its own end of run
    /// are left out: [`Aggregates::judged`]).
    pub requests: usize,
    /// Failed measured requests (the server's failures).
    pub errors: usize,
    /// Measured requests within the thresholds.
    pub good: usize,
    /// Requests with a reading score, and of them those with a reader wait.
    pub reading: (usize, usize),
    /// Per value, `(pair, value)` of the successful requests that carry a pair index
    /// (interleaved runs), ascending by pair.
    pairs: Vec<(PerRequest, Vec<(u32, f64)>)>,
    /// The run's own seed (from its data): runs draw independent replicates, and a run always
    /// the same ones.
    seed: u64,
    /// Replicates drawn so far, by figure.
    replicates: Mutex<Vec<(Figure, Arc<Vec<f64>>)>>,
    /// The run was opened from a share link that left out the per-gap timings of some requests
    /// ([`crate::report::SharedFrom::headline`]): its gaps are not the run's, so its ITL has
    /// no samples, hence no interval and no difference.
    pub gaps_left_out: bool,
}

impl Clone for RunSamples {
    fn clone(&self) -> Self {
        Self {
            per_request: self.per_request.clone(),
            itl: self.itl.clone(),
            requests: self.requests,
            errors: self.errors,
            good: self.good,
            reading: self.reading,
            pairs: self.pairs.clone(),
            seed: self.seed,
            gaps_left_out: self.gaps_left_out,
            replicates: Mutex::new(
                self.replicates
                    .lock()
                    .map(|r| r.clone())
                    .unwrap_or_default(),
            ),
        }
    }
}

/// A run's statistics and the samples behind them, scoring each stream's experience once
/// (what [`RunStats::aggregates`] and [`RunSamples::of`] would do twice). A share link that
/// carries its run's headline keeps it; its samples then have no experience scores.
pub fn aggregates_and_samples(report: &Report) -> (Aggregates, RunSamples) {
    if report
        .shared
        .as_ref()
        .and_then(|s| s.headline.as_deref())
        .is_some()
    {
        let agg = report.aggregates();
        let samples = RunSamples::build(report, &agg, None);
        return (agg, samples);
    }
    let mut agg = report.live_aggregates();
    let scored = score(report.headline_requests(), &report.experience);
    agg.experience = ExperienceSummary::of(&scored, &report.experience.deadlines);
    let samples = RunSamples::build(report, &agg, Some(&scored));
    (agg, samples)
}

impl RunSamples {
    /// The samples of a run, with `agg` its [`crate::run_stats::RunStats::aggregates`] (for the
    /// goodput count). The experience scores are taken per request only when `agg` holds them.
    pub fn of(report: &Report, agg: &Aggregates) -> Self {
        let scored = agg.experience.reading_requests + agg.experience.fluidity_requests > 0;
        if scored {
            let scores = score(report.headline_requests(), &report.experience);
            Self::build(report, agg, Some(&scores))
        } else {
            Self::build(report, agg, None)
        }
    }

    /// The samples, with `scores` the successful measured requests' experience (in order) when
    /// they were scored.
    fn build(report: &Report, agg: &Aggregates, scores: Option<&[RequestExperience]>) -> Self {
        let reqs: Vec<&RequestRecord> = report.headline_requests().collect();
        let ok: Vec<&RequestRecord> = reqs.iter().copied().filter(|r| r.outcome.is_ok()).collect();
        let judged = reqs
            .iter()
            .filter(|r| !r.outcome.is_cut_by_client())
            .count();
        let mut per_request: Vec<(PerRequest, Vec<f64>)> = PerRequest::ALL
            .iter()
            .map(|k| {
                let values: Vec<f64> = ok.iter().filter_map(|r| k.of(&r.metrics)).collect();
                (*k, sorted(&values))
            })
            .collect();
        if let Some(scores) = scores {
            let (mut qoe, mut miss) = (Vec::new(), Vec::new());
            for e in scores {
                qoe.extend(e.reading.as_ref().map(|x| x.qoe));
                miss.extend(e.fluidity.as_ref().map(|x| x.miss_rate));
            }
            for (k, v) in &mut per_request {
                match k {
                    PerRequest::Qoe => *v = sorted(&qoe),
                    PerRequest::FluidityMiss => *v = sorted(&miss),
                    _ => {}
                }
            }
        }
        let mut pairs: Vec<(PerRequest, Vec<(u32, f64)>)> = PerRequest::ALL
            .iter()
            .map(|k| {
                let mut v: Vec<(u32, f64)> = ok
                    .iter()
                    .filter_map(|r| Some((r.pair?, k.of(&r.metrics)?)))
                    .filter(|(_, x)| x.is_finite())
                    .collect();
                v.sort_by_key(|(p, _)| *p);
                (*k, v)
            })
            .collect();
        pairs.retain(|(_, v)| !v.is_empty());
        let gaps_left_out = report.shared.as_ref().is_some_and(|s| s.headline.is_some());
        let mut gaps = Vec::new();
        let mut spans = Vec::with_capacity(ok.len());
        for r in ok.iter().filter(|_| !gaps_left_out) {
            let a = gaps.len();
            r.metrics.extend_per_token_itl(&mut gaps);
            spans.push((a, gaps.len()));
        }
        let itl = Clusters::new(spans.iter().map(|(a, b)| &gaps[*a..*b]));
        let seed = per_request
            .iter()
            .filter(|(k, _)| k.seeds())
            .flat_map(|(_, v)| v.iter().take(3).chain(v.last()))
            .fold(seed_of(&report.title) ^ gaps.len() as u64, |h, x| {
                (h ^ x.to_bits()).wrapping_mul(0x0100_0000_01b3)
            });
        Self {
            per_request,
            itl,
            requests: judged,
            errors: reqs.iter().filter(|r| r.outcome.is_failure()).count(),
            good: (agg.goodput * judged as f64).round() as usize,
            reading: (agg.experience.reading_requests, agg.experience.with_waits),
            pairs,
            seed,
            replicates: Mutex::new(Vec::new()),
            gaps_left_out,
        }
    }

    /// `(pair, value)` of `of` for the requests with a pair index, ascending by pair.
    pub fn pair_values(&self, of: PerRequest) -> &[(u32, f64)] {
        self.pairs
            .iter()
            .find(|(k, _)| *k == of)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// The sorted values of a per-request figure (empty when the run has none).
    pub fn values(&self, of: PerRequest) -> &[f64] {
        self.per_request
            .iter()
            .find(|(k, _)| *k == of)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// The per-token gaps by request.
    pub fn itl(&self) -> &Clusters {
        &self.itl
    }

    /// The value of a figure without its interval (cheap: no bootstrap).
    pub fn value(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Percentile { of, pct } => {
                crate::stats::percentile_sorted(self.values(of), f64::from(pct))
            }
            Figure::Itl { pct } => self.itl.percentile(f64::from(pct) / 100.0),
            Figure::Share { of } => {
                let (hits, n) = self.share(of);
                (n > 0).then(|| hits as f64 / n as f64)
            }
        }
    }

    /// The groups a figure is resampled in: requests' gaps for ITL, single values otherwise.
    pub fn clusters(&self, figure: Figure) -> Option<Cow<'_, Clusters>> {
        match figure {
            Figure::Itl { .. } => Some(Cow::Borrowed(&self.itl)),
            Figure::Percentile { of, .. } => {
                Some(Cow::Owned(Clusters::from_sorted(self.values(of))))
            }
            Figure::Share { .. } => None,
        }
    }

    /// [`REPLICATES`] bootstrap replicates of a percentile figure, drawn once with the run's
    /// seed and kept; `None` for a share.
    pub fn replicates(&self, figure: Figure) -> Option<Arc<Vec<f64>>> {
        if let Ok(cache) = self.replicates.lock()
            && let Some((_, r)) = cache.iter().find(|(f, _)| *f == figure)
        {
            return Some(Arc::clone(r));
        }
        let (p, seed) = match figure {
            Figure::Itl { pct } => (f64::from(pct) / 100.0, seed_of("itl") ^ u64::from(pct)),
            Figure::Percentile { of, pct } => (
                f64::from(pct) / 100.0,
                seed_of(&format!("{of:?}")) ^ u64::from(pct),
            ),
            Figure::Share { .. } => return None,
        };
        let reps = match figure {
            Figure::Itl { .. } => self.itl.replicates(p, REPLICATES, self.seed ^ seed),
            _ => self
                .clusters(figure)?
                .replicates(p, REPLICATES, self.seed ^ seed),
        };
        let reps = Arc::new(reps);
        if let Ok(mut cache) = self.replicates.lock() {
            cache.push((figure, Arc::clone(&reps)));
        }
        Some(reps)
    }

    /// `(hits, out of)` of a share.
    pub fn share(&self, of: Share) -> (usize, usize) {
        match of {
            Share::Goodput => (self.good, self.requests),
            Share::Errors => (self.errors, self.requests),
            Share::ReaderWaits => (self.reading.1, self.reading.0),
        }
    }

    /// A figure with its interval at `level` (or what it needs for one); `None` when the run
    /// has no value for it.
    pub fn estimate(&self, figure: Figure, level: f64) -> Option<Estimate> {
        let level = sane_level(level);
        match figure {
            Figure::Percentile { of, pct } => {
                percentile_estimate(self.values(of), f64::from(pct) / 100.0, level)
            }
            Figure::Itl { pct } => {
                cluster_estimate(&self.itl, f64::from(pct) / 100.0, level, || {
                    self.replicates(figure)
                })
            }
            Figure::Share { of } => {
                let (hits, n) = self.share(of);
                proportion_estimate(hits, n, level)
            }
        }
    }
}

/// Percentile `p` (0–1) of values grouped by request (per-gap ITL, or any per-gap error) with
/// the interval the studio shows for per-gap ITL: none below [`itl_requests_needed`] requests
/// (the estimate says how many), Woodruff's from [`LARGE`] requests up, and otherwise the
/// expanded percentile interval of the [`REPLICATES`] cluster-bootstrap replicates that
/// `replicates` draws (or returns from a cache). `None` without values.
pub fn cluster_estimate(
    clusters: &Clusters,
    p: f64,
    level: f64,
    replicates: impl FnOnce() -> Option<Arc<Vec<f64>>>,
) -> Option<Estimate> {
    let level = sane_level(level);
    let value = clusters.percentile(p)?;
    let n = clusters.groups();
    let needs = itl_requests_needed(p, level);
    if n < needs {
        return Some(Estimate::without_interval(value, n, Some(needs)));
    }
    let interval = if n >= LARGE {
        clusters.woodruff(p, level).map(|(i, _)| i)
    } else {
        bootstrap::expanded_interval(&replicates()?, value, level, n)
    };
    Some(Estimate {
        value,
        interval,
        n,
        needs: None,
    })
}

/// Requests a per-gap percentile needs for a cluster-bootstrap interval: at least
/// [`MIN_CLUSTERS`], and as many as the same percentile of a per-request value (requests are
/// the independent units; with fewer, a P99's bootstrap covered 90 %, `tests/it/uncertainty.rs`).
pub fn itl_requests_needed(p: f64, level: f64) -> usize {
    MIN_CLUSTERS.max(requests_needed(p, level))
}

/// The values of `of` of the requests that pair up between two runs run interleaved (the same
/// prompt sent to each, back to back), in pair order: empty when the runs were not interleaved.
pub fn paired(a: &RunSamples, b: &RunSamples, of: PerRequest) -> Vec<(f64, f64)> {
    let (pa, pb) = (a.pair_values(of), b.pair_values(of));
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < pa.len() && j < pb.len() {
        match pa[i].0.cmp(&pb[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push((pa[i].1, pb[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out
}
