//! Scenarios: what a run sends. Turns the form's settings into phases of jobs, which a client
//! (the studio's browser runner, or an exported load script) executes; builds the growing
//! conversation of multi-turn runs; says which metric settings a scenario needs.
//!
//! Sans-IO like the rest of the core: randomness and time come in as arguments.

use serde::{Deserialize, Serialize};
use serde_json::json;
use thiserror::Error;

use crate::arrivals::{LoadShape, LoadShapeError, planned_sends};
use crate::dialect::Dialect;
use crate::metrics::{MetricsConfig, RequestMetrics};
use crate::request::{GenerationParams, filler_text};

/// A scenario setting that cannot be run, with what to change.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ScenarioError {
    /// No model.
    #[error("choose a model")]
    NoModel,
    /// A count is zero.
    #[error("max tokens, requests and concurrency must be at least 1")]
    ZeroCount,
    /// Extra request fields are not a JSON object.
    #[error("extra request fields must be a JSON object, e.g. {{\"cache_prompt\": false}}")]
    ExtraBodyNotObject,
    /// No prompt.
    #[error("write a prompt or choose a preset")]
    NoPrompt,
    /// A level list item is not a positive whole number.
    #[error("'{0}' is not a positive whole number")]
    BadLevel(String),
    /// An empty level list.
    #[error("give at least one level, e.g. 1, 4, 8")]
    NoLevels,
    /// An A/B run with fewer than two arms.
    #[error("an A/B run compares 2 to 4 configurations: add another, or turn A/B off")]
    TooFewArms,
    /// An A/B run with more than four arms.
    #[error("an A/B run compares at most 4 configurations: remove {0}")]
    TooManyArms(usize),
    /// An arm without a model (1-based).
    #[error("configuration {0} of the A/B run has no model: choose one, or remove it")]
    ArmWithoutModel(usize),
    /// Two arms given the same label.
    #[error("two configurations of the A/B run are labelled '{0}': give each its own label")]
    DuplicateArmLabel(String),
    /// Repeats out of range.
    #[error("repeat a scenario 1 to 20 times, not {0}")]
    BadRepeats(u32),
    /// A concurrency sweep cannot be interleaved.
    #[error(
        "an A/B run cannot interleave a concurrency sweep (each level's streams would be split between the configurations): sweep each configuration on its own, or compare them with a chat run at one concurrency"
    )]
    ArmsInConcurrencySweep,
    /// A load shape that cannot be planned.
    #[error("load shape: {0}")]
    Load(#[from] LoadShapeError),
    /// A trace replay planned without its trace (the trace file is read by the caller).
    #[error(
        "no trace loaded: choose a trace file (Mooncake JSONL, Azure LLM inference CSV or BurstGPT CSV) under \"Trace replay\" first"
    )]
    NoTrace,
}

/// Most configurations an A/B run compares.
pub const MAX_ARMS: usize = 4;

/// Most repeats of one scenario.
pub const MAX_REPEATS: u32 = 20;

/// One configuration of an A/B run: a model, and another base URL of the same API kind when it
/// is not the endpoint panel's. Holds no secret: API key and headers are the endpoint panel's,
/// sent to every arm and stored with none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arm {
    /// Short label (empty = the model's name, told apart from the others' when they clash).
    #[serde(default)]
    pub label: String,
    /// Model.
    #[serde(default)]
    pub model: String,
    /// Base URL; `None` (or blank) = the endpoint panel's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

impl Arm {
    /// The arm's own base URL, trimmed, when it has one.
    pub fn own_base(&self) -> Option<&str> {
        self.base_url
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
    }
}

/// The labels of an A/B run's arms, in order: each arm's own, or its model's name when it has
/// none (`model (2)`, `model (3)` when another arm already goes by it). Errors when an arm has
/// no model or two arms were given the same label; the count of arms is not checked here.
pub fn arm_labels(arms: &[Arm]) -> Result<Vec<String>, ScenarioError> {
    let mut given: Vec<&str> = Vec::new();
    for (i, a) in arms.iter().enumerate() {
        if a.model.trim().is_empty() {
            return Err(ScenarioError::ArmWithoutModel(i + 1));
        }
        let label = a.label.trim();
        if !label.is_empty() {
            if given.contains(&label) {
                return Err(ScenarioError::DuplicateArmLabel(label.to_owned()));
            }
            given.push(label);
        }
    }
    let mut taken: Vec<String> = given.iter().map(|l| (*l).to_owned()).collect();
    Ok(arms
        .iter()
        .map(|a| {
            let label = a.label.trim();
            if !label.is_empty() {
                return label.to_owned();
            }
            let model = a.model.trim();
            let mut candidate = model.to_owned();
            let mut n = 2;
            while taken.contains(&candidate) {
                candidate = format!("{model} ({n})");
                n += 1;
            }
            taken.push(candidate.clone());
            candidate
        })
        .collect())
}

