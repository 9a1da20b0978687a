//! Service-level objectives as a run keeps them: what each objective measures, its percentile
//! and limit, the set's name, and the text form users type (parsed and validated here).
//! [`crate::slo`] evaluates a run against them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What an objective measures on each request (see the module doc for the exact values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SloMetric {
    /// Time to first token (ms).
    Ttft,
    /// The request's P95 per-token gap (ms).
    Itl,
    /// End of the stream (ms).
    E2e,
    /// Etalon fluidity-index (0–1, higher is better).
    Fluidity,
    /// Reading QoE (0–1, higher is better).
    Qoe,
}

impl SloMetric {
    /// Every metric, in the order the text form lists them.
    pub const ALL: [SloMetric; 5] = [
        SloMetric::Ttft,
        SloMetric::Itl,
        SloMetric::E2e,
        SloMetric::Fluidity,
        SloMetric::Qoe,
    ];

    /// The word the text form uses: `ttft`, `itl`, `e2e`, `fluidity`, `qoe`.
    pub fn keyword(self) -> &'static str {
        match self {
            SloMetric::Ttft => "ttft",
            SloMetric::Itl => "itl",
            SloMetric::E2e => "e2e",
            SloMetric::Fluidity => "fluidity",
            SloMetric::Qoe => "qoe",
        }
    }

    /// The name shown to people: `TTFT`, `ITL`, `E2E`, `Fluidity`, `QoE`.
    pub fn label(self) -> &'static str {
        match self {
            SloMetric::Ttft => "TTFT",
            SloMetric::Itl => "ITL",
            SloMetric::E2e => "E2E",
            SloMetric::Fluidity => "Fluidity",
            SloMetric::Qoe => "QoE",
        }
    }

    /// Scores (Fluidity, QoE) are better higher and lie in 0–1; latencies are better lower.
    pub fn higher_is_better(self) -> bool {
        matches!(self, SloMetric::Fluidity | SloMetric::Qoe)
    }

    /// An objective on this metric as the text form writes it, for messages.
    pub fn example(self) -> &'static str {
        match self {
            SloMetric::Ttft => "ttft p90 <= 1000ms",
            SloMetric::Itl => "itl p90 <= 100ms",
            SloMetric::E2e => "e2e p90 <= 15000ms",
            SloMetric::Fluidity => "fluidity p10 >= 0.9",
            SloMetric::Qoe => "qoe p10 >= 0.9",
        }
    }

    /// The metric a word of the text form names (case-insensitive; `tbt` is ITL, `e2el` E2E,
    /// `fluid` Fluidity).
    fn from_word(word: &str) -> Option<Self> {
        match word.to_ascii_lowercase().as_str() {
            "ttft" => Some(SloMetric::Ttft),
            "itl" | "tbt" => Some(SloMetric::Itl),
            "e2e" | "e2el" => Some(SloMetric::E2e),
            "fluidity" | "fluid" => Some(SloMetric::Fluidity),
            "qoe" => Some(SloMetric::Qoe),
            _ => None,
        }
    }

    fn operator(self) -> &'static str {
        if self.higher_is_better() { ">=" } else { "<=" }
    }

    fn kind_words(self) -> &'static str {
        if self.higher_is_better() {
            "a score (higher is better)"
        } else {
            "a latency (lower is better)"
        }
    }

    fn unit_hint(self) -> String {
        if self.higher_is_better() {
            format!(
                "{self} is a score from 0 to 1, written without a unit, e.g. `{}`",
                self.example()
            )
        } else {
            format!(
                "write {self} limits in ms or s, e.g. `{}` or `{} p90 <= 1.5s`",
                self.example(),
                self.keyword()
            )
        }
    }
}

