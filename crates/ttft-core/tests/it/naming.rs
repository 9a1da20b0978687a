//! The names sentences give the runs they compare (`ttft_core::naming::distinguishing_names`):
//! by what differs between them, never by the full title with its time.

use ttft_core::naming::{RunIdentity, distinguishing_names, run_title};
use ttft_core::report::{EndpointInfo, Report};

/// 2025-03-14T09:26:53Z, in unix ms.
const T0: f64 = 1_741_944_413_000.0;
const DAY: f64 = 86_400_000.0;

/// A run as the studio makes it: of `scenario` on `model` at `base_url`, `at` ms after T0,
/// titled by the studio, or `label` when the user renamed it.
fn run(model: &str, base_url: &str, scenario: &str, at: f64, label: Option<&str>) -> Report {
    let iso = format!(
        "2025-03-{:02}T09:{:02}:{:02}.000Z",
        14 + (at / DAY) as u32,
        26 + ((53.0 + (at % DAY) / 1e3) as u32) / 60,
        (53 + ((at % DAY) / 1e3) as u32) % 60
    );
    let title = label.map_or_else(|| run_title(scenario, model, &iso), str::to_owned);
    let endpoint = EndpointInfo {
        base_url: base_url.to_owned(),
        model: model.to_owned(),
        dialect: None,
    };
    Report::new(title, endpoint, scenario).created_at(T0 + at)
}

const LOCAL: &str = "http://localhost:8080/v1";
const GPU: &str = "https://user@GPU-1:8000/v1";

#[test]
fn runs_are_named_by_what_differs_between_them() {
    type Case = (&'static str, Vec<Report>, &'static [&'static str]);
    let cases: Vec<Case> = vec![
        (
            "models differ: the models",
            vec![
                run("model-a", LOCAL, "chat", 0.0, None),
                run("model-b", LOCAL, "chat", 5e3, None),
            ],
            &["model-a", "model-b"],
        ),
        (
            "one model on two endpoints: the hosts",
            vec![
                run("llama", LOCAL, "chat", 0.0, None),
                run("llama", GPU, "chat", 5e3, None),
            ],
            &["localhost:8080", "gpu-1:8000"],
        ),
        (
            "one model and endpoint, two scenarios: the scenarios",
            vec![
                run("llama", LOCAL, "chat", 0.0, None),
                run("llama", LOCAL, "prompt_sweep", 5e3, None),
            ],
            &["chat", "prompt sweep"],
        ),
        (
            "alike but for the user's labels: the labels",
            vec![
                run("llama", LOCAL, "chat", 0.0, Some("baseline")),
                run("llama", LOCAL, "chat", 5e3, Some("prefix cache on")),
            ],
            &["baseline", "prefix cache on"],
        ),
        (
            "alike but for their times: the time of day",
            vec![
                run("llama", LOCAL, "chat", 0.0, None),
                run("llama", LOCAL, "chat", 17e3, None),
            ],
            &["run at 09:26:53", "run at 09:27:10"],
        ),
        (
            "the same time of different days: the day too",
            vec![
                run("llama", LOCAL, "chat", 0.0, None),
                run("llama", LOCAL, "chat", DAY, None),
            ],
            &["run at 2025-03-14 09:26:53", "run at 2025-03-15 09:26:53"],
        ),
        (
            "nothing differs: their places",
            vec![
                run("llama", LOCAL, "chat", 0.0, None),
                run("llama", LOCAL, "chat", 0.0, None),
            ],
            &["run 1", "run 2"],
        ),
        (
            "a model on two endpoints among others: host only where needed",
            vec![
                run("m1", LOCAL, "chat", 0.0, None),
                run("m1", GPU, "chat", 5e3, None),
                run("m2", LOCAL, "chat", 9e3, None),
            ],
            &["m1 on localhost:8080", "m1 on gpu-1:8000", "m2"],
        ),
        (
            "a model in two scenarios among others: scenario only where needed",
            vec![
                run("m1", LOCAL, "chat", 0.0, None),
                run("m1", LOCAL, "agent_json", 5e3, None),
                run("m2", LOCAL, "chat", 9e3, None),
                run("m3", LOCAL, "chat", 12e3, None),
            ],
            &["m1 · chat", "m1 · agent json", "m2", "m3"],
        ),
        (
            "one model twice at one place: its time",
            vec![
                run("m1", LOCAL, "chat", 0.0, None),
                run("m1", LOCAL, "chat", 5e3, None),
                run("m2", LOCAL, "chat", 9e3, None),
            ],
            &["m1 at 09:26:53", "m1 at 09:26:58", "m2"],
        ),
        (
            "one labelled run beside one the studio titled: the label, and the other's time",
            vec![
                run("llama", LOCAL, "chat", 0.0, Some("baseline")),
                run("llama", LOCAL, "chat", 5e3, None),
            ],
            &["baseline", "run at 09:26:58"],
        ),
    ];
    for (what, reports, want) in cases {
        let refs: Vec<&Report> = reports.iter().collect();
        let names = distinguishing_names(&refs);
        assert_eq!(names, want.to_vec(), "{what}");
        for (n, r) in names.iter().zip(&reports) {
            assert!(!n.contains("2025-03-14T"), "{what}: {n} is {}", r.title);
        }
    }
}

#[test]
fn a_shared_copy_keeps_the_studios_title_and_a_renamed_run_is_labelled() {
    let mut shared = run("model-a", LOCAL, "chat", 0.0, None);
    shared.title = format!("{} (shared)", shared.title);
    assert_eq!(RunIdentity::of(&shared).label, None);
    let renamed = run("model-a", LOCAL, "chat", 0.0, Some("tuned"));
    let id = RunIdentity::of(&renamed);
    assert_eq!(id.label.as_deref(), Some("tuned"));
    assert_eq!(
        (
            id.model.as_deref(),
            id.endpoint.as_deref(),
            id.scenario.as_str()
        ),
        (Some("model-a"), Some("localhost:8080"), "chat")
    );
    // Imported runs: an endpoint given without a scheme is kept as it is.
    let mut imported = run(
        "m",
        "guidellm",
        "imported_guidellm",
        0.0,
        Some("GuideLLM · m"),
    );
    imported.endpoint.base_url = "guidellm".into();
    assert_eq!(
        RunIdentity::of(&imported).endpoint.as_deref(),
        Some("guidellm")
    );
}

#[test]
fn names_are_unique_whatever_the_runs() {
    let models = ["a", "b"];
    let urls = [LOCAL, GPU, ""];
    let scenarios = ["chat", "rate"];
    let mut all = Vec::new();
    for m in models {
        for u in urls {
            for s in scenarios {
                for at in [0.0, 1e3] {
                    all.push(run(m, u, s, at, None));
                }
            }
        }
    }
    // Every set of 2–4 runs taken in a stride through them (duplicates included).
    for start in 0..all.len() {
        for stride in 0..7 {
            for len in 2..=4 {
                let refs: Vec<&Report> = (0..len)
                    .map(|k| &all[(start + k * stride) % all.len()])
                    .collect();
                let names = distinguishing_names(&refs);
                let mut sorted = names.clone();
                sorted.sort();
                sorted.dedup();
                assert_eq!(sorted.len(), names.len(), "{names:?}");
                assert!(names.iter().all(|n| !n.is_empty()), "{names:?}");
            }
        }
    }
}
