//! A run's paint figures ([`ttft_core::report::painted`]): traces go with the requests they
//! drew by send time, a paint before its arrival is refused, warm-ups stay out of the
//! headline, and the headline's medians are those of the drawn answers.

use ttft_core::paint::{PaintSource, PaintTrace, PaintedUpdate};
use ttft_core::report::RequestRecord;
use ttft_core::report::painted::{content_chunks, paint_headline, painted_run};
use ttft_core::uncertainty::DEFAULT_LEVEL;
use ttft_fixtures::report_file::{record, report};

/// Request `index` sent at `epoch` (wall clock), first token at `ttft`, 10 tokens 20 ms apart.
fn sent(index: u32, epoch: f64, ttft: f64) -> RequestRecord {
    let mut r = record(index, ttft, 20.0, 10);
    r.sent_epoch_ms = Some(epoch);
    r
}

/// A trace that paints each of `r`'s chunks `delay` ms after it arrived, in one update each.
fn drawn(r: &RequestRecord, delay: f64, source: PaintSource) -> PaintTrace {
    PaintTrace {
        strategy: "incremental".into(),
        source,
        updates: content_chunks(r)
            .iter()
            .map(|c| PaintedUpdate {
                text_end: c.text_end,
                released_ms: c.at_ms,
                painted_ms: c.at_ms + delay,
                render_ms: 0.5,
            })
            .collect(),
        long_frames: Vec::new(),
        frames: 30,
        dropped_frames: 1,
        busy_ms: 5.0,
        span_ms: 500.0,
    }
}

#[test]
fn traces_go_with_their_requests_by_send_time_and_early_paints_are_refused() {
    let rs = vec![
        sent(0, 1_000.0, 100.0),
        sent(1, 2_000.0, 200.0),
        sent(2, 3_000.0, 300.0),
    ];
    let traces = vec![
        // Off by rounding: still request 1.
        (2_000.2, drawn(&rs[1], 12.0, PaintSource::FrameEstimate)),
        (1_000.0, drawn(&rs[0], 8.0, PaintSource::ElementTiming)),
        // No request was sent then (a cancelled run's last trace).
        (9_000.0, drawn(&rs[2], 5.0, PaintSource::FrameEstimate)),
        // Painted before it arrived: another clock.
        (3_000.0, drawn(&rs[2], -3.0, PaintSource::FrameEstimate)),
    ];
    let mut run = report(rs);
    let (painted, refused) = painted_run(&run, "incremental", &traces);
    assert_eq!(
        painted.requests.iter().map(|p| p.index).collect::<Vec<_>>(),
        vec![0, 1],
        "in run order, the unmatched and refused ones out"
    );
    assert_eq!(refused.len(), 1);
    assert!(refused[0].to_string().contains("not on one clock"));
    assert_eq!(painted.requests[0].figures.first_painted_ms, Some(108.0));
    assert_eq!(painted.requests[1].figures.first_painted_ms, Some(212.0));
    run.painted = Some(painted);
    let h = paint_headline(&run, DEFAULT_LEVEL).expect("two answers drawn");
    assert_eq!(h.drawn, 2);
    assert_eq!(h.strategy, "incremental");
    assert_eq!(
        h.source,
        PaintSource::FrameEstimate,
        "Element Timing only when every answer had it"
    );
    assert!((h.arrived.unwrap().value - 150.0).abs() < 1e-9);
    assert!((h.painted.unwrap().value - 160.0).abs() < 1e-9);
    assert!((h.first_paint_delay.unwrap().value - 10.0).abs() < 1e-9);
    let lag = h.lag.unwrap();
    assert_eq!(lag.chunks, 20, "every chunk of both answers");
    assert_eq!((h.frames, h.dropped_frames), (60, 2));
    assert!((h.busy_share.unwrap() - 0.01).abs() < 1e-9);
}

#[test]
fn warm_ups_stay_out_of_the_headline_and_no_drawing_means_no_headline() {
    let mut rs = vec![sent(0, 1_000.0, 100.0), sent(1, 2_000.0, 200.0)];
    rs[0].warmup = true;
    let traces = vec![
        (1_000.0, drawn(&rs[0], 50.0, PaintSource::ElementTiming)),
        (2_000.0, drawn(&rs[1], 4.0, PaintSource::ElementTiming)),
    ];
    let mut run = report(rs);
    assert!(paint_headline(&run, DEFAULT_LEVEL).is_none());
    let (painted, _) = painted_run(&run, "rerender-all", &traces);
    run.painted = Some(painted);
    let h = paint_headline(&run, DEFAULT_LEVEL).unwrap();
    assert_eq!(h.drawn, 1);
    assert_eq!(h.source, PaintSource::ElementTiming);
    assert!((h.first_paint_delay.unwrap().value - 4.0).abs() < 1e-9);
    // A report file keeps what was painted.
    let back: ttft_core::report::Report =
        serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    assert_eq!(back.painted, run.painted);
}

