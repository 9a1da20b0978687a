//! Timeline files (`ttft-timeline/1`, `docs/timeline-format.md`): the one raw measurement
//! format for every vantage, JSON Lines with one line per request.
//!
//! A line holds what the core takes as input (send times, head, every read as time and bytes,
//! the body, how it ended) and who measured it, never a derived figure. [`export`] writes a
//! studio run's requests (those whose [`RawCapture`] was kept) as lines; [`merge_files`] reads
//! the files of one run (one per worker), checks them (duplicates, missing requests, clock
//! skew, bad lines with file and line number) and recomputes every request with the core
//! exactly as a browser run is ([`Capture::record`] then [`RequestRecord::from_timeline`]).
//! Each merged request keeps where its line came from ([`LineOrigin`]), so exporting a merged
//! run writes every line back as it was read and merging that export gives the same run.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::capture::Capture;
use crate::dialect::Dialect;
use crate::metrics::MetricsConfig;
pub use crate::raw::{
    LineEnd, LineHead, LineOrigin, RawCapture, RequestInfo, TimelineError, Vantage,
};
use crate::report::{EndpointInfo, Report, RequestRecord};
use crate::request::{GenerationParams, build_request};
use crate::scenario::ScenarioKind;

/// The `format` of every line this module writes and reads.
pub const FORMAT: &str = "ttft-timeline/1";

/// A wall clock that moves by more than this against a worker's monotonic clock within one
/// run has been stepped (ms).
pub const STEP_MS: f64 = 50.0;

/// Workers whose first requests start further apart than this (ms) are suspected of
/// disagreeing clocks (when the run's own requests follow each other more closely).
pub const START_SPREAD_MS: f64 = 5000.0;

/// One line of a timeline file: one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineLine {
    /// Always [`FORMAT`].
    pub format: String,
    /// The run the line belongs to.
    pub run: String,
    /// Who measured it.
    pub vantage: Vantage,
    /// What was asked.
    pub request: RequestInfo,
    /// Bytes and times.
    #[serde(flatten)]
    pub capture: RawCapture,
    /// The server's request id header, if sent.
    #[serde(default)]
    pub server_request_id: Option<String>,
    /// `http/1.1`, `h2`, … when the client knows it.
    #[serde(default)]
    pub protocol: Option<String>,
    /// The browser only: time it held the request before sending it (ms).
    #[serde(default)]
    pub browser_queue_ms: Option<f64>,
    /// When the request was planned to be sent, on the clock of `sent_ms` (an open-loop plan:
    /// a load shape, a trace); `sent_ms − planned_ms` is its schedule lag. Absent for a closed
    /// loop and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_ms: Option<f64>,
}

impl TimelineLine {
    /// A line of [`FORMAT`] with no server id, protocol or browser queue.
    pub fn new(
        run: impl Into<String>,
        vantage: Vantage,
        request: RequestInfo,
        capture: RawCapture,
    ) -> Self {
        Self {
            format: FORMAT.to_owned(),
            run: run.into(),
            vantage,
            request,
            capture,
            server_request_id: None,
            protocol: None,
            browser_queue_ms: None,
            planned_ms: None,
        }
    }

    /// Reads and checks one line (format, fields, body, reads against the body).
    pub fn parse(line: &str) -> Result<Self, TimelineError> {
        let parsed = match serde_json::from_str::<TimelineLine>(line) {
            Ok(parsed) => parsed,
            Err(e) => return Err(why_not_a_line(line, e)),
        };
        if parsed.format != FORMAT {
            return Err(TimelineError::WrongFormat(parsed.format));
        }
        parsed.capture.check()?;
        Ok(parsed)
    }

