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
