//! Importing result files written by the real peer tools, and exporting runs as llm-d
//! Benchmark Reports v0.2.
//!
//! The files under `tests/data/peers/` were produced once by the tools themselves against the
//! reference endpoint (`ttft-server --port 0`, model `sim-fast`), with few requests so they
//! stay small; `tests/data/peers/README.md` gives each command. Every figure these tests
//! compare with is read from the same file, never typed in.

use serde_json::Value;
use ttft_core::import::{Format, ImportError, SourceSummary, SummaryFigure, import, import_files};
use ttft_core::llmd::{self, LlmdError};
use ttft_core::report::{self, Report};
use ttft_core::run_stats::RunStats;
use ttft_fixtures::peer_files::{only, read};

fn json(path: &str) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

/// The lines of a JSON-lines file (Python's `NaN` and `Infinity`, which SGLang writes, read as `null`).
fn lines(path: &str) -> Vec<Value> {
    read(path)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(&l.replace("NaN", "null").replace("Infinity", "null")).unwrap()
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn figure<'a>(s: &'a SourceSummary, group: Option<&str>, metric: &str) -> &'a SummaryFigure {
    s.figures
        .iter()
        .find(|f| f.metric == metric && (group.is_none() || f.group.as_deref() == group))
        .unwrap_or_else(|| panic!("no figure {metric} for {group:?} in {:#?}", s.figures))
}

// ----- GuideLLM 0.8.1 -------------------------------------------------------------------------

#[test]
fn guidellm_0_8_1_names_its_model_from_config_spec_backend() {
    let file = json("guidellm/benchmarks-0.8.1.json");
    assert_eq!(file["metadata"]["guidellm_version"], "0.8.1");
    let r = only(
        import(&read("guidellm/benchmarks-0.8.1.json")),
        Format::GuideLlm,
    );
    assert_eq!(r.title, "GuideLLM · sim-fast");
    assert_eq!(r.endpoint.model, file["config"]["spec"]["backend"]["model"]);
    let requests = file["benchmarks"][0]["requests"]["successful"]
        .as_array()
        .unwrap();
    assert_eq!(r.requests.len(), requests.len());
    for (rec, src) in r.requests.iter().zip(requests) {
        assert_eq!(rec.group, "c=3");
        assert_eq!(rec.level, Some(3.0));
        assert!(rec.outcome.is_ok());
        let m = &rec.metrics;
        assert_eq!(m.ttft_ms, src["time_to_first_token_ms"].as_f64());
        // GuideLLM's per-request mean gap is our TPOT; it keeps no gaps, and none are made.
        assert_eq!(m.tpot_ms, src["inter_token_latency_ms"].as_f64());
        assert!(m.itl_ms.is_empty());
        assert!(close(
            m.e2e_ms.unwrap(),
            src["request_latency"].as_f64().unwrap() * 1e3
        ));
        assert_eq!(
            rec.sent_epoch_ms,
            src["request_start_time"].as_f64().map(|s| s * 1e3)
        );
    }
    // Nothing of the run's configuration beyond named facts: no backend block, no API key field.
    let text = serde_json::to_string(&r).unwrap();
    assert!(!text.contains("api_key"));
}

