//! Export for Locust: a self-contained `locustfile.py` generated from the studio's endpoint and
//! scenario, so a run can be made with more load than one browser gives (any number of Locust
//! workers on any number of machines) and read back in the studio.
//!
//! The plan is made here, in Rust, with the same [`ScenarioConfig::plan`] and
//! [`build_request`] the browser runner uses: the file embeds every planned request (path and
//! JSON body, exactly as the studio would send it) and never builds a body or parses a stream
//! itself. It stamps each read of the body with `time.perf_counter_ns()` before touching the
//! bytes and appends one line per request in the timeline format (`docs/timeline-format.md`,
//! vantage `locust`) to a per-worker file, which the studio imports and recomputes with the core.
//!
//! Secrets are never written: the API key is read from [`API_KEY_ENV`] when the file starts, and
//! extra headers whose name looks like a secret are read from `TTFT_HEADER_<NAME>` variables.
//! A base URL carrying credentials (user info or a key in the query) is refused.

use std::fmt::Write as _;

use serde_json::{Value, json};
use thiserror::Error;

use crate::dialect::Dialect;
use crate::request::{
    HeaderLineError, auth_header, build_request, filler_text, normalise_base, parse_header_lines,
};
use crate::scenario::{Conversation, Job, Phase, ScenarioConfig, ScenarioError, ScenarioKind};

/// The environment variable the generated file reads the API key from.
pub const API_KEY_ENV: &str = "TTFT_API_KEY";
/// The environment variable naming the directory the worker files go to (default: the
/// working directory).
pub const TIMELINE_DIR_ENV: &str = "TTFT_TIMELINE_DIR";
/// The Locust version the file was written and tested against.
pub const LOCUST_VERSION: &str = "2.47.0";

/// The endpoint a locustfile targets: the studio's endpoint settings without the API key
/// (there is no field for it, so it cannot be written).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LocustTarget {
    /// Base URL (`http(s)://host:port`, a trailing `/v1` is dropped as in the studio).
    pub base_url: String,
    /// API style; `None` = OpenAI chat completions with the stream's dialect detected on import.
    pub dialect: Option<Dialect>,
    /// Model.
    pub model: String,
    /// Extra headers, one `Name: value` per line (the studio's setting). Values of headers whose
    /// name looks like a secret are not written: the file reads them from the environment.
    pub extra_headers: String,
}

/// Why no locustfile can be written, with what to change.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum LocustError {
    /// The scenario cannot be planned.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// An extra-header line is malformed.
    #[error(transparent)]
    Header(#[from] HeaderLineError),
    /// No absolute base URL (the studio's empty base means "this page", which Locust cannot reach).
    #[error("give the endpoint's full base URL (http:// or https://), e.g. http://127.0.0.1:8080")]
    NoBaseUrl,
    /// The base URL carries credentials.
    #[error(
        "the base URL carries credentials (user info or a key in the query): remove them; the file reads the key from {API_KEY_ENV}"
    )]
    SecretInUrl,
}

/// Whether a header's value must be kept out of the file.
fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "key",
        "token",
        "secret",
        "auth",
        "password",
        "credential",
        "session",
    ]
    .iter()
    .any(|s| n.contains(s))
}

/// The environment variable a secret extra header is read from.
fn header_env(name: &str) -> String {
    let mut s = String::from("TTFT_HEADER_");
    s.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    s
}

/// Whether a URL carries user info or a query parameter that looks like a key.
fn url_has_secret(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return true;
    }
    url.split_once('?').is_some_and(|(_, q)| {
        q.split('&').any(|kv| {
            let k = kv.split('=').next().unwrap_or("").to_ascii_lowercase();
            [
                "key",
                "token",
                "secret",
                "auth",
                "password",
                "signature",
                "sig",
            ]
            .iter()
            .any(|s| k.contains(s))
        })
    })
}

