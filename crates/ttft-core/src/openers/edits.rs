//! A team's own opener list: its changes to [`DEFAULT_OPENERS`] (house phrases added, default
//! phrases removed), as kept in the studio's settings, in a report ([`crate::report::Report::openers`])
//! and in its share link, so whoever reads the run gets the same meaningful first token.
//!
//! The changes, not the whole list, are kept: a report or link made with no changes holds
//! nothing, and the defaults may grow without old reports losing them. Phrases are kept as
//! they are compared: trimmed, spaces collapsed, lower case, typographic apostrophes as `'`,
//! trailing clause punctuation dropped (a lead-in keeps its `…`). What a file or link holds is
//! not trusted: [`OpenerEdits::openers`] takes at most [`MAX_ADDED`] added phrases and drops
//! any that [`OpenerEdits::add`] would refuse.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{DEFAULT_OPENERS, Openers, is_cjk, is_punct, norm, parse};

/// Longest phrase, in characters.
pub const MAX_PHRASE_CHARS: usize = 80;
/// Most added phrases a list holds.
pub const MAX_ADDED: usize = 200;

/// Why a phrase cannot be added.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OpenerEditError {
    /// Nothing but spaces and punctuation.
    #[error(
        "the phrase has no words: type the opener as it starts answers, e.g. “Thanks for the details”"
    )]
    NoWords,
    /// Too long to be an opener.
    #[error(
        "the phrase is longer than {MAX_PHRASE_CHARS} characters: keep only the opener's words (end it with … to skip the rest of its sentence)"
    )]
    TooLong,
    /// The list is full.
    #[error("the list already holds {MAX_ADDED} added phrases: remove some before adding more")]
    Full,
}

/// A phrase's language, for showing the list by language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// Latin script.
    English,
    /// Any CJK character.
    Chinese,
}

impl Language {
    /// The language of a phrase: Chinese when it holds a CJK character.
    pub fn of(phrase: &str) -> Self {
        if phrase.chars().any(is_cjk) {
            Language::Chinese
        } else {
            Language::English
        }
    }

    /// Its name for the page.
    pub fn name(self) -> &'static str {
        match self {
            Language::English => "English",
            Language::Chinese => "Chinese",
        }
    }
}

/// Where a listed phrase comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A default phrase, in use.
    Default,
    /// A default phrase the team removed.
    Removed,
    /// The team's own.
    Added,
}

/// One phrase of the list as the studio shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPhrase {
    /// The phrase (a lead-in ends in `…`).
    pub phrase: String,
    /// Its language.
    pub language: Language,
    /// A lead-in (skips the rest of its clause) rather than a standalone phrase.
    pub lead_in: bool,
    /// Default, removed or added.
    pub origin: Origin,
}

/// A team's changes to the default phrases.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenerEdits {
    /// House phrases added (standalone, or a lead-in ending in `…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Default phrases no longer used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

/// A phrase as kept and compared (see the module doc); `None` when it has no words.
pub fn canonical(phrase: &str) -> Option<String> {
    let (words, lead_in) = parse(phrase);
    let words = words.trim_end_matches(|c: char| is_punct(c) || c == '?' || c == '？');
    let words: String = words
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(norm)
        .collect();
    if !words.chars().any(char::is_alphanumeric) {
        return None;
    }
    Some(
        match (lead_in, words.chars().next_back().is_some_and(is_cjk)) {
            (false, _) => words,
            (true, true) => format!("{words}…"),
            (true, false) => format!("{words} …"),
        },
    )
}

/// The key two phrases are the same by.
fn key(phrase: &str) -> Option<String> {
    canonical(phrase)
}

fn is_default(k: &str) -> bool {
    DEFAULT_OPENERS.iter().any(|d| key(d).as_deref() == Some(k))
}

