//! Azure's `TIMESTAMP` cells as exact instants, without a date crate: `2023-11-16
//! 18:15:46.6805900` (the 2023 files: no zone, 7 fractional digits, .NET's 100-ns ticks) and
//! `2024-05-10 00:00:00.009930+00:00` (the 2024 files: 6 digits and an offset). Only
//! differences between rows are used, so a cell without a zone is read as UTC.

/// 100-ns ticks in a second.
const TICKS_PER_S: i64 = 10_000_000;

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian; Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The number written in ASCII digits `b` (none but digits, at least one).
fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
}

/// The zone suffix's offset east of UTC in seconds: empty, `Z`, `+HH:MM`, `+HHMM` or `+HH`.
fn offset_s(b: &[u8]) -> Option<i64> {
    let (sign, rest) = match b.split_first() {
        None => return Some(0),
        Some((b'Z' | b'z', [])) => return Some(0),
        Some((b'+', rest)) => (1, rest),
        Some((b'-', rest)) => (-1, rest),
        _ => return None,
    };
    let (h, m) = match rest {
        [h1, h2] => (digits(&[*h1, *h2])?, 0),
        [h1, h2, b':', m1, m2] | [h1, h2, m1, m2] => (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?),
        _ => return None,
    };
    (h <= 23 && m <= 59).then_some(sign * (h * 3600 + m * 60))
}

/// `YYYY-MM-DD HH:MM:SS[.fraction][zone]` (a `T` may stand for the space) as 100-ns ticks
/// since 1970-01-01 UTC; fraction digits past the seventh are dropped. `None` for anything else.
pub(super) fn ticks(text: &str) -> Option<i64> {
    let s = text.trim().as_bytes();
    if s.len() < 19
        || s[4] != b'-'
        || s[7] != b'-'
        || !matches!(s[10], b' ' | b'T' | b't')
        || s[13] != b':'
        || s[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    let (h, mi, sec) = (
        digits(&s[11..13])?,
        digits(&s[14..16])?,
        digits(&s[17..19])?,
    );
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60
    {
        return None;
    }
    let mut rest = &s[19..];
    let mut frac = 0;
    if let Some(after) = rest.strip_prefix(b".") {
        let n = after.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let kept = &after[..n.min(7)];
        frac = digits(kept)? * 10_i64.pow(7 - kept.len() as u32);
        rest = &after[n..];
    }
    let offset = offset_s(rest)?;
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset;
    Some(secs * TICKS_PER_S + frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_and_a_known_instant() {
        assert_eq!(ticks("1970-01-01 00:00:00"), Some(0));
        // 2023-11-16 18:15:46 UTC is 1,700,158,546 s after the epoch.
        assert_eq!(
            ticks("2023-11-16 18:15:46.6805900"),
            Some(1_700_158_546 * TICKS_PER_S + 6_805_900)
        );
        assert_eq!(
            ticks("2024-05-10 00:00:00.009930+00:00"),
            ticks("2024-05-10T00:00:00.00993Z")
        );
        assert_eq!(
            ticks("2024-05-10 02:00:00+02:00"),
            ticks("2024-05-10 00:00:00")
        );
        assert_eq!(
            ticks("2024-02-29 00:00:00").map(|t| t % TICKS_PER_S),
            Some(0)
        );
    }

    #[test]
    fn malformed_cells_are_none() {
        for bad in [
            "",
            "2023-11-16",
            "2023-13-01 00:00:00",
            "2023-02-29 00:00:00",
            "2023-11-16 24:00:00",
            "2023-11-16 18:15:46.",
            "2023-11-16 18:15:46.5x",
            "2023-11-16 18:15:46+25:00",
            "20231116 18:15:46.000",
            "２０２３-11-16 18:15:46",
        ] {
            assert_eq!(ticks(bad), None, "{bad}");
        }
    }
}