/// The kinds of run the studio offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioKind {
    /// N chat requests at a concurrency.
    Chat,
    /// Time until a complete, valid JSON answer or tool call.
    AgentJson,
    /// Rounds of an agent conversation: the prompt grows each round.
    MultiTurn,
    /// TTFT against prompt length.
    PromptSweep,
    /// Latency against concurrency levels.
    ConcurrencySweep,
    /// Rounds of a chat behind a long shared system prompt: each round's prompt extends the
    /// previous one, so a server with a prefix cache prefills only what is new.
    SharedPrefix,
    /// A production trace replayed at its arrival times ([`crate::trace`]): the trace file is
    /// read by the caller, the options are [`ScenarioConfig::trace`].
    Trace,
}

impl ScenarioKind {
    /// All kinds with labels.
    pub const ALL: [(ScenarioKind, &'static str); 7] = [
        (ScenarioKind::Chat, "Chat"),
        (ScenarioKind::AgentJson, "Agent JSON"),
        (ScenarioKind::MultiTurn, "Multi-turn agent"),
        (ScenarioKind::PromptSweep, "Prompt-length sweep"),
        (ScenarioKind::ConcurrencySweep, "Concurrency sweep"),
        (
            ScenarioKind::SharedPrefix,
            "Multi-turn shared prefix (prompt cache)",
        ),
        (ScenarioKind::Trace, "Trace replay"),
    ];

    /// Stable id used in reports.
    pub fn id(self) -> &'static str {
        match self {
            ScenarioKind::Chat => "chat",
            ScenarioKind::AgentJson => "agent_json",
            ScenarioKind::MultiTurn => "multi_turn",
            ScenarioKind::PromptSweep => "prompt_sweep",
            ScenarioKind::ConcurrencySweep => "concurrency_sweep",
            ScenarioKind::SharedPrefix => "shared_prefix",
            ScenarioKind::Trace => "trace",
        }
    }

    /// Whether the kind sends one growing conversation in rounds (its groups are rounds, not
    /// load levels).
    pub fn is_conversation(self) -> bool {
        matches!(self, ScenarioKind::MultiTurn | ScenarioKind::SharedPrefix)
    }

    /// Parses an id.
    pub fn from_id(s: &str) -> Option<Self> {
        Self::ALL.iter().map(|(k, _)| *k).find(|k| k.id() == s)
    }
}

/// Whether a report's scenario id ([`ScenarioKind::id`]) is a conversation in rounds.
pub fn is_conversation_id(id: &str) -> bool {
    ScenarioKind::from_id(id).is_some_and(ScenarioKind::is_conversation)
}

/// Tokens (≈ 4 characters each) of the shared-prefix scenario's reference document: a system
/// prompt long enough that prefilling it again is measurable, and that a prefix cache keeping
/// blocks of 16 tokens has many to keep.
pub const SHARED_PREFIX_TOKENS: usize = 1500;

/// The shared-prefix scenario's system prompt: the form's system prompt (if any), then a long
/// reference document every round repeats word for word.
pub fn shared_prefix_system(system_prompt: &str) -> String {
    let mut s = String::new();
    if !system_prompt.trim().is_empty() {
        s.push_str(system_prompt.trim());
        s.push_str("\n\n");
    }
    s.push_str("You are a support assistant. Answer from the reference document below.\n\nREFERENCE DOCUMENT\n");
    s.push_str(&filler_text(SHARED_PREFIX_TOKENS));
    s
}