/// A Python string literal for `s`, pure ASCII (non-ASCII as `\u`/`\U` escapes), so the file's
/// bytes never depend on an editor's encoding.
pub fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// A Python literal (readable by `ast.literal_eval`) for a JSON value.
fn py_value(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => py_str(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(py_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One request of the file: where it goes, its body and its labels.
#[derive(Debug, Clone, PartialEq)]
pub struct LocustJob {
    /// Path after the base URL, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The JSON body, exactly as [`build_request`] makes it.
    pub body: String,
    /// The scenario's group.
    pub group: String,
    /// The group's level, if any.
    pub level: Option<f64>,
    /// The conversation turn (multi-turn), from 1.
    pub turn: Option<u32>,
    /// The planned prompt size in tokens, when the scenario knows it (prompt sweeps).
    pub prompt_tokens: Option<u32>,
    /// A warm-up request.
    pub warmup: bool,
    /// When it goes, ms from the run's start (the plan's [`Job::planned_ms`], shared with the
    /// browser); `None`: closed loop.
    pub planned_ms: Option<f64>,
}

/// The requests the file sends, in order: the scenario's plan with every body built. A
/// multi-turn conversation is grown here, each round sent with everything said so far (as the
/// core's `Conversation` does) and, since the file does not parse the stream, an assistant turn
/// of `max_tokens` tokens of filler text standing in for each answer. A concurrency sweep's
/// requests are all alike: its first level's jobs are kept (the file's load shape walks the
/// levels).
pub fn locust_jobs(
    target: &LocustTarget,
    scenario: &ScenarioConfig,
) -> Result<Vec<LocustJob>, LocustError> {
    let phases = scenario.plan(&target.model, target.dialect)?;
    Ok(locust_jobs_for_phases(target, scenario, phases))
}

/// [`locust_jobs`] of phases already planned (a trace replay's, which the scenario cannot plan
/// without its trace: [`crate::trace::replay_phase`]): the same bodies, labels and planned
/// times as the studio sends.
pub fn locust_jobs_for_phases(
    target: &LocustTarget,
    scenario: &ScenarioConfig,
    phases: Vec<Phase>,
) -> Vec<LocustJob> {
    let base = normalise_base(&target.base_url);
    let phases = if scenario.kind == ScenarioKind::ConcurrencySweep {
        phases.into_iter().take(1).collect()
    } else {
        phases
    };
    // The conversation grows as in the studio, with stand-in answers of the requested length
    // (the file parses no stream, so it never knows the model's).
    let mut conversation = Conversation::default();
    let mut out = Vec::new();
    for (turn, job) in phases.into_iter().flat_map(|p| p.jobs).enumerate() {
        let mut job: Job = job;
        let multi = scenario.kind.is_conversation();
        conversation.prepare(&mut job);
        if multi {
            conversation.record_reply(&job, filler_text(scenario.max_tokens as usize));
        }
        let spec = build_request(&base, target.dialect, &job.params);
        let path = spec.url.strip_prefix(&base).unwrap_or(&spec.url).to_owned();
        out.push(LocustJob {
            path,
            body: spec.body,
            group: job.group,
            level: if scenario.kind == ScenarioKind::ConcurrencySweep {
                None
            } else {
                job.level
            },
            turn: multi.then(|| u32::try_from(turn + 1).unwrap_or(u32::MAX)),
            prompt_tokens: (scenario.kind == ScenarioKind::PromptSweep)
                .then(|| job.level.map(|l| l as u32))
                .flatten(),
            warmup: job.warmup,
            planned_ms: job.planned_ms,
        });
    }
    out
}

/// The generated `locustfile.py` for `target` and `scenario`; `run` names the run (every
/// worker writes it into its lines and file name). The API key is never an input.
pub fn locustfile(
    target: &LocustTarget,
    scenario: &ScenarioConfig,
    run: &str,
) -> Result<String, LocustError> {
    check_base(target)?;
    let phases = scenario.plan(&target.model, target.dialect)?;
    locustfile_for_phases(target, scenario, run, phases)
}

/// The base URL a file can call, with no secret in it.
fn check_base(target: &LocustTarget) -> Result<(), LocustError> {
    let base = normalise_base(&target.base_url);
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(LocustError::NoBaseUrl);
    }
    if url_has_secret(&base) {
        return Err(LocustError::SecretInUrl);
    }
    Ok(())
}

/// [`locustfile`] of phases already planned ([`locust_jobs_for_phases`]): a trace replay's
/// file sends the trace plan's requests at their planned times, with the replay's lanes as
/// its users.
pub fn locustfile_for_phases(
    target: &LocustTarget,
    scenario: &ScenarioConfig,
    run: &str,
    phases: Vec<Phase>,
) -> Result<String, LocustError> {
    check_base(target)?;
    let base = normalise_base(&target.base_url);
    let users_cap = phases.iter().map(|p| p.concurrency).max();
    let jobs = locust_jobs_for_phases(target, scenario, phases);
    let levels = if scenario.kind == ScenarioKind::ConcurrencySweep {
        crate::scenario::parse_levels(&scenario.levels)?
    } else {
        Vec::new()
    };
    // Headers: the request's own (content type, API version), then the extra headers, the
    // secret ones by name only.
    let spec_headers = build_request(&base, target.dialect, &jobs_params_probe(target)).headers;
    let mut headers = serde_json::Map::new();
    headers.insert("accept-encoding".into(), json!("identity"));
    for (k, v) in spec_headers {
        headers.insert(k.to_ascii_lowercase(), json!(v));
    }
    let mut secret = serde_json::Map::new();
    let (auth_name, auth_template) = auth_header(target.dialect, "{key}");
    for (k, v) in parse_header_lines(&target.extra_headers)? {
        let name = k.to_ascii_lowercase();
        if is_secret_header(&name) || name == auth_name {
            secret.insert(name.clone(), json!(header_env(&name)));
            headers.remove(&name);
        } else {
            headers.insert(name, json!(v));
        }
    }
    let job_values: Vec<Value> = jobs
        .iter()
        .map(|j| {
            json!({"path": j.path, "body": j.body, "group": j.group, "level": j.level,
                   "turn": j.turn, "prompt_tokens": j.prompt_tokens, "warmup": j.warmup,
                   "planned_ms": j.planned_ms,
                   "choices": crate::request::choices_asked(&j.body)})
        })
        .collect();
    let jobs_literal = format!(
        "[\n{}\n]",
        job_values
            .iter()
            .map(|v| format!("    {},", py_value(v)))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let sweep = scenario.kind == ScenarioKind::ConcurrencySweep;
    let plan_span_ms = plan_span_ms(&jobs);
    let per_user = scenario.kind.is_conversation();
    let users = if sweep {
        levels.first().copied().unwrap_or(1)
    } else if matches!(
        scenario.kind,
        ScenarioKind::MultiTurn | ScenarioKind::SharedPrefix | ScenarioKind::PromptSweep
    ) {
        1
    } else if scenario.kind == ScenarioKind::Trace {
        users_cap.unwrap_or(1)
    } else {
        scenario.concurrency
    };
    let default_requests = if sweep { 0 } else { jobs.len() };
    let api = target.dialect.map_or(Value::Null, |d| json!(d));
    let header = header_comment(
        target,
        scenario,
        run,
        &base,
        users,
        default_requests,
        &secret,
        &levels,
        plan_span_ms.is_some(),
    );
    let settings = format!(
        "RUN = {run}\nBASE_URL = {base}\nAPI = {api}\nMODEL = {model}\nSCENARIO = {kind}\n\
         USERS = {users}\nRATE_PER_S = {rate:?}\nTIMEOUT_S = {timeout:?}\nDEFAULT_REQUESTS = {default_requests}\n\
         LEVELS = {levels:?}\nPER_USER_SEQUENCE = {per_user}\nAPI_KEY_ENV = {key_env}\n\
         AUTH_HEADER = ({auth_name}, {auth_template})\nHEADERS = {headers}\nSECRET_HEADERS = {secret}\n\
         TIMELINE_DIR_ENV = {dir_env}\nOPEN_LOOP = {open_loop}\nPLAN_SPAN_MS = {span:?}\n\
         JOBS = {jobs_literal}\n",
        run = py_str(run),
        base = py_str(&base),
        api = py_value(&api),
        model = py_str(&target.model),
        kind = py_str(scenario.kind.id()),
        // A planned schedule paces the sends itself: no Poisson gaps on top of it.
        rate = if plan_span_ms.is_some() {
            0.0
        } else {
            finite(scenario.rate_per_s, 0.0).max(0.0)
        },
        open_loop = if plan_span_ms.is_some() {
            "True"
        } else {
            "False"
        },
        span = plan_span_ms.unwrap_or(0.0),
        timeout = finite(scenario.timeout_s, 60.0).max(1.0),
        per_user = if per_user { "True" } else { "False" },
        key_env = py_str(API_KEY_ENV),
        auth_name = py_str(&auth_name),
        auth_template = py_str(&auth_template),
        headers = py_value(&Value::Object(headers)),
        secret = py_value(&Value::Object(secret)),
        dir_env = py_str(TIMELINE_DIR_ENV),
    );
    let shape = if sweep { SWEEP_SHAPE } else { "" };
    Ok(format!(
        "{header}\n{PY_IMPORTS}\n{settings}\n{PY_BODY}{shape}"
    ))
}

/// The span of the planned schedule when any job has a planned send: the last planned time
/// plus the mean gap, so a replayed schedule (`--ttft-requests` past the plan) keeps its pace.
/// `None` for a closed loop.
fn plan_span_ms(jobs: &[LocustJob]) -> Option<f64> {
    let planned: Vec<f64> = jobs
        .iter()
        .filter_map(|j| j.planned_ms)
        .filter(|p| p.is_finite())
        .collect();
    let last = planned
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.max(p))))?;
    let gap = last / planned.len() as f64;
    Some(finite(last + gap, 0.0).max(1.0))
}

