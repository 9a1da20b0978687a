//! A context-mixing byte coder (the lpaq kind, small): what r3 codes everything but the gaps
//! with since links of the second r3 layout, instead of DEFLATE.
//!
//! Why: the bytes around the gaps are a JSON header, LEB128 columns of small per-request
//! numbers (token counts, times, reading units per arrival) and a few replays' text. DEFLATE
//! finds repeated strings; it models neither the next byte given the last few nor the skew of
//! a column of 0s and 1s, and its block headers and Huffman tables cost hundreds of bytes on a
//! link of a few thousand. Here each bit of each byte is predicted by adaptive counters in the
//! contexts of the 0, 1, 2, 3, 6 and 16 bytes before it (hashed into tables sized to the
//! payload, at most 2^18 counters each, salted by which section of the payload it is in) and
//! by a match model (the byte that followed the last time the 20 bytes before were seen:
//! repeated text, repeated runs of reading units), the predictions mixed by weights that learn
//! which is right, and the bit coded with that probability by the range coder of
//! [`crate::entropy`]. Nothing is tuned to any server's text: the models start empty (the
//! caller may have them learn a fixed primer of its own first).
//!
//! Every step is integer arithmetic (the logistic curve is a fixed table), so a link coded
//! natively decodes the same in a browser's wasm. Decoding is bounded: the caller states the
//! bytes to produce, checked against a limit and against the coded bytes
//! ([`MAX_EXPANSION`]), and the coded bytes running out is an error.

use crate::ShareError;
use crate::entropy::{Decoder, Encoder};

/// Which models code a link's sections: the first ones, or with a secondary estimate of each
/// bit after the mixer ([`Apm`]; and the replay text's primer, [`crate::primers`]), which codes a
/// run's columns about a twentieth shorter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Models {
    First,
    Refined,
}

/// Context orders (bytes before the one coded); order 0 is the byte's own partial bits only.
const ORDERS: [u32; 6] = [0, 1, 2, 3, 6, 16];
/// A counter's adaptation: 1/(n + 1.5) for its first hits, then 1/LIMIT.
const LIMIT: u8 = 60;
/// Most bytes a coded byte may stand for (real payloads stay far below: a column of equal
/// bytes still costs a few hundredths of a bit each); a link claiming more is damaged.
pub(crate) const MAX_EXPANSION: usize = 64;
/// Most bytes a link's context-mixed sections may hold together. Each byte costs eight
/// predictions of every model and the mixer (far more than inflating it), so this bounds the
/// time a hostile link can take to decode (a second or two in a tab); a larger payload is
/// written in the first layout (DEFLATE) instead.
pub(crate) const MAX_CONTEXT_MIXED: usize = 8 * 1024 * 1024;

/// `4096 / (1 + e^(-d/256))` for `d` in −2047..2047, interpolated from 33 points (lpaq's).
fn squash(d: i32) -> i32 {
    const T: [i32; 33] = [
        1, 2, 3, 6, 10, 16, 27, 45, 73, 120, 194, 310, 488, 747, 1101, 1546, 2047, 2549, 2994,
        3348, 3607, 3785, 3901, 3975, 4022, 4050, 4068, 4079, 4085, 4089, 4092, 4093, 4094,
    ];
    if d > 2047 {
        return 4095;
    }
    if d < -2047 {
        return 1;
    }
    let w = d & 127;
    let i = ((d >> 7) + 16) as usize;
    ((T[i] * (128 - w) + T[i + 1] * w + 64) >> 7).clamp(1, 4095)
}

/// The inverse of [`squash`], as a table over 12-bit probabilities.
fn stretch_table() -> Vec<i16> {
    let mut t = vec![2047i16; 4096];
    let mut pi = 0usize;
    for x in -2047..=2047 {
        let v = squash(x) as usize;
        for slot in t.iter_mut().take(v + 1).skip(pi) {
            *slot = x as i16;
        }
        pi = pi.max(v + 1);
    }
    t
}

/// Reciprocals for the counters' adaptation: `65536 / (n + 1.5)`.
fn rates() -> [u32; LIMIT as usize + 1] {
    let mut r = [0u32; LIMIT as usize + 1];
    for (n, slot) in r.iter_mut().enumerate() {
        *slot = (65536 * 2 / (2 * n as u32 + 3)).max(1);
    }
    r
}