/// Prompt presets: label and text.
pub const PROMPTS: &[(&str, &str)] = &[
    (
        "Short question (≈20 tokens)",
        "In two sentences, why does time to first token matter more than total latency for a chat product?",
    ),
    (
        "Summary request (≈120 tokens)",
        "Summarise the following for a product manager in five bullet points. Our assistant streams answers. Users complained that model B feels slow although its average response time is lower than model A's. Measurements show model A starts answering after 0.8 seconds and then writes 15 tokens per second, while model B needs 3.5 seconds before the first word and then writes 25 tokens per second. We want to decide which model to ship and what to tell the infrastructure team.",
    ),
    (
        "中文总结（≈80 tokens）",
        "请帮我总结一下这段话的要点：首令牌延迟主要由预填充阶段决定，与提示词长度基本成正比；令牌间延迟由解码阶段决定，受显存带宽限制。高并发时排队时间会让首令牌延迟暴涨。",
    ),
    ("Long context (≈2,000 tokens)", ""),
];

/// The form's scenario settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioConfig {
    /// Kind.
    pub kind: ScenarioKind,
    /// Index into [`PROMPTS`], or `None` for the custom prompt.
    pub preset: Option<usize>,
    /// Custom prompt.
    pub custom_prompt: String,
    /// System prompt (empty = none).
    pub system_prompt: String,
    /// Max output tokens.
    pub max_tokens: u32,
    /// Temperature.
    pub temperature: Option<f64>,
    /// Seed.
    pub seed: Option<u64>,
    /// Measured requests (per level for sweeps).
    pub requests: u32,
    /// Concurrency (chat, agent JSON).
    pub concurrency: u32,
    /// Warm-up requests before measuring (excluded from statistics).
    pub warmup: u32,
    /// Concurrency levels, comma separated.
    pub levels: String,
    /// Prompt lengths in tokens, comma separated.
    pub prompt_levels: String,
    /// Agent JSON: required keys, comma separated.
    pub required_keys: String,
    /// Agent JSON: use a tool definition instead of `response_format`.
    pub use_tools: bool,
    /// Multi-turn: rounds.
    pub rounds: u32,
    /// Per-request timeout (s).
    pub timeout_s: f64,
    /// Ask for continuous usage stats.
    pub continuous_usage: bool,
    /// Ask to ignore EOS (fixed output length).
    pub ignore_eos: bool,
    /// Poisson arrival rate (requests/s); 0 = closed loop at the concurrency. Settings with a
    /// [`ScenarioConfig::load`] shape ignore it; older settings and links keep it.
    pub rate_per_s: f64,
    /// When a chat or agent JSON run sends its measured requests ([`crate::arrivals`]): gamma
    /// arrivals with a burstiness, ramps, steps, a concurrency ramp. `None` (older settings,
    /// absent from them) = [`ScenarioConfig::rate_per_s`]'s: above 0 Poisson arrivals at that
    /// rate, 0 a closed loop ([`ScenarioConfig::load_shape`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadShape>,
    /// Extra request fields as a JSON object (e.g. llama.cpp `{"cache_prompt": false}`).
    #[serde(default)]
    pub extra_body: String,
    /// The configurations of an A/B run, sent interleaved ([`ScenarioConfig::plan_arms`]):
    /// empty for an ordinary run, else 2 to [`MAX_ARMS`]. Absent from settings without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arms: Vec<Arm>,
    /// How many times the whole scenario runs, back to back (1 = once), each time a run (or an
    /// A/B run) of its own. Absent from settings when 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeats: u32,
    /// A trace replay's options ([`ScenarioKind::Trace`]); the trace itself is not a setting
    /// (traces are large: the studio holds the file read in memory). Absent from settings
    /// when the defaults.
    #[serde(default, skip_serializing_if = "TraceReplay::is_default")]
    pub trace: TraceReplay,
}

/// The lanes a trace replay keeps in flight at most, unless the form says otherwise.
pub const DEFAULT_TRACE_LANES: u32 = 64;

/// A trace replay's options: the window of the trace to replay, how fast, and the most
/// requests in flight (the open loop's cap: a request whose time comes while every lane is
/// busy waits, and its schedule lag says so).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceReplay {
    /// Where the window starts, seconds after the trace's first arrival.
    pub window_start_s: f64,
    /// How long the window lasts, seconds of the trace; `None`: to the trace's end.
    pub window_s: Option<f64>,
    /// How much faster than recorded (10 = ten times the trace's rate).
    pub speed: f64,
    /// The most requests in flight (lanes).
    pub max_concurrency: u32,
}

impl Default for TraceReplay {
    fn default() -> Self {
        Self {
            window_start_s: 0.0,
            window_s: None,
            speed: 1.0,
            max_concurrency: DEFAULT_TRACE_LANES,
        }
    }
}