impl fmt::Display for SloMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Why an SLO cannot be used, with how to write it instead.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SloError {
    /// No objective given.
    #[error("an SLO needs at least one objective, e.g. `ttft p90 <= 1000ms`")]
    NoObjectives,
    /// The percentile is not in (0, 100].
    #[error(
        "{metric} p{percentile}: the percentile of requests must be above 0 and at most 100, e.g. `{}`",
        .metric.example()
    )]
    Percentile {
        /// The objective's metric.
        metric: SloMetric,
        /// The percentile given.
        percentile: f64,
    },
    /// The limit is not a finite number above 0.
    #[error(
        "{metric}: the limit must be a number above 0 (got {limit}), e.g. `{}`",
        .metric.example()
    )]
    Limit {
        /// The objective's metric.
        metric: SloMetric,
        /// The limit given.
        limit: f64,
    },
    /// A score's limit above 1.
    #[error(
        "{metric} is a score from 0 to 1: its limit must be at most 1 (got {limit}), e.g. `{}`",
        .metric.example()
    )]
    ScoreAboveOne {
        /// The objective's metric.
        metric: SloMetric,
        /// The limit given.
        limit: f64,
    },
    /// The set's name is empty, too long, or holds a separator.
    #[error(
        "the SLO's name must be 1 to 40 characters, without `:`, `,` or `;` and without spaces around it (got `{0}`), e.g. `my api: ttft p90 <= 1000ms`"
    )]
    Name(String),
    /// An objective does not begin with a metric.
    #[error(
        "`{part}`: `{word}` is not a metric; begin each objective with ttft, itl, e2e, fluidity or qoe, e.g. `ttft p90 <= 1000ms`"
    )]
    UnknownMetric {
        /// The objective as written.
        part: String,
        /// The word where the metric should be.
        word: String,
    },
    /// No percentile after the metric.
    #[error(
        "`{part}`: after the metric write the percentile of requests, `p` and a number, e.g. `{}`",
        .metric.example()
    )]
    MissingPercentile {
        /// The objective as written.
        part: String,
        /// Its metric.
        metric: SloMetric,
    },
    /// No comparison after the percentile.
    #[error(
        "`{part}`: after the percentile write `{}` and the limit, e.g. `{}`",
        .metric.operator(),
        .metric.example()
    )]
    MissingOperator {
        /// The objective as written.
        part: String,
        /// Its metric.
        metric: SloMetric,
    },
    /// `>=` on a latency or `<=` on a score.
    #[error(
        "`{part}`: {metric} is {}, so write `{}`, e.g. `{}`",
        .metric.kind_words(),
        .metric.operator(),
        .metric.example()
    )]
    WrongDirection {
        /// The objective as written.
        part: String,
        /// Its metric.
        metric: SloMetric,
    },
    /// No number after the comparison.
    #[error(
        "`{part}`: after `{}` write the limit as a number, e.g. `{}`",
        .metric.operator(),
        .metric.example()
    )]
    MissingLimit {
        /// The objective as written.
        part: String,
        /// Its metric.
        metric: SloMetric,
    },
    /// A unit that does not fit the metric, or text after the limit.
    #[error("`{part}`: `{unit}` after the limit is not understood; {}", .metric.unit_hint())]
    BadUnit {
        /// The objective as written.
        part: String,
        /// Its metric.
        metric: SloMetric,
        /// What followed the limit.
        unit: String,
    },
}

/// One objective: `metric` at percentile `percentile` over requests within `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    /// What is measured on each request.
    pub metric: SloMetric,
    /// Percentile over requests (0 < p ≤ 100), e.g. 90; for a score the low tail (p10) is the
    /// worse one.
    pub percentile: f64,
    /// Limit: ms for latencies (`≤`), 0–1 for scores (`≥`).
    pub limit: f64,
}

impl Objective {
    /// A checked objective.
    pub fn new(metric: SloMetric, percentile: f64, limit: f64) -> Result<Self, SloError> {
        let o = Self {
            metric,
            percentile,
            limit,
        };
        o.validate()?;
        Ok(o)
    }

    /// Whether a value is within the limit: `≤` for latencies, `≥` for scores. NaN never is.
    pub fn meets(&self, value: f64) -> bool {
        if self.metric.higher_is_better() {
            value >= self.limit
        } else {
            value <= self.limit
        }
    }

