//! Load shapes: when an open-loop run sends its requests. A [`LoadShape`] (a scenario setting)
//! is planned, seeded, into send times ([`planned_sends`]); the planned rate over time
//! ([`LoadShape::rate_per_s_at`], [`planned_curve`]) and the rate achieved by actual send times
//! in time bins ([`rate_bins`]) are plain data for the "planned vs achieved rate" chart.
//!
//! **The arrival process.** Every open-loop shape is a planned rate `λ(t)` (constant, a
//! linear or exponential ramp, steps) and a *burstiness* `b`, as in vLLM's benchmark
//! (`vllm bench serve --burstiness`, `vllm/benchmarks/serve.py`): gaps between requests are
//! gamma-distributed with shape `b` and scale `1/(rate·b)`, so their mean is `1/rate` and their
//! coefficient of variation `1/√b`; `b = 1` is a Poisson process, `b < 1` burstier (0.25 gives
//! a CV of 2), `b > 1` more even. A shape whose rate changes over time draws its gaps the same
//! way in *operational time* (unit mean) and maps them through the inverse of the integrated
//! rate `Λ(t) = ∫₀ᵗ λ` (the time-rescaling of a non-homogeneous process): with `b = 1` this is
//! exactly the Poisson process of intensity `λ(t)`, and the expected sends in any window are
//! `Λ(end) − Λ(start)` ([`LoadShape::expected_sends`]). vLLM ramps its rate by request index
//! over the whole run and rescales a constant rate's gaps to hit the planned duration; here a
//! ramp is over a stated time, and gaps are left independent, so a run's achieved rate varies
//! by seed as a Poisson process's does (the chart draws its interval).
//!
//! Gaps are drawn by the gamma distribution's inverse CDF (`statrs`) at `fastrand`'s seeded
//! uniforms, so a seed gives the same plan on every platform. Past a ramp's duration, or the
//! last step, the final rate holds for as long as there are requests.
//!
//! A [`LoadShape::ConcurrencyRamp`] is the closed loop's ramp: its lanes start one by one
//! (linearly or exponentially more of them over a time) and each then sends its next request
//! when its previous one ends; its plan is the lanes' start times, one per lane.
//!
//! Sans-IO: the seed comes in as an argument.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Gamma};
use thiserror::Error;

use crate::uncertainty::Interval;
use crate::uncertainty::count::rate_interval;

/// The highest burstiness a shape takes: above it gaps are even to within 3 % (CV `1/√b`).
pub const MAX_BURSTINESS: f64 = 1000.0;

/// A load shape that cannot be planned, with what to change.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum LoadShapeError {
    /// A rate that is not a positive number.
    #[error("the rate must be a positive number of requests per second, not {0}")]
    BadRate(String),
    /// A step rate that is negative or not a number.
    #[error("a step's rate must be 0 or more requests per second, not {0}")]
    BadStepRate(String),
    /// A burstiness out of range.
    #[error(
        "the burstiness must be a positive number up to 1000 (1 = Poisson, below 1 burstier, above 1 more even), not {0}"
    )]
    BadBurstiness(String),
    /// A duration that is not a positive number of seconds.
    #[error("a ramp or a step lasts a positive number of seconds, not {0}")]
    BadDuration(String),
    /// An exponential ramp from zero.
    #[error(
        "an exponential ramp cannot start at 0 (it would never grow): start it at a small rate or lane count, or ramp linearly"
    )]
    ExponentialFromZero,
    /// A rate ramp that ends at zero.
    #[error("a ramp's target rate must be above 0 (the plan holds it after the ramp), not {0}")]
    RampToZero(String),
    /// Steps without a rate.
    #[error("give at least one step rate, e.g. 1, 2, 4")]
    NoSteps,
    /// Steps whose last rate is zero.
    #[error("the last step's rate must be above 0 (the plan holds it after the last step)")]
    LastStepZero,
    /// A concurrency ramp ending below its start, or at no lane.
    #[error(
        "a concurrency ramp ends at 1 or more lanes, at least as many as it starts with (not from {from} to {to})"
    )]
    BadLanes {
        /// Lanes at the start.
        from: u32,
        /// Lanes at the end.
        to: u32,
    },
}

