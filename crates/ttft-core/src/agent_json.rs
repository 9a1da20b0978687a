//! Agent JSON: when does the streamed text first form a complete, valid JSON value?
//!
//! [`JsonTracker`] is fed text fragments with their arrival times. It scans incrementally
//! (strings, escapes and nesting depth), notes when the first `{` or `[` arrived, and each time
//! the nesting closes it validates the candidate with `serde_json`. Text around the value (code
//! fences, prose) is tolerated; if a candidate is invalid the scan restarts just after its
//! opening bracket, at the next `{` or `[` (inside it, or in one of its strings).
//!
//! **Linear.** Restarting inside an invalid candidate would read its bytes again, once per
//! nested candidate: `[[[…x…]]]` of 100 KB took seconds. A scan reads each byte at most once
//! per lexical state (outside strings, in a string, after a backslash in one): when it reaches
//! a byte an earlier candidate's scan already read in the same state, the two read alike from
//! there on, so its brackets close where the earlier scan's enclosing brackets did, looked up
//! in what that scan recorded. Each validation by `serde_json` stops at the candidate's first
//! error or [`MAX_DEPTH`] levels down, and a candidate known to nest deeper is not handed to it.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the tracker found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JsonProgress {
    /// Arrival time of the first `{` or `[` (ms).
    pub first_bracket_at: Option<f64>,
    /// Arrival time of the fragment that completed the first valid JSON value.
    pub valid_at: Option<f64>,
    /// The value found, compact.
    pub value: Option<String>,
    /// Required keys missing from the value (top-level object keys).
    pub missing_keys: Vec<String>,
    /// Candidates that closed but were not valid JSON.
    pub invalid_candidates: u32,
}

/// Incremental JSON completion tracker.
#[derive(Debug, Clone, Default)]
pub struct JsonTracker {
    text: String,
    /// Where to look for the next candidate's opening bracket while none is open.
    seek: usize,
    /// The candidate being scanned.
    candidate: Option<Candidate>,
    scans: Scans,
    required: Vec<String>,
    progress: JsonProgress,
}

/// Where a scan is inside a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Lex {
    /// Outside strings: quotes open strings, brackets nest.
    Code,
    /// In a string.
    Str,
    /// In a string, right after a backslash.
    Escape,
}

/// No bracket.
const NONE: u32 = u32::MAX;

/// The deepest nesting `serde_json` parses (its recursion limit): a candidate nested deeper is
/// invalid without asking it. `tests/linear.rs` pins the value.
pub const MAX_DEPTH: u32 = 127;

/// The candidate being scanned: from its opening bracket at `start` (`root` in
/// [`Scans::brackets`]), the brackets open (innermost last), and the next byte to read in which
/// state.
#[derive(Debug, Clone)]
struct Candidate {
    start: usize,
    root: u32,
    open: Vec<u32>,
    pos: usize,
    lex: Lex,
}

/// An opening bracket a scan read: the bracket enclosing it ([`NONE`] for a candidate's own),
/// its byte, the byte that closes it once known, and how deep the brackets inside it nest at
/// least (exact for what the scan read itself; brackets opened at the same byte nest alike).
#[derive(Debug, Clone, Copy)]
struct Bracket {
    parent: u32,
    open: u32,
    close: u32,
    inside: u32,
}

/// What the scans read so far, for the ones that follow: about four bytes per byte read, freed
/// once a valid value is found.
#[derive(Debug, Clone, Default)]
struct Scans {
    /// Every bracket opened.
    brackets: Vec<Bracket>,
    /// From byte `base` on, for the first scan that read each byte: its state (top two bits)
    /// and its innermost open bracket as it read the byte; [`NONE`] for bytes not read.
    first: Vec<u32>,
    /// The same for scans that read a byte in another state than the first one did.
    other: HashMap<(usize, Lex), u32>,
    /// The first candidate's opening bracket: no scan reads a byte before it.
    base: usize,
    /// Bytes read, brackets looked up and bytes searched for a candidate (see
    /// [`JsonTracker::examined`]).
    examined: u64,
}

impl Scans {
    /// The innermost bracket open in the scan that read byte `pos` in state `lex`, if one did.
    fn read_before(&self, pos: usize, lex: Lex) -> Option<u32> {
        match self.first.get(pos - self.base) {
            Some(&v) if v != NONE && v >> 30 == lex as u32 => Some(v & !(3 << 30)),
            _ => self.other.get(&(pos, lex)).copied(),
        }
    }

    /// Notes that a scan read byte `pos` in state `lex` inside `bracket`.
    fn note(&mut self, pos: usize, lex: Lex, bracket: u32) {
        let i = pos - self.base;
        if i >= self.first.len() {
            self.first.resize(i + 1, NONE);
        }
        if self.first[i] == NONE {
            self.first[i] = ((lex as u32) << 30) | bracket;
        } else {
            self.other.insert((pos, lex), bracket);
        }
    }

    fn open(&mut self, parent: u32, at: usize) -> u32 {
        self.brackets.push(Bracket {
            parent,
            open: at as u32,
            close: NONE,
            inside: 0,
        });
        (self.brackets.len() - 1) as u32
    }