/// `x`, or `default` when it is not finite (Python has no literal for NaN or infinity).
fn finite(x: f64, default: f64) -> f64 {
    if x.is_finite() { x } else { default }
}

/// Parameters for reading the request's fixed headers (they do not depend on the body).
fn jobs_params_probe(target: &LocustTarget) -> crate::request::GenerationParams {
    crate::request::GenerationParams {
        model: target.model.clone(),
        max_tokens: 1,
        ..Default::default()
    }
}

#[allow(clippy::too_many_arguments)]
fn header_comment(
    target: &LocustTarget,
    scenario: &ScenarioConfig,
    run: &str,
    base: &str,
    users: u32,
    default_requests: usize,
    secret: &serde_json::Map<String, Value>,
    levels: &[u32],
    open_loop: bool,
) -> String {
    let one_line = |s: &str| s.replace(['\n', '\r'], " ");
    let mut h = String::new();
    let mut l = |s: String| {
        h.push_str(if s.is_empty() { "#" } else { "# " });
        h.push_str(&s);
        h.push('\n');
    };
    l("locustfile.py generated by ttft-studio: the studio's scenario on Locust (more load than one browser).".into());
    l(format!(
        "Run {} against {} ({}), model {}; scenario {}.",
        one_line(run),
        one_line(base),
        target
            .dialect
            .map_or("OpenAI chat completions, stream detected on import", |d| d
                .label()),
        one_line(&target.model),
        scenario.kind.id()
    ));
    l(format!(
        "Needs Python 3.9+ and Locust (tested with {LOCUST_VERSION}: pip install locust=={LOCUST_VERSION}); nothing else."
    ));
    l(String::new());
    l("SECRETS: none are in this file.".into());
    l(format!(
        "  {API_KEY_ENV}   the API key, read at start on every worker (sent as the API's auth header; unset = no key)."
    ));
    for (name, env) in secret {
        l(format!(
            "  {}   the value of the extra header `{name}`.",
            env.as_str().unwrap_or_default()
        ));
    }
    l(String::new());
    l("RUN IT (one machine):".into());
    l(format!(
        "  {API_KEY_ENV}=... locust -f locustfile.py --headless -u {users} -r {users} -t 10m"
    ));
    l("RUN IT (distributed: one master, any number of workers on any machines):".into());
    l(format!(
        "  locust -f locustfile.py --master --headless --expect-workers 2 -u {users} -r {users} -t 10m --ttft-workers 2"
    ));
    l(format!(
        "  {API_KEY_ENV}=... {TIMELINE_DIR_ENV}=out locust -f locustfile.py --worker --master-host MASTER_IP   (each worker)"
    ));
    l(String::new());
    l("LOAD SHAPE (the studio's settings -> Locust's):".into());
    l(format!(
        "  users (-u) = the scenario's concurrency ({users}), spawn rate (-r) = the same: all start at once, as in the studio."
    ));
    if scenario.kind.is_conversation() {
        l(format!(
            "  --ttft-requests N (env TTFT_REQUESTS, default {default_requests}, the rounds): requests PER USER: each user holds one"
        ));
        l("    conversation of N rounds, then stops; the run ends when every worker is done. Total = N x users.".into());
        l("    0 = no limit: each user starts a new conversation after the last round until -t ends the run.".into());
    } else {
        l(format!(
            "  --ttft-requests N (env TTFT_REQUESTS, default {default_requests}): requests PER WORKER, then that worker stops;"
        ));
        l("    the run ends when every worker is done. Total = N x workers: give N = total / workers. 0 = no limit:".into());
        l("    the plan's requests are sent over and over (warm-ups only once) until -t ends the run.".into());
    }
    l("  -t bounds the run in time either way. A request in flight when -t stops its user is written as `cut_by_client`".into());
    l("    (what it read is kept; counted apart, never as the server's error); add --stop-timeout 60 to let requests".into());
    l("    in flight finish instead.".into());
    if scenario.rate_per_s > 0.0 && !open_loop {
        l(format!(
            "  Poisson arrivals at {} requests/s in total (the studio's rate): each worker sends at rate / --ttft-workers",
            scenario.rate_per_s
        ));
        l("    (give the number of workers), exponential gaps via wait_time; -u must be high enough that a user is".into());
        l("    always free (users >= rate x latency), or arrivals wait for one.".into());
    }
    if let Some(shape) = scenario.load_shape().filter(|_| open_loop) {
        l(format!(
            "  Open loop, {}: every measured request has a planned send (the studio's schedule, the same seed),",
            one_line(&shape.describe())
        ));
        l("    ms from the run's start (JOBS' planned_ms); a user waits until then and sends. With --ttft-workers N the".into());
        l("    workers share the schedule: worker k (Locust's worker index) sends every N-th request from the k-th. Each".into());
        l("    line carries planned_ms: the studio reads sent_ms - planned_ms as the schedule lag. -u must be high enough".into());
        l("    that a user is always free (users >= rate x latency), or sends wait for one and the lag says so.".into());
    }
    if !levels.is_empty() {
        l(format!(
            "  Concurrency sweep: a load shape walks the levels {levels:?} (users in total), --ttft-stage-seconds each"
        ));
        l(
            "    (env TTFT_STAGE_SECONDS, default 30); it replaces -u, -r and -t (Locust says so)."
                .into(),
        );
    }
    if scenario.kind.is_conversation() {
        l("MULTI-TURN: each user sends the conversation's rounds in order, each with everything said so far. This file".into());
        l("  does not parse the stream, so the assistant's turns are NOT the model's answers: each is a planned stand-in".into());
        l(format!(
            "  of {} tokens of filler text (the requested answer length); the prompt grows as it would, the words differ.",
            scenario.max_tokens
        ));
    }
    l(String::new());
    l("WHAT IT MEASURES: every read of the body is stamped with time.perf_counter_ns() as the first thing after the".into());
    l("  read returns (before the bytes are touched; requests' iter_content(chunk_size=None) returns one HTTP chunk".into());
    l("  per read). The file parses no stream: one JSON line per request (ttft-timeline/1: send time, headers, every".into());
    l(format!(
        "  read as (time, bytes), the body, how it ended) is appended and flushed to ${TIMELINE_DIR_ENV}/<run>-<host>-<pid>.jsonl"
    ));
    l("  (default: the working directory), one file per worker process. Import the files into the studio together:".into());
    l(
        "  it merges them and computes TTFT, ITL and the rest with its own core. The master writes"
            .into(),
    );
    l("  <run>-master-<host>-<pid>.ledger.json: how many requests each worker started, so requests a lost worker".into());
    l("  never recorded are counted.".into());
    l("  Times include this Python client's own scheduling (gevent, the GIL): a vantage, not the server's view.".into());
    l(String::new());
    l("LOCUST'S STATISTICS: two request types per request, per path and group: TTFB = send to the first body".into());
    l("  byte (not the headers, not the first token), STREAM = send to the end of the body. Read them per type; the".into());
    l("  Aggregated row counts each request twice. Failures: HTTP errors, timeouts, network errors (on STREAM).".into());
    h
}