impl TraceReplay {
    /// Whether these are the defaults (left out of settings).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The default count of repeats.
fn one() -> u32 {
    1
}

/// Whether a count is 1 (serde's `skip_serializing_if` passes a reference).
fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Default for ScenarioConfig {
    fn default() -> Self {
        Self {
            kind: ScenarioKind::Chat,
            preset: Some(1),
            custom_prompt: String::new(),
            system_prompt: String::new(),
            max_tokens: 64,
            temperature: Some(0.0),
            seed: None,
            requests: 8,
            concurrency: 2,
            warmup: 1,
            levels: "1, 4, 8, 16".into(),
            prompt_levels: "100, 500, 1000, 2000".into(),
            required_keys: "city, days".into(),
            use_tools: false,
            rounds: 4,
            timeout_s: 60.0,
            continuous_usage: false,
            ignore_eos: false,
            rate_per_s: 0.0,
            load: None,
            extra_body: String::new(),
            arms: Vec::new(),
            repeats: 1,
            trace: TraceReplay::default(),
        }
    }
}

/// One request to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Group label.
    pub group: String,
    /// Group level.
    pub level: Option<f64>,
    /// Warm-up (excluded from statistics).
    pub warmup: bool,
    /// What to send.
    pub params: GenerationParams,
    /// Multi-turn: prepend the conversation so far.
    pub chained: bool,
    /// The arm of an A/B run it belongs to (0 in an ordinary run): its index in
    /// [`ScenarioConfig::arms`].
    pub arm: usize,
    /// Its interleaving slot in an A/B run: the k-th measured job of every arm has `Some(k)`
    /// (the same prompt, sent back to back); `None` for warm-ups and ordinary runs.
    pub pair: Option<u32>,
    /// When to send it, ms from its phase's start (an open-loop plan: a trace, a load shape);
    /// `None`: as soon as a lane is free (closed loop), or at the phase's Poisson rate. In a
    /// concurrency ramp only each lane's first job has one: its lane starts then.
    pub planned_ms: Option<f64>,
}

/// Jobs run at one concurrency.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Requests in flight at once.
    pub concurrency: u32,
    /// Poisson rate (0 = closed loop) for jobs without a planned time; with a load shape, the
    /// rate it settles at ([`LoadShape::settled_rate_per_s`]), for display: a job's
    /// [`Job::planned_ms`], when set, is when it goes.
    pub rate_per_s: f64,
    /// Jobs.
    pub jobs: Vec<Job>,
}

/// Parses "1, 4, 8" into numbers; errors name the bad item.
pub fn parse_levels(s: &str) -> Result<Vec<u32>, ScenarioError> {
    let v = s
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| ScenarioError::BadLevel(x.to_owned()))
        })
        .collect::<Result<Vec<u32>, _>>()?;
    if v.is_empty() {
        Err(ScenarioError::NoLevels)
    } else {
        Ok(v)
    }
}

fn keys(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .collect()
}

impl ScenarioConfig {
    /// The prompt text.
    pub fn prompt(&self) -> String {
        match self.preset {
            Some(3) => filler_text(2000),
            Some(i) if i < PROMPTS.len() => PROMPTS[i].1.to_owned(),
            _ => self.custom_prompt.clone(),
        }
    }

    /// Required JSON keys.
    pub fn required_keys(&self) -> Vec<String> {
        if self.kind == ScenarioKind::AgentJson {
            keys(&self.required_keys)
        } else {
            Vec::new()
        }
    }

