//! An adaptive binary range coder (the LZMA kind; [`crate::context`] codes the rest of r3 with
//! it too, through [`Encoder::bit_with`]) and the integer models the r3 share format
//! codes per-gap timings with.
//!
//! Why not DEFLATE for the gaps: a run's gaps at 0.1 ms are small integers around each
//! request's median with real jitter and no repeated strings, which is what DEFLATE is worst at
//! and what an adaptive arithmetic coder is made for. Each integer is coded as bits (zero?,
//! sign, the magnitude's bit length in unary, then its lower bits), each bit against its own
//! adaptive probability, and the probabilities of a residual are chosen by the previous
//! residual of the same request (its sign and size): a late chunk is followed by a short gap,
//! and the coder learns that. The cost per value approaches its entropy under that model.
//!
//! In r3's second layout each request also has an anchor, when its first token came in the
//! run ([`crate::columns::gap_anchors`], from the columns decoded before the gaps), so each arrival has a
//! time in the run: concurrent streams get their tokens on the same server steps, and an
//! arrival is coded against the arrival of an earlier request nearest to where the median gap
//! puts it (if one lies within a median gap), a residual mostly of 0 or ±1 step, in models of
//! its own. Since the refined models (the variant byte, [`crate::r3`]) the arrival is coded against
//! the latest known arrival of that step's cluster instead (the arrivals within a few steps of
//! the nearest: the server writes a batch's tokens in one order, so a stream coded later
//! mostly read the step later), in models of the cluster's size. The arrivals are kept in a
//! set that grows with the gaps decoded, so bounded alike.
//!
//! Decoding is bounded: reading past the end of the coded bytes more than the coder's own
//! flush length is an error, and the caller bounds how many values it asks for.

use crate::ShareError;
use crate::bytes::{Column, Cursor};

/// Bits of a probability (LZMA's 11).
const PROB_BITS: u32 = 11;
const PROB_ONE: u16 = 1 << PROB_BITS;
/// How fast a probability adapts (a shift: 4 follows a short run's statistics quickly).
const ADAPT_SHIFT: u32 = 4;
const TOP: u32 = 1 << 24;
/// Bytes the encoder's flush writes past the last coded bit; reading further is damage.
const FLUSH_BYTES: usize = 5;

/// An adaptive probability that the next bit is 0.
#[derive(Debug, Clone, Copy)]
struct Prob(u16);

impl Default for Prob {
    fn default() -> Self {
        Self(PROB_ONE / 2)
    }
}

impl Prob {
    fn update(&mut self, bit: bool) {
        if bit {
            self.0 -= self.0 >> ADAPT_SHIFT;
        } else {
            self.0 += (PROB_ONE - self.0) >> ADAPT_SHIFT;
        }
    }
}

/// Writes bits against adaptive probabilities into bytes.
#[derive(Debug)]
pub(crate) struct Encoder {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
        }
    }
}

impl Encoder {
    fn bit(&mut self, p: &mut Prob, bit: bool) {
        self.split((self.range >> PROB_BITS) * u32::from(p.0), bit);
        p.update(bit);
    }

    /// A bit that is 1 with probability `p1` / 4096 (`p1` in 1..4096, a caller's model's).
    pub(crate) fn bit_with(&mut self, p1: u32, bit: bool) {
        self.split((self.range >> 12) * (4096 - p1.clamp(1, 4095)), bit);
    }

    /// Codes `bit` with the range below `bound` standing for 0.
    fn split(&mut self, bound: u32, bit: bool) {
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
        } else {
            self.range = bound;
        }
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    /// A bit with probability one half, not adapted (the low bits of large magnitudes).
    fn direct_bit(&mut self, bit: bool) {
        self.range >>= 1;
        if bit {
            self.low += u64::from(self.range);
        }
        while self.range < TOP {
            self.range <<= 8;
            self.shift_low();
        }
    }

    fn shift_low(&mut self) {
        if self.low < 0xFF00_0000 || self.low >= 1 << 32 {
            let carry = (self.low >> 32) as u8;
            let mut byte = self.cache;
            loop {
                self.out.push(byte.wrapping_add(carry));
                byte = 0xFF;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = (self.low >> 24) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }

    /// The coded bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        for _ in 0..FLUSH_BYTES {
            self.shift_low();
        }
        self.out
    }
}

