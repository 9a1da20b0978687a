//! Service-level objectives you can set, and the goodput they give (issue #14, item 5).
//!
//! An [`SloSet`] is a named list of [`Objective`]s, each "`metric` at percentile `p` over
//! requests within `limit`", written in the studio's text field as
//! `ttft p90 <= 1000ms, itl p90 <= 100ms, qoe p10 >= 0.9` ([`SloSet::parse`],
//! [`Display`](std::fmt::Display)).
//! [`evaluate`] holds a [`Report`] to it, per request, per level and for the whole run.
//!
//! # Definitions
//!
//! **Requests.** The requests judged are the report's headline requests
//! ([`Report::headline_requests`]): measured (warm-ups left out) and, in a probe under load,
//! the probe's only, the same requests as [`crate::run_stats::RunStats::aggregates`].
//!
//! **A request's value** for each [`SloMetric`]:
//! - **TTFT**: its time to first token ([`RequestMetrics::ttft_ms`], ms).
//! - **ITL**: the 95th percentile of its own per-token gaps
//!   ([`RequestMetrics::extend_per_token_itl`], ms), the value today's goodput
//!   ([`crate::report::Aggregates::goodput`]) holds to its ITL threshold.
//! - **E2E**: the end of its stream ([`RequestMetrics::e2e_ms`], ms).
//! - **Fluidity**: its Etalon fluidity-index, 0–1, higher is better, and **QoE**: its reading
//!   QoE, 0–1, higher is better; both from [`crate::record_experience::request_experience`] with the report's
//!   [`Report::experience`] settings.
//!
//! A **failed** request (any outcome but ok) fails every objective. A successful request
//! without a first token fails TTFT (it delivered none, as in today's goodput). A successful
//! request with **no value** for another metric is *not counted* for that objective: it
//! neither meets nor fails it and is left out of that objective's percentile. ITL has no value
//! for a request with fewer than two arrivals, QoE for one whose answer holds no readable text
//! (a tool call only), Fluidity for one that produced no token.
//!
//! **Per request**, an objective is met when the request's value is within its limit (`≤` for
//! latencies, `≥` for scores; [`Objective::meets`]): the percentile plays no part. A request
//! **meets the SLO** when it fails none of the objectives ([`RequestSlo`]).
//!
//! **Per level** (a report group, [`crate::report::RequestRecord::group`], ordered by level as
//! [`crate::report::Aggregates::groups`] are) and for the whole run:
//! - **Attainment** (the goodput fraction) = requests meeting the SLO / requests.
//! - **Goodput per second** = requests meeting the SLO / the group's wall time, from its first
//!   request's start to its last request's end (`start_ms + e2e_ms`), as
//!   [`crate::report::GroupStats::throughput_tokens_per_s`] measures it.
//! - **An objective's value** is the percentile `p` of the requests' values, type 7 (linear
//!   interpolation between closest ranks, as everywhere in [`crate::stats`]), with each failed
//!   request (and, for TTFT, each successful request without a first token) ranked *worst*:
//!   after every value for a latency, before every value for a score. When the percentile
//!   falls on such a request, or interpolates towards one, the value is `None` and the
//!   objective is not met; with no failures it is exactly [`percentile_select`]'s value. An
//!   objective with no counted request at all (no QoE anywhere) is met: there is nothing to
//!   hold to it.
//! - The level **meets the SLO** when every objective is met at its percentile.
//!
//! **Highest level meeting** (on a run of two or more levels, all numeric): the highest level
//! `L` such that `L` and every level below it meet the SLO; `None` when the first level fails.
//! **First level failing**: the lowest level that does not. Both are `None` on other runs.
//!
//! Evaluation is linear in the requests for each objective: per-request values are computed
//! once, and each percentile is found by selection, never by sorting.

use serde::{Deserialize, Serialize};

use crate::format;
#[cfg(doc)]
use crate::metrics::RequestMetrics;
use crate::record_experience::request_experience;
#[cfg(test)]
use crate::report::slo::objective;
pub use crate::report::slo::{CUSTOM, Objective, SloError, SloMetric, SloSet};
use crate::report::{Report, RequestRecord};
use crate::scenario::ScenarioKind;
use crate::stats::percentile_select;
use crate::uncertainty::proportion::{clears, requests_to_clear, wilson};
use crate::uncertainty::{DEFAULT_LEVEL, Interval, sane_level};

/// One request against the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestSlo {
    /// [`RequestRecord::index`].
    pub index: u32,
    /// It failed no objective.
    pub met: bool,
    /// The metrics of the objectives it failed, each once, in the set's order (every metric of
    /// the set for a failed request).
    pub failed: Vec<SloMetric>,
}

/// One objective at a level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveResult {
    /// The objective.
    pub objective: Objective,
    /// The percentile of the requests' values; `None` when it falls on failed requests or no
    /// request counted.
    pub value_at_percentile: Option<f64>,
    /// Requests counted in the percentile: those with a value and the failed ones.
    pub counted: usize,
    /// Of them, the failed ones (ranked worst).
    pub failures: usize,
    /// Met at its percentile (see the module doc).
    pub met: bool,
    /// Of the counted requests, those within the limit: the objective's attainment is
    /// `meeting / counted`.
    #[serde(default)]
    pub meeting: usize,
    /// The attainment's Wilson interval; `None` without counted requests (and in results
    /// saved before it was computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attainment_interval: Option<Interval>,
    /// What the interval tells against the target share ([`ObjectiveResult::target`]).
    #[serde(default)]
    pub verdict: Verdict,
    /// When the verdict cannot be told yet: about how many requests would tell it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs: Option<usize>,
}

/// What an attainment's interval tells against its target share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval's lower bound is at or above the target.
    Meets,
    /// Its upper bound is below the target.
    Misses,
    /// It straddles the target (or there is nothing to judge).
    #[default]
    CannotTell,
}

/// A level (a report group), or the whole run, against the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelSlo {
    /// Group label (`all` for the whole run).
    pub group: String,
    /// Numeric level, if any.
    pub level: Option<f64>,
    /// Requests judged.
    pub requests: usize,
    /// Of them, those meeting the SLO.
    pub meeting: usize,
    /// `meeting / requests`: the goodput fraction (0 without requests).
    pub attainment: f64,
    /// Its Wilson interval; `None` without requests (and in results saved before it was
    /// computed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attainment_interval: Option<Interval>,
    /// Requests meeting the SLO per second of the group's wall time; `None` when that time is
    /// not positive.
    pub goodput_per_s: Option<f64>,
    /// Each objective at its percentile.
    pub objectives: Vec<ObjectiveResult>,
    /// Every objective met at its percentile.
    pub met: bool,
    /// Every objective with counted requests [`Verdict::Meets`], or some
    /// [`Verdict::Misses`]; otherwise [`Verdict::CannotTell`].
    #[serde(default)]
    pub verdict: Verdict,
}

/// A whole run against the set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloReport {
    /// The set.
    pub set: SloSet,
    /// The report's scenario kind ([`Report::scenario`]), for words about its levels.
    pub scenario: String,
    /// Each judged request, in report order.
    pub requests: Vec<RequestSlo>,
    /// Each level, ordered by level.
    pub levels: Vec<LevelSlo>,
    /// The whole run (group `all`, no level).
    pub overall: LevelSlo,
    /// Highest level met together with every level below it (see the module doc).
    pub highest_level_meeting: Option<f64>,
    /// Lowest level that does not meet the SLO, on a run of numeric levels.
    pub first_level_failing: Option<f64>,
    /// The confidence level of every interval and verdict (0.95 = 95 %).
    #[serde(default = "default_level")]
    pub confidence: f64,
}

