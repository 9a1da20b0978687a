//! The report model: everything a run produced, enough to redraw every chart and replay every
//! stream, as versioned serde types. API keys are never part of it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::dialect::Dialect;
use crate::experience::{ExperienceConfig, ExperienceSummary, ReadingUnits};
use crate::metrics::RequestMetrics;
use crate::openers::OpenerEdits;
use crate::stats::{LinearFit, Summary, Thresholds};
use crate::timeline::{Outcome, RequestTimeline};

pub mod file;
pub mod group;
pub mod health;
pub mod painted;
pub mod saturation;
pub mod slo;
pub mod source;
pub mod votes;

pub use file::{ReportFileError, read_json, read_value};
pub use group::{ArmPart, GroupKind, RepeatOf, RunGroup};

/// Current version of the report format.
pub const REPORT_VERSION: u32 = 1;

/// Where the run was pointed (no secrets: the API key and header values are never stored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndpointInfo {
    /// Base URL.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Dialect chosen, `None` = detected.
    pub dialect: Option<Dialect>,
}

/// One piece of a recorded stream for replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayPiece {
    /// Arrival (ms from t0).
    pub at_ms: f64,
    /// `a` answer, `r` reasoning, `t` tool-call arguments.
    pub kind: char,
    /// Text.
    pub text: String,
}

/// Builds the replay of a timeline (of its primary choice when it streamed several).
pub fn replay_of(tl: &RequestTimeline) -> Vec<ReplayPiece> {
    use crate::dialect::StreamEvent as E;
    let primary = tl.primary_choice();
    tl.events
        .iter()
        .filter(|e| e.choice.unwrap_or(0) == primary)
        .filter_map(|e| {
            let (kind, text) = match &e.event {
                E::Content(t) | E::Refusal(t) => ('a', t.clone()),
                E::Reasoning(t) => ('r', t.clone()),
                E::ToolCall {
                    name, arguments, ..
                } => (
                    't',
                    name.as_ref().map(|n| format!("{n}(")).unwrap_or_default() + arguments,
                ),
                _ => return None,
            };
            Some(ReplayPiece {
                at_ms: e.at - tl.sent_at,
                kind,
                text,
            })
        })
        .collect()
}

