//! Section 7 of BENCHMARKS.md: the totals of the last `cargo xtask fuzz`, which writes them to
//! `bench/fuzz.json` and joins them to `bench/results.json` through `ttft-bench ROOT --fuzz`
//! (a full bench run takes them from `bench/fuzz.json` too).

use std::path::Path;

use serde_json::Value;
use ttft_core::format::thousands;

/// The executions the fuzzing target asks for, over all targets of one run.
const TARGET_EXECS: u64 = 10_000_000;

/// What each target reads, in words.
const PARSES: [(&str, &str); 6] = [
    (
        "share_link",
        "share links, every format (`ttft_share::decode`)",
    ),
    (
        "stream",
        "response bodies: SSE and NDJSON framing, dialect detection, the recorder, the request's metrics",
    ),
    (
        "import",
        "vLLM, GuideLLM, AIPerf, SGLang, genai-bench and studio files, alone and as folders",
    ),
    ("timeline_file", "timeline files of one run, merged"),
    ("report_file", "saved report files, then their llm-d export"),
    (
        "server_metrics",
        "`/metrics` scrapes (Prometheus text), the server's series",
    ),
];

/// The last fuzzing totals (`ROOT/bench/fuzz.json`), if any.
pub fn last(root: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(root.join("bench/fuzz.json")).ok()?).ok()
}

/// The section; empty when no fuzzing totals were written.
pub fn markdown(f: &Value) -> String {
    let Some(targets) = f["targets"].as_array() else {
        return String::new();
    };
    let mut s = String::from("\n## 7. Untrusted input under a coverage-guided fuzzer\n\n");
    s.push_str(&format!(
        "`cargo xtask fuzz --seconds {}` ran each target of `crates/ttft-fuzz` for {} s on one core, one after the other (AFL++ {} through cargo-afl {}, stable Rust), from seeds made of the tests' fixtures (`crates/ttft-fuzz/corpus/`). A crash is a panic (bad input must give an error value, never a panic); a hang is an input that takes over {} ms. Measured {} on {}. The test command runs every target 15 s and fails on a crash or a hang; each input that ever crashed a target is kept in `crates/ttft-fuzz/regressions/` and replayed by the crate's tests.\n\n",
        f["seconds_per_target"],
        f["seconds_per_target"],
        f["afl_version"].as_str().unwrap_or("?").trim_start_matches('+'),
        f["cargo_afl"].as_str().unwrap_or("?"),
        f["hang_ms"],
        f["date"].as_str().unwrap_or("date not recorded"),
        f["cpu"].as_str().unwrap_or("?"),
    ));
    s.push_str("| Target | What it reads | Executions | Executions/s | Corpus (found) | Edges | Crashes | Hangs | Peak memory, one input |\n|---|---|---|---|---|---|---|---|---|\n");
    for t in targets {
        let name = t["target"].as_str().unwrap_or("?");
        let parses = PARSES.iter().find(|(n, _)| *n == name).map_or("", |p| p.1);
        s.push_str(&format!(
            "| `{name}` | {parses} | {} | {:.0} | {} ({}) | {:.0} of {:.0} | {} | {} | {} |\n",
            thousands(t["execs"].as_u64().unwrap_or(0)),
            t["execs_per_sec"].as_f64().unwrap_or(f64::NAN),
            t["corpus_count"],
            t["corpus_found"],
            t["edges_found"].as_f64().unwrap_or(f64::NAN),
            t["total_edges"].as_f64().unwrap_or(f64::NAN),
            t["crashes"],
            t["hangs"],
            t["peak_rss_mb_one_input"]
                .as_f64()
                .map_or("—".into(), |m| format!("{m:.1} MB")),
        ));
    }
    let execs = f["total"]["execs"].as_u64().unwrap_or(0);
    let (crashes, hangs) = (f["total"]["crashes"].clone(), f["total"]["hangs"].clone());
    s.push_str(&format!(
        "| total | | {} | | | | {crashes} | {hangs} | |\n\n",
        thousands(execs)
    ));
    let verdict = if execs >= TARGET_EXECS && crashes == 0 && hangs == 0 {
        "met".to_owned()
    } else if execs < TARGET_EXECS {
        format!(
            "not met yet, {:.1} million executions of the 10 million (`cargo xtask fuzz --seconds {}` reaches it at these rates)",
            execs as f64 / 1e6,
            seconds_for_target(targets).map_or("?".into(), |s| s.to_string()),
        )
    } else {
        "missed: crashes or hangs to fix".to_owned()
    };
    s.push_str(&format!(
        "Target: at least 10 million executions in total over the targets, with 0 crashes and 0 hangs: {verdict}. Peak memory is the largest resident size of the target binary running one input of its final corpus alone (AFL++'s own `peak_rss_mb` stays 0 for persistent-mode targets).\n"
    ));
    s
}

/// Seconds per target that reach [`TARGET_EXECS`] in total at the measured rates.
fn seconds_for_target(targets: &[Value]) -> Option<u64> {
    let rate: f64 = targets
        .iter()
        .filter_map(|t| t["execs_per_sec"].as_f64())
        .sum();
    (rate > 0.0).then(|| (TARGET_EXECS as f64 / rate).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn totals(execs: u64, crashes: u64) -> Value {
        json!({
            "seconds_per_target": 60, "afl_version": "++4.40c", "cargo_afl": "0.18.2",
            "hang_ms": 1000, "date": "today", "cpu": "a cpu",
            "targets": [
                {"target": "stream", "execs": execs / 2, "execs_per_sec": 1000.0, "corpus_count": 10,
                 "corpus_found": 4, "edges_found": 50, "total_edges": 100, "crashes": crashes,
                 "hangs": 0, "peak_rss_mb_one_input": 3.25},
                {"target": "import", "execs": execs / 2, "execs_per_sec": 1500.0, "corpus_count": 10,
                 "corpus_found": 4, "edges_found": 50, "total_edges": 100, "crashes": 0,
                 "hangs": 0, "peak_rss_mb_one_input": null},
            ],
            "total": {"execs": execs, "crashes": crashes, "hangs": 0},
        })
    }

    #[test]
    fn the_section_says_whether_the_target_is_met_and_what_it_needs() {
        let short = markdown(&totals(3_000_000, 0));
        assert!(short.contains("| total | | 3,000,000 |"), "{short}");
        assert!(short.contains("not met yet, 3.0 million executions of the 10 million"));
        // 10 M at 2,500 executions per second over the targets: 4,000 s a target.
        assert!(short.contains("--seconds 4000"), "{short}");
        assert!(short.contains("| 3.2 MB |") && short.contains("| — |"));
        assert!(markdown(&totals(12_000_000, 0)).contains("0 hangs: met."));
        assert!(markdown(&totals(12_000_000, 1)).contains("missed: crashes"));
    }

    #[test]
    fn no_totals_no_section() {
        assert_eq!(markdown(&json!(null)), "");
    }
}