const PY_IMPORTS: &str = r#"import base64
import json
import logging
import os
import platform
import random
import re
import socket
import time

import gevent
import requests
from locust import User, events, task, __version__ as LOCUST_VERSION
from locust.exception import StopUser
from locust.runners import LocalRunner, MasterRunner, WorkerRunner

FORMAT = "ttft-timeline/1"
"#;

const PY_BODY: &str = r#"
log = logging.getLogger("ttft")


@events.init_command_line_parser.add_listener
def _ttft_arguments(parser):
    parser.add_argument("--ttft-requests", type=int, default=DEFAULT_REQUESTS, env_var="TTFT_REQUESTS",
                        help="requests per worker (per user for multi-turn), then it stops (0 = until -t ends the run)")
    parser.add_argument("--ttft-workers", type=int, default=1, env_var="TTFT_WORKERS",
                        help="number of workers (splits the Poisson rate between them)")
    parser.add_argument("--ttft-stage-seconds", type=float, default=30.0, env_var="TTFT_STAGE_SECONDS",
                        help="seconds per level of a concurrency sweep")


class _Worker:
    """What one worker process shares between its users."""

    def __init__(self):
        self.pid = None
        self.next_index = 0
        self.cursor = 0
        self.in_flight = 0
        self.active = 0
        self.done = False
        self.file = None
        self.next_arrival = None
        self.level = LEVELS[0] if LEVELS else None
        self.headers = None
        self.vantage = None
        self.t0 = None
        self.mine = None

    def ident(self):
        if self.pid != os.getpid():  # a fork (--processes) is another worker
            self.__init__()
            self.pid = os.getpid()
            host = socket.gethostname()
            res = time.get_clock_info("perf_counter").resolution * 1e3
            self.vantage = {"client": "locust", "worker": "%s:%d" % (host, self.pid), "host": host,
                            "clock_resolution_ms": res,
                            "agent": "locust %s, python %s, requests %s" % (
                                LOCUST_VERSION, platform.python_version(), requests.__version__)}
            self.headers = _headers()
        return self

    def write(self, line):
        if self.file is None:
            d = os.environ.get(TIMELINE_DIR_ENV) or os.getcwd()
            os.makedirs(d, exist_ok=True)
            name = "%s-%s-%d.jsonl" % (_safe(RUN), _safe(self.vantage["host"]), self.pid)
            self.file = open(os.path.join(d, name), "a", encoding="utf-8")
        self.file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.file.flush()