    /// The line as one line of JSON (no newline).
    pub fn to_json(&self) -> String {
        // Every field is a string, a number read from a finite f64 or a plain enum.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The capture the core replays.
    pub fn to_capture(&self) -> Result<Capture, TimelineError> {
        self.capture.to_capture()
    }
}

/// The precise reason a line did not parse as a [`TimelineLine`].
fn why_not_a_line(line: &str, error: serde_json::Error) -> TimelineError {
    let value = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(value) => value,
        Err(e) => return TimelineError::NotJson(e.to_string()),
    };
    match value.get("format") {
        None => TimelineError::NoFormat,
        Some(serde_json::Value::String(f)) if f != FORMAT => TimelineError::WrongFormat(f.clone()),
        Some(serde_json::Value::String(_)) => TimelineError::BadField(error.to_string()),
        Some(other) => TimelineError::WrongFormat(other.to_string()),
    }
}

/// A Locust master's ledger (`ttft-ledger/1`): how many requests each worker started, so
/// requests a lost worker never wrote a line for are counted.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Ledger {
    format: String,
    run: String,
    started: BTreeMap<String, u64>,
}

impl Ledger {
    /// The ledger `text` holds, if it is one.
    fn read(text: &str) -> Option<Ledger> {
        serde_json::from_str::<Ledger>(text.trim_start_matches('\u{feff}'))
            .ok()
            .filter(|l| l.format == LEDGER_FORMAT)
    }
}

/// The format name of a master's ledger file (`<run>-master-<host>-<pid>.ledger.json`).
pub const LEDGER_FORMAT: &str = "ttft-ledger/1";

/// A refused line: where it is and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LineError {
    /// The file's name.
    pub file: String,
    /// The line number, from 1.
    pub line: usize,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Workers whose clocks look wrong (see `docs/timeline-format.md`, *clock skew*).
#[derive(Debug, Clone, PartialEq)]
pub struct ClockSkew {
    /// Workers whose wall clock moved against their monotonic clock during the run by more
    /// than [`STEP_MS`]: `(worker, ms)`.
    pub stepped: Vec<(String, f64)>,
    /// How far apart the workers' first requests start (ms), when that is suspicious: more
    /// than [`START_SPREAD_MS`] and more than any pause of one worker in the run.
    pub start_spread_ms: Option<f64>,
    /// In words, for the user.
    pub message: String,
}

/// Settings of [`merge_files`].
#[derive(Debug, Clone, PartialEq)]
pub struct MergeOptions {
    /// Metric settings; the default is what the studio uses for a chat run.
    pub metrics: MetricsConfig,
    /// The report's scenario kind; `None` = inferred (`multi_turn` with turns, `prompt_sweep`
    /// when the levels are the planned prompt sizes, `concurrency_sweep` with several levels,
    /// `chat` otherwise).
    pub scenario: Option<String>,
}

impl Default for MergeOptions {
    fn default() -> Self {
        Self {
            metrics: crate::scenario::ScenarioConfig::default().metrics_config(),
            scenario: None,
        }
    }
}

/// Timeline files merged into one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The run, recomputed by the core.
    pub report: Report,
    /// Good lines read (duplicates included).
    pub lines_read: usize,
    /// Lines whose (`run`, `worker`, `index`) came before: kept once.
    pub duplicates: usize,
    /// Per worker, the indexes missing from `0..=max`: `(worker, count)`.
    pub missing: Vec<(String, u32)>,
    /// Clock trouble, when any is suspected.
    pub skew: Option<ClockSkew>,
    /// Every vantage, in order of appearance.
    pub vantages: Vec<Vantage>,
    /// Refused lines; the others were kept.
    pub bad_lines: Vec<LineError>,
}

/// The URL of a request to `base` in `dialect` (as [`build_request`] sends it).
fn request_url(base: &str, dialect: Option<Dialect>) -> String {
    build_request(base, dialect, &bare_params()).url
}

fn bare_params() -> GenerationParams {
    GenerationParams::default()
}

/// The base URL of a request URL: a known API path stripped.
fn base_of(url: &str, dialect: Option<Dialect>) -> String {
    let params = bare_params();
    let paths = dialect
        .into_iter()
        .chain(Dialect::ALL)
        .map(|d| build_request("", Some(d), &params).url);
    for path in paths {
        if let Some(base) = url.strip_suffix(path.as_str()) {
            return base.to_owned();
        }
    }
    url.to_owned()
}

