//! Paired requests of an A/B run (#29): the arms of an interleaved run send the same prompts
//! back to back, so request k of arm A and request k of arm B ([`crate::report::RequestRecord::pair`]) met
//! the same drift, warm-up and neighbours; their differences are free of what hit both alike.

use std::collections::BTreeMap;

use crate::metrics::RequestMetrics;
use crate::report::Report;

/// The values `pick` reads from the requests of `a` and `b` that pair up: measured (not
/// warm-up), successful, with the same [`crate::report::RequestRecord::pair`] and a value on both sides; in
/// pair order, as `(a's, b's)`. Reports from no A/B run (no pairs) give none; a pair slot
/// held twice in one report (a damaged file) keeps its first request.
pub fn paired_values(
    a: &Report,
    b: &Report,
    pick: impl Fn(&RequestMetrics) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let slots = |r: &Report| {
        let mut m: BTreeMap<u32, f64> = BTreeMap::new();
        for req in r.measured().filter(|q| q.outcome.is_ok()) {
            if let (Some(k), Some(v)) = (req.pair, pick(&req.metrics)) {
                m.entry(k).or_insert(v);
            }
        }
        m
    };
    let bs = slots(b);
    slots(a)
        .into_iter()
        .filter_map(|(k, va)| bs.get(&k).map(|&vb| (va, vb)))
        .collect()
}

/// The paired differences `b − a` of [`paired_values`], in pair order.
pub fn paired_differences(
    a: &Report,
    b: &Report,
    pick: impl Fn(&RequestMetrics) -> Option<f64>,
) -> Vec<f64> {
    paired_values(a, b, pick)
        .into_iter()
        .map(|(x, y)| y - x)
        .collect()
}