W = _Worker()
LEDGER = {}
DONE = set()


def _safe(s):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s)


def _headers():
    h = dict(HEADERS)
    key = os.environ.get(API_KEY_ENV, "")
    if key:
        h[AUTH_HEADER[0]] = AUTH_HEADER[1].replace("{key}", key)
    for name, env in SECRET_HEADERS.items():
        value = os.environ.get(env)
        if value is None:
            log.warning("%s is not set: the header %s is not sent", env, name)
        else:
            h[name] = value
    return h


def _options(environment):
    return environment.parsed_options


def _limit(environment):
    o = _options(environment)
    limit = getattr(o, "ttft_requests", DEFAULT_REQUESTS) if o is not None else DEFAULT_REQUESTS
    if OPEN_LOOP and limit == DEFAULT_REQUESTS:
        return len(_mine(environment))  # this worker's share of the schedule
    return limit


def _workers(environment):
    o = _options(environment)
    return max(1, getattr(o, "ttft_workers", 1) if o is not None else 1)


def _mine(environment):
    """This worker's jobs: all of them in a closed loop; in an open loop the warm-ups and every
    --ttft-workers-th measured job from the worker's index, so the workers share one schedule."""
    if W.mine is None:
        if not OPEN_LOOP:
            W.mine = JOBS
        else:
            n = _workers(environment)
            k = (getattr(environment.runner, "worker_index", 0) or 0) % n
            mine, slot = [], 0
            for j in JOBS:
                if j["warmup"]:
                    mine.append(j)
                    continue
                if slot % n == k:
                    mine.append(j)
                slot += 1
            W.mine = mine or JOBS
    return W.mine