#[test]
fn guidellm_median_differs_from_ours_by_its_percentile_method_and_says_so() {
    let file = json("guidellm/benchmarks-0.8.1.json");
    let stated = file["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"].clone();
    let r = only(
        import(&read("guidellm/benchmarks-0.8.1.json")),
        Format::GuideLlm,
    );
    let s = r
        .source_summary
        .as_ref()
        .expect("GuideLLM's own summary is kept");
    assert_eq!(s.tool, "GuideLLM 0.8.1");

    let median = figure(s, Some("c=3"), "TTFT median");
    assert_eq!(median.unit, "ms");
    assert_eq!(median.file_value, stated["median"].as_f64().unwrap());
    // Ours is the run's own headline figure.
    let ours = r.aggregates().ttft.unwrap().p50;
    assert_eq!(median.our_value, Some(ours));
    assert!(median.file_value > ours + 5.0, "{median:?}");

    // 12 requests: the studio's median is the mean of the 6th and 7th TTFT; GuideLLM's is the
    // 7th, because twelve shares of 1/12 summed six times fall just short of 0.5 in binary.
    let mut ttfts: Vec<f64> = r
        .requests
        .iter()
        .filter_map(|q| q.metrics.ttft_ms)
        .collect();
    ttfts.sort_by(f64::total_cmp);
    assert_eq!(ttfts.len(), 12);
    assert_eq!(median.file_value, ttfts[6]);
    assert!(close(ours, (ttfts[5] + ttfts[6]) / 2.0));
    let why = &median.explanation;
    for needle in [
        "Different percentile method",
        "same 12 successful requests",
        "7th smallest",
        "no interpolation",
        "type 7",
        "0.49999999999999994",
        "takes the upper one",
    ] {
        assert!(why.contains(needle), "{needle:?} not in {why}");
    }

    // Means are computed alike: same value, said so.
    let mean = figure(s, Some("c=3"), "TTFT mean");
    assert!(close(mean.file_value, mean.our_value.unwrap()));
    assert!(
        mean.explanation.starts_with("Same value"),
        "{}",
        mean.explanation
    );

    // GuideLLM's ITL distribution weights each request by its output tokens − 1.
    let tpot = figure(s, Some("c=3"), "TPOT median");
    assert!(
        tpot.explanation.contains("output tokens − 1"),
        "{}",
        tpot.explanation
    );
    // E2E: the file states seconds, the figure is in ms.
    let e2e = figure(s, Some("c=3"), "E2E mean");
    let stated_e2e = file["benchmarks"][0]["metrics"]["request_latency"]["successful"]["mean"]
        .as_f64()
        .unwrap();
    assert!(close(e2e.file_value, stated_e2e * 1e3));
}

#[test]
fn the_summary_field_is_optional_in_report_files() {
    let r = only(
        import(&read("guidellm/benchmarks-0.8.1.json")),
        Format::GuideLlm,
    );
    // Kept through the report file.
    let text = serde_json::to_string(&r).unwrap();
    let back = report::read_json(text.as_bytes()).unwrap();
    let (kept, had) = (
        back.source_summary.unwrap(),
        r.source_summary.clone().unwrap(),
    );
    assert_eq!(kept.tool, had.tool);
    assert_eq!(kept.figures.len(), had.figures.len());
    for (k, h) in kept.figures.iter().zip(&had.figures) {
        assert_eq!(
            (&k.group, &k.metric, &k.explanation),
            (&h.group, &h.metric, &h.explanation)
        );
        assert!(
            close(k.file_value, h.file_value) && close(k.our_value.unwrap(), h.our_value.unwrap())
        );
    }
    // A file written before the field existed reads, without one.
    let mut old: Value = serde_json::from_str(&text).unwrap();
    old.as_object_mut().unwrap().remove("source_summary");
    let back = report::read_json(old.to_string().as_bytes()).unwrap();
    assert_eq!(back.source_summary, None);
    assert_eq!(back.requests.len(), r.requests.len());
    // A run without one writes no field at all.
    assert!(
        !serde_json::to_string(&back)
            .unwrap()
            .contains("source_summary")
    );
}

// ----- AIPerf ---------------------------------------------------------------------------------