/// Reads bits back, against the same probabilities the encoder used.
#[derive(Debug)]
pub(crate) struct Decoder<'a> {
    bytes: &'a [u8],
    at: usize,
    code: u32,
    range: u32,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Result<Self, ShareError> {
        let mut d = Self {
            bytes,
            at: 0,
            code: 0,
            range: u32::MAX,
        };
        if d.next_byte()? != 0 {
            return Err(damaged("its first byte"));
        }
        for _ in 0..4 {
            d.code = (d.code << 8) | u32::from(d.next_byte()?);
        }
        Ok(d)
    }

    fn next_byte(&mut self) -> Result<u8, ShareError> {
        let b = self.bytes.get(self.at).copied();
        self.at += 1;
        match b {
            Some(b) => Ok(b),
            // The flush wrote its last bytes; anything further was never written.
            None if self.at <= self.bytes.len() + FLUSH_BYTES => Ok(0),
            None => Err(damaged("the data ends early")),
        }
    }

    fn bit(&mut self, p: &mut Prob) -> Result<bool, ShareError> {
        let bit = self.split((self.range >> PROB_BITS) * u32::from(p.0))?;
        p.update(bit);
        Ok(bit)
    }

    /// A bit coded by [`Encoder::bit_with`] with the same `p1`.
    pub(crate) fn bit_with(&mut self, p1: u32) -> Result<bool, ShareError> {
        self.split((self.range >> 12) * (4096 - p1.clamp(1, 4095)))
    }

    /// Reads a bit coded by [`Encoder::split`] with the same `bound`.
    fn split(&mut self, bound: u32) -> Result<bool, ShareError> {
        let bit = if self.code < bound {
            self.range = bound;
            false
        } else {
            self.code -= bound;
            self.range -= bound;
            true
        };
        self.normalize()?;
        Ok(bit)
    }

    fn direct_bit(&mut self) -> Result<bool, ShareError> {
        self.range >>= 1;
        let bit = self.code >= self.range;
        if bit {
            self.code -= self.range;
        }
        self.normalize()?;
        Ok(bit)
    }

    fn normalize(&mut self) -> Result<(), ShareError> {
        while self.range < TOP {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.next_byte()?);
        }
        Ok(())
    }

    /// Fails if the coded bytes went on past what the values read needed (not this encoder's).
    pub(crate) fn finish(&self) -> Result<(), ShareError> {
        if self.at <= self.bytes.len() + FLUSH_BYTES && self.at + FLUSH_BYTES >= self.bytes.len() {
            Ok(())
        } else {
            Err(damaged("bytes left over"))
        }
    }
}

fn damaged(what: &str) -> ShareError {
    ShareError::Damaged(format!("{what} in the coded gaps"))
}

/// Mantissa bits below a magnitude's leading one that get adaptive probabilities; the rest
/// are coded at one half each.
const MODELLED_BITS: u32 = 3;

/// Adaptive probabilities for signed integers of one kind in one context.
#[derive(Debug, Clone)]
pub(crate) struct IntModel {
    zero: Prob,
    sign: Prob,
    /// "The bit length is larger than i" for i = 0..64.
    length: [Prob; 64],
    /// The top mantissa bits, as a binary tree per bit length.
    mantissa: [[Prob; 1 << MODELLED_BITS]; 64],
}

impl Default for IntModel {
    fn default() -> Self {
        Self {
            zero: Prob::default(),
            sign: Prob::default(),
            length: [Prob::default(); 64],
            mantissa: [[Prob::default(); 1 << MODELLED_BITS]; 64],
        }
    }
}

impl IntModel {
    pub(crate) fn encode(&mut self, e: &mut Encoder, v: i64) {
        e.bit(&mut self.zero, v == 0);
        if v == 0 {
            return;
        }
        e.bit(&mut self.sign, v < 0);
        let magnitude = v.unsigned_abs();
        // Bit length minus one: 0 for 1, 1 for 2–3, … (the leading one is not stored).
        let length = 63 - magnitude.leading_zeros();
        for i in 0..length {
            e.bit(&mut self.length[i as usize], true);
        }
        if length < 63 {
            e.bit(&mut self.length[length as usize], false);
        }
        let mut node = 1usize;
        for k in (0..length).rev() {
            let bit = magnitude >> k & 1 == 1;
            if length - k <= MODELLED_BITS {
                e.bit(&mut self.mantissa[length as usize][node], bit);
                node = node << 1 | usize::from(bit);
            } else {
                e.direct_bit(bit);
            }
        }
    }