/// Shortest repeat the match model looks up.
const MIN_MATCH: usize = 20;
/// Match lengths told apart by the match model's counters.
const MATCH_LENGTHS: usize = 64;

/// The models: counters per order, a match model, mixer weights, the bytes before.
struct Model {
    /// Counters per order: 2^bits each.
    bits: u32,
    /// Probability that the bit is 1 (16 bits), per order and hashed context.
    p: Vec<u16>,
    /// Hits per counter, up to [`LIMIT`].
    n: Vec<u8>,
    /// Mixer weights (16.16), one set per partial byte and match state.
    w: Vec<i32>,
    stretch: Vec<i16>,
    rates: [u32; LIMIT as usize + 1],
    /// The last 8 bytes, newest lowest.
    history: u64,
    /// Per order, the hash of its context for the byte being coded.
    base: [u64; ORDERS.len()],
    /// Counter indices and stretched predictions of the bit being coded (the orders', then
    /// the match model's).
    at: [usize; ORDERS.len()],
    st: [i32; INPUTS],
    salt: u64,
    /// Where in `seen` the section began.
    section_start: usize,
    /// Every byte coded so far (the match model looks back into it).
    seen: Vec<u8>,
    /// Where the last [`MIN_MATCH`] bytes were seen before, by hash.
    last_at: Vec<u32>,
    /// The byte the current match predicts (its position in `seen`) and the match's length
    /// (0: none).
    match_at: usize,
    match_len: usize,
    /// Probability (16 bits) that the match's predicted bit is right, per length.
    match_p: [u16; MATCH_LENGTHS],
    match_n: [u8; MATCH_LENGTHS],
    /// The predicted bit of the bit being coded, if a match predicts it.
    expected: Option<bool>,
    /// With [`Models::Refined`]: secondary estimates in the contexts of the byte's bits so far,
    /// and of those and the byte before.
    apms: Option<(Apm, Apm)>,
    /// The mixer's own prediction of the bit being coded (what its weights learn from).
    mixed: u32,
}

/// A secondary estimate: a mixed probability refined per context by interpolating between
/// 33 adaptive buckets over its stretched value (lpaq's APM).
struct Apm {
    t: Vec<u16>,
    at: usize,
}

impl Apm {
    fn new(contexts: usize) -> Self {
        let row: Vec<u16> = (0..33)
            .map(|j| (squash((j - 16) * 128) * 16) as u16)
            .collect();
        Self {
            t: row.iter().copied().cycle().take(contexts * 33).collect(),
            at: 0,
        }
    }

    fn refine(&mut self, st: i32, cx: usize) -> u32 {
        let s = (st + 2048).clamp(0, 4095);
        let (lo, w) = ((s >> 7) as usize, s & 127);
        let i = cx * 33 + lo;
        self.at = i + usize::from(w >= 64);
        ((i32::from(self.t[i]) * (128 - w) + i32::from(self.t[i + 1]) * w) >> 11).clamp(1, 4095)
            as u32
    }

    fn update(&mut self, bit: bool) {
        let g = if bit { 65535 } else { 0 };
        let t = i32::from(self.t[self.at]);
        self.t[self.at] = (t + ((g - t) >> APM_RATE)) as u16;
    }
}
const APM_RATE: u32 = 6;

/// Mixer inputs: one per order, and the match model.
const INPUTS: usize = ORDERS.len() + 1;

impl Model {
    /// Models for coding `total` bytes (tables sized to them, the same on both sides).
    fn new(total: usize, models: Models) -> Self {
        let bits = (usize::BITS - total.saturating_mul(8).leading_zeros()).clamp(10, 18);
        Self {
            bits,
            p: vec![1 << 15; ORDERS.len() << bits],
            n: vec![0; ORDERS.len() << bits],
            w: vec![(1 << 16) / 3; 256 * 3 * INPUTS],
            stretch: stretch_table(),
            rates: rates(),
            history: 0,
            base: [0; ORDERS.len()],
            at: [0; ORDERS.len()],
            st: [0; INPUTS],
            salt: 0,
            section_start: 0,
            seen: Vec::with_capacity(total),
            last_at: vec![0; 1 << (bits - 2)],
            match_at: 0,
            match_len: 0,
            match_p: [1 << 15; MATCH_LENGTHS],
            match_n: [0; MATCH_LENGTHS],
            expected: None,
            apms: (models == Models::Refined).then(|| (Apm::new(256), Apm::new(1 << 16))),
            mixed: 2048,
        }
    }