#[test]
fn aiperf_records_keep_inter_chunk_gaps_warmup_and_trace_ttfb() {
    let src = lines("aiperf-records/profile_export.jsonl");
    let r = only(
        import(&read("aiperf-records/profile_export.jsonl")),
        Format::AiperfRecords,
    );
    assert_eq!(r.requests.len(), src.len());
    assert!(r.source_summary.is_none(), "no aggregate export was given");
    for (rec, line) in r.requests.iter().zip(&src) {
        let phase = line["metadata"]["benchmark_phase"].as_str().unwrap();
        assert_eq!(rec.warmup, phase == "warmup");
        let m = &rec.metrics;
        let metric = |k: &str| line["metrics"][k]["value"].clone();
        assert_eq!(m.ttft_ms, metric("time_to_first_token").as_f64());
        assert_eq!(m.e2e_ms, metric("request_latency").as_f64());
        let gaps: Vec<f64> = metric("inter_chunk_latency")
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_f64().unwrap())
            .collect();
        assert_eq!(m.itl_ms, gaps, "per-chunk gaps kept as AIPerf stamped them");
        assert_eq!(
            m.output_tokens,
            metric("output_sequence_length").as_u64().unwrap()
        );
        assert_eq!(m.prompt_tokens, metric("input_sequence_length").as_u64());
        // `--export-http-trace`: TTFB is the trace's headers-received minus send start.
        let t = &line["trace_data"];
        let ttfb = (t["response_headers_received_ns"].as_f64().unwrap()
            - t["request_send_start_ns"].as_f64().unwrap())
            / 1e6;
        assert!(close(m.ttfb_ms.unwrap(), ttfb));
        assert_eq!(
            rec.sent_epoch_ms,
            line["metadata"]["request_start_ns"]
                .as_f64()
                .map(|n| n / 1e6)
        );
        // AIPerf 0.13 collects no per-read chunks in the trace, so none are claimed.
        assert_eq!(t["response_chunks"], serde_json::json!([]));
    }
    assert!(r.import_notes.is_empty());
    // The warm-up request is kept but not counted.
    assert_eq!(r.aggregates().count, src.len() - 1);
}

#[test]
fn aiperf_with_its_aggregate_export_keeps_aiperf_summary_beside_ours() {
    let records = read("aiperf-records/profile_export.jsonl");
    let aggregate = read("aiperf-records/profile_export_aiperf.json");
    let warmup_phase =
        json("aiperf-records/profile_export_aiperf.json")["warmup_metrics"].to_string();
    let files = [
        ("profile_export.jsonl", records.as_str()),
        ("profile_export_aiperf.json", aggregate.as_str()),
        // A phase's own aggregate and a plot are not the run's summary.
        (
            "phases/warmup/profile_export_aiperf.json",
            aggregate.as_str(),
        ),
        ("plot.png", "\u{89}PNG"),
    ];
    let out = import_files(&files).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, Format::AiperfRecords);
    let r = &out[0].1[0];
    assert_eq!(r.title, "AIPerf · sim-fast");
    assert_eq!(r.requests[1].group, "c=2");
    let s = r.source_summary.as_ref().unwrap();
    assert_eq!(s.tool, "AIPerf 0.13.0");
    assert_eq!(
        s.figures.len(),
        20,
        "TTFT, ITL, TPOT, E2E × median, mean, p90, p95, p99"
    );
    let agg = json("aiperf-records/profile_export_aiperf.json");
    let ttft = figure(s, None, "TTFT p90");
    assert_eq!(
        ttft.file_value,
        agg["time_to_first_token"]["p90"].as_f64().unwrap()
    );
    let itl = figure(s, None, "ITL median");
    assert_eq!(
        itl.file_value,
        agg["inter_chunk_latency"]["p50"].as_f64().unwrap()
    );
    // AIPerf interpolates like the studio and leaves out the warm-up: every figure agrees.
    for f in &s.figures {
        assert!(close(f.file_value, f.our_value.unwrap()), "{f:?}");
        assert!(f.explanation.starts_with("Same value"), "{f:?}");
    }
    assert!(!warmup_phase.is_empty());
}