/// How a ramp moves from its start to its target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Curve {
    /// By the same amount each second.
    #[default]
    Linear,
    /// By the same factor each second (vLLM's exponential ramp-up).
    Exponential,
}

/// When an open-loop run sends, or how a closed loop's lanes start: a scenario setting
/// ([`crate::scenario::ScenarioConfig::load`]). Rates are requests per second, durations
/// seconds; `burstiness` is vLLM's (1 = Poisson), absent from settings = 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum LoadShape {
    /// A Poisson process at a constant rate (exponential gaps).
    Poisson {
        /// Requests per second.
        rate_per_s: f64,
    },
    /// Gamma-distributed gaps at a constant rate: vLLM's burstiness.
    Gamma {
        /// Requests per second.
        rate_per_s: f64,
        /// The gaps' gamma shape: 1 = Poisson, below 1 burstier, above 1 more even.
        burstiness: f64,
    },
    /// A rate ramp from `from_per_s` to `to_per_s` over `over_s`, then `to_per_s`.
    Ramp {
        /// The rate at the start.
        from_per_s: f64,
        /// The rate reached after `over_s`, and held.
        to_per_s: f64,
        /// The ramp's duration (s).
        over_s: f64,
        /// Linear or exponential.
        #[serde(default)]
        curve: Curve,
        /// The gaps' gamma shape (1 = Poisson).
        #[serde(default = "one")]
        burstiness: f64,
    },
    /// A list of rates, each held for `step_s`; the last one holds after its step.
    Steps {
        /// The rate of each step (0 = a pause; the last must be above 0).
        rates_per_s: Vec<f64>,
        /// Each step's duration (s).
        step_s: f64,
        /// The gaps' gamma shape (1 = Poisson).
        #[serde(default = "one")]
        burstiness: f64,
    },
    /// A closed loop whose lanes grow from `from` to `to` over `over_s`: lane `k` (from 0)
    /// starts when the curve first reaches `k + 1` lanes, then sends its next request when
    /// its previous one ends.
    ConcurrencyRamp {
        /// Lanes at the start (0 is allowed for a linear ramp).
        from: u32,
        /// Lanes reached after `over_s`: the phase's concurrency.
        to: u32,
        /// The ramp's duration (s); 0 starts every lane at once.
        over_s: f64,
        /// Linear or exponential.
        #[serde(default)]
        curve: Curve,
    },
}

/// The default burstiness: a Poisson process.
fn one() -> f64 {
    1.0
}

/// A number as an error message writes it.
fn shown(x: f64) -> String {
    format!("{x}")
}

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

impl LoadShape {
    /// Checks the numbers; the error says which one to change.
    pub fn check(&self) -> Result<(), LoadShapeError> {
        let rate = |r: f64| {
            positive(r)
                .then_some(())
                .ok_or(LoadShapeError::BadRate(shown(r)))
        };
        let duration = |d: f64| {
            positive(d)
                .then_some(())
                .ok_or(LoadShapeError::BadDuration(shown(d)))
        };
        let b = self.burstiness();
        if !(positive(b) && b <= MAX_BURSTINESS) {
            return Err(LoadShapeError::BadBurstiness(shown(b)));
        }
        match self {
            LoadShape::Poisson { rate_per_s } | LoadShape::Gamma { rate_per_s, .. } => {
                rate(*rate_per_s)
            }
            LoadShape::Ramp {
                from_per_s,
                to_per_s,
                over_s,
                curve,
                ..
            } => {
                duration(*over_s)?;
                if !positive(*to_per_s) {
                    return Err(LoadShapeError::RampToZero(shown(*to_per_s)));
                }
                match curve {
                    Curve::Exponential if *from_per_s == 0.0 => {
                        Err(LoadShapeError::ExponentialFromZero)
                    }
                    _ if !(from_per_s.is_finite() && *from_per_s >= 0.0) => {
                        Err(LoadShapeError::BadRate(shown(*from_per_s)))
                    }
                    _ => Ok(()),
                }
            }
            LoadShape::Steps {
                rates_per_s,
                step_s,
                ..
            } => {
                duration(*step_s)?;
                let last = rates_per_s.last().ok_or(LoadShapeError::NoSteps)?;
                if let Some(bad) = rates_per_s.iter().find(|r| !(r.is_finite() && **r >= 0.0)) {
                    return Err(LoadShapeError::BadStepRate(shown(*bad)));
                }
                positive(*last)
                    .then_some(())
                    .ok_or(LoadShapeError::LastStepZero)
            }
            LoadShape::ConcurrencyRamp {
                from,
                to,
                over_s,
                curve,
            } => {
                if *to == 0 || from > to {
                    return Err(LoadShapeError::BadLanes {
                        from: *from,
                        to: *to,
                    });
                }
                if *curve == Curve::Exponential && *from == 0 {
                    return Err(LoadShapeError::ExponentialFromZero);
                }
                if !(over_s.is_finite() && *over_s >= 0.0) {
                    return Err(LoadShapeError::BadDuration(shown(*over_s)));
                }
                Ok(())
            }
        }
    }

