//! The generated locustfile: no secret ever in it, every planned body in it exactly (read back
//! by Python's own parser), and it compiles, for every API style and scenario kind.

use std::path::PathBuf;
use std::process::Command;

use ttft_core::dialect::Dialect;
use ttft_core::locust::{LocustError, LocustTarget, locust_jobs, locustfile};
use ttft_core::scenario::{ScenarioConfig, ScenarioKind};

const KEY: &str = "sk-live-SECRET-9f8e7d6c5b4a";

fn target(dialect: Option<Dialect>) -> LocustTarget {
    LocustTarget {
        base_url: "http://127.0.0.1:8080/v1/".into(),
        dialect,
        model: "sim-fast".into(),
        extra_headers: format!(
            "X-Team: latency\nAuthorization: Bearer {KEY}\nx-api-key: {KEY}\nX-Custom-Token: {KEY}\n"
        ),
    }
}

fn scenario(kind: ScenarioKind) -> ScenarioConfig {
    ScenarioConfig {
        kind,
        requests: 3,
        concurrency: 4,
        warmup: 1,
        rounds: 3,
        prompt_levels: "100, 400".into(),
        levels: "1, 4".into(),
        system_prompt: "You are terse. «Ünïcödé» 🚀".into(),
        extra_body: r#"{"cache_prompt": false, "top_k": 40}"#.into(),
        use_tools: kind == ScenarioKind::AgentJson,
        rate_per_s: if kind == ScenarioKind::Chat { 2.5 } else { 0.0 },
        ..ScenarioConfig::default()
    }
}

fn python() -> Option<&'static str> {
    Command::new("python3")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "python3")
}

fn dir() -> PathBuf {
    std::env::temp_dir().join(format!("ttft-locust-test-{}", std::process::id()))
}

