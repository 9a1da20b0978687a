//! What a run carries travels in its link: the measuring browser and its clock, an imported
//! run's measurements, cached prompt tokens, blind-review votes, the SLO set and the
//! client-health verdict, who measured a merged run and what the merge found; a run's raw
//! captures stay out. Each module builds its run as the `ttft-core` test of the same name does
//! (`crates/ttft-core/tests/<module>.rs`), whose file checks the report file.

mod report_file {
    use ttft_core::metrics::MetricsConfig;
    use ttft_core::report::{EndpointInfo, Report, RequestRecord};
    use ttft_core::timeline::RequestRecorder;
    use ttft_share::ShareOptions;

    /// A request whose first token arrives at `ttft` ms, then `n - 1` more every `itl` ms.
    fn record(index: u32, ttft: f64, itl: f64, n: usize) -> RequestRecord {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(1.0, 200, Some("text/event-stream"));
        for i in 0..n {
            let chunk = format!(
                "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{i} \"}}}}]}}\n\n"
            );
            r.on_read(ttft + itl * i as f64, chunk.as_bytes());
        }
        let end = ttft + itl * n as f64;
        r.on_read(end, b"data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
        let tl = r.finish(end);
        RequestRecord::from_timeline(index, "c=1".into(), None, &tl, &MetricsConfig::default())
    }

    fn report(records: Vec<RequestRecord>) -> Report {
        let endpoint = EndpointInfo {
            base_url: "http://127.0.0.1:8080".into(),
            model: "model-a".into(),
            dialect: None,
        };
        Report::new("a, \"quoted\" run", endpoint, "chat")
            .created_at(1.7e12)
            .with_clock_resolution(Some(0.005))
            .with_settings(serde_json::json!({"requests": records.len()}))
            .with_requests(records)
    }

    /// The browser that measured a run travels with its clock resolution in a link.
    #[test]
    fn a_link_keeps_the_measuring_browser_and_its_clock() {
        let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0";
        let r = report(vec![record(0, 100.0, 10.0, 5)]).with_user_agent(Some(firefox.into()));
        let link = ttft_share::encode(&r, &ShareOptions::default());
        let back = ttft_share::decode(&link.text).unwrap();
        assert_eq!(back.user_agent.as_deref(), Some(firefox));
        assert_eq!(back.clock_resolution_ms, Some(0.005));
    }
}

mod peer_files {
    use ttft_core::import::{Format, ImportError, import};
    use ttft_core::report::Report;
    use ttft_core::run_stats::RunStats;
    use ttft_share::ShareOptions;

    /// The peer tools' files of `ttft-core`'s tests (`crates/ttft-core/tests/data/peers/`).
    const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ttft-core/tests/data/peers");