    /// The gaps' gamma shape (1 for a Poisson process and a concurrency ramp).
    pub fn burstiness(&self) -> f64 {
        match self {
            LoadShape::Gamma { burstiness, .. }
            | LoadShape::Ramp { burstiness, .. }
            | LoadShape::Steps { burstiness, .. } => *burstiness,
            LoadShape::Poisson { .. } | LoadShape::ConcurrencyRamp { .. } => 1.0,
        }
    }

    /// Whether requests go at planned times (every shape but a concurrency ramp).
    pub fn is_open_loop(&self) -> bool {
        !matches!(self, LoadShape::ConcurrencyRamp { .. })
    }

    /// The rate the plan settles at (requests per second): the constant rate, a ramp's
    /// target, the last step's; 0 for a concurrency ramp (a closed loop).
    pub fn settled_rate_per_s(&self) -> f64 {
        match self {
            LoadShape::Poisson { rate_per_s } | LoadShape::Gamma { rate_per_s, .. } => *rate_per_s,
            LoadShape::Ramp { to_per_s, .. } => *to_per_s,
            LoadShape::Steps { rates_per_s, .. } => rates_per_s.last().copied().unwrap_or(0.0),
            LoadShape::ConcurrencyRamp { .. } => 0.0,
        }
    }

    /// The planned rate (requests per second) at `t_ms` from the phase's start; `None` for a
    /// concurrency ramp, whose rate is the server's to set ([`LoadShape::lanes_at`]).
    pub fn rate_per_s_at(&self, t_ms: f64) -> Option<f64> {
        Profile::of(self).map(|p| p.rate_at(t_ms.max(0.0) / 1e3))
    }

    /// The requests the plan expects between `from_ms` and `to_ms` (from the phase's start):
    /// the integrated rate over the window; `None` for a concurrency ramp.
    pub fn expected_sends(&self, from_ms: f64, to_ms: f64) -> Option<f64> {
        let p = Profile::of(self)?;
        Some(p.integrated(to_ms.max(0.0) / 1e3) - p.integrated(from_ms.max(0.0) / 1e3))
    }

    /// A concurrency ramp's lanes running at `t_ms` from the phase's start; `None` for an
    /// open-loop shape or one that does not [check](LoadShape::check).
    pub fn lanes_at(&self, t_ms: f64) -> Option<u32> {
        self.check().ok()?;
        let LoadShape::ConcurrencyRamp {
            from,
            to,
            over_s,
            curve,
        } = *self
        else {
            return None;
        };
        let (f, t) = (f64::from(from), f64::from(to));
        let x = if over_s <= 0.0 {
            1.0
        } else {
            (t_ms / 1e3 / over_s).clamp(0.0, 1.0)
        };
        let lanes = match curve {
            Curve::Linear => f + (t - f) * x,
            Curve::Exponential => f * (t / f).powf(x),
        };
        // A hair above, so a lane counts from its own start time despite rounding.
        Some(((lanes + 1e-9).floor() as u32).clamp(from, to))
    }