    pub(crate) fn decode(&mut self, d: &mut Decoder) -> Result<i64, ShareError> {
        if d.bit(&mut self.zero)? {
            return Ok(0);
        }
        let negative = d.bit(&mut self.sign)?;
        let mut length = 0u32;
        while length < 63 && d.bit(&mut self.length[length as usize])? {
            length += 1;
        }
        let mut magnitude = 1u64;
        let mut node = 1usize;
        for k in (0..length).rev() {
            let bit = if length - k <= MODELLED_BITS {
                let bit = d.bit(&mut self.mantissa[length as usize][node])?;
                node = node << 1 | usize::from(bit);
                bit
            } else {
                d.direct_bit()?
            };
            magnitude = magnitude << 1 | u64::from(bit);
        }
        let v = if negative {
            -i128::from(magnitude)
        } else {
            i128::from(magnitude)
        };
        // Magnitudes beyond i64's range only come from damaged data.
        i64::try_from(v).map_err(|_| damaged("a number out of range"))
    }
}

/// Contexts for a residual: none before it, zero, or its sign and size class (1, 2–3, 4–15,
/// 16 and more).
pub(crate) const RESIDUAL_CONTEXTS: usize = 10;

/// The context a residual is coded in, from the request's previous residual.
pub(crate) fn residual_context(previous: Option<i64>) -> usize {
    match previous {
        None => 0,
        Some(0) => 1,
        Some(v) => {
            let size = match v.unsigned_abs() {
                1 => 0,
                2..=3 => 1,
                4..=15 => 2,
                _ => 3,
            };
            2 + size * 2 + usize::from(v < 0)
        }
    }
}

/// The models of r2's gaps column: per request with kept gaps, the count (against the
/// previous request's), the median step (against the previous median) and each gap's residual
/// against the median (in the context of the residual before it).
#[derive(Default)]
struct GapModels {
    count: IntModel,
    median: IntModel,
    residual: Vec<IntModel>,
}

impl GapModels {
    fn new() -> Self {
        Self {
            residual: vec![IntModel::default(); RESIDUAL_CONTEXTS],
            ..Self::default()
        }
    }
}

/// The arrivals (in steps of the run) of the requests coded before, to predict an arrival
/// from: concurrent streams get their tokens on the same server steps, so the arrival nearest
/// to where the request's own median gap puts the next one is usually within a step of it
/// (r3's second layout; requests with an anchor, [`crate::columns::gap_anchors`]).
struct Others {
    known: std::collections::BTreeSet<i64>,
    /// Each arrival against the prediction, in the context of the one before (and, with
    /// [`Others::cluster`], of how many streams had that step).
    model: Vec<IntModel>,
    /// Predict from the latest arrival of the step's cluster (the known arrivals within
    /// [`CLUSTER_STEPS`] of the nearest) instead of the nearest itself.
    cluster: bool,
}

/// How far (in steps) arrivals of other streams count as the same server step.
const CLUSTER_STEPS: i64 = 6;
/// Cluster sizes told apart as contexts (one arrival, or more).
const CLUSTER_SIZES: usize = 2;
/// Contexts of a residual against a cluster, from the one before: none, zero, +1, more, −1,
/// less (fewer than [`residual_context`]'s: the cluster's models are twice as many).
const CLUSTER_RESIDUAL_CONTEXTS: usize = 6;

fn cluster_residual_context(previous: Option<i64>) -> usize {
    match previous {
        None => 0,
        Some(0) => 1,
        Some(v) if v > 0 => 2 + usize::from(v > 1),
        Some(v) => 4 + usize::from(v < -1),
    }
}

impl Others {
    fn new(cluster: bool) -> Self {
        let contexts = if cluster {
            CLUSTER_SIZES * CLUSTER_RESIDUAL_CONTEXTS
        } else {
            RESIDUAL_CONTEXTS
        };
        Self {
            known: std::collections::BTreeSet::new(),
            model: vec![IntModel::default(); contexts],
            cluster,
        }
    }

    /// The known arrival nearest to `predicted`, if within a median gap of it.
    fn nearest(&self, predicted: i64, median: i64) -> Option<i64> {
        let within = median.unsigned_abs();
        let after = self.known.range(predicted..).next();
        let before = self.known.range(..predicted).next_back();
        [after, before]
            .into_iter()
            .flatten()
            .map(|&k| (k.abs_diff(predicted), k))
            .filter(|(d, _)| *d <= within)
            .min()
            .map(|(_, k)| k)
    }