/// The run's requests that kept their raw capture, as timeline lines (warm-ups included and
/// flagged), one per line, each ending in a newline. A request merged from timeline files is
/// written as its line was read ([`RequestRecord::origin`]: its run, vantage and index within
/// its worker); any other is written with `vantage`, its index in the run and the report's
/// title as its run.
pub fn export(report: &Report, vantage: &Vantage) -> String {
    let dialect = report.endpoint.dialect;
    let url = request_url(&report.endpoint.base_url, dialect);
    let level_as = |r: &RequestRecord, of_kind: bool| {
        of_kind
            .then_some(r.level)
            .flatten()
            .filter(|l| *l >= 0.0 && *l <= f64::from(u32::MAX))
            .map(|l| l.round() as u32)
    };
    let mut out = String::new();
    for r in &report.requests {
        let Some(raw) = &r.raw else { continue };
        let (run, vantage, request) = match &r.origin {
            Some(o) => (o.run.clone(), o.vantage.clone(), o.request.clone()),
            None => (
                report.title.clone(),
                vantage.clone(),
                RequestInfo {
                    index: r.index,
                    api: dialect,
                    url: url.clone(),
                    model: report.endpoint.model.clone(),
                    group: r.group.clone(),
                    level: r.level,
                    turn: level_as(r, crate::scenario::is_conversation_id(&report.scenario)),
                    prompt_tokens: level_as(
                        r,
                        report.scenario_kind() == Some(ScenarioKind::PromptSweep),
                    ),
                    warmup: r.warmup,
                    // One answer unless the run streamed several for this request.
                    choices: Some(r.metrics.choices.len().max(1) as u32),
                },
            ),
        };
        let line = TimelineLine {
            server_request_id: r.server_request_id.clone(),
            protocol: r.protocol.clone(),
            browser_queue_ms: r.browser_queue_ms,
            // The lag carried over to the capture's own clock.
            planned_ms: r.planned_ms.map(|p| raw.sent_ms - (r.start_ms - p)),
            ..TimelineLine::new(run, vantage, request, raw.clone())
        };
        out.push_str(&line.to_json());
        out.push('\n');
    }
    out
}

/// One worker's lines (indexes into the kept lines).
struct Worker {
    name: String,
    lines: Vec<usize>,
}

/// Merges the timeline files of one run (`(file name, text)`, one per worker) into one
/// report, recomputed by the core. Bad lines are reported and left out; a file without one
/// good line, or no file, is an error.
pub fn merge_files(
    files: &[(String, String)],
    options: &MergeOptions,
) -> Result<Merged, TimelineError> {
    let read = ReadLines::of_files(files)?;
    let lines = read.lines;
    let workers = workers_of(&lines);
    let missing = missing_requests(&workers, &lines, read.started);
    let axis = TimeAxis::of(&workers, &lines);
    let skew = clock_skew(&workers, &lines, &axis.anchors);
    let order = send_order(&axis.start, &lines);
    let (vantages, title) = vantages_and_title(&order, &lines);
    let endpoint = endpoint_of(&order, &lines);
    let scenario = options
        .scenario
        .clone()
        .unwrap_or_else(|| infer_scenario(&lines).to_owned());
    let resolution = vantages
        .iter()
        .filter_map(|v| v.clock_resolution_ms)
        .fold(None, |acc: Option<f64>, r| {
            Some(acc.map_or(r, |a| a.max(r)))
        });
    let requests = records(lines, &order, &axis.start, &options.metrics);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let mut report = Report::new(title, endpoint, scenario)
        .created_at(axis.wall_min)
        .with_clock_resolution(resolution)
        .with_settings(serde_json::json!({ "timeline_files": names }))
        .with_requests(requests);
    report.vantage = Some(describe_vantages(&vantages));
    report.import_notes = import_notes(read.duplicates, &missing, skew.as_ref(), &read.bad_lines);
    Ok(Merged {
        report,
        lines_read: read.lines_read,
        duplicates: read.duplicates,
        missing,
        skew,
        vantages,
        bad_lines: read.bad_lines,
    })
}