impl OpenerEdits {
    /// No changes: the defaults.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty()
    }

    /// The phrases in use: the defaults not removed, then the added ones (valid ones only, at
    /// most [`MAX_ADDED`]).
    pub fn openers(&self) -> Openers {
        let removed = self.removed_keys();
        let mut patterns: Vec<String> = DEFAULT_OPENERS
            .iter()
            .filter(|d| key(d).is_none_or(|k| !removed.contains(&k)))
            .map(|d| (*d).to_owned())
            .collect();
        patterns.extend(self.added_in_use());
        Openers { patterns }
    }

    fn removed_keys(&self) -> Vec<String> {
        self.removed.iter().filter_map(|p| key(p)).collect()
    }

    /// The added phrases that count (see [`Self::openers`]).
    fn added_in_use(&self) -> impl Iterator<Item = String> + '_ {
        self.added
            .iter()
            .filter(|p| p.chars().count() <= MAX_PHRASE_CHARS)
            .filter_map(|p| canonical(p))
            .take(MAX_ADDED)
    }

    /// Adds a phrase (a lead-in when it ends in `…` or `...`); a removed default comes back
    /// instead, and a phrase already in use changes nothing. Returns the phrase as kept.
    pub fn add(&mut self, phrase: &str) -> Result<String, OpenerEditError> {
        if phrase.trim().chars().count() > MAX_PHRASE_CHARS {
            return Err(OpenerEditError::TooLong);
        }
        let canon = canonical(phrase).ok_or(OpenerEditError::NoWords)?;
        let k = key(&canon).unwrap_or_default();
        let before = self.removed.len();
        self.removed
            .retain(|p| key(p).as_deref() != Some(k.as_str()));
        if self.removed.len() != before || is_default(&k) {
            return Ok(canon);
        }
        if self
            .added
            .iter()
            .any(|p| key(p).as_deref() == Some(k.as_str()))
        {
            return Ok(canon);
        }
        if self.added.len() >= MAX_ADDED {
            return Err(OpenerEditError::Full);
        }
        self.added.push(canon.clone());
        Ok(canon)
    }

    /// Stops using a phrase: an added one is dropped, a default one is marked removed.
    pub fn remove(&mut self, phrase: &str) {
        let Some(k) = key(phrase) else {
            return;
        };
        self.added.retain(|p| key(p).as_deref() != Some(k.as_str()));
        if is_default(&k) && !self.removed.iter().any(|p| key(p).as_deref() == Some(&k)) {
            self.removed.push(canonical(phrase).unwrap_or(k));
        }
    }

    /// Every phrase, default (in use or removed) then added, for the page.
    pub fn listed(&self) -> Vec<ListedPhrase> {
        let removed = self.removed_keys();
        let defaults = DEFAULT_OPENERS.iter().map(|d| {
            let gone = key(d).is_some_and(|k| removed.contains(&k));
            let origin = if gone {
                Origin::Removed
            } else {
                Origin::Default
            };
            ((*d).to_owned(), origin)
        });
        defaults
            .chain(self.added_in_use().map(|p| (p, Origin::Added)))
            .map(|(phrase, origin)| ListedPhrase {
                language: Language::of(&phrase),
                lead_in: parse(&phrase).1,
                phrase,
                origin,
            })
            .collect()
    }

    /// In words, for a report: `2 house phrases added (“per our style guide”, …); 1 default
    /// removed (“great”)`; `None` for the defaults.
    pub fn describe(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let part = |v: &[String], noun: &str, verb: &str| {
            let quoted: Vec<String> = v.iter().map(|p| format!("“{p}”")).collect();
            let s = if v.len() == 1 { "" } else { "s" };
            (!v.is_empty()).then(|| format!("{} {noun}{s} {verb} ({})", v.len(), quoted.join(", ")))
        };
        let parts: Vec<String> = [
            part(&self.added, "house phrase", "added"),
            part(&self.removed, "default", "removed"),
        ]
        .into_iter()
        .flatten()
        .collect();
        Some(parts.join("; "))
    }
}