    /// What an arrival predicted at `predicted` is coded against, and the first of the models
    /// it is coded in: the nearest known arrival, or with [`Others::cluster`] the latest of
    /// its cluster (a stream coded later mostly got the step later), in the models of the
    /// cluster's size (the more streams had the step, the tighter it is).
    fn prediction(&self, predicted: i64, median: i64) -> Option<(i64, usize)> {
        let k = self.nearest(predicted, median)?;
        if !self.cluster {
            return Some((k, 0));
        }
        let cluster = self
            .known
            .range(k.saturating_sub(CLUSTER_STEPS)..=k.saturating_add(CLUSTER_STEPS));
        let size = cluster.clone().count().min(CLUSTER_SIZES);
        let latest = cluster.last().copied().unwrap_or(k);
        Some((latest, (size - 1) * CLUSTER_RESIDUAL_CONTEXTS))
    }

    /// The model (from the first of the prediction's) of an arrival after `previous`.
    fn model(&mut self, first: usize, previous: Option<i64>) -> &mut IntModel {
        let context = if self.cluster {
            cluster_residual_context(previous)
        } else {
            residual_context(previous)
        };
        &mut self.model[first + context]
    }
}

/// One request's gaps being coded, with the state both sides keep.
struct Request {
    /// Where the last arrival was (in steps of the run), if the request has an anchor.
    at: Option<i64>,
    median: i64,
    previous: Option<i64>,
    previous_other: Option<i64>,
    arrivals: Vec<i64>,
}

impl Request {
    fn new(anchor: Option<i64>, median: i64) -> Self {
        Self {
            at: anchor,
            median,
            previous: None,
            previous_other: None,
            arrivals: anchor.into_iter().collect(),
        }
    }

    /// Codes one residual (a step minus the median).
    fn encode(&mut self, e: &mut Encoder, m: &mut GapModels, others: &mut Others, v: i64) {
        let step = self.median.wrapping_add(v);
        let found = self.at.and_then(|at| {
            others
                .prediction(at.wrapping_add(self.median), self.median)
                .map(|(k, models)| (at, k, models))
        });
        match found {
            Some((at, k, models)) => {
                let w = at.wrapping_add(step).wrapping_sub(k);
                others.model(models, self.previous_other).encode(e, w);
                self.previous_other = Some(w);
            }
            None => m.residual[residual_context(self.previous)].encode(e, v),
        }
        self.previous = Some(v);
        self.moved(step);
    }

    /// Decodes one residual coded by [`Request::encode`].
    fn decode(
        &mut self,
        d: &mut Decoder,
        m: &mut GapModels,
        others: &mut Others,
    ) -> Result<i64, ShareError> {
        let found = self.at.and_then(|at| {
            others
                .prediction(at.wrapping_add(self.median), self.median)
                .map(|(k, models)| (at, k, models))
        });
        let v = match found {
            Some((at, k, models)) => {
                let w = others.model(models, self.previous_other).decode(d)?;
                self.previous_other = Some(w);
                k.wrapping_add(w).wrapping_sub(at).wrapping_sub(self.median)
            }
            None => m.residual[residual_context(self.previous)].decode(d)?,
        };
        self.previous = Some(v);
        self.moved(self.median.wrapping_add(v));
        Ok(v)
    }

    fn moved(&mut self, step: i64) {
        if let Some(at) = self.at.as_mut() {
            *at = at.wrapping_add(step);
            self.arrivals.push(*at);
        }
    }
}

/// Most gaps coded against the other streams' arrivals (r3's second layout): each one is kept
/// as a known arrival while coding (a set entry and a vector slot, about 40 bytes), so a
/// hostile link could otherwise make a decoder hold a billion bytes for 40 KB of code. Ten
/// thousand 100-token requests are a million gaps; a larger run codes each request on its own.
pub(crate) const MAX_ANCHORED_GAPS: usize = 1 << 21;