    /// Percentile in (0, 100], limit finite and above 0, a score's limit at most 1.
    pub fn validate(&self) -> Result<(), SloError> {
        let metric = self.metric;
        if !(self.percentile > 0.0 && self.percentile <= 100.0) {
            return Err(SloError::Percentile {
                metric,
                percentile: self.percentile,
            });
        }
        if !(self.limit.is_finite() && self.limit > 0.0) {
            return Err(SloError::Limit {
                metric,
                limit: self.limit,
            });
        }
        if metric.higher_is_better() && self.limit > 1.0 {
            return Err(SloError::ScoreAboveOne {
                metric,
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// Parses one objective (`ttft p90 <= 1000ms`); `part` is already trimmed.
    fn parse(part: &str) -> Result<Self, SloError> {
        let err_part = || part.to_owned();
        let (word, rest) = split_while(part, |c| c.is_ascii_alphanumeric());
        let metric = SloMetric::from_word(word).ok_or_else(|| SloError::UnknownMetric {
            part: err_part(),
            word: if word.is_empty() {
                part.split_whitespace().next().unwrap_or("").to_owned()
            } else {
                word.to_owned()
            },
        })?;
        let missing_percentile = || SloError::MissingPercentile {
            part: err_part(),
            metric,
        };
        let rest = rest.trim_start();
        let rest = rest
            .strip_prefix(['p', 'P'])
            .ok_or_else(missing_percentile)?;
        let (number, rest) = split_while(rest, |c| c.is_ascii_digit() || c == '.');
        let percentile: f64 = number.parse().map_err(|_| missing_percentile())?;
        let rest = rest.trim_start();
        let (higher, rest) = if let Some(r) = strip_any(rest, &["<=", "≤", "=<", "<"]) {
            (false, r)
        } else if let Some(r) = strip_any(rest, &[">=", "≥", "=>", ">"]) {
            (true, r)
        } else {
            return Err(SloError::MissingOperator {
                part: err_part(),
                metric,
            });
        };
        if higher != metric.higher_is_better() {
            return Err(SloError::WrongDirection {
                part: err_part(),
                metric,
            });
        }
        let rest = rest.trim_start();
        let (number, rest) = split_while(rest, |c| {
            c.is_ascii_digit() || c == '.' || c == '-' || c == '+'
        });
        let limit: f64 = number.parse().map_err(|_| SloError::MissingLimit {
            part: err_part(),
            metric,
        })?;
        let unit = rest.trim();
        let scale = match (
            metric.higher_is_better(),
            unit.to_ascii_lowercase().as_str(),
        ) {
            (true, "") | (false, "" | "ms") => 1.0,
            (false, "s") => 1000.0,
            _ => {
                return Err(SloError::BadUnit {
                    part: err_part(),
                    metric,
                    unit: unit.to_owned(),
                });
            }
        };
        Objective::new(metric, percentile, limit * scale)
    }
}

impl fmt::Display for Objective {
    /// `ttft p90 <= 1000ms`, `qoe p10 >= 0.9`: numbers in Rust's shortest form that reads back
    /// to the same `f64`, so [`SloSet::parse`] gives the objective back exactly.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.metric;
        let unit = if m.higher_is_better() { "" } else { "ms" };
        write!(
            f,
            "{} p{} {} {}{unit}",
            m.keyword(),
            self.percentile,
            m.operator(),
            self.limit
        )
    }
}

/// The leading run of `s` whose characters satisfy `keep`, and the rest.
fn split_while(s: &str, keep: impl Fn(char) -> bool) -> (&str, &str) {
    let end = s.find(|c: char| !keep(c)).unwrap_or(s.len());
    s.split_at(end)
}

fn strip_any<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| s.strip_prefix(p))
}

/// A named set of objectives: a request meets it when it meets every objective.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloSet {
    /// Name shown in sentences (`chat`, `agent`, `batch`, `custom`, or the user's).
    pub name: String,
    /// The objectives, all of which must hold.
    pub objectives: Vec<Objective>,
}

/// The name of a set parsed without one whose objectives are no preset's.
pub const CUSTOM: &str = "custom";

impl Default for SloSet {
    /// [`SloSet::chat`].
    fn default() -> Self {
        Self::chat()
    }
}

pub(crate) fn objective(metric: SloMetric, percentile: f64, limit: f64) -> Objective {
    Objective {
        metric,
        percentile,
        limit,
    }
}

impl SloSet {
    /// A checked set.
    pub fn new(name: impl Into<String>, objectives: Vec<Objective>) -> Result<Self, SloError> {
        let set = Self {
            name: name.into(),
            objectives,
        };
        set.validate()?;
        Ok(set)
    }

    /// Someone reading the answer as it streams: `ttft p90 <= 1000ms, itl p90 <= 100ms,
    /// qoe p10 >= 0.9`.
    ///
    /// - TTFT P90 ≤ 1 s: the limit for a user's flow of thought to stay uninterrupted (Nielsen,
    ///   *Response Times: The 3 Important Limits*), the expected first token of the reading QoE
    ///   ([`crate::experience::ReadingConfig`]) too.
    /// - ITL P90 ≤ 100 ms (each request's P95 per-token gap): 10 tokens/s, about 7.5 words/s at
    ///   0.75 words per token, nearly twice silent reading's 4 words/s (Brysbaert 2019), so a
    ///   reader never catches up with the text; 100 ms is also the tightest TPOT of DistServe's
    ///   chatbot workloads (Zhong et al., OSDI 2024: 0.1–0.2 s).
    /// - QoE P10 ≥ 0.9: nine requests in ten keep the reader at least 90 % on the expected
    ///   pace (Andes' QoE, Liu et al. 2024; P10 is the tail [`crate::experience`] reports).
    pub fn chat() -> Self {
        Self {
            name: "chat".into(),
            objectives: vec![
                objective(SloMetric::Ttft, 90.0, 1000.0),
                objective(SloMetric::Itl, 90.0, 100.0),
                objective(SloMetric::Qoe, 10.0, 0.9),
            ],
        }
    }