/// The good lines of a run's files, each (`run`, `worker`, `index`) once, in the order read,
/// with what was refused and what the ledgers say.
struct ReadLines {
    lines: Vec<TimelineLine>,
    /// Good lines read, duplicates included.
    lines_read: usize,
    duplicates: usize,
    bad_lines: Vec<LineError>,
    /// Requests started per (run, worker), from ledgers (a Locust master writes one).
    started: BTreeMap<(String, String), u64>,
    seen: HashSet<(String, String, u32)>,
}

impl ReadLines {
    /// Reads every file: an error for no file, a file without one good line, or ledgers alone.
    fn of_files(files: &[(String, String)]) -> Result<Self, TimelineError> {
        if files.is_empty() {
            return Err(TimelineError::NoFiles);
        }
        let mut read = Self {
            lines: Vec::new(),
            lines_read: 0,
            duplicates: 0,
            bad_lines: Vec::new(),
            started: BTreeMap::new(),
            seen: HashSet::new(),
        };
        for (name, text) in files {
            match Ledger::read(text) {
                Some(ledger) => read.ledger(ledger),
                None => read.file(name, text)?,
            }
        }
        if read.lines.is_empty() {
            return Err(TimelineError::OnlyLedgers);
        }
        Ok(read)
    }

    /// Keeps a ledger's counts, the largest where several name one worker.
    fn ledger(&mut self, ledger: Ledger) {
        for (worker, n) in ledger.started {
            let count = self
                .started
                .entry((ledger.run.clone(), worker))
                .or_insert(0);
            *count = (*count).max(n);
        }
    }

    /// Reads one timeline file's lines (blank ones skipped, a byte-order mark ignored).
    fn file(&mut self, name: &str, text: &str) -> Result<(), TimelineError> {
        let mut good = 0;
        let mut first_problem = None;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (no, raw_line) in text.lines().enumerate() {
            if raw_line.trim().is_empty() {
                continue;
            }
            match TimelineLine::parse(raw_line) {
                Ok(line) => {
                    good += 1;
                    self.lines_read += 1;
                    let key = (
                        line.run.clone(),
                        line.vantage.worker.clone(),
                        line.request.index,
                    );
                    if self.seen.insert(key) {
                        self.lines.push(line);
                    } else {
                        self.duplicates += 1;
                    }
                }
                Err(e) => {
                    let message = e.to_string();
                    if good == 0 && first_problem.is_none() {
                        first_problem = Some(message.clone());
                    }
                    self.bad_lines.push(LineError {
                        file: name.to_owned(),
                        line: no + 1,
                        message,
                    });
                }
            }
        }
        if good == 0 {
            return Err(TimelineError::NoLines {
                file: name.to_owned(),
                first_problem,
            });
        }
        Ok(())
    }
}

/// The workers (a run and a worker name), in order of appearance, each with its lines in
/// order of sending.
fn workers_of(lines: &[TimelineLine]) -> Vec<Worker> {
    let mut workers: Vec<Worker> = Vec::new();
    let mut worker_of: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let key = (line.run.clone(), line.vantage.worker.clone());
        let w = *worker_of.entry(key).or_insert_with(|| {
            workers.push(Worker {
                name: line.vantage.worker.clone(),
                lines: Vec::new(),
            });
            workers.len() - 1
        });
        workers[w].lines.push(i);
    }
    for w in &mut workers {
        w.lines.sort_by(|&a, &b| {
            lines[a]
                .capture
                .sent_ms
                .total_cmp(&lines[b].capture.sent_ms)
                .then(lines[a].request.index.cmp(&lines[b].request.index))
        });
    }
    workers
}