/// Codes r2's gaps column (see [`crate::columns::encode`]: per request with kept gaps, `u` count, then if
/// any, `i` median and `count` × `i` residual) as `u` entries + range-coded values. `None` when
/// the column does not read that way (the caller then keeps it as it is). With `anchors` (r3's
/// second layout: each entry's first arrival in the run, [`crate::columns::gap_anchors`]) an
/// arrival near another stream's is coded against it.
pub(crate) fn code_gaps(
    column: &[u8],
    anchors: Option<&[Option<i64>]>,
    cluster: bool,
) -> Option<Vec<u8>> {
    let mut r = Cursor::new(column, "gaps");
    let mut e = Encoder::default();
    let mut m = GapModels::new();
    let mut others = Others::new(cluster);
    let (mut entries, mut prev_count, mut prev_median) = (0u64, 0i64, 0i64);
    let mut anchored = 0usize;
    while r.remaining() > 0 {
        let count = i64::try_from(r.u().ok()?).ok()?;
        m.count.encode(&mut e, count - prev_count);
        prev_count = count;
        if anchors.is_some() {
            anchored = anchored.saturating_add(usize::try_from(count).ok()?);
            if anchored > MAX_ANCHORED_GAPS {
                return None;
            }
        }
        if count > 0 {
            let median = r.i().ok()?;
            m.median.encode(&mut e, median.wrapping_sub(prev_median));
            prev_median = median;
            let anchor = anchors.and_then(|a| a.get(entries as usize).copied().flatten());
            let mut request = Request::new(anchor, median);
            for _ in 0..count {
                request.encode(&mut e, &mut m, &mut others, r.i().ok()?);
            }
            others.known.extend(request.arrivals);
        }
        entries += 1;
    }
    let mut out = Column::default();
    out.u(entries);
    out.0.extend_from_slice(&e.finish());
    Some(out.0)
}

