//! House openers learned from a run: leading clauses that recur across its answers ("Thanks
//! for the details!" starting 14 of 20 answers) offered as boilerplate, with the evidence.
//!
//! The rule:
//! - An answer's **leading clause** is read where its content starts, after every opener the
//!   list already skips (so a phrase already handled is never offered, and the clause after it
//!   is read instead). It is a short run of words — letters of any script, spaces, apostrophes
//!   and hyphens; no digit, no markup, at most [`MAX_LEARNED_CHARS`] characters — ended by
//!   clause punctuation: `, ! : ; ， 、 ！ ： ； 。`, or `.` followed by whitespace or the end.
//!   A question mark, a line break or any other character first means the answer has no
//!   leading clause (a heading, a list, code, a number, a question).
//! - A leading clause is **offered** when it starts at least [`MIN_ANSWERS`] answers and at
//!   least [`MIN_SHARE_PERCENT`] % of the answers with text, and
//! - the answers it starts go on in at least [`MIN_CONTINUATIONS`] different ways (their next
//!   [`CONTINUATION_CHARS`] characters): content that recurs only because the prompt recurs
//!   goes on the same way each time, boilerplate goes on to whatever was asked; and
//! - added to the list as a standalone phrase, it does move the content of every answer it
//!   starts later (checked with [`Openers::split`]).
//!
//! Offers come most frequent first, at most [`MAX_OFFERS`]. Phrases are given as
//! [`super::edits::canonical`] keeps them.

use std::collections::{BTreeMap, BTreeSet};

use super::Openers;
use super::edits::canonical;

/// Longest leading clause learned, in characters (its punctuation included).
pub const MAX_LEARNED_CHARS: usize = 60;
/// Fewest answers a clause must start.
pub const MIN_ANSWERS: usize = 3;
/// Smallest share of the answers a clause must start (%).
pub const MIN_SHARE_PERCENT: usize = 30;
/// Fewest different ways the answers it starts must go on.
pub const MIN_CONTINUATIONS: usize = 3;
/// How much of what follows the clause is compared (characters).
pub const CONTINUATION_CHARS: usize = 32;
/// Most offers made.
pub const MAX_OFFERS: usize = 5;

/// A recurring leading clause offered as a house opener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learned {
    /// The phrase to add (standalone).
    pub phrase: String,
    /// The clause as the first answer it starts wrote it, punctuation included.
    pub example: String,
    /// Answers it starts.
    pub answers: usize,
    /// Answers with text.
    pub of: usize,
    /// Different ways those answers go on.
    pub continuations: usize,
}

impl Learned {
    /// The evidence: `starts 14 of 20 answers`.
    pub fn evidence(&self) -> String {
        format!("starts {} of {} answers", self.answers, self.of)
    }
}

/// The answers a clause starts, while they are read.
#[derive(Default)]
struct Seen<'a> {
    example: String,
    texts: Vec<&'a str>,
    continuations: BTreeSet<String>,
}

/// The offers for `answers` (whole answer texts), read with `openers` (see the module doc).
pub fn learn<S: AsRef<str>>(answers: &[S], openers: &Openers) -> Vec<Learned> {
    let texts: Vec<&str> = answers
        .iter()
        .map(AsRef::as_ref)
        .filter(|t| !t.trim().is_empty())
        .collect();
    let of = texts.len();
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    for &text in &texts {
        let Some(at) = openers.split(text).content else {
            continue;
        };
        let Some((end, phrase)) = leading_clause(&text[at..]) else {
            continue;
        };
        let rest: String = text[at + end..]
            .split_whitespace()
            .flat_map(|w| w.chars().chain([' ']))
            .take(CONTINUATION_CHARS)
            .collect();
        let s = seen.entry(phrase).or_default();
        if s.texts.is_empty() {
            s.example = text[at..at + end].to_owned();
        }
        s.texts.push(text);
        s.continuations.insert(rest);
    }
    let mut offers: Vec<Learned> = seen
        .into_iter()
        .filter(|(_, s)| {
            s.texts.len() >= MIN_ANSWERS
                && s.texts.len() * 100 >= of * MIN_SHARE_PERCENT
                && s.continuations.len() >= MIN_CONTINUATIONS
        })
        .filter(|(phrase, s)| moves_content(openers, phrase, &s.texts))
        .map(|(phrase, s)| Learned {
            phrase,
            example: s.example,
            answers: s.texts.len(),
            of,
            continuations: s.continuations.len(),
        })
        .collect();
    offers.sort_by(|a, b| b.answers.cmp(&a.answers).then(a.phrase.cmp(&b.phrase)));
    offers.truncate(MAX_OFFERS);
    offers
}

/// Whether adding `phrase` makes the content of every one of `texts` start later.
fn moves_content(openers: &Openers, phrase: &str, texts: &[&str]) -> bool {
    let mut with = openers.clone();
    with.patterns.push(phrase.to_owned());
    texts.iter().all(|t| {
        let before = openers.split(t).content;
        let after = with.split(t).content;
        match (before, after) {
            (Some(b), Some(a)) => a > b,
            (Some(_), None) => true,
            _ => false,
        }
    })
}

/// The leading clause at the start of `s` (content, not whitespace): its byte length with its
/// punctuation, and its phrase; `None` when `s` starts with none (see the module doc).
fn leading_clause(s: &str) -> Option<(usize, String)> {
    for (n, (i, c)) in s.char_indices().enumerate() {
        if n >= MAX_LEARNED_CHARS {
            return None;
        }
        let next = s[i + c.len_utf8()..].chars().next();
        let ends = match c {
            ',' | '!' | ':' | ';' | '，' | '、' | '！' | '：' | '；' | '。' => true,
            '.' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            return canonical(&s[..i]).map(|p| (i + c.len_utf8(), p));
        }
        let word = c.is_alphabetic() || matches!(c, ' ' | '\'' | '\u{2019}' | '-');
        if !word {
            return None;
        }
    }
    None
}