    /// What every request of the scenario sends but its prompt: `model`, sampling, stream
    /// options, EOS, extra fields, with `prompt` as the user message (the template of a trace
    /// replay's requests, [`crate::trace::TraceJob::to_job`]).
    pub fn params(
        &self,
        model: &str,
        prompt: String,
        dialect: Option<Dialect>,
    ) -> GenerationParams {
        let mut messages = Vec::new();
        if self.kind == ScenarioKind::SharedPrefix {
            messages.push((
                "system".to_owned(),
                shared_prefix_system(&self.system_prompt),
            ));
        } else if !self.system_prompt.trim().is_empty() {
            messages.push(("system".to_owned(), self.system_prompt.clone()));
        }
        messages.push(("user".to_owned(), prompt));
        let mut p = GenerationParams {
            model: model.to_owned(),
            messages,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            seed: self.seed,
            continuous_usage: self.continuous_usage,
            ignore_eos: self.ignore_eos,
            response_format: None,
            tools: None,
            extra_body: serde_json::from_str(&self.extra_body).ok(),
        };
        if self.kind == ScenarioKind::AgentJson || self.kind == ScenarioKind::MultiTurn {
            let props: serde_json::Map<String, serde_json::Value> = keys(&self.required_keys)
                .into_iter()
                .map(|k| (k, json!({"type": "string"})))
                .collect();
            let schema = json!({"type": "object", "properties": props, "required": keys(&self.required_keys)});
            if self.use_tools || self.kind == ScenarioKind::MultiTurn {
                p.tools = Some(
                    json!([{"type": "function", "function": {"name": "plan_trip", "description": "Plan a trip", "parameters": schema}}]),
                );
            } else if dialect.is_none_or(|d| d == Dialect::OpenAiChat) {
                p.response_format = Some(
                    json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}),
                );
            } else {
                p.response_format = Some(json!({"type": "json_object"}));
            }
        }
        p
    }

    /// What the metrics must track for this scenario: JSON validity when keys are required
    /// or the answer is an agent's JSON.
    pub fn metrics_config(&self) -> MetricsConfig {
        let required_keys = self.required_keys();
        MetricsConfig {
            track_json: !required_keys.is_empty() || self.kind == ScenarioKind::AgentJson,
            required_keys,
            ..MetricsConfig::default()
        }
    }

    /// The phases of the run; an error says which setting is wrong.
    pub fn plan(&self, model: &str, dialect: Option<Dialect>) -> Result<Vec<Phase>, ScenarioError> {
        if model.trim().is_empty() {
            return Err(ScenarioError::NoModel);
        }
        if self.max_tokens == 0 || self.requests == 0 || self.concurrency == 0 {
            return Err(ScenarioError::ZeroCount);
        }
        if !self.extra_body.trim().is_empty()
            && !serde_json::from_str::<serde_json::Value>(&self.extra_body)
                .is_ok_and(|v| v.is_object())
        {
            return Err(ScenarioError::ExtraBodyNotObject);
        }
        let prompt = self.prompt();
        if prompt.trim().is_empty() {
            return Err(ScenarioError::NoPrompt);
        }
        let job = |group: String, level: Option<f64>, warmup: bool, prompt: String| Job {
            group,
            level,
            warmup,
            params: self.params(model, prompt, dialect),
            chained: false,
            arm: 0,
            pair: None,
            planned_ms: None,
        };
        let warmups = |group: &str, level: Option<f64>, prompt: &str| {
            (0..self.warmup)
                .map(|_| job(group.to_owned(), level, true, prompt.to_owned()))
                .collect::<Vec<_>>()
        };
        Ok(match self.kind {
            ScenarioKind::Chat | ScenarioKind::AgentJson => {
                let shape = self.load_shape();
                let concurrency = match shape {
                    Some(LoadShape::ConcurrencyRamp { to, .. }) => to,
                    _ => self.concurrency,
                };
                let g = format!("c={concurrency}");
                let mut measured = Phase {
                    concurrency,
                    rate_per_s: shape.as_ref().map_or(0.0, LoadShape::settled_rate_per_s),
                    jobs: (0..self.requests)
                        .map(|_| job(g.clone(), None, false, prompt.clone()))
                        .collect(),
                };
                schedule(&mut measured.jobs, shape.as_ref(), self.arrival_seed())?;
                // Warm-ups finish before measuring starts, so they never overlap measured requests.
                let warm = warmups(&g, None, &prompt);
                if warm.is_empty() {
                    vec![measured]
                } else {
                    vec![
                        Phase {
                            concurrency: self.concurrency,
                            rate_per_s: 0.0,
                            jobs: warm,
                        },
                        measured,
                    ]
                }
            }
            ScenarioKind::ConcurrencySweep => {
                let levels = parse_levels(&self.levels)?;
                levels
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| {
                        let g = format!("c={c}");
                        let mut jobs = if i == 0 {
                            warmups(&g, Some(f64::from(c)), &prompt)
                        } else {
                            Vec::new()
                        };
                        jobs.extend(
                            (0..self.requests.max(c))
                                .map(|_| job(g.clone(), Some(f64::from(c)), false, prompt.clone())),
                        );
                        Phase {
                            concurrency: c,
                            rate_per_s: 0.0,
                            jobs,
                        }
                    })
                    .collect()
            }
            ScenarioKind::PromptSweep => {
                let levels = parse_levels(&self.prompt_levels)?;
                let mut phases = Vec::new();
                for (i, &n) in levels.iter().enumerate() {
                    let g = format!("prompt≈{n}");
                    // A distinct prefix per request defeats prefix caching.
                    let text = |k: u32| {
                        format!(
                            "[{k}] {}\n\nSummarise the text above in one line.",
                            filler_text(n as usize)
                        )
                    };
                    let mut jobs = if i == 0 {
                        warmups(&g, Some(f64::from(n)), &text(9999))
                    } else {
                        Vec::new()
                    };
                    jobs.extend(
                        (0..self.requests)
                            .map(|k| job(g.clone(), Some(f64::from(n)), false, text(k))),
                    );
                    phases.push(Phase {
                        concurrency: 1,
                        rate_per_s: 0.0,
                        jobs,
                    });
                }
                phases
            }
            ScenarioKind::MultiTurn => {
                let jobs = (0..self.rounds.max(1))
                    .map(|r| Job {
                        chained: r > 0,
                        ..job(format!("round {}", r + 1), Some(f64::from(r + 1)), false, if r == 0 { prompt.clone() } else { format!("Tool result for step {r}: {{\"status\": \"ok\", \"items\": 3}}. Continue.") })
                    })
                    .collect();
                vec![Phase {
                    concurrency: 1,
                    rate_per_s: 0.0,
                    jobs,
                }]
            }
            ScenarioKind::Trace => return Err(ScenarioError::NoTrace),
            ScenarioKind::SharedPrefix => {
                // Round 1 asks the prompt; later rounds follow up, each sent after everything
                // said so far ([`Conversation`]), so each prompt extends the one before.
                let jobs = (0..self.rounds.max(1))
                    .map(|r| Job {
                        chained: r > 0,
                        ..job(
                            format!("round {}", r + 1),
                            Some(f64::from(r + 1)),
                            false,
                            if r == 0 {
                                prompt.clone()
                            } else {
                                format!("Follow-up {r}: using the reference document, add one more detail to your last answer.")
                            },
                        )
                    })
                    .collect();
                vec![Phase {
                    concurrency: 1,
                    rate_per_s: 0.0,
                    jobs,
                }]
            }
        })
    }
}