fn write(name: &str, text: &str) -> PathBuf {
    let dir = dir();
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The file's `JOBS` and `HEADERS`, read by Python's own parser (`ast.literal_eval`), no
/// Locust needed.
fn read_back(py: &str, path: &PathBuf) -> serde_json::Value {
    let script = r#"
import ast, json, sys
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
out = {}
for node in tree.body:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        name = node.targets[0].id
        if name in ("JOBS", "HEADERS", "SECRET_HEADERS", "RUN", "API", "BASE_URL", "LEVELS", "USERS", "DEFAULT_REQUESTS", "RATE_PER_S", "OPEN_LOOP", "PLAN_SPAN_MS"):
            out[name] = ast.literal_eval(node.value)
print(json.dumps(out))
"#;
    let o = Command::new(py)
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn every_dialect_and_kind_no_secret_every_body_compiles() {
    let py = python();
    if py.is_none() {
        eprintln!("python3 not found: only the Rust-side checks run");
    }
    let mut dialects: Vec<Option<Dialect>> = vec![None];
    dialects.extend(Dialect::ALL.map(Some));
    for d in dialects {
        for (kind, _) in ScenarioKind::ALL {
            let t = target(d);
            let sc = scenario(kind);
            let run = "2026-11-30T22:41:07Z-sim-fast";
            // A trace replay is planned from its trace (the scenario cannot plan it alone).
            let (file, jobs) = if kind == ScenarioKind::Trace {
                let trace = ttft_core::trace::parse(
                    ttft_fixtures::traces::read(ttft_fixtures::traces::AZURE).as_bytes(),
                    None,
                )
                .unwrap();
                let template = sc.params(&t.model, String::new(), d);
                let (phase, _) =
                    ttft_core::trace::replay_phase(&trace, &sc.trace, 1, &template, d).unwrap();
                let phases = vec![phase];
                (
                    ttft_core::locust::locustfile_for_phases(&t, &sc, run, phases.clone()).unwrap(),
                    ttft_core::locust::locust_jobs_for_phases(&t, &sc, phases),
                )
            } else {
                (
                    locustfile(&t, &sc, run).unwrap(),
                    locust_jobs(&t, &sc).unwrap(),
                )
            };
            let what = format!("{d:?} {kind:?}");
            assert!(!file.contains(KEY), "{what}: the key is in the file");
            assert!(!file.contains("SECRET-9f8e"), "{what}: part of the key");
            assert!(file.contains("TTFT_API_KEY"), "{what}: names the env var");
            assert!(file.is_ascii() || file.lines().next().is_some());
            assert!(!jobs.is_empty());
            let Some(py) = py else { continue };
            let path = write(
                &format!("{}-{}.py", d.map_or("auto", |d| d.id()), kind.id()),
                &file,
            );
            let c = Command::new(py)
                .args(["-m", "py_compile"])
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                c.status.success(),
                "{what}: does not compile: {}",
                String::from_utf8_lossy(&c.stderr)
            );
            let back = read_back(py, &path);
            let embedded = back["JOBS"].as_array().unwrap();
            assert_eq!(embedded.len(), jobs.len(), "{what}");
            for (e, j) in embedded.iter().zip(&jobs) {
                assert_eq!(e["body"].as_str(), Some(j.body.as_str()), "{what}: body");
                assert_eq!(e["path"].as_str(), Some(j.path.as_str()), "{what}: path");
                assert_eq!(e["group"].as_str(), Some(j.group.as_str()), "{what}: group");
                assert_eq!(e["warmup"].as_bool(), Some(j.warmup), "{what}");
                let body: serde_json::Value = serde_json::from_str(&j.body).unwrap();
                assert_eq!(body["cache_prompt"], false, "{what}: extra fields");
                assert_eq!(body["top_k"], 40, "{what}: extra fields");
            }
            assert_eq!(back["RUN"], run);
            assert_eq!(back["BASE_URL"], "http://127.0.0.1:8080");
            assert_eq!(
                back["API"],
                d.map_or(serde_json::Value::Null, |d| serde_json::json!(d))
            );
            let headers = back["HEADERS"].as_object().unwrap();
            assert_eq!(headers["x-team"], "latency", "{what}: plain extra header");
            for secret in ["authorization", "x-api-key", "x-custom-token"] {
                assert!(!headers.contains_key(secret), "{what}: {secret} written");
                assert!(
                    back["SECRET_HEADERS"][secret]
                        .as_str()
                        .is_some_and(|e| e.starts_with("TTFT_HEADER_")),
                    "{what}: {secret} read from the environment"
                );
            }
            if d == Some(Dialect::Anthropic) {
                assert_eq!(headers["anthropic-version"], "2023-06-01");
            }
        }
    }
    if let Ok(keep) = std::env::var("TTFT_KEEP_LOCUSTFILES") {
        eprintln!("locustfiles kept in {} ({keep})", dir().display());
    } else {
        let _ = std::fs::remove_dir_all(dir());
    }
}

#[test]
fn the_plan_maps_to_the_files_jobs() {
    let t = target(None);
    // Chat: warm-up then the measured requests, all the same body.
    let jobs = locust_jobs(&t, &scenario(ScenarioKind::Chat)).unwrap();
    assert_eq!(jobs.len(), 4);
    assert!(jobs[0].warmup && jobs[1..].iter().all(|j| !j.warmup));
    assert_eq!(jobs[0].path, "/v1/chat/completions");
    // Agent JSON with tools: the tool's schema is in the body.
    let jobs = locust_jobs(&t, &scenario(ScenarioKind::AgentJson)).unwrap();
    assert!(jobs[1].body.contains("plan_trip") && jobs[1].body.contains("\"days\""));
    let sc = ScenarioConfig {
        use_tools: false,
        ..scenario(ScenarioKind::AgentJson)
    };
    let jobs = locust_jobs(&t, &sc).unwrap();
    assert!(jobs[1].body.contains("json_schema"));
    // Multi-turn: each round carries everything said so far, with a stand-in answer of the
    // requested length; turns numbered from 1.
    let sc = scenario(ScenarioKind::MultiTurn);
    let jobs = locust_jobs(&t, &sc).unwrap();
    assert_eq!(jobs.len(), 3);
    let msgs = |j: &ttft_core::locust::LocustJob| {
        let b: serde_json::Value = serde_json::from_str(&j.body).unwrap();
        b["messages"].as_array().unwrap().clone()
    };
    assert_eq!(msgs(&jobs[0]).len(), 2); // system + user
    assert_eq!(msgs(&jobs[1]).len(), 4); // + assistant + user
    assert_eq!(msgs(&jobs[2]).len(), 6);
    assert_eq!(msgs(&jobs[1])[2]["role"], "assistant");
    let answer = msgs(&jobs[1])[2]["content"].as_str().unwrap().len();
    assert_eq!(answer, sc.max_tokens as usize * 4);
    assert_eq!(
        jobs.iter().map(|j| j.turn).collect::<Vec<_>>(),
        vec![Some(1), Some(2), Some(3)]
    );
    // Prompt sweep: the planned prompt size travels with each request.
    let jobs = locust_jobs(&t, &scenario(ScenarioKind::PromptSweep)).unwrap();
    assert_eq!(jobs[0].prompt_tokens, Some(100));
    assert_eq!(jobs.last().unwrap().prompt_tokens, Some(400));
    // Concurrency sweep: the load shape walks the levels.
    let file = locustfile(&t, &scenario(ScenarioKind::ConcurrencySweep), "r").unwrap();
    assert!(file.contains("class ConcurrencySweep(LoadTestShape)"));
    assert!(file.contains("LEVELS = [1, 4]"));
    let file = locustfile(&t, &scenario(ScenarioKind::Chat), "r").unwrap();
    assert!(!file.contains("LoadTestShape"));
    // A rate is a Poisson load shape: planned sends, as in the browser.
    assert!(file.contains("OPEN_LOOP = True"));
    assert!(
        file.contains("Open loop, Poisson"),
        "the header names the shape"
    );
    assert!(file.contains("-u 4 -r 4"));
}

#[test]
fn refuses_what_it_cannot_write_safely() {
    let sc = scenario(ScenarioKind::Chat);
    let mut t = target(None);
    t.base_url = String::new();
    assert_eq!(locustfile(&t, &sc, "r"), Err(LocustError::NoBaseUrl));
    t.base_url = format!("https://user:{KEY}@api.example.com");
    assert_eq!(locustfile(&t, &sc, "r"), Err(LocustError::SecretInUrl));
    t.base_url = format!("https://api.example.com/v1?api_key={KEY}");
    assert_eq!(locustfile(&t, &sc, "r"), Err(LocustError::SecretInUrl));
    t.base_url = "https://api.example.com".into();
    t.extra_headers = "no colon here".into();
    assert!(matches!(
        locustfile(&t, &sc, "r"),
        Err(LocustError::Header(_))
    ));
    t.extra_headers = String::new();
    t.model = String::new();
    assert!(matches!(
        locustfile(&t, &sc, "r"),
        Err(LocustError::Scenario(_))
    ));
}

/// A chat scenario sent by a load shape (steps of 2 then 6 requests/s).
fn open_loop() -> ScenarioConfig {
    ScenarioConfig {
        requests: 12,
        load: Some(ttft_core::arrivals::LoadShape::Steps {
            rates_per_s: vec![2.0, 6.0],
            step_s: 1.0,
            burstiness: 1.0,
        }),
        ..scenario(ScenarioKind::Chat)
    }
}

#[test]
fn an_open_loop_file_embeds_the_browsers_schedule_and_waits_for_it() {
    let t = target(None);
    let sc = open_loop();
    let planned: Vec<Option<f64>> = sc
        .plan(&t.model, t.dialect)
        .unwrap()
        .into_iter()
        .flat_map(|p| p.jobs)
        .map(|j| j.planned_ms)
        .collect();
    let jobs = locust_jobs(&t, &sc).unwrap();
    let theirs: Vec<Option<f64>> = jobs.iter().map(|j| j.planned_ms).collect();
    assert_eq!(theirs, planned, "the same schedule as the browser's");
    assert!(
        jobs.iter()
            .filter(|j| !j.warmup)
            .all(|j| j.planned_ms.is_some())
    );
    assert!(
        jobs.iter()
            .filter(|j| j.warmup)
            .all(|j| j.planned_ms.is_none())
    );
    let file = locustfile(&t, &sc, "r").unwrap();
    assert!(file.contains("OPEN_LOOP = True"));
    assert!(
        file.contains("RATE_PER_S = 0.0"),
        "no Poisson gaps on top of the plan"
    );
    assert!(
        file.contains("planned_ns = _wait_until(offset)"),
        "a user waits for it"
    );
    assert!(file.contains("gevent.sleep(wait)"));
    assert!(
        file.contains("\"planned_ms\": _ms(planned_ns)"),
        "lines carry it"
    );
    assert!(file.contains("Open loop, "), "the header says so");
    let Some(py) = python() else { return };
    let path = write("open-loop.py", &file);
    let back = read_back(py, &path);
    assert_eq!(back["OPEN_LOOP"], true);
    let embedded: Vec<Option<f64>> = back["JOBS"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["planned_ms"].as_f64())
        .collect();
    assert_eq!(embedded.len(), planned.len());
    for (e, p) in embedded.iter().zip(&planned) {
        match (e, p) {
            (Some(e), Some(p)) => assert!((e - p).abs() < 1e-9, "{e} vs {p}"),
            _ => assert_eq!(e, p),
        }
    }
    assert!(
        back["PLAN_SPAN_MS"].as_f64().unwrap()
            > planned.iter().flatten().fold(0.0, |m, &p| p.max(m))
    );
    // The workers' shares, computed by the file's own functions: together every measured job
    // once, warm-ups in each, offsets kept; past the plan the schedule repeats one span later.
    let script = r#"
import ast, json, sys
src = open(sys.argv[1], encoding="utf-8").read()
tree = ast.parse(src)
keep = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name in ("_mine", "_job_at", "_workers", "_options"))
        or (isinstance(n, ast.Assign) and n.targets[0].id in ("JOBS", "OPEN_LOOP", "PLAN_SPAN_MS"))]