/// Missing requests, `(worker, count)`: what a ledger says a worker started without a line
/// for it (a worker killed mid-run loses its last requests, which no gap shows), else gaps in
/// its indexes; workers a ledger names that left no line at all lost everything they started.
fn missing_requests(
    workers: &[Worker],
    lines: &[TimelineLine],
    mut started: BTreeMap<(String, String), u64>,
) -> Vec<(String, u32)> {
    let mut missing = Vec::new();
    for w in workers {
        let max = w
            .lines
            .iter()
            .map(|&i| u64::from(lines[i].request.index))
            .max()
            .unwrap_or(0);
        let run = &lines[w.lines[0]].run;
        let expected = started
            .remove(&(run.clone(), w.name.clone()))
            .map_or(max + 1, |n| n.max(max + 1));
        let lost = expected.saturating_sub(w.lines.len() as u64);
        if lost > 0 {
            missing.push((w.name.clone(), u32::try_from(lost).unwrap_or(u32::MAX)));
        }
    }
    for ((_, worker), n) in started {
        if n > 0 {
            missing.push((worker, u32::try_from(n).unwrap_or(u32::MAX)));
        }
    }
    missing
}

/// One time axis: each worker's monotonic clock, anchored at its first send's wall time.
struct TimeAxis {
    /// Per worker: its first send's `(sent_ms, sent_wall_ms)`.
    anchors: Vec<(f64, f64)>,
    /// The earliest anchor's wall time: the axis' 0.
    wall_min: f64,
    /// Each line's send on the axis (ms).
    start: Vec<f64>,
}

impl TimeAxis {
    fn of(workers: &[Worker], lines: &[TimelineLine]) -> Self {
        let anchors: Vec<(f64, f64)> = workers
            .iter()
            .map(|w| {
                let first = &lines[w.lines[0]].capture;
                (first.sent_ms, first.sent_wall_ms)
            })
            .collect();
        let wall_min = anchors.iter().map(|a| a.1).fold(f64::INFINITY, f64::min);
        let mut start = vec![0.0; lines.len()];
        for (w, &(s0, wall0)) in workers.iter().zip(&anchors) {
            for &i in &w.lines {
                start[i] = (lines[i].capture.sent_ms - s0) + (wall0 - wall_min);
            }
        }
        Self {
            anchors,
            wall_min,
            start,
        }
    }
}

/// The lines' indexes in order of sending on the time axis (then by worker and index).
fn send_order(start: &[f64], lines: &[TimelineLine]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| {
        start[a]
            .total_cmp(&start[b])
            .then_with(|| lines[a].vantage.worker.cmp(&lines[b].vantage.worker))
            .then(lines[a].request.index.cmp(&lines[b].request.index))
    });
    order
}

fn is_probe(line: &TimelineLine) -> bool {
    line.vantage.client == crate::probe::PROBE_CLIENT
}

/// The vantages, and the title (the runs' names joined), in order of their first send, the
/// probe's first: the same run whatever the order of the files or of their lines (a merged
/// run exported as one file merges back as it was).
fn vantages_and_title(order: &[usize], lines: &[TimelineLine]) -> (Vec<Vantage>, String) {
    let mut vantages: Vec<Vantage> = Vec::new();
    let mut runs: Vec<(&str, bool)> = Vec::new();
    for &i in order {
        let line = &lines[i];
        let v = &line.vantage;
        if !vantages
            .iter()
            .any(|k| k.client == v.client && k.worker == v.worker && k.host == v.host)
        {
            vantages.push(v.clone());
        }
        match runs.iter_mut().find(|r| r.0 == line.run) {
            Some(run) => run.1 |= is_probe(line),
            None => runs.push((&line.run, is_probe(line))),
        }
    }
    vantages.sort_by_key(|v| v.client != crate::probe::PROBE_CLIENT);
    runs.sort_by_key(|r| !r.1);
    let title = runs.iter().map(|r| r.0).collect::<Vec<_>>().join(" + ");
    (vantages, title)
}