def _job_at(environment, pos):
    """The job at `pos` and its planned offset (ms from the run's start, None: closed loop); past
    the plan the measured jobs repeat, the schedule shifted by PLAN_SPAN_MS each time."""
    jobs = _mine(environment)
    if pos < len(jobs):
        return jobs[pos], jobs[pos]["planned_ms"]
    measured = [j for j in jobs if not j["warmup"]] or jobs
    rest = pos - len(jobs)
    job = measured[rest % len(measured)]
    planned = job["planned_ms"]
    if planned is None:
        return job, None
    return job, planned + (1 + rest // len(measured)) * PLAN_SPAN_MS


def _wait_until(offset_ms):
    """Sleeps until the run's start + offset_ms; the planned time on the perf_counter clock (ns),
    None for a closed-loop job."""
    if offset_ms is None:
        return None
    due = W.t0 + int(offset_ms * 1e6)
    wait = (due - time.perf_counter_ns()) / 1e9
    if wait > 0:
        gevent.sleep(wait)
    return due


def _poisson_delay(environment):
    """Seconds to wait for this worker's next Poisson arrival (0 without a rate)."""
    if RATE_PER_S <= 0:
        return 0.0
    o = _options(environment)
    workers = max(1, getattr(o, "ttft_workers", 1) if o is not None else 1)
    now = time.monotonic()
    if W.next_arrival is None:
        W.next_arrival = now
    W.next_arrival += random.expovariate(RATE_PER_S / workers)
    return max(0.0, W.next_arrival - now)


def _finished(environment):
    W.in_flight -= 1
    _check_done(environment)


def _check_done(environment):
    """Tells the master (or ends a local run) once this worker has sent all it was asked to."""
    limit = _limit(environment)
    spent = W.active <= 0 if PER_USER_SEQUENCE else W.next_index >= limit
    if limit and spent and W.in_flight == 0 and not W.done:
        W.done = True
        runner = environment.runner
        if isinstance(runner, WorkerRunner):
            runner.send_message("ttft_done", W.vantage["worker"])
        elif isinstance(runner, LocalRunner):
            gevent.spawn_later(0.5, runner.quit)


@events.init.add_listener
def _ttft_init(environment, **_kw):
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        def on_sent(msg, **_k):
            w, i = msg.data["worker"], msg.data["index"]
            LEDGER[w] = max(LEDGER.get(w, 0), i + 1)

        def on_done(msg, **_k):
            DONE.add(msg.data)
            if len(DONE) >= max(1, runner.worker_count):
                gevent.spawn_later(0.5, runner.quit)

        runner.register_message("ttft_sent", on_sent)
        runner.register_message("ttft_done", on_done)
    elif isinstance(runner, WorkerRunner):
        def on_level(msg, **_k):
            W.level = msg.data

        runner.register_message("ttft_level", on_level)
    if not isinstance(runner, MasterRunner):
        W.ident()


def _write_ledger(environment, **_kw):
    if isinstance(environment.runner, MasterRunner):
        d = os.environ.get(TIMELINE_DIR_ENV) or os.getcwd()
        os.makedirs(d, exist_ok=True)
        host = socket.gethostname()
        path = os.path.join(d, "%s-master-%s-%d.ledger.json" % (_safe(RUN), _safe(host), os.getpid()))
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"format": "ttft-ledger/1", "run": RUN, "started": LEDGER}, f)