#[test]
fn a_link_keeps_the_kept_requests_paints_and_thins_long_lags_evenly() {
    let r = sent(0, 1_000.0, 100.0);
    let f = ttft_core::report::painted::request_figures(
        &r,
        &drawn(&r, 5.0, PaintSource::FrameEstimate),
    )
    .unwrap();
    let run = ttft_core::paint::PaintedRun {
        strategy: "smoothed".into(),
        requests: (0..4)
            .map(|index| ttft_core::paint::PaintedRequest {
                index,
                figures: ttft_core::paint::PaintFigures {
                    lags_ms: (0..101).map(f64::from).collect(),
                    ..f.clone()
                },
            })
            .collect(),
    };
    let (all, thinned) = run.for_link(|_| true, 1_000);
    assert_eq!(all, run, "under the budget nothing changes");
    assert!(thinned.is_none());
    let (cut, thinned) = run.for_link(|i| i % 2 == 0, 22);
    assert_eq!(
        cut.requests.iter().map(|p| p.index).collect::<Vec<_>>(),
        [0, 2]
    );
    assert_eq!(thinned, Some((22, 202)));
    let lags = &cut.requests[0].figures.lags_ms;
    assert_eq!(lags.len(), 11);
    assert_eq!((lags[0], lags[10]), (0.0, 100.0), "first and last kept");
    assert!(
        lags.windows(2).all(|w| w[1] - w[0] == 10.0),
        "evenly: {lags:?}"
    );
}

#[test]
fn the_summary_export_carries_the_paint_headline() {
    let rs = vec![sent(0, 1_000.0, 100.0), sent(1, 2_000.0, 200.0)];
    let traces = vec![
        (1_000.0, drawn(&rs[0], 6.0, PaintSource::FrameEstimate)),
        (2_000.0, drawn(&rs[1], 10.0, PaintSource::FrameEstimate)),
    ];
    let mut run = report(rs);
    let plain: serde_json::Value =
        serde_json::from_str(&ttft_core::summary_file::summary_json(&run, 0.9)).unwrap();
    assert!(plain["painted"].is_null(), "nothing drawn, nothing said");
    run.painted = Some(painted_run(&run, "per-frame", &traces).0);
    let v: serde_json::Value =
        serde_json::from_str(&ttft_core::summary_file::summary_json(&run, 0.9)).unwrap();
    let p = &v["painted"];
    assert_eq!(p["strategy"], "per-frame");
    assert_eq!(p["drawn"], 2);
    assert_eq!(p["source"], "frame_estimate");
    assert_eq!(p["first_paint_delay"]["value"], 8.0);
    assert_eq!(p["painted"]["value"], 158.0);
    assert_eq!(p["lag"]["chunks"], 20);
}

#[test]
fn streams_sent_in_one_clock_tick_each_get_their_own_trace() {
    // Two lanes started together: the same send time, answers of different lengths.
    let a = sent(0, 5_000.0, 100.0);
    let mut b = record(1, 300.0, 20.0, 4);
    b.sent_epoch_ms = Some(5_000.0);
    let traces = vec![
        (5_000.0, drawn(&b, 7.0, PaintSource::FrameEstimate)),
        (5_000.0, drawn(&a, 5.0, PaintSource::FrameEstimate)),
    ];
    let run = report(vec![a, b]);
    let (painted, refused) = painted_run(&run, "incremental", &traces);
    assert!(refused.is_empty(), "{refused:?}");
    let firsts: Vec<(u32, Option<f64>)> = painted
        .requests
        .iter()
        .map(|p| (p.index, p.figures.first_painted_ms))
        .collect();
    assert_eq!(firsts, [(0, Some(105.0)), (1, Some(307.0))]);
}

#[test]
fn answers_of_one_length_sent_together_go_by_their_first_chunk() {
    // Two lanes started together with answers of the same length: the surface's first update
    // came just after its own request's first chunk.
    let a = sent(0, 5_000.0, 100.0);
    let mut b = sent(1, 5_000.0, 140.0);
    b.sent_epoch_ms = Some(5_000.0);
    let traces = vec![
        (5_000.0, drawn(&b, 2.0, PaintSource::FrameEstimate)),
        (5_000.0, drawn(&a, 2.0, PaintSource::FrameEstimate)),
    ];
    let run = report(vec![a, b]);
    let (painted, refused) = painted_run(&run, "incremental", &traces);
    assert!(refused.is_empty(), "{refused:?}");
    let firsts: Vec<(u32, Option<f64>)> = painted
        .requests
        .iter()
        .map(|p| (p.index, p.figures.first_painted_ms))
        .collect();
    assert_eq!(firsts, [(0, Some(102.0)), (1, Some(142.0))]);
}