    /// The shape in words: `gamma, 4 req/s, burstiness 0.25`, `linear ramp 1 → 8 req/s over
    /// 60 s`, `steps of 30 s: 1, 2, 4 req/s`, `linear ramp 1 → 16 lanes over 60 s`.
    pub fn describe(&self) -> String {
        let bursts = |b: f64| {
            if b == 1.0 {
                String::new()
            } else {
                format!(", burstiness {b}")
            }
        };
        let curve = |c: Curve| match c {
            Curve::Linear => "linear",
            Curve::Exponential => "exponential",
        };
        match self {
            LoadShape::Poisson { rate_per_s } => format!("Poisson, {rate_per_s} req/s"),
            LoadShape::Gamma {
                rate_per_s,
                burstiness,
            } => format!("gamma, {rate_per_s} req/s, burstiness {burstiness}"),
            LoadShape::Ramp {
                from_per_s,
                to_per_s,
                over_s,
                curve: c,
                burstiness,
            } => format!(
                "{} ramp {from_per_s} → {to_per_s} req/s over {over_s} s{}",
                curve(*c),
                bursts(*burstiness)
            ),
            LoadShape::Steps {
                rates_per_s,
                step_s,
                burstiness,
            } => format!(
                "steps of {step_s} s: {} req/s{}",
                rates_per_s
                    .iter()
                    .map(|r| format!("{r}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                bursts(*burstiness)
            ),
            LoadShape::ConcurrencyRamp {
                from,
                to,
                over_s,
                curve: c,
            } => format!("{} ramp {from} → {to} lanes over {over_s} s", curve(*c)),
        }
    }
}

/// The planned send times of `count` requests, ms from the phase's start, nondecreasing, the
/// same for the same shape, count and seed. For a concurrency ramp: the start times of its
/// first `min(count, to)` lanes (the other requests go when a lane is free).
pub fn planned_sends(
    shape: &LoadShape,
    count: usize,
    seed: u64,
) -> Result<Vec<f64>, LoadShapeError> {
    shape.check()?;
    if let Some(starts) = ramp_lane_starts(shape, count) {
        return Ok(starts);
    }
    let Some(profile) = Profile::of(shape) else {
        return Ok(Vec::new());
    };
    let gap = UnitGap::new(shape.burstiness());
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut operational = 0.0;
    let mut last = 0.0f64;
    Ok((0..count)
        .map(|_| {
            operational += gap.draw(rng.f64());
            // Monotone already; the max guards the last ulp of the inverse's arithmetic.
            last = last.max(profile.time_of(operational) * 1e3);
            last
        })
        .collect())
}

/// A concurrency ramp's lane start times (at most `count`, ms); `None` for an open-loop shape.
fn ramp_lane_starts(shape: &LoadShape, count: usize) -> Option<Vec<f64>> {
    let LoadShape::ConcurrencyRamp {
        from,
        to,
        over_s,
        curve,
    } = *shape
    else {
        return None;
    };
    Some(lane_starts(from, to, over_s, curve, count))
}

/// The start times (ms) of the first `count` lanes of a concurrency ramp: those it starts
/// with at 0, then lane `k` when the curve reaches `k + 1` lanes.
fn lane_starts(from: u32, to: u32, over_s: f64, curve: Curve, count: usize) -> Vec<f64> {
    let (f, t) = (f64::from(from), f64::from(to));
    (0..to.min(u32::try_from(count).unwrap_or(u32::MAX)))
        .map(|k| {
            let need = f64::from(k) + 1.0;
            if k < from || over_s <= 0.0 || from == to {
                return 0.0;
            }
            let x = match curve {
                Curve::Linear => (need - f) / (t - f),
                Curve::Exponential => (need / f).ln() / (t / f).ln(),
            };
            x.clamp(0.0, 1.0) * over_s * 1e3
        })
        .collect()
}

/// One gap in operational time: gamma with shape `b` and mean 1 (exponential when `b = 1`).
enum UnitGap {
    /// Exponential gaps: a Poisson process.
    Poisson,
    /// Gamma gaps of shape `b`, rate `b`.
    Gamma(Gamma),
}

impl UnitGap {
    /// Gaps of burstiness `b`; one that is not positive and finite (never, once checked)
    /// gives Poisson gaps rather than a panic.
    fn new(b: f64) -> Self {
        if b == 1.0 {
            return UnitGap::Poisson;
        }
        // Shape b and rate b: mean 1, CV 1/√b.
        Gamma::new(b, b).map_or(UnitGap::Poisson, UnitGap::Gamma)
    }

    /// The gap at uniform `u` in [0, 1): the distribution's inverse CDF.
    fn draw(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0 - f64::EPSILON);
        match self {
            UnitGap::Poisson => -(-u).ln_1p(),
            UnitGap::Gamma(d) => d.inverse_cdf(u),
        }
    }
}

/// One piece of a planned rate: a constant, a linear or an exponential change, over a span
/// (infinite for the last piece).
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// Its start (s from the phase's start).
    start: f64,
    /// Its duration (s); infinite for the last.
    span: f64,
    /// Rate at its start and its end (req/s).
    from: f64,
    to: f64,
    curve: Curve,
}

