//! The names the studio gives what it makes: a run's title, the run name a locustfile's workers
//! write into their file names, and the llm-d report files of a run. Pure: the studio hands the
//! clock's ISO time in.

use crate::report::Report;

/// A run's title: scenario, model and the time to the second (`iso_time` as
/// `Date.toISOString()` gives it; the rest of it, milliseconds and zone, is left out).
pub fn run_title(scenario: &str, model: &str, iso_time: &str) -> String {
    let when: String = iso_time.chars().take(19).collect();
    format!("{scenario} · {model} · {when}")
}

/// The title of a run made with others (an arm of an A/B run, a repeat): scenario, the arm's
/// label (a repeat: the model), its place in the group and the time, e.g. `chat · model-a ·
/// A/B 1 of 2 · 2025-03-14T09:26:53`, `chat · sim-fast · repeat 2 of 3 · …` ([`run_title`]
/// with the place after the name).
pub fn group_run_title(
    scenario: &str,
    model: &str,
    group: &crate::report::RunGroup,
    iso_time: &str,
) -> String {
    let name = match group.kind {
        crate::report::GroupKind::Arms => group.label.as_str(),
        crate::report::GroupKind::Repeats => model,
    };
    run_title(
        scenario,
        &format!("{name} · {}", group.describe()),
        iso_time,
    )
}