/// One request of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Position in the run.
    pub index: u32,
    /// Group label: `c=8`, `prompt≈1000`, `round 3`, …
    pub group: String,
    /// Numeric level of the group (concurrency, prompt tokens, round), if any.
    pub level: Option<f64>,
    /// Warm-up requests are kept but excluded from statistics.
    pub warmup: bool,
    /// When it was sent, ms from the run's start.
    pub start_ms: f64,
    /// Time the browser held the request before sending (Resource Timing), if measured.
    pub browser_queue_ms: Option<f64>,
    /// How it ended.
    pub outcome: Outcome,
    /// Its metrics.
    pub metrics: RequestMetrics,
    /// Replay pieces (may be dropped from share links except for a sample).
    pub replay: Vec<ReplayPiece>,
    /// Server's request id (reference endpoint ground truth), if sent.
    pub server_request_id: Option<String>,
    /// t0 on the wall clock (`performance.timeOrigin + t0`, ms since the Unix epoch), to line
    /// the request up with server-side records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_epoch_ms: Option<f64>,
    /// The protocol the browser used (Resource Timing `nextHopProtocol`: `http/1.1`, `h2`,
    /// `h3`), when it tells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// What the reader got from each arrival, kept only where the replay text is not (requests
    /// opened from a share link without their replay): the reading experience is scored from
    /// these counts then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reading_units: Vec<ReadingUnits>,
    /// Token arrivals `(ms from t0, tokens)` for the fluidity score, kept only where neither the
    /// replay nor the gaps give them (a share link's request with several choices, or answered
    /// in one piece, without its replay).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub token_arrivals: Vec<(f64, u32)>,
    /// The raw capture (bytes and times) the metrics came from, kept by runs measured in the
    /// studio or read from timeline files so they can be exported as a timeline
    /// ([`crate::timeline_file`]); never carried by share links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<crate::raw::RawCapture>,
    /// The client that measured the request (`browser`, `locust`, the timeline line's
    /// `vantage.client`) when the run was merged from timeline files; `None` for a run measured
    /// in this studio. A run with a `browser` probe and another client's load is a probe under
    /// load ([`crate::probe`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Where the request's timeline line came from (its run, vantage and index within its
    /// worker) when the run was merged from timeline files, so Export timeline writes it back
    /// as it was read ([`crate::timeline_file::export`]); `None` for a run measured in this
    /// studio (and in report files from before it was kept). Never carried by share links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<crate::raw::LineOrigin>,
    /// The request's interleaving slot in an A/B run ([`group`]): the k-th request of every
    /// arm has `pair = k` (the same prompt, sent back to back), so request k of one arm pairs
    /// with request k of another ([`crate::pairing`]). `None` outside A/B runs and for
    /// warm-ups. Not carried by share links (a shared run is one run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<u32>,
    /// When it was planned to be sent, ms from the run's start (on the clock of
    /// [`RequestRecord::start_ms`]), for requests of an open-loop plan (a load shape, a
    /// trace: [`crate::scenario::Job::planned_ms`]); `None` for closed-loop requests, which go
    /// when a lane is free. `start_ms − planned_ms` is its schedule lag
    /// ([`crate::schedule`]). Absent from older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_ms: Option<f64>,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Format version ([`REPORT_VERSION`]).
    pub version: u32,
    /// Title shown to the user.
    pub title: String,
    /// Unix time of the run (ms).
    pub created_unix_ms: f64,
    /// Measured resolution of the clock (ms).
    pub clock_resolution_ms: Option<f64>,
    /// The browser whose clock that is, as it names itself (`navigator.userAgent`), when the
    /// studio measured the run; [`browser_name`] shortens it for the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Where reads were stamped, in words (`1 stamping worker`, `the page`), when recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamping: Option<String>,
    /// Endpoint.
    pub endpoint: EndpointInfo,
    /// Scenario kind: `chat`, `agent_json`, `multi_turn`, `prompt_sweep`, `concurrency_sweep`, `rate`.
    pub scenario: String,
    /// Scenario settings as given.
    pub settings: serde_json::Value,
    /// Thresholds used for goodput.
    pub thresholds: Thresholds,
    /// Deadlines and reader the experience scores use ([`Aggregates::experience`]), always
    /// written; a file without them was written when they were the defaults of the time
    /// ([`ExperienceConfig::before_reader_pace`]) and opens with those, so its figures stay.
    #[serde(default = "ExperienceConfig::before_reader_pace")]
    pub experience: ExperienceConfig,
    /// The requests.
    pub requests: Vec<RequestRecord>,
    /// Set on a report opened from a share link: how precisely it kept the times and what
    /// it left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<SharedFrom>,
    /// Which clients measured the run, in words (`locust (2 workers on 1 host)`), when it was
    /// read from timeline files; `None` for a run measured in this studio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vantage: Option<String>,
    /// What reading the run's timeline files found, in sentences for the user: requests lost
    /// by a worker, duplicated lines dropped, clocks that disagree, lines refused. Empty for a
    /// run measured in this studio, or files that merged cleanly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub import_notes: Vec<String>,
    /// Blind review votes against other runs ([`crate::review`]), each from this run's side;
    /// absent from the file when there are none (and from files made before them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub votes: Vec<votes::BlindVote>,
    /// The service-level objectives the run is held to ([`crate::slo`]); absent from the file
    /// when they are the default set (and from files made before them).
    #[serde(
        default,
        skip_serializing_if = "is_default_slo",
        deserialize_with = "valid_slo_or_default"
    )]
    pub slo: slo::SloSet,
    /// How healthy the measuring tab was while the run streamed ([`crate::client_health`]),
    /// when the studio watched it; `None` for imported runs and runs made before the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_health: Option<health::ClientHealth>,
    /// The figures an imported file states about its own run (GuideLLM's, AIPerf's, SGLang's,
    /// genai-bench's summaries), each beside the studio's value from the same requests and why
    /// they differ ([`crate::import::SourceSummary`]); `None` for runs measured in the studio
    /// and files that state none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_summary: Option<source::SourceSummary>,
    /// The server's Prometheus metrics URL scraped during the run (derived from the base URL
    /// by [`crate::server_metrics::metrics_url`], editable), when the run scraped it; it sits
    /// here beside [`Report::endpoint`] so every `EndpointInfo` stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_url: Option<String>,
    /// The server's `/metrics` as scraped during the run, raw ([`crate::server_metrics::Scrape`]):
    /// the time series, the server's percentiles and the first-token decomposition are
    /// recomputed from them ([`crate::server_metrics::ServerSeries::from_scrapes`]). Absent
    /// from the file when empty (and from files made before them). Share links do not carry
    /// them: a run opened from a link has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_scrapes: Vec<crate::server_metrics::Scrape>,
    /// The run's place in a set of runs made together: an arm of an A/B run, or a repeat
    /// ([`group`]); `None` for a run made alone (and in files made before them). Not carried
    /// by share links (a shared run is one run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<RunGroup>,
    /// The team's changes to the default opener phrases the meaningful first token was decided
    /// with ([`crate::openers::edits`]); absent from the file when there are none (and from
    /// files made before them). Share links carry them.
    #[serde(default, skip_serializing_if = "OpenerEdits::is_empty")]
    pub openers: OpenerEdits,
    /// What the saturation stop did in an open-loop run measured in the studio: off, watched,
    /// or stopped with its evidence ([`crate::saturation`]); `None` for closed-loop and
    /// imported runs and files made before the stop. Share links carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturation: Option<saturation::SaturationCheck>,
    /// What the page's chat surface drew while the run streamed: its strategy and the paint
    /// figures of the answers it drew ([`painted`]); `None` when the surface was off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub painted: Option<crate::paint::PaintedRun>,
}

