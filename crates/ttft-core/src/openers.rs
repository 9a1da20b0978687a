//! Boilerplate openers ("Sure, here's…", "好的，我来帮你总结一下：") and the meaningful first token.
//!
//! An opener pattern is a literal phrase matched at the start of the answer (ASCII letters
//! case-insensitively, and only on a word boundary for Latin phrases). After a match, trailing
//! punctuation and spaces are skipped too, and if the rest of the clause (up to 80 characters)
//! ends in a colon (`:` or `：`) the skip runs through that colon: "Here's the summary:" is all
//! boilerplate, "Sure, the answer is 42" keeps "the answer is 42". Matching repeats, so openers
//! chain ("好的，" then "我来帮你总结一下：").

use serde::{Deserialize, Serialize};

/// Default opener phrases in English and Chinese.
pub const DEFAULT_OPENERS: &[&str] = &[
    "sure",
    "certainly",
    "of course",
    "absolutely",
    "great question",
    "good question",
    "okay",
    "ok",
    "alright",
    "no problem",
    "happy to help",
    "i'd be happy to help",
    "i'd be glad to help",
    "i can help with that",
    "here's",
    "here is",
    "here are",
    "let me",
    "i'll",
    "好的",
    "好",
    "当然",
    "当然可以",
    "没问题",
    "可以",
    "明白了",
    "收到",
    "我来帮你",
    "我来为你",
    "我来",
    "下面是",
    "以下是",
    "让我",
    "这是",
];

const TRAILING: &[char] = &[
    ',', '，', '!', '！', '.', '。', '、', ' ', '\n', '\t', '~', '～', '-', '—',
];
const COLONS: &[char] = &[':', '：'];
const CLAUSE_END: &[char] = &['.', '。', '!', '！', '?', '？', '\n'];

/// A configurable set of opener phrases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Openers {
    /// The phrases, matched at the start of the answer.
    pub patterns: Vec<String>,
}

impl Default for Openers {
    fn default() -> Self {
        Self {
            patterns: DEFAULT_OPENERS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

impl Openers {
    /// Parses one phrase per line (blank lines ignored).
    pub fn from_lines(text: &str) -> Self {
        Self {
            patterns: text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }

    /// The byte length of the boilerplate at the start of `text` (0 when none).
    pub fn skip_len(&self, text: &str) -> usize {
        let mut pos = leading_ws(text);
        loop {
            let rest = &text[pos..];
            let Some(len) = self.match_one(rest) else {
                break;
            };
            let mut p = pos + len;
            p += text[p..].len() - text[p..].trim_start_matches(TRAILING).len();
            p += clause_colon(&text[p..]);
            p += leading_ws(&text[p..]);
            if p == pos {
                break;
            }
            pos = p;
        }
        if pos == leading_ws(text) { 0 } else { pos }
    }

    fn match_one(&self, rest: &str) -> Option<usize> {
        let mut best: Option<usize> = None;
        for p in &self.patterns {
            let p = p.trim();
            if p.is_empty() || rest.len() < p.len() || !rest.is_char_boundary(p.len()) {
                continue;
            }
            let head = &rest[..p.len()];
            let eq = head.eq_ignore_ascii_case(p) || head.replace('’', "'").eq_ignore_ascii_case(p);
            if !eq {
                continue;
            }
            let next = rest[p.len()..].chars().next();
            let latin = p.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
            if latin && next.is_some_and(|c| c.is_alphanumeric()) {
                continue; // "Sure" must not match "Surely"
            }
            if best.is_none_or(|b| p.len() > b) {
                best = Some(p.len());
            }
        }
        best
    }
}

fn leading_ws(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

/// If the clause at the start of `s` ends in a colon within 80 chars, its length through it.
fn clause_colon(s: &str) -> usize {
    for (n, (i, c)) in s.char_indices().enumerate() {
        if n > 80 {
            break;
        }
        if COLONS.contains(&c) {
            return i + c.len_utf8();
        }
        if CLAUSE_END.contains(&c) {
            break;
        }
    }
    0
}