/// Part of every Locust worker's file name: scenario, model and time, letters, digits and
/// single dashes only.
pub fn locust_run_name(scenario: &str, model: &str, iso_time: &str) -> String {
    format!("{scenario}-{model}-{}", run_title("", "", iso_time))
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Letters, digits, dots and dashes; runs of anything else become one `_`.
fn slug(s: &str) -> String {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// A run as llm-d Benchmark Reports v0.2 ([`crate::llmd`]), one `(file name, text)` per load
/// point in order of load: llm-d reads one report per file, and its analysis finds them by
/// llm-d-benchmark's name, `benchmark_report_v0.2,_<…>.yaml` (the comma included). Each file
/// is the report's JSON, which YAML readers take as it is. No API key or header is in them:
/// the run holds none, and the core writes the endpoint without credentials.
pub fn llmd_files(report: &Report) -> Result<Vec<(String, String)>, crate::llmd::LlmdError> {
    let run = slug(&report.title);
    Ok(crate::llmd::benchmark_reports(report)?
        .into_iter()
        .enumerate()
        .map(|(stage, s)| {
            (
                format!(
                    "benchmark_report_v0.2,_{run}_stage_{stage}_{}.yaml",
                    slug(&s.group)
                ),
                s.json,
            )
        })
        .collect())
}

/// What can tell a run apart from others it is compared with, as a sentence would name it
/// ([`distinguishing_names`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunIdentity {
    /// The model asked for, `None` when the run names none.
    pub model: Option<String>,
    /// The endpoint's host (and port), from its base URL: `localhost:8080`; `None` without one.
    pub endpoint: Option<String>,
    /// The scenario, in words (`prompt sweep`).
    pub scenario: String,
    /// The user's own name for the run: its title when that is not the one the studio gave it
    /// ([`run_title`]; a copy opened from a share link keeps it). The hook for a label of the
    /// run's group, when runs carry one: it takes this place.
    pub label: Option<String>,
    /// The full title, as the runs list shows it.
    pub title: String,
    /// When the run was made (unix ms, 0 when unknown).
    pub created_unix_ms: f64,
}

/// The suffix [`crate::report::Report`]s opened from a share link get in their titles.
const SHARED_SUFFIX: &str = " (shared)";

/// The host and port of a base URL (`http://user@gpu-1:8000/v1` → `gpu-1:8000`); a value with
/// no scheme (`guidellm`, from an import) is kept to its first `/`.
fn host_of(base_url: &str) -> Option<String> {
    let url = base_url.trim();
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

impl RunIdentity {
    /// A report's identity (see the fields).
    pub fn of(report: &Report) -> RunIdentity {
        let model = Some(report.endpoint.model.trim()).filter(|m| !m.is_empty());
        let base = report
            .title
            .strip_suffix(SHARED_SUFFIX)
            .unwrap_or(&report.title);
        let generated = format!("{} · {} · ", report.scenario, report.endpoint.model);
        let label = Some(base.trim())
            .filter(|t| !t.is_empty() && !t.starts_with(&generated))
            .map(str::to_owned);
        RunIdentity {
            model: model.map(str::to_owned),
            endpoint: host_of(&report.endpoint.base_url),
            scenario: report.scenario.replace('_', " "),
            label,
            title: report.title.clone(),
            created_unix_ms: report.created_unix_ms,
        }
    }
}

/// What a name can be made of, in the order it is preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Facet {
    Model,
    Endpoint,
    Scenario,
    Label,
    /// The time of day (UTC, as the titles give it).
    Time,
    /// Day and time, for runs made at the same time of different days.
    DayTime,
}

const FACETS: [Facet; 6] = [
    Facet::Model,
    Facet::Endpoint,
    Facet::Scenario,
    Facet::Label,
    Facet::Time,
    Facet::DayTime,
];

impl Facet {
    fn of(self, id: &RunIdentity) -> Option<String> {
        let when = || (id.created_unix_ms > 0.0).then(|| crate::llmd::iso8601(id.created_unix_ms));
        match self {
            Facet::Model => id.model.clone(),
            Facet::Endpoint => id.endpoint.clone(),
            Facet::Scenario => Some(id.scenario.clone()).filter(|s| !s.is_empty()),
            Facet::Label => id.label.clone(),
            Facet::Time => when().map(|t| t[11..19].to_owned()),
            Facet::DayTime => when().map(|t| format!("{} {}", &t[..10], &t[11..19])),
        }
    }
}

/// A name of `pieces` in the order of [`FACETS`]: `model-a on gpu-1:8000 · chat at 14:05:03`,
/// `run at 14:05:03` for a time alone.
fn render(pieces: &[(Facet, String)]) -> String {
    let mut name = String::new();
    for (facet, text) in pieces {
        let sep = match facet {
            Facet::Time | Facet::DayTime if name.is_empty() => "run at ",
            Facet::Time | Facet::DayTime => " at ",
            _ if name.is_empty() => "",
            Facet::Endpoint => " on ",
            _ => " · ",
        };
        name.push_str(sep);
        name.push_str(text);
    }
    name
}

/// The shortest names that tell runs apart (2–4 of them, in order), for the sentences that
/// compare them; see [`identity_names`].
pub fn distinguishing_names(reports: &[&Report]) -> Vec<String> {
    let ids: Vec<RunIdentity> = reports.iter().map(|r| RunIdentity::of(r)).collect();
    identity_names(&ids)
}

/// The shortest names that tell runs apart: the model when the models differ (with the
/// endpoint's host where one model ran on several endpoints), else the endpoint's host, else
/// the scenario, else the user's label, else the time the run was made (`run at 14:05:03`,
/// with the day when that repeats), and as a last resort `run 1`, `run 2`. What one of them
/// leaves alike is told apart by the next (`m1 · chat`, `m1 · prompt sweep`, `m2`); each run
/// is named by as few of them as it needs. The names are unique.
pub fn identity_names(ids: &[RunIdentity]) -> Vec<String> {
    let values: Vec<Vec<Option<String>>> = ids
        .iter()
        .map(|id| FACETS.iter().map(|f| f.of(id)).collect())
        .collect();
    // The facets that split runs still alike, in order.
    let mut chosen: Vec<usize> = Vec::new();
    let key = |i: usize, chosen: &[usize]| -> Vec<Option<String>> {
        chosen.iter().map(|&f| values[i][f].clone()).collect()
    };
    let alike = |i: usize, j: usize, chosen: &[usize]| key(i, chosen) == key(j, chosen);
    for (f, _) in FACETS.iter().enumerate() {
        let splits = (0..ids.len()).any(|i| {
            (i + 1..ids.len()).any(|j| alike(i, j, &chosen) && values[i][f] != values[j][f])
        });
        if splits {
            chosen.push(f);
        }
    }
    let mut names: Vec<String> = (0..ids.len())
        .map(|i| {
            // As few chosen facets as tell run i from every other run.
            let upto = (1..=chosen.len())
                .find(|&k| (0..ids.len()).all(|j| j == i || !alike(i, j, &chosen[..k])))
                .unwrap_or(chosen.len());
            let pieces: Vec<(Facet, String)> = chosen[..upto]
                .iter()
                .filter_map(|&f| Some((FACETS[f], values[i][f].clone()?)))
                .collect();
            render(&pieces)
        })
        .collect();
    // Names that still repeat: the run's place in the comparison added.
    let first: Vec<String> = names.clone();
    for (i, name) in names.iter_mut().enumerate() {
        let repeats = first
            .iter()
            .enumerate()
            .any(|(j, n)| j != i && *n == first[i]);
        if repeats && !name.is_empty() {
            *name = format!("{name} · run {}", i + 1);
        }
    }
    // A run with none of the facets that tell the others apart (no label among labelled
    // runs): its time, else its place.
    for i in 0..names.len() {
        if names[i].is_empty() {
            // FACETS[4] and [5]: the time of day, then with the day, when no other run has it.
            let time = |f: usize| {
                let own = values[i][f].clone()?;
                let shared = (0..ids.len()).any(|j| j != i && values[j][f].as_ref() == Some(&own));
                (!shared).then(|| render(&[(FACETS[f], own)]))
            };
            names[i] = [time(4), time(5)]
                .into_iter()
                .flatten()
                .chain([format!("run {}", i + 1)])
                .find(|n| !names.contains(n))
                .unwrap_or_default();
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::EndpointInfo;

    const NOW: &str = "2025-03-14T09:26:53.589Z";

    #[test]
    fn a_run_is_titled_by_scenario_model_and_second() {
        assert_eq!(
            run_title("chat", "sim-fast", NOW),
            "chat · sim-fast · 2025-03-14T09:26:53"
        );
        // Whatever the clock gives, at most to the second.
        assert_eq!(run_title("chat", "m", ""), "chat · m · ");
    }

    #[test]
    fn a_locust_run_name_is_letters_digits_and_single_dashes() {
        assert_eq!(
            locust_run_name("prompt_sweep", "org/llama 3@vllm", NOW),
            "prompt-sweep-org-llama-3-vllm-2025-03-14T09-26-53"
        );
    }

    #[test]
    fn llmd_files_need_measured_requests() {
        let empty = Report::new("nothing", EndpointInfo::default(), "chat");
        assert!(
            llmd_files(&empty)
                .unwrap_err()
                .to_string()
                .contains("no measured requests")
        );
    }

    #[test]
    fn slugs_keep_letters_digits_dots_and_dashes() {
        assert_eq!(slug("chat · m-1.5 · 2025:03"), "chat_m-1.5_2025_03");
        assert_eq!(slug("concurrency=2"), "concurrency_2");
    }
}