/// A browser's name and major version from its user agent (`Firefox 153`, `Chrome 156`,
/// `Safari 26 (WebKit)`), else the user agent as given: which engine measured a run (each has
/// its own clock resolution).
pub fn browser_name(user_agent: &str) -> String {
    let version = |key: &str| {
        user_agent.split_whitespace().find_map(|part| {
            let v = part.strip_prefix(key)?;
            Some(v.split('.').next().unwrap_or(v).to_owned())
        })
    };
    // Order matters: Chrome's agent names Safari too, and Edge's names Chrome.
    let named = [
        ("Firefox/", "Firefox", ""),
        ("Edg/", "Edge", ""),
        ("HeadlessChrome/", "Chrome", " (headless)"),
        ("Chrome/", "Chrome", ""),
        ("Version/", "Safari", " (WebKit)"),
    ];
    named
        .iter()
        .find_map(|(key, name, engine)| version(key).map(|v| format!("{name} {v}{engine}")))
        .or_else(|| {
            user_agent
                .contains("AppleWebKit/")
                .then(|| "WebKit".to_owned())
        })
        .unwrap_or_else(|| user_agent.to_owned())
}

fn is_default_slo(set: &slo::SloSet) -> bool {
    *set == slo::SloSet::default()
}

/// A file's SLO set when it is valid ([`slo::SloSet::validate`]), else the default: a
/// damaged or hand-edited set (no objectives, a percentile of 0) never holds the run to
/// nothing, and never makes the rest of the report unreadable.
fn valid_slo_or_default<'de, D: serde::Deserializer<'de>>(d: D) -> Result<slo::SloSet, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value::<slo::SloSet>(value)
        .ok()
        .filter(|s| s.validate().is_ok())
        .unwrap_or_default())
}

/// What a report opened from a share link is made of (the `ttft-share` crate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedFrom {
    /// The link format (`r1`, `r2`).
    pub format: String,
    /// Every time in the link was rounded to this step (ms); a figure computed from them is
    /// within half a step of the original (a gap, a difference of two times, within one).
    pub precision_ms: f64,
    /// What the link left out, in words (replay text, ids, per-gap timings of some requests).
    pub left_out: Vec<String>,
    /// The original run's statistics, carried when the link had to leave out per-gap timings
    /// of some requests: the headline stays exact, charts draw from what was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<Box<Aggregates>>,
}

/// How much of the prompts the server's prefix cache served, over the successful requests that
/// reported cached tokens ([`RequestMetrics::prompt_cache`]); a request that reported nothing
/// is left out rather than counted as a miss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PromptCache {
    /// Successful requests that reported their cached prompt tokens.
    pub reporting: usize,
    /// Successful requests in all (the rest did not say).
    pub successful: usize,
    /// The reporting requests' prompt tokens.
    pub prompt_tokens: u64,
    /// How many of those the cache served.
    pub cached_tokens: u64,
}

