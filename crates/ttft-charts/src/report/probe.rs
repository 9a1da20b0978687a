//! A probe under load: the probe's TTFT (left axis) against the load client's requests in
//! flight (right axis, a step line) over the run's time, from [`ttft_core::probe`].

use charming::element::{Step, Trigger};
use charming::series::{Line, Scatter};
use ttft_core::format::ms_range;
use ttft_core::probe::{LoadBand, ProbeUnderLoad};

use crate::ChartSpec;
use crate::sample::{KEEPS_PEAKS, MAX_POINTS, min_max_buckets, sampled_note};
use crate::style::{base, ms, title, value_axis, xy};

/// The probe's TTFT over time beside the load in flight; `None` without a probe request that
/// has a TTFT.
pub(super) fn probe_under_load(p: &ProbeUnderLoad) -> Option<ChartSpec> {
    let probe: Vec<(f64, f64)> = p
        .points
        .iter()
        .filter_map(|q| Some((q.start_ms / 1e3, q.ttft_ms?)))
        .collect();
    if probe.is_empty() {
        return None;
    }
    // Drawn as steps: each level holds until the next change.
    let steps: Vec<(f64, f64)> = p
        .load_timeline
        .iter()
        .map(|&(t, n)| (t / 1e3, f64::from(n)))
        .collect();
    let drawn = min_max_buckets(&steps, MAX_POINTS);
    let note = sampled_note(drawn.len(), steps.len(), "load steps", KEEPS_PEAKS)
        .map(|n| format!(" {n}."))
        .unwrap_or_default();
    let load_name = format!("{} requests in flight", p.load_client);
    let chart = base(Trigger::Axis)
        .title(title("The probe under load"))
        .x_axis(value_axis("time in run (s)").scale(false))
        .y_axis(value_axis("probe TTFT (ms)").scale(false))
        .y_axis(value_axis("in flight").scale(false).min_interval(1))
        .series(
            Scatter::new()
                .name("probe TTFT")
                .symbol_size(8)
                .data(probe.iter().map(|&(t, v)| xy(t, v)).collect()),
        )
        .series(
            Line::new()
                .name(load_name.as_str())
                .y_axis_index(1)
                .step(Step::End)
                .show_symbol(false)
                .data(drawn.iter().map(|&(t, n)| xy(t, n)).collect()),
        );
    let bands = match (p.ttft_by_load.first(), p.ttft_by_load.last()) {
        (Some(lo), Some(hi)) => format!(
            " Probe P50 TTFT {} at ≤{} in flight, {} at ≥{}.",
            band_median(lo),
            lo.to,
            band_median(hi),
            hi.from
        ),
        _ => String::new(),
    };
    Some(ChartSpec {
        id: "probe-load",
        title: "The probe under load".into(),
        caption: format!(
            "Each dot is a probe request ({} measured in the browser) at its send time; the line is the {load_name} (at most {}, {} requests).{bands}{note}",
            p.probe_count, p.peak_in_flight, p.load_count
        ),
        chart,
    })
}

/// A band's median TTFT with its interval: `275 ms (95 % interval 225–275 ms)`, or
/// `410 ms (2 requests, too few for an interval)`.
fn band_median(b: &LoadBand) -> String {
    match b.ttft_p50_interval {
        Some(i) => format!(
            "{} ({:.0} % interval {})",
            ms(b.ttft_p50_ms),
            i.level * 100.0,
            ms_range(i.lo, i.hi)
        ),
        None => format!(
            "{} ({} request{}, too few for an interval)",
            ms(b.ttft_p50_ms),
            b.count,
            if b.count == 1 { "" } else { "s" }
        ),
    }
}
