//! A run's files, built on click and downloaded: the report as JSON or CSV, its summary (every
//! headline figure with its interval at the user's confidence level, recomputed: the report
//! file keeps none) and its figures per time window, its timeline (every request's raw bytes and times, in the format Locust's
//! workers write), llm-d Benchmark Reports (one per load point), and a `locustfile.py` of the
//! current settings for more load than one browser.

use leptos::prelude::*;
use leptos::task::spawn_local;
use ttft_core::report::Report;

use super::studio::notify;
use crate::browser::download;
use crate::state::Studio;

/// The file names of a run's exports: its title, spaces, colons and dots taken out.
fn file_stem(report: &Report) -> String {
    report.title.replace([' ', ':', '·'], "_")
}

/// Downloads the report as JSON (what Import opens again).
pub fn export_json(report: &Report) {
    download(
        &format!("{}.json", file_stem(report)),
        "application/json",
        &report.to_json_pretty(),
    );
}

/// Downloads the report's requests as CSV.
pub fn export_csv(report: &Report) {
    download(
        &format!("{}.csv", file_stem(report)),
        "text/csv",
        &report.to_csv(),
    );
}

/// Downloads the raw bytes and times of every request that kept them (runs measured in this
/// studio, or read from timeline files), in the format Locust's workers write; a merged request
/// is written with its own vantage, the browser's is for the requests measured here.
pub fn export_timeline(report: &Report) {
    let vantage = ttft_core::timeline_file::Vantage::browser(
        report.clock_resolution_ms,
        Some("ttft-studio".into()),
    );
    download(
        &format!("{}.jsonl", file_stem(report)),
        "application/x-ndjson",
        &ttft_core::timeline_file::export(report, &vantage),
    );
}

/// Downloads a run's llm-d reports ([`ttft_core::naming::llmd_files`]), one file per load
/// point (a browser may ask once to allow several downloads), and says which files they are.
pub fn export_llmd(studio: Studio, report: &Report) {
    match ttft_core::naming::llmd_files(report) {
        Ok(files) => {
            let names: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
            for (i, (name, text)) in files.into_iter().enumerate() {
                // One at a time: browsers drop downloads started in the same instant.
                set_timeout(
                    move || download(&name, "application/yaml", &text),
                    std::time::Duration::from_millis(300 * i as u64),
                );
            }
            notify(
                studio,
                format!(
                    "llm-d Benchmark Report v0.2: {} file(s), one per load point ({}); your browser may ask to allow several downloads",
                    names.len(),
                    names.join(", ")
                ),
            );
        }
        Err(e) => notify(studio, format!("could not export an llm-d report: {e}")),
    }
}

/// Writes the current endpoint and scenario as a self-contained `locustfile.py` and downloads
/// it: more load than one browser, from Locust's workers, whose timeline files the runs list
/// then merges. The API key is never written (the file reads it from the environment).
pub fn export_locustfile(studio: Studio) {
    let ep = studio.endpoint.get_untracked();
    let sc = studio.scenario.get_untracked();
    let target = ttft_core::locust::LocustTarget {
        base_url: ep.effective_base(),
        dialect: ep.dialect,
        model: ep.wire_model(),
        extra_headers: ep.extra_headers.clone(),
    };
    let run = ttft_core::naming::locust_run_name(
        sc.kind.id(),
        &target.model,
        &crate::browser::clock::iso_now(),
    );
    // A trace replay's file sends the trace plan's requests (the scenario cannot plan them
    // without the trace the studio holds).
    let phases = if sc.kind == ttft_core::scenario::ScenarioKind::Trace {
        match super::trace::plan_trace(studio, &ep, &sc, super::trace::run_seed(&sc)) {
            Ok((phases, _)) => Some(phases),
            Err(e) => return notify(studio, format!("cannot write a locustfile: {e}")),
        }
    } else {
        None
    };
    spawn_local(async move {
        match locustfile(target, sc, run.clone(), phases).await {
            Err(e) => notify(studio, format!("cannot write a locustfile: {e}")),
            Ok(Ok(text)) => {
                download("locustfile.py", "text/x-python", &text);
                notify(
                    studio,
                    format!(
                        "locustfile.py saved (run {run}): its header says how to run it; then import every worker's {run}-*.jsonl here together"
                    ),
                );
            }
            Ok(Err(e)) => notify(studio, format!("cannot write a locustfile: {e}")),
        }
    });
}

lazy_part! {
    /// The locustfile's text. Lazy: the generator loads with the first locustfile written.
    async fn locustfile(
        target: ttft_core::locust::LocustTarget,
        scenario: ttft_core::scenario::ScenarioConfig,
        run: String,
        phases: Option<Vec<ttft_core::scenario::Phase>>,
    ) -> Result<String, ttft_core::locust::LocustError> {
        match phases {
            Some(p) => ttft_core::locust::locustfile_for_phases(&target, &scenario, &run, p),
            None => ttft_core::locust::locustfile(&target, &scenario, &run),
        }
    }
}

/// Downloads the run's summary as CSV: one row of every headline figure with its interval at
/// `level`, or the requests it needs for one ([`ttft_core::summary_file::summary_csv`]).
pub fn export_summary_csv(report: &Report, level: f64) {
    download(
        &format!("{}-summary.csv", file_stem(report)),
        "text/csv",
        &ttft_core::summary_file::summary_csv(report, level),
    );
}

/// Downloads the run's summary as JSON, with its `intervals` object at `level`
/// ([`ttft_core::summary_file::summary_json`]).
pub fn export_summary_json(report: &Report, level: f64) {
    download(
        &format!("{}-summary.json", file_stem(report)),
        "application/json",
        &ttft_core::summary_file::summary_json(report, level),
    );
}

/// Downloads the run's figures per time window as CSV, intervals at `level`
/// ([`ttft_core::summary_file::windows_csv`]).
pub fn export_windows_csv(report: &Report, level: f64) {
    download(
        &format!("{}-windows.csv", file_stem(report)),
        "text/csv",
        &ttft_core::summary_file::windows_csv(report, level),
    );
}
