//! What a full browser storage means for the user, in words: sizes as browsers report them
//! ([`bytes_text`]) and the quota panel's advice ([`quota_advice`]) when a run did not fit and
//! the user ticks saved runs to delete. Pure: the studio reads the browser's estimate and hands
//! it here.

/// What the browser reports through `navigator.storage.estimate()`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Bytes this site uses.
    pub usage: f64,
    /// Bytes this site may use.
    pub quota: f64,
}

/// `12.3 MB`, `840 KB`, `512 B` (decimal units, as browsers report quotas).
pub fn bytes_text(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} KB", b / 1e3)
    } else {
        format!("{bytes} B")
    }
}

/// What deleting the chosen runs would do for a save that did not fit.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaAdvice {
    /// Bytes the chosen runs take.
    pub freed: u64,
    /// Whether the run would then fit, when the browser gave an estimate.
    pub fits: Option<bool>,
    /// The same in words, for the panel.
    pub text: String,
}

/// The decision the quota panel shows: a run of `needed` bytes did not fit; the user ticked
/// saved runs of `chosen` sizes. Nothing is deleted here or anywhere without the user's choice.
pub fn quota_advice(needed: u64, estimate: Option<Estimate>, chosen: &[u64]) -> QuotaAdvice {
    let freed: u64 = chosen.iter().sum();
    let free = estimate.map(|e| (e.quota - e.usage).max(0.0) as u64);
    let fits = free.map(|f| f + freed >= needed);
    let text = match (chosen.is_empty(), fits) {
        (true, _) => format!(
            "This run needs {}. Tick saved runs to delete, or retry as it is (another tab may have freed space), or keep it unsaved and export it as JSON.",
            bytes_text(needed)
        ),
        (false, Some(true)) => format!(
            "Deleting {} run(s) frees {}: enough for this run ({}).",
            chosen.len(),
            bytes_text(freed),
            bytes_text(needed)
        ),
        (false, Some(false)) => format!(
            "Deleting {} run(s) frees {}, but this run needs {} and about {} is free: tick more, or export it as JSON.",
            chosen.len(),
            bytes_text(freed),
            bytes_text(needed),
            bytes_text(free.unwrap_or(0))
        ),
        (false, None) => format!(
            "Deleting {} run(s) frees {}; this run needs {} (the browser gives no estimate of what is free).",
            chosen.len(),
            bytes_text(freed),
            bytes_text(needed)
        ),
    };
    QuotaAdvice { freed, fits, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_in_decimal_units_as_browsers_report_them() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(840_000), "840 KB");
        assert_eq!(bytes_text(9_100_000), "9.1 MB");
        assert_eq!(bytes_text(12_345_678), "12.3 MB");
        assert_eq!(bytes_text(2_500_000_000), "2.50 GB");
    }

    #[test]
    fn the_quota_choice_says_whether_the_ticked_runs_make_room() {
        let full = Some(Estimate {
            usage: 990e6,
            quota: 1e9,
        });
        // Nothing ticked: nothing will be deleted, and the user is told the options.
        let none = quota_advice(50_000_000, full, &[]);
        assert_eq!((none.freed, none.fits), (0, Some(false)));
        assert!(none.text.contains("50.0 MB") && none.text.contains("export"));
        let short = quota_advice(50_000_000, full, &[20_000_000]);
        assert_eq!(short.fits, Some(false));
        assert!(short.text.contains("tick more"), "{}", short.text);
        assert!(
            short.text.contains("about 10.0 MB is free"),
            "{}",
            short.text
        );
        let enough = quota_advice(50_000_000, full, &[20_000_000, 30_000_000]);
        assert_eq!((enough.freed, enough.fits), (50_000_000, Some(true)));
        assert!(enough.text.contains("enough"), "{}", enough.text);
        let blind = quota_advice(50_000_000, None, &[1_000]);
        assert_eq!(blind.fits, None);
        assert!(blind.text.contains("no estimate"));
    }

    #[test]
    fn usage_above_the_quota_counts_as_nothing_free() {
        let over = Some(Estimate {
            usage: 2e9,
            quota: 1e9,
        });
        let advice = quota_advice(1_000, over, &[500]);
        assert_eq!(advice.fits, Some(false));
        assert!(advice.text.contains("about 0 B is free"), "{}", advice.text);
    }
}
