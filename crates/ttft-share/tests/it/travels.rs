//! What a run carries travels in its link: the measuring browser and its clock, an imported
//! run's measurements, cached prompt tokens, blind-review votes, the SLO set and the
//! client-health verdict, who measured a merged run and what the merge found; a run's raw
//! captures stay out. Each module builds its run with the builders of `ttft-fixtures` that the
//! `ttft-core` test of the same name uses (`crates/ttft-core/tests/it/<module>.rs`, whose file
//! checks the report file).

mod report_file {
    use ttft_fixtures::report_file::{record, report};
    use ttft_share::ShareOptions;

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

mod schedule {
    use ttft_core::report::RequestRecord;
    use ttft_core::schedule::{report_finding, schedule_lag};
    use ttft_fixtures::report_file::{record, report};
    use ttft_share::ShareOptions;

    /// Planned sends travel in a link (flag 22): the opened run has the same schedule lag,
    /// within the link's time step, and the same finding; unplanned requests stay unplanned.
    #[test]
    fn a_link_keeps_each_request_s_planned_send() {
        let mut records: Vec<RequestRecord> = (0..40)
            .map(|k| {
                let planned = 250.0 * f64::from(k) + 0.37;
                RequestRecord {
                    index: k,
                    planned_ms: Some(planned),
                    start_ms: planned + if k % 10 == 0 { 180.3 } else { 3.1 },
                    ..record(k, 100.0, 10.0, 5)
                }
            })
            .collect();
        records.push(RequestRecord {
            index: 40,
            start_ms: 10_500.0,
            ..record(40, 100.0, 10.0, 5)
        });
        let r = report(records);
        let link = ttft_share::encode(&r, &ShareOptions::default());
        let back = ttft_share::decode(&link.text).unwrap();
        for (a, b) in r.requests.iter().zip(&back.requests) {
            match (a.planned_ms, b.planned_ms) {
                (Some(x), Some(y)) => assert!((x - y).abs() <= 0.1, "{x} vs {y}"),
                (x, y) => assert_eq!(x, y, "request {}", a.index),
            }
        }
        let (was, is) = (
            schedule_lag(&r, 0.95).unwrap(),
            schedule_lag(&back, 0.95).unwrap(),
        );
        assert_eq!(was.planned, is.planned);
        assert!((was.p99_ms.value - is.p99_ms.value).abs() <= 0.2);
        assert_eq!(
            report_finding(&r).map(|f| f.id),
            report_finding(&back).map(|f| f.id)
        );
        assert!(
            report_finding(&back).is_some(),
            "a P99 lag of 180 ms is over the bound"
        );
    }
}

mod time_slices {
    use ttft_core::report::RequestRecord;
    use ttft_core::schedule::rate_chart;
    use ttft_core::time_slices::{steady_state, time_slices};
    use ttft_fixtures::report_file::{record, report};
    use ttft_share::ShareOptions;

    /// A link's reader sees the same run over time: the windows, their requests and TTFT
    /// (within the link's time step), the steady state, and the planned vs achieved rate,
    /// all derived again from the link's requests.
    #[test]
    fn a_link_keeps_the_runs_windows_steady_state_and_rates() {
        let records: Vec<RequestRecord> = (0..240)
            .map(|k| {
                let planned = 250.0 * f64::from(k) + 0.37;
                let ttft = if k < 60 { 700.0 } else { 250.0 } + f64::from(k % 7) * 3.3;
                RequestRecord {
                    index: k,
                    planned_ms: Some(planned),
                    start_ms: planned + 1.3 + f64::from(k % 5),
                    ..record(k, ttft, 10.0 + f64::from(k % 3), 6)
                }
            })
            .collect();
        let r = report(records);
        let back =
            ttft_share::decode(&ttft_share::encode(&r, &ShareOptions::default()).text).unwrap();
        let (was, is) = (time_slices(&r, None, 0.95), time_slices(&back, None, 0.95));
        assert_eq!(was.windows.len(), is.windows.len());
        assert!(was.windows.len() >= 10);
        for (a, b) in was.windows.iter().zip(&is.windows) {
            assert_eq!((a.started, a.completed), (b.started, b.completed));
            match (a.ttft_p50, b.ttft_p50) {
                (Some(x), Some(y)) => {
                    assert!(
                        (x.value - y.value).abs() <= 0.1,
                        "window {}: {x:?} vs {y:?}",
                        a.index
                    );
                }
                (x, y) => assert_eq!(x, y, "window {}", a.index),
            }
        }
        let (s, t) = (steady_state(&was).unwrap(), steady_state(&is).unwrap());
        assert_eq!(
            (s.first_window, s.excluded_requests),
            (t.first_window, t.excluded_requests)
        );
        assert!(s.first_window > 0, "the slow first 15 s is a warm-up");
        let (a, b) = (
            rate_chart(&r, 5_000.0, 0.95),
            rate_chart(&back, 5_000.0, 0.95),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.achieved.sends, y.achieved.sends);
            assert!((x.planned_per_s - y.planned_per_s).abs() < 1e-9);
        }
    }
}