fn default_level() -> f64 {
    DEFAULT_LEVEL
}

/// A request's value for one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    /// Counted against the objective, ranked worst (failed request, TTFT without a token).
    Fails,
    /// Not counted.
    Missing,
    /// A value.
    Is(f64),
}

fn from_option(v: Option<f64>) -> Value {
    v.filter(|x| x.is_finite())
        .map_or(Value::Missing, Value::Is)
}

/// Every metric's value of one request (only those in `used` computed).
fn request_values(
    r: &RequestRecord,
    report: &Report,
    used: &[SloMetric],
    scratch: &mut Vec<f64>,
) -> [Value; 5] {
    let mut out = [Value::Missing; 5];
    if r.outcome.is_cut_by_client() {
        return out; // the client's own end of run: not counted for or against the server
    }
    if !r.outcome.is_ok() {
        return [Value::Fails; 5];
    }
    let m = &r.metrics;
    let experience = used
        .iter()
        .any(|u| u.higher_is_better())
        .then(|| request_experience(r, &report.experience));
    for &metric in used {
        out[metric as usize] = match metric {
            SloMetric::Ttft => match m.ttft_ms.filter(|t| t.is_finite()) {
                Some(t) => Value::Is(t),
                None => Value::Fails,
            },
            SloMetric::Itl => {
                scratch.clear();
                m.extend_per_token_itl(scratch);
                from_option(percentile_select(scratch, 95.0))
            }
            SloMetric::E2e => from_option(m.e2e_ms),
            SloMetric::Fluidity => from_option(
                experience
                    .as_ref()
                    .and_then(|e| e.fluidity.as_ref())
                    .map(|f| f.fluidity_index),
            ),
            SloMetric::Qoe => from_option(
                experience
                    .as_ref()
                    .and_then(|e| e.reading.as_ref())
                    .map(|x| x.qoe),
            ),
        };
    }
    out
}

/// Type-7 percentile `p` of `values` with `failures` more requests ranked worst (after every
/// value, or before every value when higher is better). `None` when the percentile falls on
/// or interpolates towards a failure, or the sample is empty. Reorders `values`.
fn percentile_with_failures(
    values: &mut Vec<f64>,
    failures: usize,
    p: f64,
    higher_is_better: bool,
) -> Option<f64> {
    values.retain(|x| x.is_finite());
    if failures == 0 {
        return percentile_select(values, p);
    }
    let good = values.len();
    let n = good + failures;
    let h = (n - 1) as f64 * (p.clamp(0.0, 100.0) / 100.0);
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    let hi = if frac > 0.0 { lo + 1 } else { lo };
    // Where the values sit in the ranked sample.
    let first = if higher_is_better { failures } else { 0 };
    if lo < first || hi >= first + good {
        return None;
    }
    let (lo, hi) = (lo - first, hi - first);
    let (_, x_lo, rest) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let x_lo = *x_lo;
    if hi == lo {
        return Some(x_lo);
    }
    let x_hi = rest.iter().copied().min_by(f64::total_cmp).unwrap_or(x_lo);
    Some(x_lo + frac * (x_hi - x_lo))
}

/// What every level is judged with: the judged requests, their values and verdicts, the set
/// and the confidence level.
struct Judged<'a> {
    reqs: &'a [&'a RequestRecord],
    values: &'a [[Value; 5]],
    per_request: &'a [RequestSlo],
    set: &'a SloSet,
    level: f64,
}

/// One objective over a level's members (indices into the judged requests).
fn objective_result(
    o: &Objective,
    members: &[usize],
    j: &Judged,
    sample: &mut Vec<f64>,
) -> ObjectiveResult {
    sample.clear();
    let mut failures = 0;
    for &i in members {
        match j.values[i][o.metric as usize] {
            Value::Is(v) => sample.push(v),
            Value::Fails => failures += 1,
            Value::Missing => {}
        }
    }
    let counted = sample.len() + failures;
    let meeting = sample.iter().filter(|v| o.meets(**v)).count();
    let value =
        percentile_with_failures(sample, failures, o.percentile, o.metric.higher_is_better());
    let target = target_share(o);
    let verdict = match clears(meeting, counted, target, j.level) {
        Some(true) => Verdict::Meets,
        Some(false) => Verdict::Misses,
        None => Verdict::CannotTell,
    };
    ObjectiveResult {
        objective: *o,
        value_at_percentile: value,
        counted,
        failures,
        met: counted == 0 || value.is_some_and(|v| o.meets(v)),
        meeting,
        attainment_interval: wilson(meeting, counted, j.level),
        verdict,
        needs: (verdict == Verdict::CannotTell)
            .then(|| requests_to_clear(meeting, counted, target, j.level))
            .flatten(),
    }
}

/// The share of requests an objective asks to be within its limit: `p` % for a latency at
/// percentile `p` (`ttft p90 <= 1000ms`: 90 % within 1 s), `100 − p` % for a score
/// (`qoe p10 >= 0.9`: 90 % at or above 0.9).
fn target_share(o: &Objective) -> f64 {
    let p = (o.percentile / 100.0).clamp(0.0, 1.0);
    if o.metric.higher_is_better() {
        1.0 - p
    } else {
        p
    }
}

/// One level (or the run) from its members' indices into the judged requests.
fn level_slo(group: String, level: Option<f64>, members: &[usize], j: &Judged) -> LevelSlo {
    let requests = members.len();
    let meeting = members.iter().filter(|&&i| j.per_request[i].met).count();
    let start = members
        .iter()
        .map(|&i| j.reqs[i].start_ms)
        .fold(f64::INFINITY, f64::min);
    let end = members
        .iter()
        .filter_map(|&i| j.reqs[i].metrics.e2e_ms.map(|e| e + j.reqs[i].start_ms))
        .fold(f64::NEG_INFINITY, f64::max);
    let mut sample = Vec::with_capacity(requests);
    let objectives: Vec<ObjectiveResult> = j
        .set
        .objectives
        .iter()
        .map(|o| objective_result(o, members, j, &mut sample))
        .collect();
    let judged = || objectives.iter().filter(|o| o.counted > 0);
    let verdict = if judged().any(|o| o.verdict == Verdict::Misses) {
        Verdict::Misses
    } else if judged().all(|o| o.verdict == Verdict::Meets) {
        Verdict::Meets
    } else {
        Verdict::CannotTell
    };
    LevelSlo {
        group,
        level,
        requests,
        meeting,
        attainment: if requests == 0 {
            0.0
        } else {
            meeting as f64 / requests as f64
        },
        attainment_interval: wilson(meeting, requests, j.level),
        goodput_per_s: (end > start).then(|| meeting as f64 / (end - start) * 1e3),
        met: objectives.iter().all(|o| o.met),
        objectives,
        verdict,
    }
}

/// Holds a report's headline requests to a set (see the module doc for every definition),
/// with intervals and verdicts at [`DEFAULT_LEVEL`] (95 %; [`evaluate_at`] takes another).
/// The set is used as given: check user input with [`SloSet::validate`] (or build it with
/// [`SloSet::parse`] / [`SloSet::new`]) first.
pub fn evaluate(report: &Report, set: &SloSet) -> SloReport {
    evaluate_at(report, set, DEFAULT_LEVEL)
}