/// The endpoint as the first line sent asked it (the probe's first, in a probe under load).
fn endpoint_of(order: &[usize], lines: &[TimelineLine]) -> EndpointInfo {
    let first = &lines[order
        .iter()
        .copied()
        .find(|&i| is_probe(&lines[i]))
        .unwrap_or(order[0])];
    EndpointInfo {
        base_url: base_of(&first.request.url, first.request.api),
        model: first.request.model.clone(),
        dialect: first.request.api,
    }
}

/// Each line recomputed by the core into its record, in send order, at its place on the time
/// axis (`start`), keeping where it came from; each line is moved into its record (its body
/// is not copied).
fn records(
    lines: Vec<TimelineLine>,
    order: &[usize],
    start: &[f64],
    metrics: &MetricsConfig,
) -> Vec<RequestRecord> {
    let mut requests = Vec::with_capacity(lines.len());
    let mut slots: Vec<Option<TimelineLine>> = lines.into_iter().map(Some).collect();
    for (new_index, &i) in order.iter().enumerate() {
        let Some(line) = slots[i].take() else {
            continue;
        };
        // Checked when parsed: a capture that fails here still never panics.
        let Ok(timeline) = line.to_capture().and_then(|c| {
            c.record_asking(line.request.api, line.request.choices)
                .map_err(TimelineError::from)
        }) else {
            continue;
        };
        let record = RequestRecord::from_timeline(
            u32::try_from(new_index).unwrap_or(u32::MAX),
            line.request.group.clone(),
            line.request.level,
            &timeline,
            metrics,
        );
        requests.push(RequestRecord {
            warmup: line.request.warmup,
            start_ms: start[i],
            // The line's lag, placed on the run's time axis.
            planned_ms: line
                .planned_ms
                .map(|p| start[i] - (line.capture.sent_ms - p)),
            browser_queue_ms: line.browser_queue_ms,
            server_request_id: line.server_request_id,
            sent_epoch_ms: Some(line.capture.sent_wall_ms),
            protocol: line.protocol,
            raw: Some(line.capture),
            client: Some(line.vantage.client.clone()),
            origin: Some(LineOrigin {
                run: line.run,
                vantage: line.vantage,
                request: line.request,
            }),
            ..record
        });
    }
    requests
}

/// Whether `text` is a timeline file (its first non-blank line names a `ttft-timeline/`
/// format) or a master's ledger that goes with them, so an importer can tell them from a
/// report or another tool's results.
pub fn looks_like_timeline(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Peek {
        format: Option<String>,
    }
    text.lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str::<Peek>(l).ok())
        .and_then(|p| p.format)
        .is_some_and(|f| f.starts_with("ttft-timeline/") || f == LEDGER_FORMAT)
}

/// What a merge found, in sentences for the report ([`Report::import_notes`]).
fn import_notes(
    duplicates: usize,
    missing: &[(String, u32)],
    skew: Option<&ClockSkew>,
    bad_lines: &[LineError],
) -> Vec<String> {
    let mut notes = Vec::new();
    for (worker, count) in missing {
        notes.push(format!(
            "worker {worker} lost {count} request(s): their lines are missing (a worker stopped or killed mid-run); they are counted here, not measured"
        ));
    }
    if duplicates > 0 {
        notes.push(format!(
            "{duplicates} duplicated line(s) dropped (the same worker's request read twice, e.g. a file imported twice)"
        ));
    }
    if let Some(s) = skew {
        notes.push(s.message.clone());
    }
    if let Some(first) = bad_lines.first() {
        notes.push(format!(
            "{} line(s) refused, the rest kept; first: {first}",
            bad_lines.len()
        ));
    }
    notes
}