events.test_stop.add_listener(_write_ledger)
events.quitting.add_listener(_write_ledger)


def _ms(ns):
    return ns / 1e6


class _Deadline(Exception):
    pass


class StreamingUser(User):
    """Sends the planned requests, stamps every read, writes one timeline line per request."""

    host = BASE_URL

    def on_start(self):
        W.ident()
        W.active += 1
        if W.t0 is None:
            W.t0 = time.perf_counter_ns()  # the run's start: planned offsets count from here
        self.retired = False
        self.session = requests.Session()
        self.position = 0
        delay = _poisson_delay(self.environment)
        if delay > 0:
            gevent.sleep(delay)

    def wait_time(self):
        return _poisson_delay(self.environment)

    def on_stop(self):
        self.session.close()

    @task
    def send(self):
        env = self.environment
        limit = _limit(env)
        if limit and (self.position if PER_USER_SEQUENCE else W.next_index) >= limit:
            if not self.retired:
                self.retired = True
                W.active -= 1
                _check_done(env)
            raise StopUser()
        if PER_USER_SEQUENCE:
            job, offset = _job_at(env, self.position)
            self.position += 1
        else:
            job, offset = _job_at(env, W.cursor)
            W.cursor += 1
        index = W.next_index
        W.next_index += 1
        W.in_flight += 1
        try:
            planned_ns = _wait_until(offset)
            if isinstance(env.runner, WorkerRunner):
                env.runner.send_message("ttft_sent", {"worker": W.vantage["worker"], "index": index})
            self._one(job, index, planned_ns)
        finally:
            _finished(env)

    def _one(self, job, index, planned_ns=None):
        env = self.environment
        base = (env.host or BASE_URL).rstrip("/")
        url = base + job["path"]
        group = job["group"] if not LEVELS else "c=%d" % W.level
        level = job["level"] if not LEVELS else W.level
        data = job["body"].encode("utf-8")
        stamps, chunks = [], []
        head, end, rid = None, None, None
        sent_wall_ms = time.time_ns() / 1e6
        t0 = time.perf_counter_ns()
        aborted = None
        try:
            resp = self.session.post(url, data=data, headers=W.headers, stream=True,
                                     timeout=(TIMEOUT_S, TIMEOUT_S))
            th = time.perf_counter_ns()
            head = {"at_ms": _ms(th), "status": resp.status_code,
                    "content_type": resp.headers.get("content-type")}
            rid = resp.headers.get("x-request-id")
            if not 200 <= resp.status_code < 300:
                text = resp.content.decode("utf-8", "replace")
                end = {"kind": "http_error", "at_ms": _ms(time.perf_counter_ns()), "body": text}
            else:
                deadline = t0 + int(TIMEOUT_S * 1e9)
                for chunk in resp.iter_content(chunk_size=None):
                    t = time.perf_counter_ns()
                    stamps.append(t)
                    chunks.append(chunk)
                    if t > deadline:
                        raise _Deadline()
                end = {"kind": "finished", "at_ms": _ms(time.perf_counter_ns())}
            resp.close()
        except _Deadline:
            end = {"kind": "failed", "at_ms": _ms(time.perf_counter_ns()),
                   "outcome": {"kind": "timeout", "message": "the request took over %g s" % TIMEOUT_S}}
        except requests.exceptions.Timeout as e:
            end = {"kind": "failed", "at_ms": _ms(time.perf_counter_ns()),
                   "outcome": {"kind": "timeout", "message": "no byte for %g s: %s" % (TIMEOUT_S, e)}}
        except Exception as e:  # network errors, a dropped connection
            end = {"kind": "failed", "at_ms": _ms(time.perf_counter_ns()),
                   "outcome": {"kind": "network_error", "message": "%s: %s" % (type(e).__name__, e)}}
        except BaseException as e:  # Locust stopping the user (GreenletExit): keep what was read
            aborted = e
            end = {"kind": "failed", "at_ms": _ms(time.perf_counter_ns()),
                   "outcome": {"kind": "cut_by_client",
                               "message": "stopped by Locust (the run's end, -t or a stop): partial data kept"}}
        body = b"".join(chunks)
        line = {"format": FORMAT, "run": RUN, "vantage": W.vantage,
                "request": {"index": index, "api": API, "url": url, "model": MODEL, "group": group,
                            "level": level, "turn": job["turn"], "prompt_tokens": job["prompt_tokens"],
                            "choices": job.get("choices"),
                            "warmup": job["warmup"]},
                "sent_wall_ms": sent_wall_ms, "sent_ms": _ms(t0), "head": head,
                "reads": [[_ms(t), len(c)] for t, c in zip(stamps, chunks)],
                "end": end, "server_request_id": rid, "protocol": "http/1.1", "browser_queue_ms": None,
                "planned_ms": _ms(planned_ns) if planned_ns is not None else None}
        try:
            line["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            line["body_b64"] = base64.b64encode(body).decode("ascii")
        W.write(line)
        if aborted is not None:
            raise aborted
        name = "%s [%s]%s" % (job["path"], group, " warm-up" if job["warmup"] else "")
        if stamps:
            env.events.request.fire(request_type="TTFB", name=name, response_time=_ms(stamps[0] - t0),
                                    response_length=len(chunks[0]), exception=None, context={})
        failure = None
        if end["kind"] == "http_error":
            failure = Exception("HTTP %d: %s" % (head["status"], end["body"][:200]))
        elif end["kind"] == "failed":
            failure = Exception(end["outcome"]["message"])
        env.events.request.fire(request_type="STREAM", name=name, response_time=end["at_ms"] - _ms(t0),
                                response_length=len(body), exception=failure, context={})
"#;

const SWEEP_SHAPE: &str = r#"

from locust import LoadTestShape


class ConcurrencySweep(LoadTestShape):
    """Holds each level of the sweep (users in total) for --ttft-stage-seconds; workers learn the
    level from the master, so each line carries it."""

    def tick(self):
        o = self.runner.environment.parsed_options
        stage_s = getattr(o, "ttft_stage_seconds", 30.0) if o is not None else 30.0
        stage = int(self.get_run_time() // stage_s)
        if stage >= len(LEVELS):
            return None
        level = LEVELS[stage]
        if getattr(self, "_stage", None) != stage:
            self._stage = stage
            W.level = level
            if isinstance(self.runner, MasterRunner):
                self.runner.send_message("ttft_level", level)
        return (level, level)
"#;