/// [`evaluate`] with intervals and verdicts at the confidence `level` (0.95 = 95 %).
pub fn evaluate_at(report: &Report, set: &SloSet, level: f64) -> SloReport {
    let level = sane_level(level);
    let reqs: Vec<&RequestRecord> = report.headline_requests().collect();
    let mut used: Vec<SloMetric> = Vec::new();
    for o in &set.objectives {
        if !used.contains(&o.metric) {
            used.push(o.metric);
        }
    }
    let mut scratch = Vec::new();
    let values: Vec<[Value; 5]> = reqs
        .iter()
        .map(|r| request_values(r, report, &used, &mut scratch))
        .collect();
    let requests: Vec<RequestSlo> = reqs
        .iter()
        .zip(&values)
        .map(|(r, v)| {
            let mut failed: Vec<SloMetric> = Vec::new();
            for o in &set.objectives {
                let fails = match v[o.metric as usize] {
                    Value::Fails => true,
                    Value::Missing => false,
                    Value::Is(x) => !o.meets(x),
                };
                if fails && !failed.contains(&o.metric) {
                    failed.push(o.metric);
                }
            }
            RequestSlo {
                index: r.index,
                met: failed.is_empty(),
                failed,
            }
        })
        .collect();
    // Groups in order of first appearance, then by level (no level last), as the report's.
    let mut groups: Vec<(&str, Option<f64>, Vec<usize>)> = Vec::new();
    for (i, r) in reqs.iter().enumerate() {
        match groups.iter_mut().find(|g| g.0 == r.group) {
            Some(g) => g.2.push(i),
            None => groups.push((&r.group, r.level, vec![i])),
        }
    }
    groups.sort_by(|a, b| a.1.unwrap_or(f64::MAX).total_cmp(&b.1.unwrap_or(f64::MAX)));
    let judged = Judged {
        reqs: &reqs,
        values: &values,
        per_request: &requests,
        set,
        level,
    };
    let levels: Vec<LevelSlo> = groups
        .into_iter()
        .map(|(g, l, members)| level_slo(g.to_owned(), l, &members, &judged))
        .collect();
    let all: Vec<usize> = (0..reqs.len()).collect();
    let overall = level_slo("all".into(), None, &all, &judged);
    let ladder = levels.len() >= 2 && levels.iter().all(|l| l.level.is_some());
    let (highest_level_meeting, first_level_failing) = if ladder {
        (
            levels
                .iter()
                .take_while(|l| l.met)
                .last()
                .and_then(|l| l.level),
            levels.iter().find(|l| !l.met).and_then(|l| l.level),
        )
    } else {
        (None, None)
    };
    SloReport {
        set: set.clone(),
        scenario: report.scenario.clone(),
        requests,
        levels,
        overall,
        highest_level_meeting,
        first_level_failing,
        confidence: level,
    }
}

/// A limit in few characters: `1 s`, `15 s`, `100 ms`, `1.50 s`.
fn limit_words(metric: SloMetric, limit: f64) -> String {
    if metric.higher_is_better() {
        format!("{limit}")
    } else {
        format::ms(limit)
            .replace(".00 s", " s")
            .replace(".0 s", " s")
    }
}

fn value_words(metric: SloMetric, value: f64) -> String {
    if metric.higher_is_better() {
        format!("{value:.2}")
    } else {
        format::ms(value)
    }
}