    fn read(path: &str) -> String {
        std::fs::read_to_string(format!("{DATA}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn only(result: Result<(Format, Vec<Report>), ImportError>, format: Format) -> Report {
        let (f, mut reports) = result.unwrap();
        assert_eq!(f, format);
        assert_eq!(reports.len(), 1);
        reports.remove(0)
    }

    #[test]
    fn a_link_of_an_imported_run_reopens_with_its_measurements() {
        let r = only(
            import(&read("guidellm/benchmarks-0.8.1.json")),
            Format::GuideLlm,
        );
        // Share links (r2) carry the measurements, not the summary, and still reopen.
        let link = ttft_share::encode(&r, &ShareOptions::default());
        let opened = ttft_share::decode(&link.text).unwrap();
        assert_eq!(opened.requests.len(), r.requests.len());
        let (a, b) = (
            r.aggregates().ttft.unwrap().p50,
            opened.aggregates().ttft.unwrap().p50,
        );
        assert!((a - b).abs() <= 0.1, "{a} vs {b}");
    }
}

mod prompt_cache {
    use ttft_core::metrics::MetricsConfig;
    use ttft_core::report::{EndpointInfo, Report, RequestRecord};
    use ttft_core::run_stats::RunStats;
    use ttft_core::timeline::{RequestRecorder, RequestTimeline};
    use ttft_share::ShareOptions;

    /// A timeline of an SSE stream read as `(ms, bytes)`.
    fn timeline(reads: &[(f64, &str)]) -> RequestTimeline {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(0.5, 200, Some("text/event-stream"));
        for (at, body) in reads {
            r.on_read(*at, body.as_bytes());
        }
        r.finish(reads.last().map_or(1.0, |x| x.0) + 1.0)
    }

    /// A successful request of `round` with a first token at `ttft` ms and the given usage.
    fn round_request(
        index: u32,
        round: u32,
        ttft: f64,
        prompt: u64,
        cached: Option<u64>,
    ) -> RequestRecord {
        let details = cached
            .map(|c| format!(",\"prompt_tokens_details\":{{\"cached_tokens\":{c}}}"))
            .unwrap_or_default();
        let usage = format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":2,\"total_tokens\":{}{details}}}}}\n\ndata: [DONE]\n\n",
            prompt + 2
        );
        let tl = timeline(&[
            (
                ttft,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Sure\"}}]}\n\n",
            ),
            (
                ttft + 20.0,
                "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" thing\"},\"finish_reason\":\"stop\"}]}\n\n",
            ),
            (ttft + 21.0, &usage),
        ]);
        RequestRecord::from_timeline(
            index,
            format!("round {round}"),
            Some(f64::from(round)),
            &tl,
            &MetricsConfig::default(),
        )
    }

    fn conversation(scenario: &str, rounds: &[(f64, u64, Option<u64>)]) -> Report {
        let endpoint = EndpointInfo {
            base_url: "http://127.0.0.1:1".into(),
            model: "m".into(),
            dialect: None,
        };
        Report::new("cache", endpoint, scenario).with_requests(
            rounds
                .iter()
                .enumerate()
                .map(|(i, &(ttft, prompt, cached))| {
                    round_request(i as u32, i as u32 + 1, ttft, prompt, cached)
                })
                .collect(),
        )
    }

    #[test]
    fn cached_tokens_survive_share_links() {
        let mut r = conversation(
            "shared_prefix",
            &[
                (800.0, 1600, Some(0)),
                (60.0, 1700, Some(1600)),
                (62.0, 1800, None),
            ],
        );
        r.requests[1].metrics.cache_write_tokens = Some(100);
        // r2 links carry both numbers per request (flag bits, read as absent in older links).
        let link = ttft_share::encode(
            &r,
            &ShareOptions {
                max_chars: None,
                ..ShareOptions::default()
            },
        );
        let opened =
            ttft_share::decode(&format!("https://studio.example/#share={}", link.text)).unwrap();
        let got: Vec<(Option<u64>, Option<u64>)> = opened
            .requests
            .iter()
            .map(|q| (q.metrics.cached_tokens, q.metrics.cache_write_tokens))
            .collect();
        assert_eq!(
            got,
            [(Some(0), None), (Some(1600), Some(100)), (None, None)]
        );
        assert_eq!(
            opened.aggregates().prompt_cache,
            r.aggregates().prompt_cache
        );
    }
}

mod review {
    use ttft_core::metrics::MetricsConfig;
    use ttft_core::report::{EndpointInfo, Report, RequestRecord};
    use ttft_core::review::{BlindVote, Preference};
    use ttft_core::timeline::RequestRecorder;
    use ttft_share::ShareOptions;

    /// One streamed request as the studio records it (with replay): headers at `ttft / 2`, the
    /// first word at `ttft`, then a word every `itl` ms, `words` in all.
    fn request(index: u32, ttft: f64, itl: f64, words: usize) -> RequestRecord {
        let mut r = RequestRecorder::new(0.0, None, None);
        r.on_headers(ttft * 0.5, 200, Some("text/event-stream"));
        let mut at = ttft;
        for w in 0..words {
            let chunk = format!(
                "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" w{w}\"}}}}]}}\n\n"
            );
            r.on_read(at, chunk.as_bytes());
            at += itl;
        }
        let end = at - itl + 1.0;
        r.on_read(end, b"data: [DONE]\n\n");
        let tl = r.finish(end);
        RequestRecord::from_timeline(index, "chat".into(), None, &tl, &MetricsConfig::default())
    }