#[test]
fn aiperf_raw_export_keeps_each_message_stamp_and_matches_aiperfs_own_figures() {
    let raw = lines("aiperf-raw/profile_export_raw.jsonl");
    let records = lines("aiperf-raw/profile_export.jsonl");
    let r = only(
        import(&read("aiperf-raw/profile_export_raw.jsonl")),
        Format::AiperfRaw,
    );
    assert_eq!(r.endpoint.model, "sim-fast");
    assert_eq!(r.requests.len(), raw.len());
    for (rec, line) in r.requests.iter().zip(&raw) {
        let id = &line["metadata"]["x_request_id"];
        let same = records
            .iter()
            .find(|x| x["metadata"]["x_request_id"] == *id)
            .unwrap();
        // From the messages' stamps: the same TTFT AIPerf computed from them.
        let ttft = same["metrics"]["time_to_first_token"]["value"]
            .as_f64()
            .unwrap();
        assert!((rec.metrics.ttft_ms.unwrap() - ttft).abs() < 1e-6);
        // One arrival per stamp carrying text; the gaps are between those stamps.
        let start = line["start_perf_ns"].as_f64().unwrap();
        let mut stamps: Vec<f64> = Vec::new();
        let mut text = String::new();
        for resp in line["responses"].as_array().unwrap() {
            for p in resp["packets"].as_array().unwrap() {
                let Ok(v) = serde_json::from_str::<Value>(p["value"].as_str().unwrap()) else {
                    continue;
                };
                let t = v["choices"][0]["delta"]["content"].as_str().unwrap_or("");
                if !t.is_empty() {
                    text.push_str(t);
                    let at = resp["perf_ns"].as_f64().unwrap();
                    if stamps.last() != Some(&at) {
                        stamps.push(at);
                    }
                }
            }
        }
        assert_eq!(rec.metrics.text, text);
        assert_eq!(rec.metrics.itl_ms.len(), stamps.len() - 1);
        for (g, w) in rec.metrics.itl_ms.iter().zip(stamps.windows(2)) {
            assert!(close(*g, (w[1] - w[0]) / 1e6));
        }
        assert!(close(
            rec.metrics.ttft_ms.unwrap(),
            (stamps[0] - start) / 1e6
        ));
        // Token count from the stream's final usage, not from chunks.
        assert_eq!(
            rec.metrics.output_tokens,
            same["metrics"]["output_sequence_length"]["value"]
                .as_u64()
                .unwrap()
        );
    }
    let aggregate = read("aiperf-raw/profile_export_aiperf.json");
    let raw_text = read("aiperf-raw/profile_export_raw.jsonl");
    let records_text = read("aiperf-raw/profile_export.jsonl");
    // Both exports given: the raw one (every stamp) is read.
    let out = import_files(&[
        ("profile_export.jsonl", records_text.as_str()),
        ("profile_export_raw.jsonl", raw_text.as_str()),
        ("profile_export_aiperf.json", aggregate.as_str()),
    ])
    .unwrap();
    assert_eq!(out[0].0, Format::AiperfRaw);
    let s = out[0].1[0].source_summary.clone().unwrap();
    for metric in [
        "TTFT median",
        "TTFT mean",
        "TTFT p99",
        "ITL median",
        "ITL p99",
    ] {
        let f = figure(&s, None, metric);
        assert!((f.file_value - f.our_value.unwrap()).abs() < 1e-6, "{f:?}");
    }
}

#[test]
fn aiperf_aggregate_alone_is_refused_with_what_to_import() {
    let err = import(&read("aiperf-records/profile_export_aiperf.json")).unwrap_err();
    assert_eq!(err, ImportError::AiperfAggregateOnly);
    assert!(err.to_string().contains("profile_export.jsonl"));
}

// ----- SGLang ---------------------------------------------------------------------------------

