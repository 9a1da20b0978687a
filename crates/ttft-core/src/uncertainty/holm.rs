//! Holm's step-down correction: with `m` tests, the smallest p-value is held to `α/m`, the
//! next to `α/(m−1)`, and so on until one fails; every test after it fails too. It keeps the
//! chance of any false rejection among the `m` at most `α`, whatever their dependence (a
//! comparison's TTFT P50 and E2E P50 are far from independent), and rejects at least what
//! Bonferroni does.

/// Holm-adjusted p-values, in the order given (`None` stays `None` and does not count).
pub fn holm_adjust(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p_values
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p.clamp(0.0, 1.0))))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let m = order.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running = 0.0f64;
    for (rank, (i, p)) in order.into_iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[i] = Some(running);
    }
    adjusted
}