/// Rebuilds r2's gaps column from [`code_gaps`]' output, never longer than `limit` bytes.
/// `anchors` as they were given to [`code_gaps`].
pub(crate) fn gaps_column(
    coded: &[u8],
    limit: usize,
    anchors: Option<&[Option<i64>]>,
    cluster: bool,
) -> Result<Vec<u8>, ShareError> {
    let mut r = Cursor::new(coded, "coded gaps");
    let entries = r.u()?;
    let mut d = Decoder::new(&coded[coded.len() - r.remaining()..])?;
    let mut m = GapModels::new();
    let mut others = Others::new(cluster);
    let mut out = Column::default();
    let (mut prev_count, mut prev_median) = (0i64, 0i64);
    let too_large = || damaged("more gaps than a link holds");
    let mut anchored = 0usize;
    for entry in 0..entries {
        let count = prev_count
            .checked_add(m.count.decode(&mut d)?)
            .filter(|c| *c >= 0)
            .ok_or_else(|| damaged("a negative count"))?;
        prev_count = count;
        if anchors.is_some() {
            anchored = anchored.saturating_add(usize::try_from(count).unwrap_or(usize::MAX));
            if anchored > MAX_ANCHORED_GAPS {
                return Err(damaged(
                    "more gaps coded against other streams than a link holds",
                ));
            }
        }
        out.u(count as u64);
        if count > 0 {
            prev_median = prev_median.wrapping_add(m.median.decode(&mut d)?);
            out.i(prev_median);
            let anchor = anchors.and_then(|a| {
                usize::try_from(entry)
                    .ok()
                    .and_then(|i| a.get(i).copied().flatten())
            });
            let mut request = Request::new(anchor, prev_median);
            for _ in 0..count {
                let v = request.decode(&mut d, &mut m, &mut others)?;
                out.i(v);
                if out.0.len() > limit {
                    return Err(too_large());
                }
            }
            others.known.extend(request.arrivals);
        }
        if out.0.len() > limit {
            return Err(too_large());
        }
    }
    d.finish()?;
    Ok(out.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(values: &[i64]) -> Vec<u8> {
        let mut e = Encoder::default();
        let mut m = IntModel::default();
        values.iter().for_each(|v| m.encode(&mut e, *v));
        let bytes = e.finish();
        let mut d = Decoder::new(&bytes).unwrap();
        let mut m = IntModel::default();
        for v in values {
            assert_eq!(m.decode(&mut d).unwrap(), *v);
        }
        d.finish().unwrap();
        bytes
    }

    #[test]
    fn extremes_round_trip() {
        round_trip(&[
            0,
            1,
            -1,
            2,
            -2,
            7,
            8,
            1 << 40,
            i64::MAX,
            i64::MIN,
            -(1 << 62),
        ]);
        round_trip(&[]);
        round_trip(&[0; 10_000]);
    }

    #[test]
    fn skewed_values_cost_about_their_entropy() {
        // 10,000 values, 90 % zeros and the rest ±1: entropy ≈ 0.57 bits each ≈ 713 bytes.
        let values: Vec<i64> = (0..10_000u64)
            .map(|i| {
                let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
                match h % 20 {
                    0 => 1,
                    1 => -1,
                    _ => 0,
                }
            })
            .collect();
        let bytes = round_trip(&values);
        assert!(bytes.len() < 800, "{} bytes", bytes.len());
        // DEFLATE-sized byte per value would be 10,000; LEB128 alone too.
    }

    #[test]
    fn damaged_input_is_an_error_never_a_panic() {
        assert!(Decoder::new(&[1, 2, 3, 4, 5]).is_err());
        // A decoder asked for far more values than were coded runs out of bytes.
        let mut e = Encoder::default();
        let mut m = IntModel::default();
        m.encode(&mut e, 12345);
        let bytes = e.finish();
        let mut d = Decoder::new(&bytes).unwrap();
        let mut m = IntModel::default();
        // (Zeros fed past the end decode as cheap values, so it takes many to run out.)
        let mut failed = false;
        for _ in 0..100_000 {
            if m.decode(&mut d).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }

    #[test]
    fn a_gaps_column_round_trips_and_a_bad_one_is_left_alone() {
        let mut c = Column::default();
        for (count, median, residuals) in [
            (3u64, 200i64, vec![0i64, 3, -3]),
            (0, 0, vec![]),
            (4, 198, vec![1, -1, 0, 250_000]),
        ] {
            c.u(count);
            if count > 0 {
                c.i(median);
                residuals.iter().for_each(|v| c.i(*v));
            }
        }
        let anchors = [Some(1000), None, Some(1100)];
        for anchors in [None, Some(&anchors[..]), Some(&[Some(-5)][..])] {
            for cluster in [false, true] {
                let coded = code_gaps(&c.0, anchors, cluster).unwrap();
                assert_eq!(gaps_column(&coded, 1 << 20, anchors, cluster).unwrap(), c.0);
                // A limit below the column's length refuses it.
                assert!(gaps_column(&coded, 4, anchors, cluster).is_err());
                // A column cut inside a request does not read as gaps.
                assert_eq!(code_gaps(&c.0[..3], anchors, cluster), None);
            }
        }
    }

    /// A gaps column of `streams` concurrent streams fed by one server's steps (180–260 steps
    /// each), each stream reading its token a little later than the stream before it (the
    /// order the server writes a batch in) with up to two steps of jitter; and each one's
    /// first arrival.
    fn concurrent_streams(streams: i64, tokens: usize) -> (Vec<u8>, Vec<Option<i64>>) {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n) as i64
        };
        let mut steps = vec![1000i64];
        for _ in 0..tokens {
            let last = steps[steps.len() - 1];
            steps.push(last + 180 + random(80));
        }
        let mut column = Column::default();
        let mut anchors = Vec::new();
        for s in 0..streams {
            let arrivals: Vec<i64> = steps.iter().map(|t| t + s / 2 + random(3)).collect();
            let gaps: Vec<i64> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
            let mut sorted = gaps.clone();
            sorted.sort_unstable();
            let median = sorted[sorted.len() / 2];
            column.u(gaps.len() as u64);
            column.i(median);
            gaps.iter().for_each(|g| column.i(g - median));
            anchors.push(Some(arrivals[0]));
        }
        (column.0, anchors)
    }

    #[test]
    fn a_step_s_latest_arrival_predicts_the_next_stream_s_better_than_the_nearest() {
        let (column, anchors) = concurrent_streams(8, 100);
        let own = code_gaps(&column, None, false).unwrap().len();
        let nearest = code_gaps(&column, Some(&anchors), false).unwrap().len();
        let latest = code_gaps(&column, Some(&anchors), true).unwrap().len();
        assert!(
            latest < nearest && nearest < own,
            "{latest} < {nearest} < {own}"
        );
        for cluster in [false, true] {
            let coded = code_gaps(&column, Some(&anchors), cluster).unwrap();
            assert_eq!(
                gaps_column(&coded, 1 << 20, Some(&anchors), cluster).unwrap(),
                column
            );
        }
    }

    proptest! {
        #[test]
        fn any_values_round_trip(values in proptest::collection::vec(any::<i64>(), 0..300)) {
            round_trip(&values);
        }

        #[test]
        fn coded_gaps_garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = gaps_column(&bytes, 1 << 16, None, false);
            for cluster in [false, true] {
                let anchors = [Some(i64::MAX), Some(i64::MIN), None];
                let _ = gaps_column(&bytes, 1 << 16, Some(&anchors), cluster);
            }
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(mut d) = Decoder::new(&bytes) {
                let mut m = IntModel::default();
                for _ in 0..200 {
                    if m.decode(&mut d).is_err() {
                        break;
                    }
                }
                let _ = d.finish();
            }
        }
    }
}