/// The scenario kind the lines suggest: the probe's (the `browser` lines) when a browser probe
/// ran beside another client's load, whose levels are not the probe's.
fn infer_scenario(lines: &[TimelineLine]) -> &'static str {
    let is_probe = |l: &&TimelineLine| l.vantage.client == crate::probe::PROBE_CLIENT;
    let all: Vec<&TimelineLine> = lines.iter().collect();
    let probe: Vec<&TimelineLine> = lines.iter().filter(is_probe).collect();
    if probe.is_empty() || probe.len() == all.len() {
        infer_from(&all)
    } else {
        infer_from(&probe)
    }
}

fn infer_from(lines: &[&TimelineLine]) -> &'static str {
    if lines.iter().any(|l| l.request.turn.is_some()) {
        return ScenarioKind::MultiTurn.id();
    }
    let mut levels: Vec<f64> = lines.iter().filter_map(|l| l.request.level).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    if levels.len() < 2 {
        ScenarioKind::Chat.id()
    } else if lines.iter().all(|l| {
        l.request.warmup
            || matches!((l.request.level, l.request.prompt_tokens), (Some(a), Some(p)) if a == f64::from(p))
    }) {
        ScenarioKind::PromptSweep.id()
    } else {
        ScenarioKind::ConcurrencySweep.id()
    }
}

/// `locust (2 workers on 1 host)`, `browser`, `browser + locust (3 workers on 2 hosts)`.
pub fn describe_vantages(vantages: &[Vantage]) -> String {
    let mut clients: Vec<&str> = Vec::new();
    for v in vantages {
        if !clients.contains(&v.client.as_str()) {
            clients.push(&v.client);
        }
    }
    clients
        .iter()
        .map(|c| {
            let of: Vec<&Vantage> = vantages.iter().filter(|v| v.client == *c).collect();
            let mut hosts: Vec<&str> = of.iter().map(|v| v.host.as_str()).collect();
            hosts.sort_unstable();
            hosts.dedup();
            let plural =
                |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
            if of.len() == 1 {
                (*c).to_owned()
            } else {
                format!(
                    "{c} ({} on {})",
                    plural(of.len(), "worker"),
                    plural(hosts.len(), "host")
                )
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Wall clocks stepped within a worker, and workers starting suspiciously far apart.
fn clock_skew(
    workers: &[Worker],
    lines: &[TimelineLine],
    anchors: &[(f64, f64)],
) -> Option<ClockSkew> {
    let mut stepped = Vec::new();
    let mut longest_pause = 0.0f64;
    for w in workers {
        let offsets = w
            .lines
            .iter()
            .map(|&i| lines[i].capture.sent_wall_ms - lines[i].capture.sent_ms);
        let (lo, hi) = offsets.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), o| {
            (lo.min(o), hi.max(o))
        });
        if hi - lo > STEP_MS {
            stepped.push((w.name.clone(), hi - lo));
        }
        for pair in w.lines.windows(2) {
            let gap = lines[pair[1]].capture.sent_ms - lines[pair[0]].capture.sent_ms;
            longest_pause = longest_pause.max(gap);
        }
    }
    let (lo, hi) = anchors
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), a| {
            (lo.min(a.1), hi.max(a.1))
        });
    let spread = hi - lo;
    let start_spread_ms =
        (workers.len() > 1 && spread > START_SPREAD_MS && spread > longest_pause).then_some(spread);
    if stepped.is_empty() && start_spread_ms.is_none() {
        return None;
    }
    let mut message = Vec::new();
    for (w, ms) in &stepped {
        message.push(format!(
            "The wall clock of worker {w} moved by {} against its own monotonic clock during the run (stepped, e.g. by NTP): its requests are placed by the monotonic clock from its first one.",
            crate::format::ms(*ms)
        ));
    }
    if let Some(s) = start_spread_ms {
        message.push(format!(
            "The workers' first requests start {} apart by their wall clocks, longer than any pause in the run: their clocks probably disagree (or a worker joined late), which shifts the load timeline; TTFT and ITL are not affected. Synchronise the machines' clocks (NTP) and run again.",
            crate::format::ms(s)
        ));
    }
    Some(ClockSkew {
        stepped,
        start_spread_ms,
        message: message.join(" "),
    })
}
