//! Imports result files: several at once, or a folder's (a genai-bench experiment, an AIPerf
//! artifact folder). Timeline files (`ttft-timeline/1` JSON Lines, one per Locust worker or
//! studio export) selected together are merged into one run, recomputed by the core; the other
//! files are read by the core too ([`ttft_core::result_files::read_results`]: a genai-bench
//! experiment's files become one run, each other file a run of its own). What could not be read
//! is named in the notice; what could is kept.

use leptos::task::spawn_local;
use ttft_core::result_files::{ReadResults, looks_like_result_name, read_results};
use ttft_core::timeline_file::{Merged, TimelineError};

use super::storage::save_run;
use super::studio::{add_runs, notify, show_run};
use crate::browser::files::ChosenFile;
use crate::state::Studio;

/// The chosen files read as text, sorted: timeline files, result files, and one note per file
/// the browser refused.
#[derive(Default)]
struct Chosen {
    timelines: Vec<(String, String)>,
    results: Vec<(String, String)>,
    notes: Vec<String>,
}

/// Reads the chosen files; a folder's plots, spreadsheets and logs are not read at all.
async fn read_chosen(files: Vec<ChosenFile>) -> Chosen {
    let mut chosen = Chosen::default();
    for file in files {
        // A folder's files carry their path in it (`experiment/scenario.json`).
        let path = file.folder_path();
        let name = path.clone().unwrap_or_else(|| file.name());
        if path.is_some() && !looks_like_result_name(&name) {
            continue;
        }
        let Some(text) = file.text().await else {
            chosen.notes.push(format!(
                "could not read {name}: the browser refused the file"
            ));
            continue;
        };
        if ttft_core::timeline_file::looks_like_timeline(&text) {
            chosen.timelines.push((name, text));
        } else {
            chosen.results.push((name, text));
        }
    }
    chosen
}

/// Imports the chosen files (see the module) and says in the notice what came of each.
pub fn import_files(studio: Studio, files: Vec<ChosenFile>) {
    spawn_local(async move {
        let count = files.len();
        let Chosen {
            timelines,
            results,
            mut notes,
        } = read_chosen(files).await;
        let from = match results.as_slice() {
            [(name, _)] => name.clone(),
            files => format!("{} files", files.len()),
        };
        let timeline_count = timelines.len();
        let (read, merged) = match read_imports(results, timelines).await {
            Ok(read) => read,
            Err(e) => {
                notes.insert(0, format!("nothing imported: {e}"));
                return notify(studio, notes.join("; "));
            }
        };
        let errors = read.errors.clone();
        if let Some(note) = add_results(studio, read, &from) {
            notes.insert(0, note);
        }
        notes.extend(errors);
        if let Some(merged) = merged {
            notes.push(import_timelines(studio, timeline_count, merged));
        }
        if notes.is_empty() {
            notes.push(format!(
                "nothing imported: none of the {count} file(s) is a result file (JSON or JSON lines); choose a studio report, timeline files, or a vLLM / GuideLLM / AIPerf / SGLang / genai-bench result"
            ));
        }
        notify(studio, notes.join("; "));
    });
}

/// Shows and saves the runs read from result files (`from`: the one file's name, or how many);
/// the notice's sentence for them, if any were read.
fn add_results(studio: Studio, read: ReadResults, from: &str) -> Option<String> {
    let n = read.reports.len();
    if n == 0 {
        return None;
    }
    let tools = read.tools().join(", ");
    let ids = add_runs(
        studio.state,
        read.reports.into_iter().map(Into::into).collect(),
    );
    if let Some(first) = ids.first() {
        show_run(studio, *first);
    }
    for id in ids {
        save_run(studio, id);
    }
    Some(format!("imported {n} run(s) from {from} ({tools})"))
}

lazy_part! {
    /// Reads the chosen files through the core: result files ([`read_results`]) and timeline
    /// files, merged into one run (none chosen: `None`). Lazy: the importers load with the first
    /// import.
    async fn read_imports(
        results: Vec<(String, String)>,
        timelines: Vec<(String, String)>,
    ) -> (ReadResults, Option<Result<Merged, TimelineError>>) {
        let options = ttft_core::timeline_file::MergeOptions::default();
        let merged = (!timelines.is_empty())
            .then(|| ttft_core::timeline_file::merge_files(&timelines, &options));
        (read_results(&results), merged)
    }
}

/// Shows and saves the run `files` timeline files merged into; what the merge found stays with
/// the run ([`ttft_core::report::Report::import_notes`]) and is returned for the notice.
fn import_timelines(studio: Studio, files: usize, merged: Result<Merged, TimelineError>) -> String {
    match merged {
        Ok(merged) => {
            let n = merged.report.requests.len();
            let who = merged.report.vantage.clone().unwrap_or_default();
            let notes = merged.report.import_notes.join("; ");
            let ids = add_runs(studio.state, vec![merged.report.into()]);
            if let Some(id) = ids.first() {
                show_run(studio, *id);
                save_run(studio, *id);
            }
            format!(
                "merged {files} timeline file(s) into one run of {n} requests measured by {who}{}",
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(": {notes}")
                }
            )
        }
        Err(e) => format!("could not import the timeline files: {e}"),
    }
}
