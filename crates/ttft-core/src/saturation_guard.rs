//! The saturation stop wired to a run's plan: what the run loop asks, sans-IO, whether an
//! open-loop run must stop because the server is past saturation ([`crate::saturation`]).
//!
//! The loop makes a guard from the plan ([`SaturationGuard::for_plan`]: only a plan whose
//! measured requests all have planned sends, a rate, a load shape or a trace), tells it when
//! the measured requests' plan started on the run's clock ([`SaturationGuard::started`]: after
//! the warm-ups), feeds it every finished request ([`SaturationGuard::finished`]) and asks it
//! on every batch and on a timer ([`SaturationGuard::check`], [`SaturationGuard::next_check_ms`]):
//! a server that stalls sends no batch, yet the plan goes on sending, and the timer still
//! judges the windows. The guard knows the plan's sends up front, so it tells the detector
//! exactly how many the plan had sent by any time; the detector's windows start with the
//! measured plan (warm-ups and the pause before are left out), and the evidence is given back
//! on the run's clock, as every other time of the report. It answers "stop" once, then
//! [`SaturationGuard::outcome`] says what goes in the report.

use crate::report::RequestRecord;
use crate::report::saturation::{Saturation, SaturationCheck};
use crate::saturation::{Finished, SaturationConfig, SaturationDetector};
use crate::scenario::Phase;

/// The saturation stop of one run (see the module doc).
#[derive(Debug, Clone)]
pub struct SaturationGuard {
    detector: SaturationDetector,
    /// The measured requests' planned sends (ms from the plan's start), in order.
    planned: Vec<f64>,
    /// How many of them the detector was told of.
    told: usize,
    /// When the plan started on the run's clock, once known.
    origin_ms: Option<f64>,
    /// Requests that finished before the plan's start was known (none in a studio run).
    early: Vec<Finished>,
    /// Complete windows so far (on the plan's clock).
    windows: usize,
    fired: bool,
}

impl SaturationGuard {
    /// A guard for a plan whose measured requests all have planned sends
    /// ([`crate::scenario::Job::planned_ms`]), with windows sized to the plan's mean rate
    /// ([`SaturationConfig::for_rate`]); `None` for a closed loop, a concurrency ramp (only each
    /// lane's first request is planned) or a plan of one request. `enabled` false: it never
    /// stops the run, and the report says the stop was off.
    pub fn for_plan(phases: &[Phase], enabled: bool) -> Option<Self> {
        let measured = phases.iter().flat_map(|p| &p.jobs).filter(|j| !j.warmup);
        let mut planned = measured
            .map(|j| j.planned_ms.filter(|t| t.is_finite()))
            .collect::<Option<Vec<f64>>>()?;
        if planned.len() < 2 {
            return None;
        }
        planned.sort_by(f64::total_cmp);
        let span_s = (planned[planned.len() - 1] - planned[0]) / 1e3;
        let rate = if span_s > 0.0 {
            (planned.len() - 1) as f64 / span_s
        } else {
            f64::NAN
        };
        let config = SaturationConfig {
            enabled,
            ..SaturationConfig::for_rate(rate)
        };
        Some(Self {
            detector: SaturationDetector::new(config),
            planned,
            told: 0,
            origin_ms: None,
            early: Vec::new(),
            windows: 0,
            fired: false,
        })
    }

    /// Its detector's settings.
    pub fn config(&self) -> &SaturationConfig {
        self.detector.config()
    }

    /// The measured plan started at `origin_ms` on the run's clock (ms from the run's start);
    /// the first call counts.
    pub fn started(&mut self, origin_ms: f64) {
        if self.origin_ms.is_some() || !origin_ms.is_finite() {
            return;
        }
        self.origin_ms = Some(origin_ms);
        for f in std::mem::take(&mut self.early) {
            self.observe(f);
        }
    }

    /// A request finished (warm-ups are left out: the plan's counts have none).
    pub fn finished(&mut self, record: &RequestRecord) {
        if record.warmup {
            return;
        }
        let f = Finished::of(record);
        if self.origin_ms.is_some() {
            self.observe(f);
        } else {
            self.early.push(f);
        }
    }

    /// `f` on the plan's clock, to the detector.
    fn observe(&mut self, f: Finished) {
        let origin = self.origin_ms.unwrap_or(0.0);
        self.detector.observe(Finished {
            start_ms: f.start_ms - origin,
            end_ms: f.end_ms - origin,
            ttft_ms: f.ttft_ms,
        });
    }

    /// At `now_ms` on the run's clock: the evidence, the first time the run must stop (the
    /// run loop cancels it then); `None` before, after, while the plan has not started, and
    /// always when the stop is off.
    pub fn check(&mut self, now_ms: f64) -> Option<Saturation> {
        let origin = self.origin_ms?;
        if self.fired || !now_ms.is_finite() {
            return None;
        }
        let t = now_ms - origin;
        while self.told < self.planned.len() && self.planned[self.told] <= t {
            self.told += 1;
            self.detector
                .planned(self.planned[self.told - 1], self.told as u64);
        }
        self.detector.planned(t, self.told as u64);
        let c = self.config();
        let complete = ((t - c.grace_ms) / c.window_ms).floor();
        if complete.is_finite() && complete > 0.0 {
            self.windows = self.windows.max(complete as usize);
        }
        let s = on_run_clock(self.detector.check(t)?, origin);
        self.fired = true;
        Some(s)
    }

    /// When (on the run's clock) the next window can be judged: the run loop's timer checks
    /// then. A second from `now_ms` while the plan has not started.
    pub fn next_check_ms(&self, now_ms: f64) -> f64 {
        let Some(origin) = self.origin_ms else {
            return now_ms + 1_000.0;
        };
        let c = self.config();
        let t = now_ms - origin - c.grace_ms;
        let next = ((t / c.window_ms).floor() + 1.0).max(1.0) * c.window_ms;
        origin + next + c.grace_ms
    }

    /// What goes in the report once the run is over: stopped with the evidence, watched, or
    /// off.
    pub fn outcome(&self) -> SaturationCheck {
        let c = self.config();
        if !c.enabled {
            return SaturationCheck::Off;
        }
        match self.detector.verdict() {
            Some(s) if self.fired => {
                SaturationCheck::Stopped(on_run_clock(s, self.origin_ms.unwrap_or(0.0)))
            }
            _ => SaturationCheck::Watched {
                window_ms: c.window_ms,
                windows: self.windows,
                needed: c.windows.max(3),
            },
        }
    }
}

/// The detector's evidence (on the plan's clock) on the run's: its times moved by `origin`.
fn on_run_clock(s: &Saturation, origin: f64) -> Saturation {
    let mut s = s.clone();
    s.at_ms += origin;
    for w in &mut s.windows {
        w.start_ms += origin;
        w.end_ms += origin;
    }
    s
}