#[test]
fn sglang_output_file_keeps_gaps_per_run_and_its_summary() {
    let runs = lines("sglang/result.jsonl");
    assert_eq!(runs.len(), 2, "two bench_serving runs appended to one file");
    let r = only(import(&read("sglang/result.jsonl")), Format::Sglang);
    let n0 = runs[0]["ttfts"].as_array().unwrap().len();
    let n1 = runs[1]["ttfts"].as_array().unwrap().len();
    assert_eq!(r.requests.len(), n0 + n1);
    assert!(r.requests[..n0].iter().all(|q| q.group == "c=2"));
    assert!(r.requests[n0..].iter().all(|q| q.group == "c=1"));
    for (rec, i) in r.requests[..n0].iter().zip(0..) {
        let itls: Vec<f64> = runs[0]["itls"][i]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_f64().unwrap() * 1e3)
            .collect();
        assert_eq!(rec.metrics.itl_ms, itls);
        let ttft = runs[0]["ttfts"][i].as_f64().unwrap() * 1e3;
        assert_eq!(rec.metrics.ttft_ms, Some(ttft));
        // No per-request latency in the file: E2E ends at the last chunk, said in the summary.
        assert!(close(
            rec.metrics.e2e_ms.unwrap(),
            ttft + itls.iter().sum::<f64>()
        ));
        assert_eq!(
            rec.metrics.text,
            runs[0]["generated_texts"][i].as_str().unwrap()
        );
    }
    let s = r.source_summary.as_ref().unwrap();
    assert_eq!(s.tool, "SGLang bench_serving");
    for (group, run) in [("c=2", &runs[0]), ("c=1", &runs[1])] {
        // Same numpy method over the same requests: TTFT and ITL agree.
        for (metric, key) in [
            ("TTFT median", "median_ttft_ms"),
            ("TTFT p99", "p99_ttft_ms"),
            ("ITL median", "median_itl_ms"),
            ("ITL mean", "mean_itl_ms"),
        ] {
            let f = figure(s, Some(group), metric);
            assert_eq!(f.file_value, run[key].as_f64().unwrap());
            assert!(close(f.file_value, f.our_value.unwrap()), "{f:?}");
            assert!(f.explanation.starts_with("Same value"));
        }
        // SGLang's latency runs to the stream's close, after the last token: its E2E is later.
        let e2e = figure(s, Some(group), "E2E mean");
        assert_eq!(e2e.file_value, run["mean_e2e_latency_ms"].as_f64().unwrap());
        assert!(e2e.file_value > e2e.our_value.unwrap());
        assert!(e2e.explanation.contains("Different end of the request"));
    }
}

#[test]
fn sglang_summary_only_output_asks_for_output_details() {
    let err = import(&read("sglang/summary-only.jsonl")).unwrap_err();
    assert_eq!(err, ImportError::SglangNoDetails);
    assert!(err.to_string().contains("--output-details"));
}

// ----- genai-bench ----------------------------------------------------------------------------

const GENAI: [&str; 3] = [
    "experiment_metadata.json",
    "D16_10_text-to-text_num_concurrency_1_time_1s.json",
    "D16_10_text-to-text_num_concurrency_2_time_1s.json",
];

fn genai_folder() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = GENAI
        .iter()
        .map(|n| (n.to_string(), read(&format!("genai-bench/{n}"))))
        .collect();
    files.push(("traffic_scenario_TTFT.png".into(), "\u{89}PNG".into()));
    files
}