    /// A program waiting for each whole step (a tool call, a JSON answer) before acting:
    /// `ttft p90 <= 2000ms, e2e p90 <= 15000ms`.
    ///
    /// - TTFT P90 ≤ 2 s: the studio's goodput threshold ([`crate::stats::Thresholds`]); a
    ///   program does not read along, so only the start of the work matters, not a reader's
    ///   1 s.
    /// - E2E P90 ≤ 15 s: the step is used whole, so its end is what counts; 15 s is 2 s to the
    ///   first token and about 500 tokens at 40 tokens/s, and keeps a step near Nielsen's 10 s
    ///   limit of a user's attention on the task.
    pub fn agent() -> Self {
        Self {
            name: "agent".into(),
            objectives: vec![
                objective(SloMetric::Ttft, 90.0, 2000.0),
                objective(SloMetric::E2e, 90.0, 15_000.0),
            ],
        }
    }

    /// Offline work where only completion matters: `e2e p99 <= 60000ms`.
    ///
    /// A minute per request for nearly all of them (P99): the bound that keeps a batch from
    /// stalling on stragglers; throughput is then judged by [`crate::slo::LevelSlo::goodput_per_s`].
    pub fn batch() -> Self {
        Self {
            name: "batch".into(),
            objectives: vec![objective(SloMetric::E2e, 99.0, 60_000.0)],
        }
    }

    /// The presets, in the order the studio offers them: chat, agent, batch.
    pub fn presets() -> Vec<SloSet> {
        vec![Self::chat(), Self::agent(), Self::batch()]
    }

    /// The preset of that name, if any.
    pub fn preset(name: &str) -> Option<SloSet> {
        Self::presets().into_iter().find(|p| p.name == name)
    }

    /// A valid name (1–40 characters, no `:`, `,`, `;`, no spaces around it) and at least one
    /// objective, each valid ([`Objective::validate`]).
    pub fn validate(&self) -> Result<(), SloError> {
        let n = &self.name;
        if n.is_empty()
            || n.chars().count() > 40
            || n.trim() != n
            || n.contains([':', ',', ';'])
            || n.chars().any(char::is_control)
        {
            return Err(SloError::Name(n.clone()));
        }
        if self.objectives.is_empty() {
            return Err(SloError::NoObjectives);
        }
        self.objectives.iter().try_for_each(Objective::validate)
    }

    /// The name a set with these objectives gets when its text names none: the preset's whose
    /// objectives they are, else [`CUSTOM`].
    fn inferred_name(objectives: &[Objective]) -> String {
        Self::presets()
            .into_iter()
            .find(|p| p.objectives == objectives)
            .map_or_else(|| CUSTOM.to_owned(), |p| p.name)
    }

    /// Reads the text form: objectives separated by `,` or `;`, each
    /// `metric pP op limit[unit]`:
    /// - `metric`: `ttft`, `itl` (or `tbt`), `e2e`, `fluidity`, `qoe` (any case);
    /// - `pP`: the percentile over requests, e.g. `p90`, `p99.9`;
    /// - `op`: `<=` (or `≤`, `<`) for latencies, `>=` (or `≥`, `>`) for scores;
    /// - `limit`: ms for latencies, with an optional `ms` or `s` (`1.5s` is 1500 ms); a plain
    ///   number from 0 to 1 for scores.
    ///
    /// An optional `name:` before them names the set; without one it is the preset whose
    /// objectives these are, else [`CUSTOM`]. Empty parts (a trailing comma) are skipped. The
    /// first mistake is returned, saying which part is wrong and how to write it.
    pub fn parse(text: &str) -> Result<Self, SloError> {
        let (name, body) = match text.split_once(':') {
            Some((name, body)) => (Some(name.trim()), body),
            None => (None, text),
        };
        let objectives = body
            .split([',', ';'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(Objective::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let name = match name {
            Some(n) => n.to_owned(),
            None => Self::inferred_name(&objectives),
        };
        Self::new(name, objectives)
    }
}

impl FromStr for SloSet {
    type Err = SloError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for SloSet {
    /// The text form [`SloSet::parse`] reads back to the same set: the objectives joined by
    /// `, `, after `name: ` only when the name is not the one parsing would infer (a preset's
    /// own name, or [`CUSTOM`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name != Self::inferred_name(&self.objectives) {
            write!(f, "{}: ", self.name)?;
        }
        for (i, o) in self.objectives.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{o}")?;
        }
        Ok(())
    }
}
