//! A run over time, from its time slices ([`ttft_core::time_slices`]): TTFT and per-gap ITL per
//! window with the median TTFT's interval, throughput (output tokens and requests per second),
//! and requests in flight, each point at its window's middle; the steady state's start is
//! marked when the run has a warm-up before it.

use charming::element::{LineStyle, LineStyleType, Symbol, Trigger};
use charming::series::Line;
use ttft_core::time_slices::{SteadyState, TimeSlices, TimeWindow};
use ttft_core::uncertainty::Estimate;

use crate::ChartSpec;
use crate::sample::{MAX_POINTS, min_max_buckets};
use crate::style::{base, marks, title, value_axis, vline, xy};

/// Where a window is drawn: its middle, in seconds of the run.
fn at(w: &TimeWindow) -> f64 {
    (w.start_ms + w.end_ms) / 2e3
}

/// A line of one figure per window (windows without it are left out); above [`MAX_POINTS`]
/// windows (only when the caller chose very short ones) a sample that keeps each stretch's
/// lowest and highest.
fn per_window(name: &str, slices: &TimeSlices, pick: impl Fn(&TimeWindow) -> Option<f64>) -> Line {
    let points: Vec<(f64, f64)> = slices
        .windows
        .iter()
        .filter_map(|w| Some((at(w), pick(w)?)))
        .collect();
    Line::new().name(name).symbol(Symbol::Circle).data(
        min_max_buckets(&points, MAX_POINTS)
            .into_iter()
            .map(|(x, y)| xy(x, y))
            .collect(),
    )
}

/// A thin dashed line, for a bound or a peak.
fn dashed(line: Line) -> Line {
    line.show_symbol(false)
        .line_style(LineStyle::new().type_(LineStyleType::Dashed).width(1))
}

/// Windows whose estimate has an interval, of those with the estimate.
fn with_interval(
    slices: &TimeSlices,
    pick: impl Fn(&TimeWindow) -> Option<Estimate>,
) -> (usize, usize) {
    let est: Vec<Estimate> = slices.windows.iter().filter_map(pick).collect();
    (
        est.iter().filter(|e| e.interval.is_some()).count(),
        est.len(),
    )
}

/// The steady state's start as a mark line, when a warm-up was found before it.
fn steady_mark(line: Line, steady: Option<&SteadyState>) -> Line {
    match steady.filter(|s| s.first_window > 0) {
        Some(s) => line.mark_line(marks(
            vec![vline(
                "steady from here",
                crate::style::round(s.start_ms / 1e3),
            )],
            "#333",
        )),
        None => line,
    }
}

/// The latency chart: TTFT P50 (with its interval's bounds) and P99 on the left, per-gap ITL
/// P50 and P99 on the right.
fn latency(slices: &TimeSlices, steady: Option<&SteadyState>) -> ChartSpec {
    let level = slices.level * 100.0;
    let p50 = |w: &TimeWindow| w.ttft_p50.map(|e| e.value);
    let chart = base(Trigger::Axis)
        .title(title("Latency over the run"))
        .x_axis(value_axis("time in run (s)").scale(false))
        .y_axis(value_axis("TTFT (ms)").scale(false))
        .y_axis(value_axis("ITL (ms)").scale(false))
        .series(steady_mark(per_window("TTFT P50", slices, p50), steady))
        .series(dashed(per_window(
            &format!("TTFT P50 · {level:.0} % interval, low"),
            slices,
            |w| w.ttft_p50?.interval.map(|i| i.lo),
        )))
        .series(dashed(per_window(
            &format!("TTFT P50 · {level:.0} % interval, high"),
            slices,
            |w| w.ttft_p50?.interval.map(|i| i.hi),
        )))
        .series(per_window("TTFT P99", slices, |w| {
            w.ttft_p99.map(|e| e.value)
        }))
        .series(
            per_window("ITL P50", slices, |w| w.itl_p50.map(|e| e.value))
                .y_axis_index(1)
                .symbol(Symbol::Diamond),
        )
        .series(
            per_window("ITL P99", slices, |w| w.itl_p99.map(|e| e.value))
                .y_axis_index(1)
                .symbol(Symbol::Diamond),
        );
    let (p99_sure, p99_all) = with_interval(slices, |w| w.ttft_p99);
    let (itl_sure, itl_all) = with_interval(slices, |w| w.itl_p50);
    let needs = slices
        .windows
        .iter()
        .find_map(|w| w.ttft_p99.and_then(|e| e.needs))
        .map(|n| format!(" (a P99 needs {n} requests a window)"))
        .unwrap_or_default();
    ChartSpec {
        id: "slices-latency",
        title: "Latency over the run".into(),
        caption: format!(
            "Each point is the requests sent in one {} s window. TTFT P99 has an interval in {p99_sure} of {p99_all} windows{needs}, ITL P50 in {itl_sure} of {itl_all}.{}",
            crate::style::round(slices.window_ms / 1e3),
            steady
                .map(|s| format!(" {}", s.sentence()))
                .unwrap_or_default(),
        ),
        chart,
    }
}

/// The throughput chart: output tokens per second on the left, requests sent and completed
/// per second on the right.
fn throughput(slices: &TimeSlices, steady: Option<&SteadyState>) -> ChartSpec {
    let chart = base(Trigger::Axis)
        .title(title("Throughput over the run"))
        .x_axis(value_axis("time in run (s)").scale(false))
        .y_axis(value_axis("output tokens / s").scale(false))
        .y_axis(value_axis("requests / s").scale(false))
        .series(steady_mark(
            per_window("output tokens/s", slices, TimeWindow::output_tokens_per_s),
            steady,
        ))
        .series(per_window("sent/s", slices, TimeWindow::started_per_s).y_axis_index(1))
        .series(per_window("completed/s", slices, TimeWindow::completed_per_s).y_axis_index(1));
    ChartSpec {
        id: "slices-throughput",
        title: "Throughput over the run".into(),
        caption: "Output tokens streamed per second (each request's spread over its streaming) and requests sent and completed per second, window by window.".into(),
        chart,
    }
}

/// The load chart: requests in flight, averaged over each window and at most.
fn in_flight(slices: &TimeSlices) -> ChartSpec {
    let peak = slices
        .windows
        .iter()
        .map(|w| w.in_flight_max)
        .max()
        .unwrap_or(0);
    let chart = base(Trigger::Axis)
        .title(title("Requests in flight over the run"))
        .x_axis(value_axis("time in run (s)").scale(false))
        .y_axis(
            value_axis("requests in flight")
                .scale(false)
                .min_interval(1),
        )
        .series(per_window("in flight (time-averaged)", slices, |w| {
            Some(w.in_flight_mean)
        }))
        .series(dashed(per_window("in flight (most)", slices, |w| {
            Some(f64::from(w.in_flight_max))
        })));
    ChartSpec {
        id: "slices-in-flight",
        title: "Requests in flight over the run".into(),
        caption: format!(
            "Requests between their send and their end, averaged over each window's time, and the most at once (at most {peak})."
        ),
        chart,
    }
}

/// The run over time: latency, throughput and requests in flight per window, the steady
/// state marked when there was a warm-up before it; none for a run without windows.
pub fn time_slices_charts(slices: &TimeSlices, steady: Option<&SteadyState>) -> Vec<ChartSpec> {
    if slices.windows.is_empty() {
        return Vec::new();
    }
    vec![
        latency(slices, steady),
        throughput(slices, steady),
        in_flight(slices),
    ]
}