fn join_words(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A share as a whole percentage: `93 %`.
fn share_pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// `88–96 %`.
fn share_range(i: &Interval) -> String {
    format!("{:.0}–{:.0} %", i.lo * 100.0, i.hi * 100.0)
}

impl ObjectiveResult {
    /// The share of requests the objective asks to be within its limit (see
    /// [`Self::attainment_words`]).
    pub fn target(&self) -> f64 {
        target_share(&self.objective)
    }

    /// Its attainment: the share of counted requests within the limit (0 without any).
    pub fn attainment(&self) -> f64 {
        if self.counted == 0 {
            0.0
        } else {
            self.meeting as f64 / self.counted as f64
        }
    }

    /// `attained by 93 % of 120 requests (95 % interval 88–96 %, target 90 %)`.
    fn attained(&self) -> String {
        let interval = self.attainment_interval.map_or(String::new(), |i| {
            format!("{:.0} % interval {}, ", i.level * 100.0, share_range(&i))
        });
        format!(
            "attained by {} of {} request{} ({interval}target {})",
            share_pct(self.attainment()),
            self.counted,
            if self.counted == 1 { "" } else { "s" },
            share_pct(self.target())
        )
    }

    /// What the attainment's interval tells: `meets the objective`, `misses the objective`
    /// or `cannot tell yet: about 240 requests would`.
    pub fn verdict_words(&self) -> String {
        match (self.verdict, self.needs) {
            (Verdict::Meets, _) => "meets the objective".into(),
            (Verdict::Misses, _) => "misses the objective".into(),
            (Verdict::CannotTell, Some(n)) => format!("cannot tell yet: about {n} requests would"),
            (Verdict::CannotTell, None) => "cannot tell yet".into(),
        }
    }

    /// For the SLO panel: `attained by 93 % of 120 requests (95 % interval 88–96 %, target
    /// 90 %): meets the objective`; `no requests` without counted ones. A verdict is
    /// "meets" only when the interval's lower bound is at or above the target and "misses"
    /// only when its upper bound is below it.
    pub fn attainment_words(&self) -> String {
        if self.counted == 0 {
            return "no requests".into();
        }
        format!("{}: {}", self.attained(), self.verdict_words())
    }

    fn name(&self) -> String {
        format!(
            "{} P{}",
            self.objective.metric.label(),
            self.objective.percentile
        )
    }

    /// `TTFT P90 is 1.38 s (limit 1 s)`.
    fn why(&self) -> String {
        let m = self.objective.metric;
        match self.value_at_percentile {
            Some(v) => format!(
                "{} is {} (limit {})",
                self.name(),
                value_words(m, v),
                limit_words(m, self.objective.limit)
            ),
            None => format!(
                "{} falls on failed requests ({} of {} failed)",
                self.name(),
                self.failures,
                self.counted
            ),
        }
    }

    /// `TTFT P90 1.38 s > 1 s`.
    fn why_short(&self) -> String {
        let m = self.objective.metric;
        match self.value_at_percentile {
            Some(v) => format!(
                "{} {} {} {}",
                self.name(),
                value_words(m, v),
                if m.higher_is_better() { "<" } else { ">" },
                limit_words(m, self.objective.limit)
            ),
            None => format!("{} on failed requests", self.name()),
        }
    }
}

impl LevelSlo {
    fn missed(&self) -> impl Iterator<Item = &ObjectiveResult> {
        self.objectives.iter().filter(|o| !o.met)
    }
}

impl SloReport {
    /// A level in words, long (`16 concurrent streams`) and short (`16`), from the scenario.
    fn level_words(&self, l: &LevelSlo) -> (String, String) {
        let Some(n) = l.level else {
            return (l.group.clone(), l.group.clone());
        };
        match ScenarioKind::from_id(&self.scenario) {
            Some(ScenarioKind::ConcurrencySweep) => (
                format!("{n} concurrent stream{}", if n == 1.0 { "" } else { "s" }),
                format!("{n}"),
            ),
            Some(ScenarioKind::PromptSweep) => {
                (format!("prompts of ≈{n} tokens"), format!("≈{n} tokens"))
            }
            Some(k) if k.is_conversation() => (format!("round {n}"), format!("round {n}")),
            _ => (l.group.clone(), l.group.clone()),
        }
    }

    fn level(&self, level: f64) -> Option<&LevelSlo> {
        self.levels.iter().find(|l| l.level == Some(level))
    }

    /// The sentence for the UI: what the requests showed, then how sure that is. E.g. "Meets
    /// the chat SLO up to 16 concurrent streams; at 32, TTFT P90 is 1.42 s (limit 1 s)." on a
    /// run of levels, or "83 % of requests met the chat SLO (TTFT P90 1.20 s > 1 s)." on one
    /// level; percentages are rounded down, so 100 % means every request. Then either "Told
    /// at 95 % confidence by each objective's share of requests (Wilson interval)." when the
    /// verdict of every level named holds (an objective said met [`Verdict::Meets`], a level
    /// said to miss with a [`Verdict::Misses`] among its missed objectives), or "Cannot tell
    /// yet at 95 % confidence: at 32 concurrent streams, TTFT P90 was attained by 80 % of 5
    /// requests (95 % interval 38–96 %, target 90 %); about 70 requests would tell." for the
    /// first that does not.
    pub fn sentence(&self) -> String {
        let (observed, named) = self.observed();
        match self.certainty(&named) {
            Some(c) => format!("{observed} {c}"),
            None => observed,
        }
    }

    /// The first part of [`Self::sentence`], and the levels it names, each with whether it
    /// said the level meets the SLO.
    fn observed(&self) -> (String, Vec<(&LevelSlo, bool)>) {
        let name = &self.set.name;
        let o = &self.overall;
        if o.requests == 0 {
            return (
                format!("No measured requests to hold to the {name} SLO."),
                Vec::new(),
            );
        }
        let why =
            |l: &LevelSlo| join_words(&l.missed().map(ObjectiveResult::why).collect::<Vec<_>>());
        let meeting = || {
            self.levels
                .iter()
                .take_while(|l| l.met)
                .map(|l| (l, true))
                .collect::<Vec<_>>()
        };
        match (
            self.highest_level_meeting.and_then(|h| self.level(h)),
            self.first_level_failing.and_then(|f| self.level(f)),
        ) {
            (Some(h), None) => {
                return (
                    format!(
                        "Meets the {name} SLO at every level, up to {}.",
                        self.level_words(h).0
                    ),
                    meeting(),
                );
            }
            (Some(h), Some(f)) => {
                let mut named = meeting();
                named.push((f, false));
                return (
                    format!(
                        "Meets the {name} SLO up to {}; at {}, {}.",
                        self.level_words(h).0,
                        self.level_words(f).1,
                        why(f)
                    ),
                    named,
                );
            }
            (None, Some(f)) => {
                return (
                    format!(
                        "Misses the {name} SLO from the first level ({}): {}.",
                        self.level_words(f).0,
                        why(f)
                    ),
                    vec![(f, false)],
                );
            }
            (None, None) => {}
        }
        let pct = if o.meeting == o.requests {
            100.0
        } else {
            (o.attainment * 100.0).floor().min(99.0)
        };
        let text = if o.met {
            format!("Meets the {name} SLO: {pct} % of requests met every objective.")
        } else {
            let short: Vec<String> = o.missed().map(ObjectiveResult::why_short).collect();
            format!(
                "{pct} % of requests met the {name} SLO ({}).",
                short.join("; ")
            )
        };
        (text, vec![(o, o.met)])
    }

    /// The second part of [`Self::sentence`]: whether the verdicts of the `named` levels are
    /// told by their objectives' attainment intervals; `None` when no objective of theirs
    /// counted a request (nothing was judged).
    fn certainty(&self, named: &[(&LevelSlo, bool)]) -> Option<String> {
        if !named
            .iter()
            .any(|(l, _)| l.objectives.iter().any(|o| o.counted > 0))
        {
            return None;
        }
        let level = format!("{:.0} %", self.confidence * 100.0);
        // Each named level's objectives whose interval does not tell what the sentence said.
        let untold: Vec<(&LevelSlo, &ObjectiveResult)> = named
            .iter()
            .flat_map(|&(l, said_met)| {
                let missed_told = l
                    .missed()
                    .any(|o| o.counted > 0 && o.verdict == Verdict::Misses);
                l.objectives
                    .iter()
                    .filter(move |o| {
                        o.counted > 0
                            && if said_met {
                                o.verdict != Verdict::Meets
                            } else {
                                !missed_told && !o.met
                            }
                    })
                    .map(move |o| (l, o))
            })
            .collect();
        let Some((l, o)) = untold.first() else {
            return Some(format!(
                "Told at {level} confidence by each objective's share of requests (Wilson interval)."
            ));
        };
        let at = if l.group == "all" && l.level.is_none() {
            "over the whole run".to_owned()
        } else {
            format!("at {}", self.level_words(l).0)
        };
        let more = match untold.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more objective)".to_owned(),
            n => format!(" (and {n} more objectives)"),
        };
        let tell = o.needs.map_or(String::new(), |n| {
            format!("; about {n} requests would tell")
        });
        Some(format!(
            "Cannot tell yet at {level} confidence: {at}, {} was {}{tell}{more}.",
            o.name(),
            o.attained()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experience::{DeadlineConfig, ExperienceConfig, ReadingConfig};
    use crate::metrics::MetricsConfig;
    use crate::report::EndpointInfo;
    use crate::timeline::{Outcome, RequestRecorder};
    use proptest::prelude::*;

    /// A request sent at `start_ms` (run time) whose first word arrives at `ttft` ms and the
    /// next ones after each of `gaps`, one word (`w0 `, `w1 `, …) per read; its stream ends
    /// with the last word.
    fn rec(
        index: u32,
        group: &str,
        level: Option<f64>,
        start_ms: f64,
        ttft: f64,
        gaps: &[f64],
    ) -> RequestRecord {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(1.0_f64.min(ttft), 200, Some("text/event-stream"));
        let mut at = ttft;
        let mut times = vec![at];
        for g in gaps {
            at += g;
            times.push(at);
        }
        for (i, t) in times.iter().enumerate() {
            let chunk = format!(
                "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
            );
            r.on_read(*t, chunk.as_bytes());
        }
        r.on_read(at, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        let tl = r.finish(at);
        let mut rec = RequestRecord::from_timeline(
            index,
            group.into(),
            level,
            &tl,
            &MetricsConfig::default(),
        );
        rec.start_ms = start_ms;
        rec
    }

    /// A report scored with the settings the hand-worked values below assume, whatever the
    /// defaults become: fluidity deadlines `D_p` = 1000 ms, `D_d` = 50 ms; a reader at 4
    /// words/s (250 ms a word) expecting the first token at 1 s.
    fn report(scenario: &str, requests: Vec<RequestRecord>) -> Report {
        let experience = ExperienceConfig {
            deadlines: DeadlineConfig {
                first_token_ms: 1000.0,
                gap_ms: 50.0,
                ..DeadlineConfig::default()
            },
            reading: ReadingConfig {
                words_per_s: 4.0,
                expected_ttft_ms: 1000.0,
                ..ReadingConfig::default()
            },
        };
        Report::new("slo", EndpointInfo::default(), scenario)
            .with_experience(experience)
            .with_requests(requests)
    }

    fn truncated(mut r: RequestRecord) -> RequestRecord {
        r.outcome = Outcome::Truncated {
            message: "cut".into(),
        };
        r
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    fn set(name: &str, objectives: &[(SloMetric, f64, f64)]) -> SloSet {
        SloSet {
            name: name.into(),
            objectives: objectives
                .iter()
                .map(|&(m, p, l)| objective(m, p, l))
                .collect(),
        }
    }

    const FLAT: [f64; 4] = [20.0; 4];

    /// Levels 1, 4 and 8, four requests each:
    /// - c=1: TTFT 100, 200, 300, 400, sent at 0, 1000, 2000, 3000; gaps 20 ms.
    /// - c=4: TTFT 500, 600, 700, 900, all sent at 10 000; the first one's gaps 20, 20, 150, 20.
    /// - c=8: TTFT 800, 900, 1100, 1500, all sent at 20 000; gaps 20 ms.
    fn ladder() -> Report {
        let mut v = Vec::new();
        for (i, t) in [100.0, 200.0, 300.0, 400.0].into_iter().enumerate() {
            v.push(rec(i as u32, "c=1", Some(1.0), 1000.0 * i as f64, t, &FLAT));
        }
        v.push(rec(
            4,
            "c=4",
            Some(4.0),
            10_000.0,
            500.0,
            &[20.0, 20.0, 150.0, 20.0],
        ));
        for (i, t) in [600.0, 700.0, 900.0].into_iter().enumerate() {
            v.push(rec(5 + i as u32, "c=4", Some(4.0), 10_000.0, t, &FLAT));
        }
        for (i, t) in [800.0, 900.0, 1100.0, 1500.0].into_iter().enumerate() {
            v.push(rec(8 + i as u32, "c=8", Some(8.0), 20_000.0, t, &FLAT));
        }
        // A warm-up that failed: never judged.
        let mut warm = truncated(rec(99, "c=1", Some(1.0), 0.0, 5000.0, &FLAT));
        warm.warmup = true;
        v.push(warm);
        report("concurrency_sweep", v)
    }

    fn ttft_itl(ttft_limit: f64) -> SloSet {
        set(
            "chat",
            &[
                (SloMetric::Ttft, 90.0, ttft_limit),
                (SloMetric::Itl, 90.0, 100.0),
            ],
        )
    }

    #[test]
    fn a_ladder_meets_up_to_the_level_whose_percentile_breaks() {
        let r = evaluate(&ladder(), &ttft_itl(1000.0));
        assert_eq!(r.requests.len(), 12, "the warm-up is left out");
        assert!(r.requests.iter().all(|q| q.index != 99));
        let [l1, l4, l8] = &r.levels[..] else {
            panic!("three levels: {:?}", r.levels)
        };
        assert_eq!(
            (l1.level, l4.level, l8.level),
            (Some(1.0), Some(4.0), Some(8.0))
        );
        // c=1: TTFT P90 of 100..400: h = 3 × 0.9 = 2.7 → 300 + 0.7 × 100 = 370; every P95 gap 20.
        assert!(close(l1.objectives[0].value_at_percentile, 370.0));
        assert!(close(l1.objectives[1].value_at_percentile, 20.0));
        assert_eq!((l1.meeting, l1.attainment, l1.met), (4, 1.0, true));
        // Wall time 0 → 3000 + 400 + 80 = 3480 ms: 4 / 3.48 s.
        assert!(close(l1.goodput_per_s, 4.0 / 3.48));
        // c=4: TTFT P90 = 700 + 0.7 × 200 = 840. The first request's P95 gap over
        // [20, 20, 20, 150]: h = 2.85 → 20 + 0.85 × 130 = 130.5 > 100, so it fails ITL alone;
        // ITL P90 over [20, 20, 20, 130.5] = 20 + 0.7 × 110.5 = 97.35 ≤ 100: the level meets.
        assert!(close(l4.objectives[0].value_at_percentile, 840.0));
        assert!(close(l4.objectives[1].value_at_percentile, 97.35));
        assert_eq!((l4.meeting, l4.attainment, l4.met), (3, 0.75, true));
        assert_eq!(
            r.requests[4],
            RequestSlo {
                index: 4,
                met: false,
                failed: vec![SloMetric::Itl]
            }
        );
        // Wall time 10 000 → 10 000 + 900 + 80: 3 requests in 0.98 s.
        assert!(close(l4.goodput_per_s, 3.0 / 0.98));
        // c=8: TTFT P90 = 1100 + 0.7 × 400 = 1380 > 1000; 800 and 900 meet.
        assert!(close(l8.objectives[0].value_at_percentile, 1380.0));
        assert!(!l8.objectives[0].met && l8.objectives[1].met);
        assert_eq!((l8.meeting, l8.attainment, l8.met), (2, 0.5, false));
        assert_eq!(r.requests[10].failed, vec![SloMetric::Ttft]);
        // The run: 9 of 12; TTFT P90 over the 12 sorted values (…, 900, 900, 1100, 1500):
        // h = 11 × 0.9 = 9.9 → 900 + 0.9 × 200 = 1080.
        let o = &r.overall;
        assert_eq!((o.group.as_str(), o.level), ("all", None));
        assert_eq!((o.requests, o.meeting, o.attainment), (12, 9, 0.75));
        assert!(close(o.objectives[0].value_at_percentile, 1080.0));
        assert!(!o.met);
        assert!(close(o.goodput_per_s, 9.0 / 21.58));
        assert_eq!(r.highest_level_meeting, Some(4.0));
        assert_eq!(r.first_level_failing, Some(8.0));
        assert_eq!(
            r.sentence(),
            "Meets the chat SLO up to 4 concurrent streams; at 8, TTFT P90 is 1.38 s (limit 1 s). Cannot tell yet at 95 % confidence: at 1 concurrent stream, TTFT P90 was attained by 100 % of 4 requests (95 % interval 51–100 %, target 90 %); about 35 requests would tell (and 3 more objectives)."
        );
    }

    #[test]
    fn the_first_level_failing_or_every_level_meeting_is_said() {
        let tight = evaluate(&ladder(), &ttft_itl(300.0));
        assert_eq!(tight.highest_level_meeting, None);
        assert_eq!(tight.first_level_failing, Some(1.0));
        assert_eq!(
            tight.sentence(),
            "Misses the chat SLO from the first level (1 concurrent stream): TTFT P90 is 370 ms (limit 300 ms). Cannot tell yet at 95 % confidence: at 1 concurrent stream, TTFT P90 was attained by 75 % of 4 requests (95 % interval 30–95 %, target 90 %); about 15 requests would tell."
        );
        let loose = evaluate(&ladder(), &ttft_itl(2000.0));
        assert_eq!(loose.highest_level_meeting, Some(8.0));
        assert_eq!(loose.first_level_failing, None);
        assert_eq!(
            loose.sentence(),
            "Meets the chat SLO at every level, up to 8 concurrent streams. Cannot tell yet at 95 % confidence: at 1 concurrent stream, TTFT P90 was attained by 100 % of 4 requests (95 % interval 51–100 %, target 90 %); about 35 requests would tell (and 5 more objectives)."
        );
        // Levels in other scenarios.
        let mut rounds = ladder();
        rounds.scenario = "multi_turn".into();
        assert_eq!(
            evaluate(&rounds, &ttft_itl(1000.0)).sentence(),
            "Meets the chat SLO up to round 4; at round 8, TTFT P90 is 1.38 s (limit 1 s). Cannot tell yet at 95 % confidence: at round 1, TTFT P90 was attained by 100 % of 4 requests (95 % interval 51–100 %, target 90 %); about 35 requests would tell (and 3 more objectives)."
        );
    }

    #[test]
    fn failed_requests_fail_every_objective_and_rank_worst() {
        let mut bad = truncated(rec(3, "c=2", None, 0.0, 50.0, &FLAT));
        bad.metrics.ttft_ms = Some(50.0);
        let mut silent = rec(4, "c=2", None, 0.0, 100.0, &FLAT);
        silent.metrics.ttft_ms = None;
        let run = report(
            "chat",
            vec![
                rec(0, "c=2", None, 0.0, 100.0, &FLAT),
                rec(1, "c=2", None, 0.0, 200.0, &FLAT),
                rec(2, "c=2", None, 0.0, 300.0, &FLAT),
                bad,
            ],
        );
        let s = set(
            "chat",
            &[
                (SloMetric::Ttft, 50.0, 1000.0),
                (SloMetric::Ttft, 90.0, 1000.0),
                (SloMetric::Qoe, 10.0, 0.5),
            ],
        );
        let r = evaluate(&run, &s);
        assert_eq!(
            r.requests[3],
            RequestSlo {
                index: 3,
                met: false,
                failed: vec![SloMetric::Ttft, SloMetric::Qoe]
            }
        );
        assert!(r.requests[..3].iter().all(|q| q.met));
        let o = &r.overall;
        assert_eq!((o.meeting, o.attainment), (3, 0.75));
        // Ranked [100, 200, 300, failed]: P50 h = 1.5 → 250; P90 h = 2.7 interpolates towards
        // the failure; QoE P10 ranked [failed, 1, 1, 1]: h = 0.3 sits on it.
        assert_eq!(o.objectives[0].value_at_percentile, Some(250.0));
        assert!(o.objectives[0].met);
        assert_eq!(
            (
                o.objectives[1].value_at_percentile,
                o.objectives[1].counted,
                o.objectives[1].failures,
                o.objectives[1].met
            ),
            (None, 4, 1, false)
        );
        assert_eq!(o.objectives[2].value_at_percentile, None);
        assert!(!o.met);
        assert_eq!(
            (r.highest_level_meeting, r.first_level_failing),
            (None, None)
        );
        assert_eq!(
            r.sentence(),
            "75 % of requests met the chat SLO (TTFT P90 on failed requests; QoE P10 on failed requests). Cannot tell yet at 95 % confidence: over the whole run, TTFT P90 was attained by 75 % of 4 requests (95 % interval 30–95 %, target 90 %); about 15 requests would tell (and 1 more objective)."
        );
        // A successful request without a first token fails TTFT (and ranks worst), not QoE.
        let mut with_silent = run.clone();
        with_silent.requests[3] = silent;
        let r = evaluate(&with_silent, &s);
        assert_eq!(r.requests[3].failed, vec![SloMetric::Ttft]);
        assert_eq!(r.overall.objectives[1].failures, 1);
        // Every request failed: nothing meets, no value, no goodput.
        let all_bad = report(
            "chat",
            vec![truncated(rec(0, "c=1", None, 0.0, 10.0, &FLAT))],
        );
        let r = evaluate(&all_bad, &s);
        assert_eq!(
            (r.overall.meeting, r.overall.attainment, r.overall.met),
            (0, 0.0, false)
        );
        assert_eq!(r.overall.goodput_per_s, Some(0.0));
    }

    #[test]
    fn a_request_without_readable_text_is_not_counted_for_qoe() {
        // QoE with the default reader (4 words/s = 250 ms a word, expected first token 1 s):
        // first word at 100 ms, faster than reading → 1; four words from 1500 ms, 500 ms late
        // over L = 1000 ms of reading → ((1000 − 500) / 1000)² = 0.25.
        let mut no_text = rec(2, "c=1", None, 0.0, 1500.0, &[20.0; 3]);
        no_text.replay.clear();
        let run = report(
            "chat",
            vec![
                rec(0, "c=1", None, 0.0, 100.0, &[20.0; 3]),
                rec(1, "c=1", None, 0.0, 1500.0, &[20.0; 3]),
                no_text,
            ],
        );
        let s = set(
            "reading",
            &[(SloMetric::Qoe, 50.0, 0.5), (SloMetric::Qoe, 10.0, 0.5)],
        );
        let r = evaluate(&run, &s);
        assert_eq!(
            r.requests.iter().map(|q| q.met).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert_eq!(r.requests[1].failed, vec![SloMetric::Qoe]);
        let o = &r.overall;
        // Over [1, 0.25]: P50 = 0.625, P10 = 0.25 + 0.1 × 0.75 = 0.325.
        assert!(close(o.objectives[0].value_at_percentile, 0.625));
        assert!(close(o.objectives[1].value_at_percentile, 0.325));
        assert_eq!((o.objectives[0].counted, o.objectives[0].failures), (2, 0));
        assert!(o.objectives[0].met && !o.objectives[1].met);
        assert!((o.attainment - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            r.sentence(),
            "66 % of requests met the reading SLO (QoE P10 0.33 < 0.5). Cannot tell yet at 95 % confidence: over the whole run, QoE P10 was attained by 50 % of 2 requests (95 % interval 9–91 %, target 90 %); about 4 requests would tell."
        );
        // No request with readable text at all: the objective has nothing to judge and holds.
        let mut only = run.clone();
        only.requests.clear();
        only.requests.push(run.requests[2].clone());
        let r = evaluate(&only, &s);
        assert_eq!(r.overall.objectives[0].counted, 0);
        assert!(r.overall.met && r.requests[0].met);
        assert_eq!(
            r.sentence(),
            "Meets the reading SLO: 100 % of requests met every objective."
        );
    }

    #[test]
    fn fluidity_and_e2e_are_the_requests_own() {
        // Etalon with D_p = 1000, D_d = 50: tokens at 1000, 1020, 1200 → the first on time
        // (slack 0), the second banks 30, the third is 180 late by ⌊(180 − 30) / 50⌋ = 3
        // deadlines: 3 missed of 5, fluidity 0.4. Tokens at 100 + 20 k: all on time, 1.
        let run = report(
            "chat",
            vec![
                rec(0, "c=1", None, 0.0, 100.0, &FLAT),
                rec(1, "c=1", None, 0.0, 1000.0, &[20.0, 180.0]),
            ],
        );
        let s = set(
            "fluid",
            &[
                (SloMetric::Fluidity, 50.0, 0.9),
                (SloMetric::E2e, 50.0, 1000.0),
            ],
        );
        let r = evaluate(&run, &s);
        // Fluidity P50 over [1, 0.4] = 0.7; E2E P50 over [180, 1200] = 690.
        assert!(close(r.overall.objectives[0].value_at_percentile, 0.7));
        assert!(close(r.overall.objectives[1].value_at_percentile, 690.0));
        assert!(!r.overall.objectives[0].met && r.overall.objectives[1].met);
        assert_eq!(
            r.requests[1].failed,
            vec![SloMetric::Fluidity, SloMetric::E2e]
        );
        assert!(r.requests[0].met);
    }

    /// One level of 200 requests, `within` of them with a TTFT of 500 ms and the rest 2 s,
    /// held to `ttft p90 <= 1000ms`.
    fn two_hundred(within: usize) -> SloReport {
        let reqs = (0..200u32)
            .map(|i| {
                let t = if (i as usize) < within { 500.0 } else { 2000.0 };
                rec(i, "c=1", None, 10.0 * f64::from(i), t, &FLAT)
            })
            .collect();
        evaluate(
            &report("chat", reqs),
            &set("chat", &[(SloMetric::Ttft, 90.0, 1000.0)]),
        )
    }

    #[test]
    fn attainment_has_a_wilson_interval_and_a_verdict_only_when_it_clears_the_target() {
        // 190 of 200 (95 %): the interval's lower bound, 91 %, clears the 90 % target.
        let r = two_hundred(190);
        let o = &r.overall.objectives[0];
        assert_eq!((o.meeting, o.counted, o.target()), (190, 200, 0.9));
        let i = o.attainment_interval.unwrap();
        assert!(i.lo >= 0.9 && i.hi < 1.0 && i.level == 0.95, "{i:?}");
        assert_eq!((o.verdict, o.needs), (Verdict::Meets, None));
        assert_eq!(
            o.attainment_words(),
            "attained by 95 % of 200 requests (95 % interval 91–97 %, target 90 %): meets the objective"
        );
        assert_eq!(r.overall.verdict, Verdict::Meets);
        let goodput = r.overall.attainment_interval.unwrap();
        assert!(goodput.contains(0.95), "{goodput:?}");
        assert_eq!(
            r.sentence(),
            "Meets the chat SLO: 95 % of requests met every objective. Told at 95 % confidence by each objective's share of requests (Wilson interval)."
        );
        // 170 of 200 (85 %): its upper bound, 89 %, is below the target.
        let r = two_hundred(170);
        let o = &r.overall.objectives[0];
        assert_eq!(o.verdict, Verdict::Misses);
        assert!(
            o.attainment_words()
                .ends_with("(95 % interval 79–89 %, target 90 %): misses the objective"),
            "{}",
            o.attainment_words()
        );
        assert!(
            r.sentence().ends_with(
                " Told at 95 % confidence by each objective's share of requests (Wilson interval)."
            ),
            "{}",
            r.sentence()
        );
        // 186 of 200 (93 %): above the target, but the interval (88–96 %) straddles it; the
        // search finds about how many requests at 93 % would clear it.
        let r = two_hundred(186);
        let o = &r.overall.objectives[0];
        assert_eq!(o.verdict, Verdict::CannotTell);
        let n = o.needs.expect("a size that would tell");
        let at = |m: usize| {
            crate::uncertainty::proportion::clears((0.93 * m as f64).round() as usize, m, 0.9, 0.95)
        };
        assert!(n > 200 && at(n) == Some(true) && at(n / 2).is_none(), "{n}");
        assert_eq!(
            o.attainment_words(),
            format!(
                "attained by 93 % of 200 requests (95 % interval 89–96 %, target 90 %): cannot tell yet: about {n} requests would"
            )
        );
        assert_eq!(
            r.sentence(),
            format!(
                "Meets the chat SLO: 93 % of requests met every objective. Cannot tell yet at 95 % confidence: over the whole run, TTFT P90 was attained by 93 % of 200 requests (95 % interval 89–96 %, target 90 %); about {n} requests would tell."
            )
        );
        // Another level: narrower intervals at 80 %.
        let r = evaluate_at(
            &report(
                "chat",
                (0..200u32)
                    .map(|i| {
                        rec(
                            i,
                            "c=1",
                            None,
                            10.0 * f64::from(i),
                            if i < 186 { 500.0 } else { 2000.0 },
                            &FLAT,
                        )
                    })
                    .collect(),
            ),
            &set("chat", &[(SloMetric::Ttft, 90.0, 1000.0)]),
            0.8,
        );
        assert_eq!(
            (r.confidence, r.overall.objectives[0].verdict),
            (0.8, Verdict::Meets)
        );
    }

    #[test]
    fn results_saved_before_intervals_still_read() {
        let r = two_hundred(190);
        let mut json = serde_json::to_value(&r).unwrap();
        let strip = |v: &mut serde_json::Value| {
            let o = v.as_object_mut().unwrap();
            for k in ["attainment_interval", "verdict", "needs", "confidence"] {
                o.remove(k);
            }
        };
        strip(&mut json);
        strip(&mut json["overall"]);
        strip(&mut json["overall"]["objectives"][0]);
        json["overall"]["objectives"][0]
            .as_object_mut()
            .unwrap()
            .remove("meeting");
        let old: SloReport = serde_json::from_value(json).unwrap();
        assert_eq!(old.confidence, DEFAULT_LEVEL);
        assert_eq!(old.overall.verdict, Verdict::CannotTell);
        assert_eq!(old.overall.objectives[0].attainment_interval, None);
        assert_eq!(old.overall.attainment, r.overall.attainment);
    }

    #[test]
    fn an_empty_run_says_so() {
        let r = evaluate(&report("chat", Vec::new()), &SloSet::chat());
        assert_eq!(r.overall.requests, 0);
        assert_eq!(r.overall.attainment, 0.0);
        assert_eq!(r.overall.goodput_per_s, None);
        assert!(r.levels.is_empty());
        assert_eq!(
            r.sentence(),
            "No measured requests to hold to the chat SLO."
        );
    }

    #[test]
    fn objectives_meet_in_their_direction() {
        let ttft = objective(SloMetric::Ttft, 90.0, 1000.0);
        assert!(ttft.meets(1000.0) && ttft.meets(10.0) && !ttft.meets(1000.1));
        let qoe = objective(SloMetric::Qoe, 10.0, 0.9);
        assert!(qoe.meets(0.9) && qoe.meets(1.0) && !qoe.meets(0.89));
        assert!(!ttft.meets(f64::NAN) && !qoe.meets(f64::NAN));
    }

    #[test]
    fn presets_write_and_read_back() {
        assert_eq!(
            SloSet::chat().to_string(),
            "ttft p90 <= 1000ms, itl p90 <= 100ms, qoe p10 >= 0.9"
        );
        assert_eq!(
            SloSet::agent().to_string(),
            "ttft p90 <= 2000ms, e2e p90 <= 15000ms"
        );
        assert_eq!(SloSet::batch().to_string(), "e2e p99 <= 60000ms");
        assert_eq!(SloSet::default(), SloSet::chat());
        for p in SloSet::presets() {
            p.validate().unwrap();
            assert_eq!(SloSet::parse(&p.to_string()), Ok(p.clone()));
            assert_eq!(SloSet::preset(&p.name), Some(p));
        }
        assert_eq!(SloSet::preset("nope"), None);
        // Lenient spellings read as the canonical set.
        assert_eq!(
            SloSet::parse(" TTFT P90 ≤ 1 s; tbt p90<100 ,QoE p10 ≥ .9, "),
            Ok(SloSet::chat())
        );
        // A name, seconds, and a preset's objectives under another name.
        let named = SloSet::parse("my api: ttft p99.9 <= 2.5s").unwrap();
        assert_eq!(named, set("my api", &[(SloMetric::Ttft, 99.9, 2500.0)]));
        assert_eq!(named.to_string(), "my api: ttft p99.9 <= 2500ms");
        let custom_chat = SloSet {
            name: CUSTOM.into(),
            ..SloSet::chat()
        };
        assert_eq!(
            custom_chat.to_string(),
            "custom: ttft p90 <= 1000ms, itl p90 <= 100ms, qoe p10 >= 0.9"
        );
        assert_eq!(SloSet::parse(&custom_chat.to_string()), Ok(custom_chat));
        assert_eq!(
            SloSet::parse("fluidity p10 >= 0.9").map(|s| s.name),
            Ok(CUSTOM.to_owned())
        );
        assert_eq!("e2e p99 <= 60s".parse::<SloSet>(), Ok(SloSet::batch()));
    }

    /// Each mistake a written SLO can make, with the error it gets.
    fn mistakes() -> Vec<(&'static str, SloError)> {
        use SloMetric::*;
        let part = |s: &str| s.to_owned();
        vec![
            ("", SloError::NoObjectives),
            (" , ;", SloError::NoObjectives),
            ("chat:", SloError::NoObjectives),
            (
                "latency p90 <= 1s",
                SloError::UnknownMetric {
                    part: part("latency p90 <= 1s"),
                    word: part("latency"),
                },
            ),
            (
                "<= 1s",
                SloError::UnknownMetric {
                    part: part("<= 1s"),
                    word: part("<="),
                },
            ),
            (
                "ttft 90 <= 1s",
                SloError::MissingPercentile {
                    part: part("ttft 90 <= 1s"),
                    metric: Ttft,
                },
            ),
            (
                "ttft p <= 1s",
                SloError::MissingPercentile {
                    part: part("ttft p <= 1s"),
                    metric: Ttft,
                },
            ),
            (
                "ttft p90 1s",
                SloError::MissingOperator {
                    part: part("ttft p90 1s"),
                    metric: Ttft,
                },
            ),
            (
                "ttft p90 >= 1s",
                SloError::WrongDirection {
                    part: part("ttft p90 >= 1s"),
                    metric: Ttft,
                },
            ),
            (
                "qoe p10 <= 0.9",
                SloError::WrongDirection {
                    part: part("qoe p10 <= 0.9"),
                    metric: Qoe,
                },
            ),
            (
                "itl p90 <=",
                SloError::MissingLimit {
                    part: part("itl p90 <="),
                    metric: Itl,
                },
            ),
            (
                "e2e p90 <= 1 min",
                SloError::BadUnit {
                    part: part("e2e p90 <= 1 min"),
                    metric: E2e,
                    unit: part("min"),
                },
            ),
            (
                "qoe p10 >= 0.9ms",
                SloError::BadUnit {
                    part: part("qoe p10 >= 0.9ms"),
                    metric: Qoe,
                    unit: part("ms"),
                },
            ),
            (
                "ttft p0 <= 1s",
                SloError::Percentile {
                    metric: Ttft,
                    percentile: 0.0,
                },
            ),
            (
                "ttft p100.5 <= 1s",
                SloError::Percentile {
                    metric: Ttft,
                    percentile: 100.5,
                },
            ),
            (
                "ttft p90 <= 0ms",
                SloError::Limit {
                    metric: Ttft,
                    limit: 0.0,
                },
            ),
            (
                "ttft p90 <= -5ms",
                SloError::Limit {
                    metric: Ttft,
                    limit: -5.0,
                },
            ),
            (
                "fluidity p10 >= 1.5",
                SloError::ScoreAboveOne {
                    metric: Fluidity,
                    limit: 1.5,
                },
            ),
            (" : ttft p90 <= 1s", SloError::Name(String::new())),
        ]
    }

    #[test]
    fn every_mistake_says_what_to_write() {
        use SloMetric::*;
        let part = |s: &str| s.to_owned();
        for (text, want) in mistakes() {
            let got = SloSet::parse(text);
            assert_eq!(got, Err(want.clone()), "{text:?}");
            let msg = want.to_string();
            assert!(msg.contains("e.g. `"), "{msg}");
        }
        // The first wrong part is the one reported.
        assert!(matches!(
            SloSet::parse("ttft p90 <= 1s, itl p90 >= 1ms, qoe"),
            Err(SloError::WrongDirection { metric: Itl, .. })
        ));
        // A limit too large for an f64.
        let huge = format!("ttft p90 <= 1{}ms", "0".repeat(400));
        assert!(matches!(
            SloSet::parse(&huge),
            Err(SloError::Limit { metric: Ttft, limit }) if limit.is_infinite()
        ));
        // Messages in full for two of them.
        assert_eq!(
            SloError::WrongDirection {
                part: part("ttft p90 >= 1s"),
                metric: Ttft
            }
            .to_string(),
            "`ttft p90 >= 1s`: TTFT is a latency (lower is better), so write `<=`, e.g. `ttft p90 <= 1000ms`"
        );
        assert_eq!(
            SloError::NoObjectives.to_string(),
            "an SLO needs at least one objective, e.g. `ttft p90 <= 1000ms`"
        );
    }

    #[test]
    fn sets_built_in_code_are_checked_the_same_way() {
        use SloMetric::*;
        assert_eq!(SloSet::new("x", Vec::new()), Err(SloError::NoObjectives));
        let long = "n".repeat(41);
        for bad in ["", " x", "a:b", "a,b", long.as_str()] {
            assert_eq!(
                SloSet::new(bad, SloSet::chat().objectives),
                Err(SloError::Name(bad.to_owned()))
            );
        }
        assert_eq!(
            Objective::new(Itl, 90.0, f64::NAN).map_err(|e| matches!(e, SloError::Limit { .. })),
            Err(true)
        );
        assert_eq!(
            Objective::new(Qoe, f64::NAN, 0.5)
                .map_err(|e| matches!(e, SloError::Percentile { .. })),
            Err(true)
        );
        assert_eq!(
            Objective::new(Qoe, 100.0, 1.0),
            Ok(objective(Qoe, 100.0, 1.0))
        );
    }

    #[test]
    fn failures_rank_worst_in_the_percentile() {
        // Latency [10, 20, 30, 40] + 1 failure: P75 h = 3 → exactly the fourth value, 40;
        // P80 h = 3.2 interpolates towards the failure.
        let v = || vec![40.0, 10.0, 30.0, 20.0];
        assert_eq!(
            percentile_with_failures(&mut v(), 1, 75.0, false),
            Some(40.0)
        );
        assert_eq!(percentile_with_failures(&mut v(), 1, 80.0, false), None);
        assert_eq!(
            percentile_with_failures(&mut v(), 1, 25.0, false),
            Some(20.0)
        );
        // Scores: the failure comes first. P25 h = 1 → 10 (the first value); P20 h = 0.8 → none.
        assert_eq!(
            percentile_with_failures(&mut v(), 1, 25.0, true),
            Some(10.0)
        );
        assert_eq!(percentile_with_failures(&mut v(), 1, 20.0, true), None);
        assert_eq!(
            percentile_with_failures(&mut v(), 1, 50.0, true),
            Some(20.0)
        );
        assert_eq!(
            percentile_with_failures(&mut Vec::new(), 0, 50.0, false),
            None
        );
        assert_eq!(
            percentile_with_failures(&mut Vec::new(), 2, 50.0, true),
            None
        );
    }

    fn arb_objective() -> impl Strategy<Value = Objective> {
        (0usize..5, 1e-6f64..=100.0, 1e-6f64..=1.0, 1e-3f64..1e8).prop_map(|(m, p, score, ms)| {
            let metric = SloMetric::ALL[m];
            let limit = if metric.higher_is_better() { score } else { ms };
            objective(metric, p, limit)
        })
    }

    proptest! {
        #[test]
        fn parse_never_panics(text in any::<String>()) {
            if let Ok(s) = SloSet::parse(&text) {
                prop_assert!(s.validate().is_ok());
            }
        }

        #[test]
        fn parse_never_panics_on_near_grammar(text in "[a-zA-Z0-9 .,;:<>=≤≥+-]{0,60}") {
            if let Ok(s) = SloSet::parse(&text) {
                prop_assert!(s.validate().is_ok());
                prop_assert_eq!(SloSet::parse(&s.to_string()), Ok(s));
            }
        }

        #[test]
        fn written_sets_read_back(
            name in prop_oneof![Just(CUSTOM.to_owned()), "[a-z][a-z0-9 _-]{0,20}[a-z0-9]"],
            objectives in proptest::collection::vec(arb_objective(), 1..6),
        ) {
            let s = SloSet { name, objectives };
            prop_assert!(s.validate().is_ok());
            prop_assert_eq!(SloSet::parse(&s.to_string()), Ok(s));
        }

        #[test]
        fn without_failures_the_percentile_is_the_stats_one(
            values in proptest::collection::vec(-1e6f64..1e6, 0..50),
            p in 0.0f64..=100.0,
            higher in any::<bool>(),
        ) {
            let want = percentile_select(&mut values.clone(), p);
            prop_assert_eq!(percentile_with_failures(&mut values.clone(), 0, p, higher), want);
        }

        #[test]
        fn failures_never_improve_the_percentile(
            values in proptest::collection::vec(0.0f64..1e4, 1..50),
            failures in 1usize..10,
            p in 0.0f64..=100.0,
        ) {
            let clean = percentile_select(&mut values.clone(), p).unwrap_or(f64::NAN);
            if let Some(v) = percentile_with_failures(&mut values.clone(), failures, p, false) {
                prop_assert!(v >= clean - 1e-6, "{} < {}", v, clean);
            }
            if let Some(v) = percentile_with_failures(&mut values.clone(), failures, p, true) {
                prop_assert!(v <= clean + 1e-6, "{} > {}", v, clean);
            }
        }
    }
}
