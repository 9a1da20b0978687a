//! How each request of a run felt, from what its record holds: the token times and the text a
//! reader reads (its replay, or what a share link carried instead), both experience scores per
//! request and their summary over a run. The scores themselves are [`crate::experience`]'s,
//! which knows nothing of reports.

use crate::experience::{
    ExperienceConfig, ExperienceSummary, Fluidity, ReadingConfig, ReadingExperience, ReadingUnits,
    RequestExperience, reading_units, token_times_from_gaps,
};
use crate::metrics::{MAX_TOKENS_PER_ARRIVAL, TokenSource};
use crate::report::RequestRecord;

/// One token time per output token of a record (ms from t0), for [`Fluidity::of`]: answer,
/// reasoning and tool-call pieces of its replay (the primary choice), the pieces of one read
/// forming one arrival. An arrival carries as many tokens as the server's continuous usage
/// says when known (single choice), else one per piece; a non-streamed answer carries the
/// server's token count. At most [`MAX_TOKENS_PER_ARRIVAL`] per arrival. Without replay (share
/// links drop it for most requests) they are the token arrivals the link carried
/// ([`RequestRecord::token_arrivals`]) or, for a single choice, its TTFT and gaps.
pub fn token_times(record: &RequestRecord) -> Vec<f64> {
    let m = &record.metrics;
    if record.replay.is_empty() {
        return if record.token_arrivals.is_empty() {
            token_times_from_gaps(m)
        } else {
            let cap = MAX_TOKENS_PER_ARRIVAL;
            record
                .token_arrivals
                .iter()
                .flat_map(|&(at, n)| std::iter::repeat_n(at, n.min(cap) as usize))
                .collect()
        };
    }
    let mut arrivals: Vec<(f64, u64)> = Vec::new();
    for p in record.replay.iter().filter(|p| !p.text.is_empty()) {
        match arrivals.last_mut() {
            Some((at, n)) if *at == p.at_ms => *n += 1,
            _ => arrivals.push((p.at_ms, 1)),
        }
    }
    let counted = m.token_source != TokenSource::Estimate && m.output_tokens > 0;
    if arrivals.is_empty() {
        return token_times_from_gaps(m);
    } else if !m.streamed {
        let pieces: u64 = arrivals.iter().map(|a| a.1).sum();
        let n = if counted { m.output_tokens } else { pieces };
        arrivals = vec![(arrivals[0].0, n.max(1))];
    } else if m.choices.is_empty() && m.gap_tokens.len() + 1 == arrivals.len() {
        for (arrival, n) in arrivals[1..].iter_mut().zip(&m.gap_tokens) {
            if let Some(n) = n {
                arrival.1 = u64::from(*n).max(1);
            }
        }
    }
    let cap = u64::from(MAX_TOKENS_PER_ARRIVAL);
    arrivals
        .into_iter()
        .flat_map(|(at, n)| std::iter::repeat_n(at, n.min(cap) as usize))
        .collect()
}

/// The text a reader reads in a record's replay, for [`ReadingExperience::of`]: answer pieces
/// (refusals included), and reasoning when `cfg.read_reasoning`; never tool-call arguments.
pub fn reading_arrivals<'a>(record: &'a RequestRecord, cfg: &ReadingConfig) -> Vec<(f64, &'a str)> {
    record
        .replay
        .iter()
        .filter(|p| p.kind == 'a' || (cfg.read_reasoning && p.kind == 'r'))
        .map(|p| (p.at_ms, p.text.as_str()))
        .collect()
}

/// The reading units of a record: counted from its replay when it has one, else the counts a
/// share link carried for it ([`RequestRecord::reading_units`], counted with the report's
/// reading settings when the link was made).
pub fn record_reading_units(record: &RequestRecord, cfg: &ExperienceConfig) -> Vec<ReadingUnits> {
    if record.replay.is_empty() {
        record.reading_units.clone()
    } else {
        reading_units(&reading_arrivals(record, &cfg.reading))
    }
}

/// A run's experience over its measured, successful requests (warm-up and failed requests are
/// left out, as in [`crate::run_stats::RunStats::aggregates`]).
pub fn summarize<'a>(
    records: impl IntoIterator<Item = &'a RequestRecord>,
    cfg: &ExperienceConfig,
) -> ExperienceSummary {
    ExperienceSummary::of(&score(records, cfg), &cfg.deadlines)
}

/// Each measured, successful request's scores, in order ([`summarize`] summarises them; the
/// intervals of [`crate::run_intervals`] need them one by one).
pub fn score<'a>(
    records: impl IntoIterator<Item = &'a RequestRecord>,
    cfg: &ExperienceConfig,
) -> Vec<RequestExperience> {
    records
        .into_iter()
        .filter(|r| !r.warmup && r.outcome.is_ok())
        .map(|r| request_experience(r, cfg))
        .collect()
}

/// Scores a record ([`token_times`], [`reading_arrivals`]).
pub fn request_experience(record: &RequestRecord, cfg: &ExperienceConfig) -> RequestExperience {
    RequestExperience {
        fluidity: Fluidity::of(&token_times(record), &cfg.deadlines),
        reading: ReadingExperience::of_units(&record_reading_units(record, cfg), &cfg.reading),
    }
}