    /// Starts a section: its own contexts, no bytes before.
    fn section(&mut self, k: u64) {
        self.salt = k.wrapping_add(1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        self.history = 0;
        self.section_start = self.seen.len();
        self.match_len = 0;
        self.start_byte();
    }

    fn start_byte(&mut self) {
        // Bytes of this section seen so far (longer contexts hash them from `seen`).
        let in_section = self.seen.len() - self.section_start;
        for (i, &order) in ORDERS.iter().enumerate() {
            let ctx = match order {
                0 => 0,
                1..=8 => self.history & (u64::MAX >> (64 - 8 * order)),
                _ => tail_hash(&self.seen, (order as usize).min(in_section)),
            };
            self.base[i] = (ctx ^ self.salt ^ (u64::from(order) << 56))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(29);
        }
    }

    /// The probability (12 bits) that the next bit is 1, given the byte's bits so far `c0`
    /// (1 followed by them, `done` of them).
    fn predict(&mut self, c0: u32, done: u32) -> u32 {
        let mut dot = 0i64;
        // The match: its byte's next bit, if its bits so far agree with this byte's.
        self.expected = None;
        if self.match_len > 0 {
            let byte = u32::from(self.seen[self.match_at]) | 0x100;
            if byte >> (8 - done) == c0 {
                self.expected = Some(byte >> (7 - done) & 1 == 1);
            } else {
                self.match_len = 0;
            }
        }
        let state = match self.match_len {
            0 => 0,
            1..16 => 1,
            _ => 2,
        };
        let ws = ((c0 as usize) * 3 + state) * INPUTS;
        for i in 0..ORDERS.len() {
            let h = (self.base[i] ^ u64::from(c0).wrapping_mul(0xFF51_AFD7_ED55_8CCD))
                .wrapping_mul(0xC4CE_B9FE_1A85_EC53);
            let at = (i << self.bits) | (h >> (64 - self.bits)) as usize;
            self.at[i] = at;
            let st = i32::from(self.stretch[usize::from(self.p[at] >> 4)]);
            self.st[i] = st;
            dot += i64::from(st) * i64::from(self.w[ws + i]);
        }
        let m = ORDERS.len();
        self.st[m] = match self.expected {
            Some(bit) => {
                let k = self.match_len.min(MATCH_LENGTHS - 1);
                let st = i32::from(self.stretch[usize::from(self.match_p[k] >> 4)]);
                if bit { st } else { -st }
            }
            None => 0,
        };
        dot += i64::from(self.st[m]) * i64::from(self.w[ws + m]);
        let st = (dot >> 16).clamp(-2047, 2047) as i32;
        let p = squash(st) as u32;
        self.mixed = p;
        match self.apms.as_mut() {
            Some((own, after)) => {
                let a0 = own.refine(st, c0 as usize);
                let a1 = after.refine(st, c0 as usize | (self.history as usize & 0xFF) << 8);
                ((2 * p + a0 + a1) / 4).clamp(1, 4095)
            }
            None => p,
        }
    }

    fn update(&mut self, c0: u32, bit: bool) {
        if let Some((own, after)) = self.apms.as_mut() {
            own.update(bit);
            after.update(bit);
        }
        let err = ((i32::from(bit) << 12) - self.mixed as i32) * 6;
        let state = match self.match_len {
            0 => 0,
            1..16 => 1,
            _ => 2,
        };
        let ws = ((c0 as usize) * 3 + state) * INPUTS;
        for i in 0..INPUTS {
            let w = &mut self.w[ws + i];
            *w = w.saturating_add((self.st[i] * err) >> 10);
        }
        for i in 0..ORDERS.len() {
            let at = self.at[i];
            let n = self.n[at];
            self.p[at] = adapt(self.p[at], self.rates[usize::from(n)], bit);
            if n < LIMIT {
                self.n[at] = n + 1;
            }
        }
        if let Some(expected) = self.expected {
            let k = self.match_len.min(MATCH_LENGTHS - 1);
            let n = self.match_n[k];
            self.match_p[k] = adapt(self.match_p[k], self.rates[usize::from(n)], expected == bit);
            if n < LIMIT {
                self.match_n[k] = n + 1;
            }
            if expected != bit {
                self.match_len = 0;
            }
        }
    }

    fn end_byte(&mut self, byte: u8) {
        self.history = (self.history << 8) | u64::from(byte);
        self.seen.push(byte);
        let len = self.seen.len();
        if self.match_len > 0 {
            self.match_len += 1;
            self.match_at += 1;
        }
        if len >= MIN_MATCH {
            let h = (tail_hash(&self.seen, MIN_MATCH) >> (64 - (self.bits - 2))) as usize;
            if self.match_len == 0 {
                let at = self.last_at[h] as usize;
                if at > 0 && at < len {
                    let mut n = 0;
                    while n < MATCH_LENGTHS
                        && n < at
                        && self.seen[at - 1 - n] == self.seen[len - 1 - n]
                    {
                        n += 1;
                    }
                    if n >= MIN_MATCH {
                        self.match_len = n;
                        self.match_at = at;
                    }
                }
            }
            self.last_at[h] = u32::try_from(len).unwrap_or(0);
        }
        self.start_byte();
    }
}

/// A hash of the last `k` bytes of `seen`.
fn tail_hash(seen: &[u8], k: usize) -> u64 {
    seen[seen.len() - k..]
        .iter()
        .fold(0x243F_6A88_85A3_08D3u64, |h, &b| {
            (h ^ u64::from(b))
                .wrapping_mul(0x0100_0000_01B3)
                .rotate_left(5)
        })
        ^ k as u64
}

/// A counter moved towards `bit` at `rate` (16.16).
fn adapt(p: u16, rate: u32, bit: bool) -> u16 {
    let cur = i64::from(p);
    let target = if bit { 65535 } else { 0 };
    (cur + (((target - cur) * i64::from(rate)) >> 16)).clamp(32, 65503) as u16
}

/// Teaches the models `primer` as if it had been coded (both sides do the same), then starts
/// the section again with no bytes before.
fn train(m: &mut Model, k: u64, primer: &[u8]) {
    m.section(k);
    for &byte in primer {
        let mut c0 = 1u32;
        for b in (0..8).rev() {
            let bit = byte >> b & 1 == 1;
            m.predict(c0, 7 - b);
            m.update(c0, bit);
            c0 = c0 << 1 | u32::from(bit);
        }
        m.end_byte(byte);
    }
}

/// Codes `sections` (each with its own contexts, section `k` after its models learnt
/// `primers[k]`, if any) into `e`; returns each section's cost in bits (for
/// [`crate::breakdown()`]).
pub(crate) fn encode(
    e: &mut Encoder,
    sections: &[&[u8]],
    primers: &[&[u8]],
    models: Models,
) -> Vec<f64> {
    let primed: usize = primers.iter().map(|p| p.len()).sum();
    let mut m = Model::new(
        sections.iter().map(|s| s.len()).sum::<usize>() + primed,
        models,
    );
    let mut costs = Vec::with_capacity(sections.len());
    for (k, s) in sections.iter().enumerate() {
        train(
            &mut m,
            k as u64,
            primers.get(k).copied().unwrap_or_default(),
        );
        m.section(k as u64);
        let mut cost = 0.0;
        for &byte in *s {
            let mut c0 = 1u32;
            for b in (0..8).rev() {
                let bit = byte >> b & 1 == 1;
                let p = m.predict(c0, 7 - b);
                e.bit_with(p, bit);
                cost += 12.0 - f64::from(if bit { p } else { 4096 - p }).log2();
                m.update(c0, bit);
                c0 = c0 << 1 | u32::from(bit);
            }
            m.end_byte(byte);
        }
        costs.push(cost);
    }
    costs
}

/// Decodes sections of the lengths `lengths` from `d` (with the `primers` and `models` they
/// were coded with), concatenated.
pub(crate) fn decode(
    d: &mut Decoder,
    lengths: &[usize],
    primers: &[&[u8]],
    models: Models,
) -> Result<Vec<u8>, ShareError> {
    let primed: usize = primers.iter().map(|p| p.len()).sum();
    let mut m = Model::new(lengths.iter().sum::<usize>() + primed, models);
    let mut out = Vec::with_capacity(lengths.iter().sum());
    for (k, &len) in lengths.iter().enumerate() {
        train(
            &mut m,
            k as u64,
            primers.get(k).copied().unwrap_or_default(),
        );
        let from = m.seen.len();
        m.section(k as u64);
        for _ in 0..len {
            let mut c0 = 1u32;
            for done in 0..8 {
                let p = m.predict(c0, done);
                let bit = d.bit_with(p)?;
                m.update(c0, bit);
                c0 = c0 << 1 | u32::from(bit);
            }
            m.end_byte((c0 & 0xFF) as u8);
        }
        out.extend_from_slice(&m.seen[from..]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The coded length of `sections` with the refined models (and checks both kinds).
    fn round_trip(sections: &[&[u8]]) -> usize {
        round_trip_with(sections, Models::First);
        round_trip_with(sections, Models::Refined)
    }

    fn round_trip_with(sections: &[&[u8]], models: Models) -> usize {
        let primers: [&[u8]; 2] = [b"", b"the decode step reads"];
        let mut e = Encoder::default();
        encode(&mut e, sections, &primers, models);
        let bytes = e.finish();
        let mut d = Decoder::new(&bytes).unwrap();
        let lengths: Vec<usize> = sections.iter().map(|s| s.len()).collect();
        let out = decode(&mut d, &lengths, &primers, models).unwrap();
        d.finish().unwrap();
        assert_eq!(out, sections.concat());
        bytes.len()
    }

    #[test]
    fn the_refined_models_code_a_noisy_column_shorter() {
        // LEB128 times with jitter (as a run's columns are): what the secondary estimate is for.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut column = Vec::new();
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = 150 + (x % 40) + (x >> 20) % 40;
            column.push((v & 0x7F) as u8 | 0x80);
            column.push((v >> 7) as u8);
        }
        let first = round_trip_with(&[&column], Models::First);
        let refined = round_trip_with(&[&column], Models::Refined);
        assert!(refined < first, "refined {refined} bytes, first {first}");
    }

    #[test]
    fn squash_and_stretch_are_inverse_and_monotone() {
        let t = stretch_table();
        for p in 1..4095 {
            assert!(t[p] <= t[p + 1]);
            assert!((squash(i32::from(t[p])) - p as i32).abs() <= 40, "{p}");
        }
    }

    #[test]
    fn text_and_skewed_columns_cost_less_than_deflate() {
        let text = "The decode step reads every weight once, and batching keeps the GPU busy. \
                    Latency grows with load; the cache holds what the prompt shared. "
            .repeat(4);
        let ones: Vec<u8> = (0..10_000u32).map(|i| u8::from(i % 7 != 3)).collect();
        let coded = round_trip(&[text.as_bytes(), &ones]);
        let deflated = miniz_oxide::deflate::compress_to_vec(text.as_bytes(), 9).len()
            + miniz_oxide::deflate::compress_to_vec(&ones, 9).len();
        assert!(coded < deflated, "{coded} against DEFLATE's {deflated}");
        round_trip(&[]);
        round_trip(&[&[], &[0], &[255; 300]]);
    }

    #[test]
    fn running_out_of_bytes_is_an_error() {
        let mut e = Encoder::default();
        encode(&mut e, &[b"abc"], &[], Models::Refined);
        let bytes = e.finish();
        let mut d = Decoder::new(&bytes).unwrap();
        // Far more bytes than were coded (random-looking input runs out quickly).
        assert!(decode(&mut d, &[1 << 20], &[], Models::Refined).is_err() || d.finish().is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn any_bytes_round_trip(a in proptest::collection::vec(any::<u8>(), 0..400),
                                b in proptest::collection::vec(0u8..3, 0..400)) {
            round_trip(&[&a, &b]);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(mut d) = Decoder::new(&bytes) {
                let _ = decode(&mut d, &[100, 3], &[b"primer"], Models::First);
                let _ = d.finish();
            }
            if let Ok(mut d) = Decoder::new(&bytes) {
                let _ = decode(&mut d, &[100, 3], &[b"primer"], Models::Refined);
                let _ = d.finish();
            }
        }
    }
}