    /// A run titled `title`, made at `created`, of requests `(index, ttft)` (50 ms per word, 20 words).
    fn run(title: &str, created: f64, requests: &[(u32, f64)]) -> Report {
        Report::new(title, EndpointInfo::default(), "chat")
            .created_at(created)
            .with_requests(
                requests
                    .iter()
                    .map(|&(i, ttft)| request(i, ttft, 50.0, 20))
                    .collect(),
            )
    }

    fn vote(a: &mut Report, b: &mut Report, at: f64, for_a: Option<bool>) {
        let mk = |other: &Report, p| BlindVote {
            at_unix_ms: at,
            opponent: other.title.clone(),
            opponent_created_unix_ms: other.created_unix_ms,
            this_request: 0,
            other_request: 0,
            preferred: p,
        };
        let (pa, pb) = match for_a {
            Some(true) => (Preference::This, Preference::Other),
            Some(false) => (Preference::Other, Preference::This),
            None => (Preference::Same, Preference::Same),
        };
        let (va, vb) = (mk(b, pa), mk(a, pb));
        a.votes.push(va);
        b.votes.push(vb);
    }

    #[test]
    fn votes_travel_in_share_links() {
        let mut a = run("model-a", 1000.0, &[(0, 300.0), (1, 350.0)]);
        let mut b = run("model-b", 2000.0, &[(0, 900.0)]);
        vote(&mut a, &mut b, 1.78e12 + 0.5, Some(true));
        vote(&mut a, &mut b, 1.78e12 + 9.25, None);
        // An r2 link keeps them exactly; links without them (made before) still open.
        let link = ttft_share::encode(&a, &ShareOptions::default());
        let back = ttft_share::decode(&link.text).unwrap();
        assert_eq!(back.votes, a.votes);
        assert_eq!(back.votes[1].preferred, Preference::Same);
        let plain = run("model-a", 1000.0, &[(0, 300.0)]);
        let back =
            ttft_share::decode(&ttft_share::encode(&plain, &ShareOptions::default()).text).unwrap();
        assert!(back.votes.is_empty());
        // r1 links carry the whole report.
        let r1 = ttft_share::encode_r1(&ttft_share::compact_for_share(&a, 5));
        assert_eq!(ttft_share::decode(&r1).unwrap().votes, a.votes);
    }

    #[test]
    fn the_slo_set_and_the_client_health_verdict_travel_in_links() {
        use ttft_core::client_health::HealthSamples;
        use ttft_core::slo::SloSet;
        let mut a = run("model-a", 1000.0, &[(0, 300.0), (1, 350.0)]);
        // The default set stays out of the link; a chosen one travels.
        let back =
            ttft_share::decode(&ttft_share::encode(&a, &ShareOptions::default()).text).unwrap();
        assert_eq!((back.slo, back.client_health), (SloSet::default(), None));
        a.slo = SloSet::parse("ttft p99 <= 400ms, e2e p50 <= 9000ms").unwrap();
        let samples = HealthSamples {
            lag: vec![(100.0, 2.0), (150.0, 300.0)],
            timer_period_ms: 50.0,
            hidden: vec![],
            run_ms: 2000.0,
        };
        a.client_health = Some(ttft_core::client_health::assess(&a, &samples));
        let link =
            ttft_share::decode(&ttft_share::encode(&a, &ShareOptions::default()).text).unwrap();
        assert_eq!((&link.slo, &link.client_health), (&a.slo, &a.client_health));
        let r1 = ttft_share::decode(&ttft_share::encode_r1(&ttft_share::compact_for_share(
            &a, 5,
        )))
        .unwrap();
        assert_eq!((&r1.slo, &r1.client_health), (&a.slo, &a.client_health));
    }
}

mod timeline_file {
    use ttft_core::capture::{Capture, CaptureEnd, CapturedHead};
    use ttft_core::metrics::MetricsConfig;
    use ttft_core::report::{EndpointInfo, Report, RequestRecord};
    use ttft_core::timeline::{Outcome, Read};
    use ttft_core::timeline_file::{
        MergeOptions, RawCapture, RequestInfo, TimelineError, TimelineLine, Vantage, merge_files,
    };