impl ScenarioConfig {
    /// Whether the scenario is an A/B run (it has arms).
    pub fn is_ab(&self) -> bool {
        !self.arms.is_empty()
    }

    /// Checks the settings of runs made together: the repeats (1 to [`MAX_REPEATS`]) and, in an
    /// A/B run, 2 to [`MAX_ARMS`] arms with models and distinct labels, of a kind that can be
    /// interleaved (not a concurrency sweep). Returns the arms' labels ([`arm_labels`]; none
    /// for an ordinary run).
    pub fn validate_group(&self) -> Result<Vec<String>, ScenarioError> {
        if !(1..=MAX_REPEATS).contains(&self.repeats) {
            return Err(ScenarioError::BadRepeats(self.repeats));
        }
        if self.arms.is_empty() {
            return Ok(Vec::new());
        }
        if self.arms.len() < 2 {
            return Err(ScenarioError::TooFewArms);
        }
        if self.arms.len() > MAX_ARMS {
            return Err(ScenarioError::TooManyArms(self.arms.len() - MAX_ARMS));
        }
        if self.kind == ScenarioKind::ConcurrencySweep {
            return Err(ScenarioError::ArmsInConcurrencySweep);
        }
        arm_labels(&self.arms)
    }

    /// The phases of an A/B run: every arm's own plan ([`ScenarioConfig::plan`] with its
    /// model as sent, `models[i]` for `arms[i]`), interleaved job by job within each phase:
    /// A0 B0 A1 B1 … (A0 B0 C0 A1 … with three arms), warm-ups too. Each job carries its arm,
    /// and the k-th measured job of every arm the slot `pair = k` (counted over the whole
    /// plan, so a prompt sweep's levels never share one). A phase's concurrency and arrival
    /// rate are the whole interleaved run's: at concurrency 4 with two arms, about two of each
    /// are in flight, and starts still alternate A, B, A, B. A multi-turn run keeps one
    /// conversation per arm (the runner's). The arms are checked first
    /// ([`ScenarioConfig::validate_group`]).
    pub fn plan_arms(
        &self,
        models: &[String],
        dialect: Option<Dialect>,
    ) -> Result<Vec<Phase>, ScenarioError> {
        self.validate_group()?;
        if models.len() < 2 {
            return Err(ScenarioError::TooFewArms);
        }
        let plans = models
            .iter()
            .map(|m| self.plan(m, dialect))
            .collect::<Result<Vec<_>, _>>()?;
        let mut phases = interleave(plans);
        // The shape is the whole interleaved run's: planned again over every arm's measured
        // jobs, in their interleaved order (each arm's own plan would send pairs together).
        if self.kind_takes_load() {
            let shape = self.load_shape();
            for p in phases
                .iter_mut()
                .filter(|p| p.jobs.iter().any(|j| !j.warmup))
            {
                schedule(&mut p.jobs, shape.as_ref(), self.arrival_seed())?;
            }
        }
        Ok(phases)
    }