impl PromptCache {
    /// Of successful requests' metrics; `None` when none of them reported cached tokens.
    pub fn of<'a>(ok: impl IntoIterator<Item = &'a RequestMetrics>) -> Option<Self> {
        let mut c = PromptCache {
            reporting: 0,
            successful: 0,
            prompt_tokens: 0,
            cached_tokens: 0,
        };
        for m in ok {
            c.successful += 1;
            if let Some((prompt, cached)) = m.prompt_cache() {
                c.reporting += 1;
                c.prompt_tokens = c.prompt_tokens.saturating_add(prompt);
                c.cached_tokens = c.cached_tokens.saturating_add(cached);
            }
        }
        (c.reporting > 0).then_some(c)
    }

    /// Cached over prompt tokens, 0–1 (token-weighted: long prompts count for more).
    pub fn hit_rate(&self) -> f64 {
        if self.prompt_tokens == 0 {
            0.0
        } else {
            self.cached_tokens as f64 / self.prompt_tokens as f64
        }
    }

    /// The run's line for the page: `Prompt cache hit rate 72 %: 3296 of 4600 prompt tokens
    /// served from the server's cache (3 of 4 requests reported it)`.
    pub fn sentence(&self) -> String {
        let reported = if self.reporting == self.successful {
            format!("all {} requests reported it", self.reporting)
        } else {
            format!(
                "{} of {} requests reported it",
                self.reporting, self.successful
            )
        };
        format!(
            "Prompt cache hit rate {:.0} %: {} of {} prompt tokens served from the server's cache ({reported})",
            self.hit_rate() * 100.0,
            self.cached_tokens,
            self.prompt_tokens
        )
    }
}

/// Statistics for one group (level) of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupStats {
    /// Label.
    pub group: String,
    /// Level.
    pub level: Option<f64>,
    /// Requests measured (warm-up excluded).
    pub count: usize,
    /// TTFT.
    pub ttft: Option<Summary>,
    /// Per-token ITL, pooled.
    pub itl: Option<Summary>,
    /// E2E.
    pub e2e: Option<Summary>,
    /// Aggregate output tokens per second (tokens / wall time of the group).
    pub throughput_tokens_per_s: Option<f64>,
    /// Prefix-cache hits of the group (a multi-turn round), when its requests reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
}

/// Run-level statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregates {
    /// Requests measured (warm-up excluded).
    pub count: usize,
    /// Failed requests by outcome kind (the server's failures: not those cut by the client).
    pub errors: BTreeMap<String, usize>,
    /// Requests the client cut at its own end of run (a time limit, a stop, a cancel): counted
    /// in `count`, never in `errors` nor against `goodput`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cut_by_client: usize,
    /// TTFB: first byte (response headers).
    pub ttfb: Option<Summary>,
    /// TTFT: first token of any kind (reasoning, tool call, refusal or answer).
    pub ttft: Option<Summary>,
    /// First answer token (answer or refusal text), over the requests that produced one.
    #[serde(default)]
    pub first_answer: Option<Summary>,
    /// Meaningful first token.
    pub meaningful: Option<Summary>,
    /// Per-token ITL pooled over requests.
    pub itl: Option<Summary>,
    /// Per-arrival gaps pooled (what a naive tool would report as ITL).
    pub chunk_gaps: Option<Summary>,
    /// TPOT.
    pub tpot: Option<Summary>,
    /// E2E.
    pub e2e: Option<Summary>,
    /// Per-request decode rate.
    pub tokens_per_s: Option<Summary>,
    /// Time to second token ([`RequestMetrics::ttst_ms`]), over the requests with two output
    /// arrivals. Share links never carry it in their headline: it is computed from the
    /// requests on opening (`RunStats::aggregates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttst: Option<Summary>,
    /// Per-user output tokens/s ([`RequestMetrics::user_output_tokens_per_s`]); computed on
    /// opening a link, like [`Aggregates::ttst`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_output_tokens_per_s: Option<Summary>,
    /// Per-user prefill tokens/s ([`RequestMetrics::prefill_tokens_per_s`]), over the requests
    /// whose server reported prompt tokens; computed on opening a link, like
    /// [`Aggregates::ttst`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_tokens_per_s: Option<Summary>,
    /// Time until valid JSON (agent scenarios).
    pub json_valid: Option<Summary>,
    /// Fraction of the judged requests ([`Aggregates::judged`]) that were ok and met the
    /// thresholds.
    pub goodput: f64,
    /// Requests whose first token was reasoning text.
    pub reasoning_first: usize,
    /// Requests whose first token was a tool call (their TTFT is the call's first fragment).
    #[serde(default)]
    pub tool_call_first: usize,
    /// Requests whose arrivals coalesce tokens.
    pub coalesced: usize,
    /// Requests with at least one stall.
    pub with_stalls: usize,
    /// Requests whose answer began with an opener.
    pub with_openers: usize,
    /// Mean time openers cost (ms).
    pub opener_cost_ms: Option<f64>,
    /// TTFT against prompt tokens.
    pub ttft_vs_prompt: Option<LinearFit>,
    /// Per-token ITL against output position (slope in ms per token position).
    pub itl_vs_position: Option<LinearFit>,
    /// Per-group statistics, ordered by level.
    pub groups: Vec<GroupStats>,
    /// First level where P50 ITL or P50 TTFT exceeds `knee_factor` × the first level's.
    pub knee_level: Option<f64>,
    /// Factor used for the knee.
    pub knee_factor: f64,
    /// Total tokens counted from usage / server figures rather than estimated.
    pub tokens_from_server: usize,
    /// Time requests waited inside the browser before being sent (Resource Timing
    /// `requestStart − startTime`: the 6-connections-per-origin queue and connection setup).
    pub browser_queue: Option<Summary>,
    /// Server-reported prefill time (llama.cpp `timings.prompt_ms`, Ollama), beside the client's TTFT.
    pub server_prefill: Option<Summary>,
    /// Server-reported decode time per token (llama.cpp `predicted_per_token_ms`), beside the client's ITL.
    pub server_per_token: Option<Summary>,
    /// Measured requests the server answered in one piece instead of streaming (a 2xx JSON
    /// body: the server or a proxy ignored `stream: true`); their TTFT is the whole answer's.
    #[serde(default)]
    pub not_streamed: usize,
    /// How the streams felt: fluidity and reading experience over the successful measured
    /// requests, with the report's [`Report::experience`] settings.
    #[serde(default)]
    pub experience: ExperienceSummary,
    /// Prefix-cache hit rate of the run, when the server reported cached prompt tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Aggregates {
    /// The requests the server is judged on: every measured request but those the client cut
    /// at its own end of run ([`Aggregates::cut_by_client`]); the error rate's and goodput's
    /// denominator.
    pub fn judged(&self) -> usize {
        self.count.saturating_sub(self.cut_by_client)
    }

    /// The server's failures among the judged requests.
    pub fn failed(&self) -> usize {
        self.errors.values().sum()
    }

    /// What a share link's headline carries of these aggregates: all but the figures a link
    /// derives from its requests on opening (time to second token and the per-user rates,
    /// from TTFT, gaps and usage), so they add no bytes to a link.
    pub fn carried_by_links(self) -> Self {
        Self {
            ttst: None,
            user_output_tokens_per_s: None,
            prefill_tokens_per_s: None,
            ..self
        }
    }
}