    fn chunk(text: &str) -> String {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n"
        )
    }

    const DONE: &str = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":6,\"total_tokens\":18}}\n\ndata: [DONE]\n\n";

    /// A streamed answer sent at `sent` (ms, dyadic so every difference is exact): head after
    /// 2 ms, the first token after `ttft`, then one read per chunk `gap` apart (some reads split
    /// a chunk, one carries two), the end 0.5 ms after the last read.
    fn streamed(sent: f64, ttft: f64, gap: f64) -> Capture {
        let pieces = [
            chunk("Sure"),
            chunk(", here"),
            chunk(" is the") + &chunk(" answer"),
            chunk(" in"),
            chunk(" full."),
            DONE.to_owned(),
        ];
        let mut body = Vec::new();
        let mut reads = Vec::new();
        let mut at = sent + ttft;
        for (k, p) in pieces.iter().enumerate() {
            let bytes = p.as_bytes();
            if k == 1 {
                // One chunk in two reads.
                let half = bytes.len() / 2;
                reads.push(Read {
                    at,
                    bytes: half as u32,
                });
                reads.push(Read {
                    at: at + 0.25,
                    bytes: (bytes.len() - half) as u32,
                });
            } else {
                reads.push(Read {
                    at,
                    bytes: bytes.len() as u32,
                });
            }
            body.extend_from_slice(bytes);
            at += gap;
        }
        Capture {
            sent_at: sent,
            head: Some(CapturedHead {
                at: sent + 2.0,
                status: 200,
                content_type: Some("text/event-stream".into()),
            }),
            body,
            reads,
            end: CaptureEnd::Finished { at: at + 0.5 },
        }
    }

    fn http_error(sent: f64) -> Capture {
        Capture {
            sent_at: sent,
            head: Some(CapturedHead {
                at: sent + 3.0,
                status: 503,
                content_type: Some("application/json".into()),
            }),
            body: Vec::new(),
            reads: Vec::new(),
            end: CaptureEnd::HttpError {
                at: sent + 4.0,
                body: r#"{"error":{"message":"overloaded"}}"#.into(),
            },
        }
    }

    fn timed_out(sent: f64) -> Capture {
        let mut c = streamed(sent, 100.0, 20.0);
        // Cut after the first two reads.
        let keep: u32 = c.reads[..2].iter().map(|r| r.bytes).sum();
        c.reads.truncate(2);
        c.body.truncate(keep as usize);
        c.end = CaptureEnd::Failed {
            at: sent + 500.0,
            outcome: Outcome::Timeout {
                message: "no byte for 30 s".into(),
            },
        };
        c
    }

    const WALL0: f64 = 1_764_542_467_000.0;

    /// A record made as the studio's pool makes it (recorder, metrics, raw capture kept), the
    /// run starting at the first send (`run_start` 1000 ms).
    fn record(
        index: u32,
        group: &str,
        level: Option<f64>,
        warmup: bool,
        c: Capture,
    ) -> RequestRecord {
        let tl = c.record(None).expect("a whole capture");
        RequestRecord {
            warmup,
            start_ms: c.sent_at - 1000.0,
            server_request_id: Some(format!("sim-{index:06}")),
            sent_epoch_ms: Some(WALL0 + c.sent_at),
            protocol: Some("http/1.1".into()),
            browser_queue_ms: Some(0.5),
            raw: Some(RawCapture::new(c.clone(), WALL0 + c.sent_at)),
            ..RequestRecord::from_timeline(
                index,
                group.into(),
                level,
                &tl,
                &MetricsConfig::default(),
            )
        }
    }

