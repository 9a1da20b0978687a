//! A trace replay as a scenario's run: the form's options ([`TraceReplay`]) and a trace read
//! from a file become one open-loop [`Phase`] (every request at its planned time, at most
//! [`TraceReplay::max_concurrency`] in flight), and a [`TraceReplayRecord`] the run's report
//! keeps in its settings (format, options, notes, the expected prefix reuse), so its view can
//! set the reuse the trace implies beside the cached tokens the server reported.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{PrefixReuse, Trace, TraceFormat, TracePlan, TracePlanError, TracePlanOptions, plan};
use crate::dialect::Dialect;
use crate::request::GenerationParams;
use crate::scenario::{Phase, TraceReplay};

/// The key of a trace replay's record in a report's settings.
pub const SETTINGS_KEY: &str = "trace_replay";

/// Trace replay options that cannot make a run, with what to change.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum TraceReplayError {
    /// The window, speed or cap.
    #[error("trace replay: {0}")]
    Plan(#[from] TracePlanError),
    /// No lane.
    #[error("trace replay: the most requests in flight must be at least 1")]
    NoLanes,
}

/// The trace planning options of `replay`, with `seed` (it seeds the sampling and the prompt
/// text: give each run its own unless the server's prefix cache is meant to be warm).
pub fn plan_options(replay: &TraceReplay, seed: u64) -> TracePlanOptions {
    TracePlanOptions {
        window_start_s: replay.window_start_s,
        window_s: replay.window_s,
        speed: replay.speed,
        seed,
        ..TracePlanOptions::default()
    }
}

/// Plans `trace` as `replay` says ([`plan`]) and turns it into one phase: every job built from
/// `template` ([`super::TraceJob::to_job`]: its model, sampling, stream options and extra
/// fields) at its planned time, the phase's concurrency the lanes' cap. Returns the plan too,
/// for its notes and expected reuse.
pub fn replay_phase(
    trace: &Trace,
    replay: &TraceReplay,
    seed: u64,
    template: &GenerationParams,
    dialect: Option<Dialect>,
) -> Result<(Phase, TracePlan), TraceReplayError> {
    if replay.max_concurrency == 0 {
        return Err(TraceReplayError::NoLanes);
    }
    let p = plan(trace, &plan_options(replay, seed))?;
    let phase = Phase {
        concurrency: replay.max_concurrency,
        rate_per_s: 0.0,
        jobs: p.jobs.iter().map(|j| j.to_job(template, dialect)).collect(),
    };
    Ok((phase, p))
}

/// What a trace replay's report keeps of its plan (in its settings under [`SETTINGS_KEY`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceReplayRecord {
    /// The file's name.
    pub file: String,
    /// Its format.
    pub format: TraceFormat,
    /// The options replayed with.
    pub options: TraceReplay,
    /// The plan's seed.
    pub seed: u64,
    /// Requests planned.
    pub requests: usize,
    /// From the first planned send to the last, ms.
    pub duration_ms: f64,
    /// The plan's notes ([`TracePlan::notes`]).
    pub notes: Vec<String>,
    /// The prefix reuse the plan implies ([`TracePlan::prefix_reuse`]).
    pub expected: PrefixReuse,
}

/// Expected against measured prefix-cache reuse, in tokens and as shares of the trace's input
/// tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct ReuseComparison {
    /// Expected share: reused over the plan's input tokens (0–1).
    pub expected: f64,
    /// Measured share: the cached tokens reported over the plan's input tokens (0–1).
    pub measured: f64,
    /// The sentence for the page.
    pub sentence: String,
}

impl TraceReplayRecord {
    /// The record of `plan`, read from `file` and replayed with `options` and `seed`.
    pub fn of(file: &str, plan: &TracePlan, options: &TraceReplay, seed: u64) -> Self {
        Self {
            file: file.to_owned(),
            format: plan.format,
            options: options.clone(),
            seed,
            requests: plan.jobs.len(),
            duration_ms: plan.duration_ms,
            notes: plan.notes.clone(),
            expected: plan.prefix_reuse(),
        }
    }

    /// The record in a report's settings, if the run was a trace replay.
    pub fn of_settings(settings: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(settings.get(SETTINGS_KEY)?.clone()).ok()
    }

    /// Adds the record to a report's settings (an object; anything else is left as it is).
    pub fn put_in(&self, settings: &mut serde_json::Value) {
        if let (Some(map), Ok(v)) = (settings.as_object_mut(), serde_json::to_value(self)) {
            map.insert(SETTINGS_KEY.to_owned(), v);
        }
    }

    /// The trace's expected prefix reuse beside what the server reported: `cached_tokens`
    /// served from its cache, by `reporting` of the run's `successful` requests. Both are
    /// counted against the plan's input tokens, not the prompt tokens the server reports,
    /// which include its chat template's (4 a request on the reference endpoint) that no trace
    /// counts. `None` when the plan has no input tokens.
    pub fn compare_reuse(
        &self,
        cached_tokens: u64,
        reporting: usize,
        successful: usize,
    ) -> Option<ReuseComparison> {
        let expected = self.expected.share()?;
        let measured = cached_tokens as f64 / self.expected.prompt_tokens as f64;
        let mut sentence = format!(
            "Expected prefix-cache reuse {:.1} % ({} of the trace's {} input tokens, from its shared blocks); measured {:.1} % ({} cached tokens in usage, over the same input tokens)",
            expected * 100.0,
            self.expected.reused_tokens,
            self.expected.prompt_tokens,
            measured * 100.0,
            cached_tokens,
        );
        if reporting < self.requests {
            sentence.push_str(&format!(
                "; only {reporting} of the {} planned requests reported cached tokens ({successful} succeeded), so the measured share is low by what the others would have hit",
                self.requests
            ));
        } else {
            sentence.push_str(
                ". The expected share assumes a cache that keeps every prompt; a server that evicts hits less",
            );
        }
        Some(ReuseComparison {
            expected,
            measured,
            sentence,
        })
    }
}