impl Piece {
    fn constant(start: f64, span: f64, rate: f64) -> Self {
        Self {
            start,
            span,
            from: rate,
            to: rate,
            curve: Curve::Linear,
        }
    }

    /// The rate `tau` seconds into the piece.
    fn rate(&self, tau: f64) -> f64 {
        if self.from == self.to || !self.span.is_finite() {
            return self.from;
        }
        let x = (tau / self.span).clamp(0.0, 1.0);
        match self.curve {
            Curve::Linear => self.from + (self.to - self.from) * x,
            Curve::Exponential => self.from * (self.to / self.from).powf(x),
        }
    }

    /// Requests planned in its first `tau` seconds.
    fn integrated(&self, tau: f64) -> f64 {
        let tau = tau.clamp(0.0, self.span);
        if self.from == self.to || !self.span.is_finite() {
            return self.from * tau;
        }
        match self.curve {
            Curve::Linear => {
                self.from * tau + (self.to - self.from) * tau * tau / (2.0 * self.span)
            }
            Curve::Exponential => {
                let g = (self.to / self.from).ln() / self.span;
                self.from * (g * tau).exp_m1() / g
            }
        }
    }

    /// The time into the piece (s) at which `v` requests are planned (`v` within it).
    fn time_of(&self, v: f64) -> f64 {
        if v <= 0.0 {
            return 0.0;
        }
        if self.from == self.to || !self.span.is_finite() {
            return if self.from > 0.0 { v / self.from } else { 0.0 };
        }
        match self.curve {
            Curve::Linear => {
                let k = (self.to - self.from) / self.span;
                // The root of from·τ + k·τ²/2 = v written without cancellation; the square
                // root's argument stays ≥ to² ≥ 0 within the piece.
                2.0 * v / (self.from + (self.from * self.from + 2.0 * k * v).max(0.0).sqrt())
            }
            Curve::Exponential => {
                let g = (self.to / self.from).ln() / self.span;
                (g * v / self.from).ln_1p() / g
            }
        }
    }
}

/// A planned rate over time: pieces back to back from 0, the last one infinite.
struct Profile(Vec<Piece>);

impl Profile {
    /// The rate profile of an open-loop shape; `None` for a concurrency ramp.
    fn of(shape: &LoadShape) -> Option<Self> {
        let pieces = match *shape {
            LoadShape::Poisson { rate_per_s } | LoadShape::Gamma { rate_per_s, .. } => {
                vec![Piece::constant(0.0, f64::INFINITY, rate_per_s)]
            }
            LoadShape::Ramp {
                from_per_s,
                to_per_s,
                over_s,
                curve,
                ..
            } => vec![
                Piece {
                    start: 0.0,
                    span: over_s,
                    from: from_per_s,
                    to: to_per_s,
                    curve,
                },
                Piece::constant(over_s, f64::INFINITY, to_per_s),
            ],
            LoadShape::Steps {
                ref rates_per_s,
                step_s,
                ..
            } => rates_per_s
                .iter()
                .enumerate()
                .map(|(i, &r)| {
                    let last = i + 1 == rates_per_s.len();
                    let span = if last { f64::INFINITY } else { step_s };
                    Piece::constant(i as f64 * step_s, span, r)
                })
                .collect(),
            LoadShape::ConcurrencyRamp { .. } => return None,
        };
        Some(Profile(pieces))
    }

    /// The piece holding time `t` (s) and the ones before it.
    fn at(&self, t: f64) -> Option<&Piece> {
        self.0
            .iter()
            .rev()
            .find(|p| p.start <= t)
            .or(self.0.first())
    }