    /// The load shape a chat or agent JSON run's measured requests follow: [`Self::load`] when
    /// set, else Poisson arrivals at [`Self::rate_per_s`] when it is above 0 (older settings),
    /// else none (a closed loop at the concurrency).
    pub fn load_shape(&self) -> Option<LoadShape> {
        self.load.clone().or_else(|| {
            (self.rate_per_s > 0.0).then_some(LoadShape::Poisson {
                rate_per_s: self.rate_per_s,
            })
        })
    }

    /// The seed of the arrival plan: the scenario's [`Self::seed`], else
    /// [`DEFAULT_ARRIVAL_SEED`], so a scenario always plans the same send times.
    pub fn arrival_seed(&self) -> u64 {
        self.seed.unwrap_or(DEFAULT_ARRIVAL_SEED)
    }

    /// Whether the kind sends its measured requests by a load shape (chat, agent JSON).
    fn kind_takes_load(&self) -> bool {
        matches!(self.kind, ScenarioKind::Chat | ScenarioKind::AgentJson)
    }
}

/// The arrival plan's seed when the scenario sets none.
pub const DEFAULT_ARRIVAL_SEED: u64 = 0x7474_6674_5EED;

/// Sets the planned send times of the measured jobs among `jobs`, in order, from `shape`
/// ([`planned_sends`]; warm-ups stay closed-loop); nothing without a shape. A concurrency
/// ramp plans only the first job of each lane; the others get none.
fn schedule(jobs: &mut [Job], shape: Option<&LoadShape>, seed: u64) -> Result<(), ScenarioError> {
    let Some(shape) = shape else {
        return Ok(());
    };
    let measured: Vec<&mut Job> = jobs.iter_mut().filter(|j| !j.warmup).collect();
    let mut times = planned_sends(shape, measured.len(), seed)?.into_iter();
    for job in measured {
        job.planned_ms = times.next();
    }
    Ok(())
}

/// Interleaves plans of the same shape (one per arm) phase by phase, job by job, setting each
/// job's arm and measured slot: A B, A B, … The first arm of a pair goes first every time;
/// turning the order (A B, B A, …) was tried and measured: it spreads the first-in-pair effect
/// (a few ms of TTFT in the browser at concurrency 2) over both arms, but puts two requests of
/// one arm side by side at every turn, and at concurrency 2 those compete for one model's
/// engine (a prefill stalls the other's decoding): the tour's E2E difference, told with
/// strict alternation, drowned in that noise.
fn interleave(plans: Vec<Vec<Phase>>) -> Vec<Phase> {
    let mut slots = vec![0u32; plans.len()];
    let mut arms: Vec<std::vec::IntoIter<Phase>> = plans.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let phases: Vec<Phase> = arms.iter_mut().filter_map(Iterator::next).collect();
        let Some(first) = phases.first() else {
            return out;
        };
        let (concurrency, rate_per_s) = (first.concurrency, first.rate_per_s);
        let mut queues: Vec<std::vec::IntoIter<Job>> =
            phases.into_iter().map(|p| p.jobs.into_iter()).collect();
        let mut jobs = Vec::new();
        loop {
            let before = jobs.len();
            for (arm, q) in queues.iter_mut().enumerate() {
                if let Some(mut job) = q.next() {
                    job.arm = arm;
                    if !job.warmup {
                        job.pair = Some(slots[arm]);
                        slots[arm] += 1;
                    }
                    jobs.push(job);
                }
            }
            if jobs.len() == before {
                break;
            }
        }
        out.push(Phase {
            concurrency,
            rate_per_s,
            jobs,
        });
    }
}