#[test]
fn genai_bench_folder_becomes_one_report_of_its_levels_without_the_api_key() {
    let files = genai_folder();
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let out = import_files(&pairs).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, Format::GenaiBench);
    let r = &out[0].1[0];
    assert_eq!(r.title, "genai-bench · sim-fast");
    let c2 = json(&format!("genai-bench/{}", GENAI[2]));
    let per_request = c2["individual_request_metrics"].as_array().unwrap();
    let level2: Vec<_> = r.requests.iter().filter(|q| q.group == "c=2").collect();
    assert_eq!(level2.len(), per_request.len());
    assert_eq!(c2["_time_unit"], "s");
    for (rec, src) in level2.iter().zip(per_request) {
        let m = &rec.metrics;
        assert!(close(
            m.ttft_ms.unwrap(),
            src["ttft"].as_f64().unwrap() * 1e3
        ));
        assert!(close(
            m.tpot_ms.unwrap(),
            src["tpot"].as_f64().unwrap() * 1e3
        ));
        assert!(close(
            m.e2e_ms.unwrap(),
            src["e2e_latency"].as_f64().unwrap() * 1e3
        ));
        // genai-bench keeps no chunk times: none are made up.
        assert!(m.itl_ms.is_empty());
        assert_eq!(m.output_tokens, src["num_output_tokens"].as_u64().unwrap());
    }
    let s = r.source_summary.as_ref().unwrap();
    assert_eq!(s.tool, "genai-bench 0.0.5");
    let f = figure(s, Some("c=2"), "TTFT median");
    assert!(close(
        f.file_value,
        c2["aggregated_metrics"]["stats"]["ttft"]["p50"]
            .as_f64()
            .unwrap()
            * 1e3
    ));
    for f in &s.figures {
        assert!(close(f.file_value, f.our_value.unwrap()), "{f:?}");
        assert!(f.explanation.contains("states it in s"));
    }
    // The metadata's command line holds the API key: it is in neither the report nor an export.
    let key = "sk-fixture-NOT-A-REAL-KEY";
    assert!(read("genai-bench/experiment_metadata.json").contains(key));
    assert!(!serde_json::to_string(r).unwrap().contains(key));
    for stage in llmd::benchmark_reports(r).unwrap() {
        assert!(!stage.json.contains(key));
    }
}

#[test]
fn genai_bench_files_alone() {
    let one = read(&format!("genai-bench/{}", GENAI[1]));
    let r = only(import(&one), Format::GenaiBench);
    assert!(r.requests.iter().all(|q| q.group == "c=1"));
    assert_eq!(r.endpoint.model, "?", "the model is in the metadata file");
    assert_eq!(
        import(&read("genai-bench/experiment_metadata.json")).unwrap_err(),
        ImportError::GenaiBenchMetadataOnly
    );
    // A damaged file of a folder is named.
    let err =
        import_files(&[(GENAI[1], one.as_str()), ("broken.json", "{\"individual")]).unwrap_err();
    assert!(matches!(err, ImportError::InFile { ref name, .. } if name == "broken.json"));
}

// ----- llm-d Benchmark Report v0.2 ------------------------------------------------------------

fn stage(report: &Report) -> Value {
    let stages = llmd::benchmark_reports(report).unwrap();
    assert_eq!(stages.len(), 1);
    serde_json::from_str(&stages[0].json).unwrap()
}