impl RequestRecord {
    /// A measured (not warm-up) request whose metrics and replay come from its timeline;
    /// sending details (start, browser queue, ids) are left empty for the caller to set.
    pub fn from_timeline(
        index: u32,
        group: String,
        level: Option<f64>,
        timeline: &RequestTimeline,
        config: &crate::metrics::MetricsConfig,
    ) -> Self {
        Self {
            index,
            group,
            level,
            warmup: false,
            start_ms: 0.0,
            browser_queue_ms: None,
            outcome: timeline.outcome.clone(),
            metrics: RequestMetrics::compute(timeline, config),
            replay: replay_of(timeline),
            server_request_id: None,
            sent_epoch_ms: None,
            protocol: None,
            reading_units: Vec::new(),
            token_arrivals: Vec::new(),
            raw: None,
            client: None,
            origin: None,
            pair: None,
            planned_ms: None,
        }
    }
}

/// The client whose requests are the probe: the studio's own (`vantage.client` `browser`).
pub const PROBE_CLIENT: &str = "browser";

impl Report {
    /// The scenario the studio ran, when [`Report::scenario`] names one of its kinds (an
    /// imported run's `imported_…` and older ids are none).
    pub fn scenario_kind(&self) -> Option<crate::scenario::ScenarioKind> {
        crate::scenario::ScenarioKind::from_id(&self.scenario)
    }

    /// Requests that count for statistics.
    pub fn measured(&self) -> impl Iterator<Item = &RequestRecord> {
        self.requests.iter().filter(|r| !r.warmup)
    }

    /// Whether the run holds both a probe (requests measured by the `browser`) and another
    /// client's load (e.g. `locust`), as merged from their timeline files.
    pub fn is_probe_under_load(&self) -> bool {
        let mut probe = false;
        let mut load = false;
        for r in &self.requests {
            match r.client.as_deref() {
                Some(PROBE_CLIENT) => probe = true,
                Some(_) => load = true,
                None => {}
            }
            if probe && load {
                return true;
            }
        }
        false
    }

    /// The requests the headline figures ([`crate::run_stats::RunStats::aggregates`]) are computed from: the
    /// measured (not warm-up) requests, and in a probe under load only the probe's.
    pub fn headline_requests(&self) -> impl Iterator<Item = &RequestRecord> {
        let probe_only = self.is_probe_under_load();
        self.measured()
            .filter(move |r| !probe_only || r.client.as_deref() == Some(PROBE_CLIENT))
    }
}