    fn rate_at(&self, t: f64) -> f64 {
        self.at(t).map_or(0.0, |p| p.rate(t - p.start))
    }

    /// Requests planned from 0 to `t` (s).
    fn integrated(&self, t: f64) -> f64 {
        self.0
            .iter()
            .take_while(|p| p.start <= t)
            .map(|p| p.integrated(t - p.start))
            .sum()
    }

    /// The time (s) at which `v` requests are planned: the inverse of [`Profile::integrated`].
    fn time_of(&self, v: f64) -> f64 {
        let mut before = 0.0;
        for p in &self.0 {
            let within = p.integrated(p.span);
            if v <= before + within || !p.span.is_finite() {
                return p.start + p.time_of(v - before);
            }
            before += within;
        }
        // Unreachable: the last piece is infinite.
        self.0.last().map_or(0.0, |p| p.start)
    }
}

/// The planned curve up to `until_ms` as `(ms from the phase's start, value)` points for a
/// line chart: requests per second for an open-loop shape, lanes for a concurrency ramp. A
/// jump (a step's edge, a lane starting) is two points at one time; an exponential ramp is
/// sampled every 1/32 of its duration.
pub fn planned_curve(shape: &LoadShape, until_ms: f64) -> Vec<(f64, f64)> {
    if shape.check().is_err() || !(until_ms.is_finite() && until_ms > 0.0) {
        return Vec::new();
    }
    let until = until_ms / 1e3;
    let mut out = Vec::new();
    if let Some(starts) = ramp_lane_starts(shape, usize::MAX) {
        let mut lanes = starts.iter().filter(|s| **s <= 0.0).count() as f64;
        out.push((0.0, lanes));
        for &start in starts.iter().filter(|s| **s > 0.0 && **s <= until_ms) {
            out.push((start, lanes));
            lanes += 1.0;
            out.push((start, lanes));
        }
        out.push((until_ms, lanes));
        return out;
    }
    let Some(profile) = Profile::of(shape) else {
        return out;
    };
    for p in profile.0.iter().filter(|p| p.start < until) {
        let end = (p.start + p.span).min(until);
        let samples = if p.curve == Curve::Exponential && p.from != p.to {
            32
        } else {
            1
        };
        for i in 0..=samples {
            let t = p.start + (end - p.start) * f64::from(i) / f64::from(samples);
            out.push((t * 1e3, p.rate(t - p.start)));
        }
    }
    out
}

/// Sends counted in one time bin, as a rate with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateBin {
    /// The bin's start (ms, on the send times' clock).
    pub start_ms: f64,
    /// Its end (ms).
    pub end_ms: f64,
    /// Sends in it.
    pub sends: usize,
    /// Sends per second.
    pub per_s: f64,
    /// The rate's exact Poisson interval ([`crate::uncertainty::count`]).
    pub interval: Option<Interval>,
}

/// The achieved rate: send times (ms) counted in bins of about `bin_ms` from `from_ms` to
/// `until_ms`. The span is cut into whole bins of one width (the nearest count to `bin_ms`,
/// at least one), so no bin is a sliver; a send at `until_ms` counts in the last bin, sends
/// outside the span in none. Each rate has its interval at `level`. Empty when the span or the
/// bin is not positive and finite.
pub fn rate_bins(
    sends_ms: &[f64],
    from_ms: f64,
    until_ms: f64,
    bin_ms: f64,
    level: f64,
) -> Vec<RateBin> {
    let span = until_ms - from_ms;
    if !(span.is_finite() && span > 0.0 && positive(bin_ms)) {
        return Vec::new();
    }
    let n = ((span / bin_ms).round().max(1.0) as usize).min(100_000);
    let width = span / n as f64;
    let mut counts = vec![0usize; n];
    for &t in sends_ms {
        if t >= from_ms && t <= until_ms {
            let k = (((t - from_ms) / width) as usize).min(n - 1);
            counts[k] += 1;
        }
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(k, sends)| {
            let start_ms = from_ms + width * k as f64;
            RateBin {
                start_ms,
                end_ms: start_ms + width,
                sends,
                per_s: sends as f64 / (width / 1e3),
                interval: rate_interval(sends as u64, width / 1e3, level),
            }
        })
        .collect()
}