    fn browser_run() -> Report {
        let mut requests = vec![record(
            0,
            "c=1",
            Some(1.0),
            true,
            streamed(1000.0, 90.0, 12.5),
        )];
        let mut i = 1;
        for (level, base) in [(1.0, 1200.0), (4.0, 2400.0)] {
            for k in 0..5 {
                let sent = base + 32.0 * f64::from(k);
                let c = match k {
                    3 if level == 4.0 => http_error(sent),
                    4 if level == 4.0 => timed_out(sent),
                    _ => streamed(sent, 80.0 + 16.0 * level + f64::from(k), 10.0 + level),
                };
                requests.push(record(i, &format!("c={level}"), Some(level), false, c));
                i += 1;
            }
        }
        let endpoint = EndpointInfo {
            base_url: "http://127.0.0.1:8080".into(),
            model: "sim-fast".into(),
            dialect: None,
        };
        Report::new(
            "2026-11-30T22:41:07Z-sim-fast",
            endpoint,
            "concurrency_sweep",
        )
        .created_at(WALL0 + 1000.0)
        .with_clock_resolution(Some(0.005))
        .with_requests(requests)
    }

    fn locust(worker: &str, host: &str) -> Vantage {
        Vantage {
            client: "locust".into(),
            worker: worker.into(),
            host: host.into(),
            clock_resolution_ms: Some(0.000_001),
            agent: Some("locust 2.47.0, python 3.11.2".into()),
        }
    }

    /// A worker file: requests `indexes` of `worker`, sent 64 ms apart from `sent0` on its
    /// monotonic clock, whose wall clock reads `wall_offset` + monotonic.
    fn worker_file(worker: &str, indexes: &[u32], sent0: f64, wall_offset: f64) -> String {
        let mut out = String::new();
        for &index in indexes {
            let sent = sent0 + 64.0 * f64::from(index);
            let line = TimelineLine::new(
                "run-a",
                locust(worker, worker.split(':').next().unwrap()),
                RequestInfo {
                    index,
                    api: Some(ttft_core::Dialect::OpenAiChat),
                    url: "http://127.0.0.1:8080/v1/chat/completions".into(),
                    model: "sim-fast".into(),
                    group: "c=16".into(),
                    level: Some(16.0),
                    turn: None,
                    prompt_tokens: Some(512),
                    warmup: false,
                },
                RawCapture::new(streamed(sent, 100.0, 20.0), wall_offset + sent),
            );
            out.push_str(&line.to_json());
            out.push('\n');
        }
        out
    }

    fn merge(files: &[(&str, String)]) -> Result<ttft_core::timeline_file::Merged, TimelineError> {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(n, t)| ((*n).to_owned(), t.clone()))
            .collect();
        merge_files(&files, &MergeOptions::default())
    }

    #[test]
    fn share_links_leave_the_raw_captures_out() {
        let report = browser_run();
        assert!(report.requests.iter().any(|r| r.raw.is_some()));
        let link = ttft_share::encode(&report, &Default::default());
        let opened = ttft_share::decode(&link.text).unwrap();
        assert!(opened.requests.iter().all(|r| r.raw.is_none()));
        let r1 = ttft_share::compact_for_share(&report, 100);
        assert!(r1.requests.iter().all(|r| r.raw.is_none()));
    }

    #[test]
    fn a_link_says_who_measured_the_run_and_what_the_merge_found() {
        let a = worker_file("host-a:101", &[0, 1, 2, 3], 5000.0, WALL0);
        let b = worker_file("host-b:202", &[0, 2], 5016.0, WALL0);
        let merged = merge(&[("a.jsonl", a), ("b.jsonl", b)]).unwrap().report;
        assert!(merged.vantage.is_some() && !merged.import_notes.is_empty());
        let link = ttft_share::encode(&merged, &Default::default());
        let opened = ttft_share::decode(&link.text).unwrap();
        assert_eq!(opened.vantage, merged.vantage);
        assert_eq!(opened.import_notes, merged.import_notes);
        // A run of this studio's own says nothing of the kind.
        let own = ttft_share::decode(&ttft_share::encode(&browser_run(), &Default::default()).text)
            .unwrap();
        assert!(own.vantage.is_none() && own.import_notes.is_empty());
    }
}