/// The plan with every phase's warm-ups run as a phase of their own just before it (same
/// concurrency, no arrival rate), so they are all over before its first measured request: a
/// sweep's first level holds both, a chat run's already come apart. The runner takes the
/// server's baseline scrape in between ([`crate::server_metrics::Scrape::after_warmups`]).
pub fn warmups_first(phases: Vec<Phase>) -> Vec<Phase> {
    let mut out = Vec::with_capacity(phases.len() + 1);
    for p in phases {
        let (warm, measured): (Vec<Job>, Vec<Job>) = p.jobs.into_iter().partition(|j| j.warmup);
        let jobs = if warm.is_empty() || measured.is_empty() {
            [warm, measured].concat()
        } else {
            out.push(Phase {
                concurrency: p.concurrency,
                rate_per_s: 0.0,
                jobs: warm,
            });
            measured
        };
        out.push(Phase { jobs, ..p });
    }
    out
}

/// Requests in the run's whole plan.
pub fn total_jobs(phases: &[Phase]) -> usize {
    phases.iter().map(|p| p.jobs.len()).sum()
}

/// Browsers open at most this many HTTP/1.1 connections per origin.
pub const HTTP1_CONNECTIONS_PER_ORIGIN: usize = 6;

/// A warning when the plan needs more connections than a browser opens over HTTP/1.1 to the
/// given base URLs: requests would wait inside the browser and inflate TTFT.
pub fn connection_limit_warning(phases: &[Phase], bases: &[String]) -> Option<String> {
    let max_concurrency = phases.iter().map(|p| p.concurrency).max().unwrap_or(1) as usize;
    let plain_http = bases.iter().any(|b| b.starts_with("http://"));
    (max_concurrency > HTTP1_CONNECTIONS_PER_ORIGIN * bases.len().max(1) && plain_http).then(|| {
        format!(
            "note: browsers open at most {HTTP1_CONNECTIONS_PER_ORIGIN} HTTP/1.1 connections per origin; at concurrency {max_concurrency} requests would wait in the browser and inflate TTFT. Add shard URLs (the reference server's --extra-ports gives them) or use HTTPS/HTTP/2."
        )
    })
}

/// The gap to the next Poisson arrival (ms) at `rate_per_s`, from a uniform draw in [0, 1).
pub fn poisson_gap_ms(rate_per_s: f64, uniform: f64) -> f64 {
    -(1.0 - uniform).ln() / rate_per_s * 1e3
}

/// The conversation of a multi-turn run: each chained job is sent with everything said so far
/// (system prompt excluded from the history, since the job brings its own), and each answer is
/// appended as the assistant's turn, tool calls written out as `called name(arguments)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    messages: Vec<(String, String)>,
}

impl Conversation {
    /// The messages said so far.
    pub fn messages(&self) -> &[(String, String)] {
        &self.messages
    }

    /// Prepares a job for sending: a chained job's messages become the history followed by
    /// its own non-system messages. Other jobs are left as they are.
    pub fn prepare(&self, job: &mut Job) {
        if job.chained {
            let mut msgs = self.messages.clone();
            msgs.extend(
                job.params
                    .messages
                    .iter()
                    .filter(|(role, _)| role != "system")
                    .cloned(),
            );
            job.params.messages = msgs;
        }
    }

    /// Records what was sent and the answer: the history becomes the job's messages plus the
    /// assistant's reply.
    pub fn record(&mut self, sent: &Job, answer: &RequestMetrics) {
        let reply = if answer.tool_calls.is_empty() {
            answer.text.clone()
        } else {
            answer
                .tool_calls
                .iter()
                .map(|c| {
                    format!(
                        "called {}({})",
                        c.name.clone().unwrap_or_default(),
                        c.arguments
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        self.record_reply(sent, reply);
    }

    /// Records what was sent and the assistant's reply as text (a recorder that parses no
    /// stream gives a stand-in).
    pub fn record_reply(&mut self, sent: &Job, reply: String) {
        self.messages = sent.params.messages.clone();
        self.messages.push(("assistant".into(), reply));
    }
}