g = {}
exec(compile(ast.Module(body=keep, type_ignores=[]), "f", "exec"), g)
class O: ttft_workers = 2
class R:
    def __init__(self, k): self.worker_index = k
class E:
    def __init__(self, k): self.parsed_options, self.runner = O(), R(k)
class Wk: mine = None
out = []
for k in (0, 1):
    g["W"] = Wk()
    e = E(k)
    n = len(g["_mine"](e))
    out.append({"n": n, "offsets": [g["_job_at"](e, i)[1] for i in range(n + 1)]})
print(json.dumps(out))
"#;
    let o = Command::new(py)
        .args(["-c", script])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let shares: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let warmups = jobs.iter().filter(|j| j.warmup).count();
    let measured: Vec<f64> = planned.iter().flatten().copied().collect();
    let mut seen = Vec::new();
    for share in shares.as_array().unwrap() {
        let n = share["n"].as_u64().unwrap() as usize;
        let offsets: Vec<Option<f64>> = share["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64())
            .collect();
        assert_eq!(
            offsets[..warmups],
            vec![None; warmups][..],
            "warm-ups first, unplanned"
        );
        seen.extend(offsets[warmups..n].iter().flatten().copied());
        let first = offsets[warmups].unwrap();
        let again = offsets[n].unwrap();
        let span = back["PLAN_SPAN_MS"].as_f64().unwrap();
        assert!(
            (again - first - span).abs() < 1e-9,
            "{again} {first} {span}"
        );
    }
    seen.sort_by(f64::total_cmp);
    assert_eq!(seen.len(), measured.len(), "each send once");
    for (s, m) in seen.iter().zip(&measured) {
        assert!(
            (s - m).abs() < 1e-9,
            "the workers share the schedule: {s} vs {m}"
        );
    }
}

#[test]
fn a_closed_loop_file_plans_nothing() {
    let t = target(None);
    let sc = ScenarioConfig {
        rate_per_s: 0.0,
        ..scenario(ScenarioKind::Chat)
    };
    let jobs = locust_jobs(&t, &sc).unwrap();
    assert!(jobs.iter().all(|j| j.planned_ms.is_none()));
    let file = locustfile(&t, &sc, "r").unwrap();
    assert!(file.contains("OPEN_LOOP = False"));
    assert!(file.contains("RATE_PER_S = 0.0"));
    assert!(!file.contains("Open loop, "));
}