mod peer_files {
    use ttft_core::import::{Format, import};
    use ttft_core::run_stats::RunStats;
    use ttft_fixtures::peer_files::{only, read};
    use ttft_share::ShareOptions;

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
    use ttft_core::run_stats::RunStats;
    use ttft_fixtures::prompt_cache::cached_conversation;
    use ttft_share::ShareOptions;

    #[test]
    fn cached_tokens_survive_share_links() {
        let r = cached_conversation();
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
    use ttft_core::review::Preference;
    use ttft_fixtures::review::{judge, run, vote};
    use ttft_share::ShareOptions;

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
        use ttft_core::slo::SloSet;
        let mut a = run("model-a", 1000.0, &[(0, 300.0), (1, 350.0)]);
        // The default set stays out of the link; a chosen one travels.
        let back =
            ttft_share::decode(&ttft_share::encode(&a, &ShareOptions::default()).text).unwrap();
        assert_eq!((back.slo, back.client_health), (SloSet::default(), None));
        judge(&mut a);
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
    use ttft_fixtures::WALL0;
    use ttft_fixtures::timeline_file::{browser_run, merge, worker_file};

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

mod user_figures {
    use ttft_core::run_stats::RunStats;
    use ttft_fixtures::user_figures::run;
    use ttft_share::ShareOptions;

    fn near(a: Option<f64>, b: Option<f64>, tolerance: f64) -> bool {
        matches!((a, b), (Some(a), Some(b)) if (a - b).abs() <= tolerance)
    }

    /// A link carries no byte for the time to second token and the per-user rates: they are
    /// derived from its TTFT, gaps and usage on opening, each request's within the link's
    /// precision (0.1 ms here), and the run's headline with them.
    #[test]
    fn a_link_derives_the_second_token_and_the_per_user_rates() {
        let r = run("a", 40, (200.0, 40.0, 20.0), Some(800));
        let link = ttft_share::encode(&r, &ShareOptions::default());
        assert_eq!((link.requests_kept, link.gaps_kept_for), (40, 40));
        let opened = ttft_share::decode(&link.text).unwrap();
        for (a, b) in r.requests.iter().zip(&opened.requests) {
            let (a, b) = (&a.metrics, &b.metrics);
            assert!(
                near(a.ttst_ms(), b.ttst_ms(), 0.1),
                "{:?} {:?}",
                a.ttst_ms(),
                b.ttst_ms()
            );
            let rate = a.user_output_tokens_per_s().unwrap();
            assert!(near(Some(rate), b.user_output_tokens_per_s(), rate * 1e-3));
            let prefill = a.prefill_tokens_per_s().unwrap();
            assert!(near(
                Some(prefill),
                b.prefill_tokens_per_s(),
                prefill * 1e-3
            ));
        }
        let (agg, back) = (r.aggregates(), opened.aggregates());
        assert!(near(agg.ttst.map(|s| s.p50), back.ttst.map(|s| s.p50), 0.1));
        assert!(back.user_output_tokens_per_s.is_some() && back.prefill_tokens_per_s.is_some());
        // Without usage a link has no prefill figure to derive.
        let bare = run("bare", 10, (200.0, 40.0, 20.0), None);
        let opened =
            ttft_share::decode(&ttft_share::encode(&bare, &ShareOptions::default()).text).unwrap();
        assert_eq!(opened.aggregates().prefill_tokens_per_s, None);
        assert!(opened.aggregates().ttst.is_some());
    }

    /// A link that samples carries the whole run's headline without these figures (no new
    /// bytes); the opened run computes them from the requests it kept.
    #[test]
    fn a_sampled_link_computes_them_from_the_requests_it_kept() {
        let r = run("big", 600, (200.0, 40.0, 20.0), Some(800));
        let link = ttft_share::encode(
            &r,
            &ShareOptions {
                max_chars: Some(1_500),
                ..ShareOptions::default()
            },
        );
        assert!(
            link.gaps_kept_for < 600,
            "the link sampled: {} requests kept, gaps of {}",
            link.requests_kept,
            link.gaps_kept_for
        );
        let opened = ttft_share::decode(&link.text).unwrap();
        let headline = opened.shared.as_ref().and_then(|s| s.headline.as_deref());
        let headline = headline.expect("a sampled link carries the run's headline");
        assert_eq!(headline.ttst, None);
        assert!(headline.ttft.is_some(), "the other figures are carried");
        let (whole, back) = (r.aggregates(), opened.aggregates());
        // The kept requests' medians, close to the whole run's.
        for (a, b) in [
            (whole.ttst, back.ttst),
            (
                whole.user_output_tokens_per_s,
                back.user_output_tokens_per_s,
            ),
            (whole.prefill_tokens_per_s, back.prefill_tokens_per_s),
        ] {
            let (a, b) = (a.unwrap().p50, b.unwrap().p50);
            assert!((a - b).abs() <= 0.1 * a, "{a} vs {b}");
        }
    }
}