    /// Closes `bracket` at byte `at`; its enclosing bracket nests at least one deeper.
    fn close(&mut self, bracket: u32, at: u32) {
        let b = &mut self.brackets[bracket as usize];
        b.close = at;
        let (parent, inside) = (b.parent, b.inside);
        if parent != NONE {
            let p = &mut self.brackets[parent as usize];
            p.inside = p.inside.max(inside + 1);
        }
    }

    /// Whether the candidate opened by `root` (closed) nests deeper than [`MAX_DEPTH`].
    fn too_deep(&self, root: u32) -> bool {
        self.brackets[root as usize].inside >= MAX_DEPTH
    }

    /// Reads `candidate` on through the end of `bytes`; the byte that closes it, if reached.
    fn advance(&mut self, bytes: &[u8], c: &mut Candidate) -> Option<usize> {
        while c.pos < bytes.len() {
            let mut top = *c
                .open
                .last()
                .expect("an open candidate has an open bracket");
            if let Some(mut known) = self.read_before(c.pos, c.lex) {
                // An earlier scan read this byte in this state: from here the two read alike,
                // so each bracket open here closes where the earlier scan's did, innermost
                // first; past the earlier candidate's own close, read on.
                loop {
                    self.examined += 1;
                    let k = self.brackets[known as usize];
                    if k.open == self.brackets[top as usize].open {
                        let t = &mut self.brackets[top as usize];
                        t.inside = t.inside.max(k.inside);
                    }
                    let (parent, close) = (k.parent, k.close);
                    self.close(top, close);
                    c.open.pop();
                    match c.open.last() {
                        None => return Some(close as usize),
                        Some(&t) if parent != NONE => (top, known) = (t, parent),
                        Some(_) => {
                            (c.pos, c.lex) = (close as usize + 1, Lex::Code);
                            break;
                        }
                    }
                }
                continue;
            }
            self.examined += 1;
            self.note(c.pos, c.lex, top);
            let pos = c.pos;
            c.pos += 1;
            c.lex = match (c.lex, bytes[pos]) {
                (Lex::Code, b'"') => Lex::Str,
                (Lex::Code, b'{' | b'[') => {
                    top = self.open(top, pos);
                    c.open.push(top);
                    Lex::Code
                }
                (Lex::Code, b'}' | b']') => {
                    self.close(top, pos as u32);
                    c.open.pop();
                    if c.open.is_empty() {
                        return Some(pos);
                    }
                    Lex::Code
                }
                (Lex::Code, _) => Lex::Code,
                (Lex::Str, b'\\') => Lex::Escape,
                (Lex::Str, b'"') => Lex::Code,
                (Lex::Str | Lex::Escape, _) => Lex::Str,
            };
        }
        None
    }
}

impl JsonTracker {
    /// A tracker that also checks for `required` top-level keys.
    pub fn new(required: &[String]) -> Self {
        Self {
            required: required.to_vec(),
            ..Self::default()
        }
    }

    /// The result so far.
    pub fn progress(&self) -> &JsonProgress {
        &self.progress
    }

    /// Whether a valid value has been found.
    pub fn is_complete(&self) -> bool {
        self.progress.valid_at.is_some()
    }

    /// Work done so far: bytes read by the scans, brackets looked up in earlier scans and bytes
    /// searched for an opening bracket (not the validations by `serde_json`). It stays linear
    /// in the text however it was fragmented (tests hold it to that).
    pub fn examined(&self) -> u64 {
        self.scans.examined
    }

    /// Feeds one fragment that arrived at `at`.
    pub fn push(&mut self, at: f64, fragment: &str) {
        if self.is_complete() {
            return;
        }
        self.text.push_str(fragment);
        loop {
            let Some(mut c) = self.candidate.take() else {
                let rest = &self.text.as_bytes()[self.seek..];
                let Some(i) = rest.iter().position(|&b| b == b'{' || b == b'[') else {
                    self.scans.examined += rest.len() as u64;
                    self.seek = self.text.len();
                    return;
                };
                self.scans.examined += i as u64 + 1;
                let start = self.seek + i;
                if self.progress.first_bracket_at.is_none() {
                    self.progress.first_bracket_at = Some(at);
                    self.scans.base = start;
                }
                let root = self.scans.open(NONE, start);
                self.candidate = Some(Candidate {
                    start,
                    root,
                    open: vec![root],
                    pos: start + 1,
                    lex: Lex::Code,
                });
                continue;
            };
            let Some(close) = self.scans.advance(self.text.as_bytes(), &mut c) else {
                self.candidate = Some(c);
                return;
            };
            let value = if self.scans.too_deep(c.root) {
                None
            } else {
                serde_json::from_str::<Value>(&self.text[c.start..=close]).ok()
            };
            match value {
                Some(v) => {
                    self.progress.valid_at = Some(at);
                    self.progress.missing_keys = self
                        .required
                        .iter()
                        .filter(|k| v.get(k.as_str()).is_none())
                        .cloned()
                        .collect();
                    self.progress.value = Some(v.to_string());
                    self.scans = Scans {
                        examined: self.scans.examined,
                        ..Scans::default()
                    };
                    return;
                }
                None => {
                    self.progress.invalid_candidates += 1;
                    self.seek = c.start + 1;
                }
            }
        }
    }
}