#[test]
fn llmd_report_of_a_guidellm_run_has_what_was_measured_and_no_more() {
    // These exports were checked once with llm-d-benchmark's own model
    // (`schema_v0_2.BenchmarkReportV02(**yaml.safe_load(text))`).
    let r = only(
        import(&read("guidellm/benchmarks-0.8.1.json")),
        Format::GuideLlm,
    );
    let v = stage(&r);
    assert_eq!(v["version"], "0.2");
    let uid = v["run"]["uid"].as_str().unwrap();
    assert_eq!(uid.len(), 32);
    assert!(uid.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(v["run"]["time"]["start"].as_str().unwrap().ends_with('Z'));

    let agg = &v["results"]["request_performance"]["aggregate"];
    assert_eq!(agg["requests"]["total"], 12);
    assert_eq!(agg["requests"]["failures"], 0);
    let ours = r.aggregates();
    let ttft = &agg["latency"]["time_to_first_token"];
    assert_eq!(ttft["units"], "ms");
    assert_eq!(ttft["p50"].as_f64(), Some(ours.ttft.unwrap().p50));
    assert_eq!(ttft["p99"].as_f64(), Some(ours.ttft.unwrap().p99));
    assert_eq!(agg["latency"]["time_per_output_token"]["units"], "ms/token");
    assert!(close(
        agg["latency"]["request_latency"]["mean"].as_f64().unwrap(),
        ours.e2e.unwrap().mean
    ));
    // GuideLLM kept no gaps: no inter-token latency distribution is claimed.
    assert!(agg["latency"].get("inter_token_latency").is_none());
    // Send times are known: rates over the span.
    assert_eq!(agg["throughput"]["request_rate"]["units"], "queries/s");
    assert!(
        agg["throughput"]["output_token_rate"]["mean"]
            .as_f64()
            .unwrap()
            > 0.0
    );

    let load = &v["scenario"]["load"]["standardized"];
    assert_eq!(load["tool"], "guidellm");
    assert_eq!(load["tool_version"], "0.8.1");
    assert_eq!(load["concurrency"], 3);
    assert_eq!(load["source"], "unknown");
    assert_eq!(
        load["output_seq_len"],
        serde_json::json!({ "distribution": "fixed", "value": 8 })
    );
    assert!(load["input_seq_len"]["value"].as_f64().unwrap() > 0.0);
    assert_eq!(
        v["scenario"]["load"]["native"]["config"]["model"],
        "sim-fast"
    );
    // No stack: the studio does not know the server's hardware.
    assert!(v["scenario"].get("stack").is_none());
}

#[test]
fn llmd_report_without_send_times_claims_no_rates_and_keeps_gaps() {
    let r = only(import(&read("sglang/result.jsonl")), Format::Sglang);
    let stages = llmd::benchmark_reports(&r).unwrap();
    // One report per load point, in order of load, sharing the experiment id.
    let groups: Vec<&str> = stages.iter().map(|s| s.group.as_str()).collect();
    assert_eq!(groups, ["c=1", "c=2"]);
    let v: Vec<Value> = stages
        .iter()
        .map(|s| serde_json::from_str(&s.json).unwrap())
        .collect();
    assert_eq!(v[0]["run"]["eid"], v[1]["run"]["eid"]);
    assert_ne!(v[0]["run"]["uid"], v[1]["run"]["uid"]);
    assert_eq!(v[1]["scenario"]["load"]["standardized"]["stage"], 1);
    let agg = &v[1]["results"]["request_performance"]["aggregate"];
    assert!(
        agg.get("throughput").is_none(),
        "SGLang keeps no send times"
    );
    let itl = &agg["latency"]["inter_token_latency"];
    assert_eq!(itl["units"], "ms/token");
    let s = r.source_summary.as_ref().unwrap();
    assert!(close(
        itl["p50"].as_f64().unwrap(),
        figure(s, Some("c=2"), "ITL median").file_value
    ));
}

#[test]
fn llmd_report_never_carries_a_secret() {
    let mut r = only(import(&read("sglang/result.jsonl")), Format::Sglang);
    let secret = "sk-live-SECRET-42";
    r.endpoint.base_url = format!("https://me:{secret}@api.example.com:8443/v1?api_key={secret}#x");
    r.scenario = "chat".into();
    r.settings = serde_json::json!({
        "kind": "chat",
        "concurrency": 4,
        "max_tokens": 10,
        "extra_body": format!("{{\"api_key\": \"{secret}\"}}"),
        "custom_prompt": format!("Authorization: Bearer {secret}"),
        "levels": secret,
        "headers": { "Authorization": format!("Bearer {secret}") },
    });
    for s in llmd::benchmark_reports(&r).unwrap() {
        assert!(!s.json.contains("SECRET"), "{}", s.json);
        let v: Value = serde_json::from_str(&s.json).unwrap();
        let config = &v["scenario"]["load"]["native"]["config"];
        assert_eq!(config["endpoint"], "https://api.example.com:8443/v1");
        assert_eq!(config["settings"]["max_tokens"], 10);
        // SGLang's output file does not name the model: none is written.
        assert!(config.get("model").is_none());
        assert!(config["settings"].get("extra_body").is_none());
    }
    // A run with no measured request has nothing to report.
    r.requests.iter_mut().for_each(|q| q.warmup = true);
    assert_eq!(llmd::benchmark_reports(&r), Err(LlmdError::NoRequests));
}
