//! Boilerplate openers ("Sure, here's…", "好的，我来帮你总结一下：") and the meaningful first token.
//!
//! The answer is read clause by clause from its start. Each clause is either an **opener
//! clause** (skipped, and the next clause is read) or **content** (the meaningful first token is
//! its first character, and reading stops). A clause that does not start with an opener phrase
//! is content, whatever it ends with ("The three causes are:" is content).
//!
//! There are two kinds of phrase in [`Openers::patterns`]:
//! - A **standalone** phrase ("sure", "great question", "好的", "当然可以") is a whole clause on
//!   its own. It counts only when punctuation follows it: `, . ! : ; — – - … ~` or their
//!   full-width forms `，。！：；、～`, or a line break, or the end of the answer; before that
//!   punctuation, spaces may follow a Latin phrase, and any whitespace a CJK one. Anything
//!   else after it means the word belongs to the answer: "Absolutely not", "Sure enough",
//!   "OK Computer", "Okay-ish", "Sure-footed", "好吃的", "好消息是", "当然不是", "收到货后". The
//!   one exception is a lead-in right after it ("Of course I can help…", "好的我来帮你…"),
//!   which makes one opener clause with it. The punctuation and whitespace after a standalone
//!   phrase go with it.
//! - A **lead-in** phrase, written with a trailing `…` (or `...`) in the list ("here's …",
//!   "let me …", "以下是…", "我来帮你…"), starts an opener sentence: the whole clause it
//!   starts is boilerplate, through the end of that clause, which is the first of
//!   - a lead-in colon: `：` (unless between two digits, as in `10：30`), or `:` followed by
//!     whitespace or the end of the answer, or right after a CJK character (not `10:30`, not
//!     `https://`);
//!   - a sentence end: `。！？!?`, or `.` followed by whitespace or the end (not `v1.2`,
//!     `example.com`), with any run of such marks after it;
//!   - a line break, or the end of the answer.
//!
//!   The clause is content instead when a negation follows the phrase ("not", "no", "never",
//!   "不", "没", "无"…), when it contains a contrast ("but", "however", "although", "但是",
//!   "不过", "然而"…: "I'd be happy to help, but I can't share that"), or when it runs past
//!   [`MAX_CLAUSE_CHARS`] characters without ending.
//!
//! Phrases match at a clause start, Latin letters case-insensitively, with typographic
//! apostrophes (`’ ‘ ʼ`) read as `'` and any run of spaces matching one space. A phrase ending
//! in a Latin letter or digit needs a word boundary after it: not a letter or digit, nor an
//! apostrophe or hyphen followed by one ("OK’d", "Sure-footed"). When several phrases match,
//! the longest opener clause wins. Opener clauses chain ("Certainly! Here's the code:\n",
//! "好的，" then "我来帮你总结一下："), and the whitespace after the last one is part of the
//! opener text.
//!
//! **Streaming.** [`Openers::decide`] is the same decision applied to the text received so
//! far: it answers [`Decision::Undecided`] while the next characters could still change the
//! outcome (the clause has not ended, a phrase could still grow, the character after a colon
//! is unknown) and otherwise the [`Split`] that the complete answer will also give, so a
//! decision once made never changes as text arrives, and every chunking of an answer gives
//! the same split. [`OpenerScan`] feeds it a stream incrementally; the meaningful first token
//! is the arrival of the piece holding byte [`Split::content`].
//!
//! **A team's list.** [`edits`] keeps a team's changes to the defaults (house phrases added,
//! defaults removed), carried by reports and share links; [`learn()`] finds the leading clauses
//! that recur across a run's answers and offers them as house phrases.

pub mod edits;
pub mod learn;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use edits::{Language, ListedPhrase, OpenerEditError, OpenerEdits, Origin};
pub use learn::{Learned, learn};

/// Default opener phrases in English and Chinese. A trailing `…` marks a lead-in.
pub const DEFAULT_OPENERS: &[&str] = &[
    // English, standalone.
    "sure",
    "sure thing",
    "certainly",
    "of course",
    "absolutely",
    "definitely",
    "great",
    "great question",
    "good question",
    "excellent question",
    "interesting question",
    "what a great question",
    "that's a great question",
    "that's a good question",
    "okay",
    "ok",
    "alright",
    "all right",
    "no problem",
    "no worries",
    "got it",
    "understood",
    "thanks for asking",
    "thank you for asking",
    "thanks for the question",
    "thank you for the question",
    "glad you asked",
    "happy to help",
    "glad to help",
    "i'd be happy to help",
    "i'd be glad to help",
    "i can help with that",
    "hi there",
    "let's get started",
    // The openers of widely used assistants (#30): thanks, praise of the question, assent.
    "thanks",
    "thank you",
    "thanks for the details",
    "thank you for the details",
    "thanks for sharing",
    "thank you for sharing",
    "thanks for the context",
    "thank you for the context",
    "thanks for reaching out",
    "thank you for reaching out",
    "thanks for clarifying",
    "thank you for clarifying",
    "good catch",
    "great catch",
    "nice catch",
    "great point",
    "good point",
    "fair point",
    "great idea",
    "great choice",
    "perfect",
    "excellent",
    "awesome",
    "you got it",
    "you're right",
    "you are right",
    "you're absolutely right",
    "you're correct",
    "that makes sense",
    "makes sense",
    "sounds good",
    "i see",
    "i understand",
    "my pleasure",
    "with pleasure",
    "no problem at all",
    "here you go",
    "happy to help with that",
    "i'd be happy to help with that",
    // English, lead-ins.
    "here's …",
    "here is …",
    "here are …",
    "below is …",
    "below are …",
    "let me …",
    "allow me to …",
    "let's break …",
    "let's dive …",
    "let's walk …",
    "let's go through …",
    "let's take a look …",
    "let's start with …",
    "i'd be happy to …",
    "i'd be glad to …",
    "i would be happy to …",
    "i'm happy to …",
    "i am happy to …",
    "i'm glad to …",
    "i'd love to …",
    "happy to help …",
    "glad to help …",
    "i can help …",
    "i'll explain …",
    "i'll walk you through …",
    "i'll help …",
    "i'll break …",
    "to answer your question …",
    "let's look at …",
    "let's explore …",
    "let's unpack …",
    "i'll outline …",
    "i'll summarize …",
    "i can explain …",
    "below you'll find …",
    // Chinese, standalone.
    "好的",
    "好",
    "好嘞",
    "好呀",
    "当然",
    "当然可以",
    "当然了",
    "没问题",
    "明白",
    "明白了",
    "我明白了",
    "收到",
    "了解",
    "了解了",
    "好问题",
    "问得好",
    "这是一个好问题",
    "这是一个很好的问题",
    "这个问题问得好",
    "感谢你的提问",
    "感谢您的提问",
    "谢谢你的提问",
    "谢谢您的提问",
    "您好",
    "嗯",
    "嗯嗯",
    "好的呀",
    "好的呢",
    "当然啦",
    "没问题的",
    "收到啦",
    "懂了",
    "我懂了",
    "我理解了",
    "好主意",
    "说得对",
    "你说得对",
    "您说得对",
    "谢谢",
    "谢谢你",
    "谢谢您",
    "感谢",
    "感谢你的详细说明",
    "感谢您的详细说明",
    "很好的问题",
    "非常好的问题",
    "这个问题很好",
    // Chinese, lead-ins.
    "以下是…",
    "下面是…",
    "下面我…",
    "下面为你…",
    "下面为您…",
    "我来帮你…",
    "我来帮您…",
    "我来为你…",
    "我来为您…",
    "我来给你…",
    "我来给您…",
    "我来解释…",
    "我来总结…",
    "我来介绍…",
    "我来回答…",
    "让我来…",
    "让我们来…",
    "让我为你…",
    "让我为您…",
    "让我帮你…",
    "让我帮您…",
    "让我解释…",
    "让我想想…",
    "我们来看…",
    "我们来分析…",
    "很高兴为你…",
    "很高兴为您…",
    "很高兴能…",
    "很乐意…",
    "我很乐意…",
    "我可以帮你…",
    "我可以帮您…",
    "我将为你…",
    "我将为您…",
    "为你整理…",
    "为您整理…",
    "为你总结…",
    "为您总结…",
    "以下为…",
    "我来整理…",
    "我来梳理…",
    "我来分析…",
    "我来说明…",
    "我来列出…",
    "我来看看…",
    "让我看看…",
    "我们一起来…",
];

/// A lead-in clause longer than this (in characters) without ending is content.
pub const MAX_CLAUSE_CHARS: usize = 400;

const NEGATIONS: &[&str] = &["not", "no", "never", "nothing", "neither", "nor"];
const CONTRASTS: &[&str] = &["but", "however", "although", "though", "unfortunately"];
const CJK_NEGATIONS: &[char] = &['不', '没', '無', '无', '别', '未'];
const CJK_CONTRASTS: &[&str] = &["但是", "不过", "然而", "可是", "可惜"];

/// A configurable set of opener phrases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Openers {
    /// The phrases: standalone, or a lead-in when written with a trailing `…` (see the module).
    pub patterns: Vec<String>,
}

impl Default for Openers {
    fn default() -> Self {
        Self {
            patterns: DEFAULT_OPENERS.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

/// Where the boilerplate of an answer ends and its content starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Byte length of the opener text (0 when the answer has no opener); it includes the
    /// whitespace after the last opener clause.
    pub opener: usize,
    /// Byte of the first content character; `None` when the whole answer is boilerplate or
    /// blank.
    pub content: Option<usize>,
}

/// The decision on the text received so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// More text is needed.
    Undecided,
    /// Final: more text will not change it.
    Decided(Split),
}

/// The decision on one clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clause {
    Undecided,
    Content,
    /// An opener clause ending at this byte (its trailing punctuation included).
    Opener(usize),
}

impl Clause {
    /// Combines the verdicts of several phrases on one clause.
    fn or(self, other: Clause) -> Clause {
        match (self, other) {
            (Clause::Undecided, _) | (_, Clause::Undecided) => Clause::Undecided,
            (Clause::Opener(a), Clause::Opener(b)) => Clause::Opener(a.max(b)),
            (Clause::Opener(a), Clause::Content) | (Clause::Content, Clause::Opener(a)) => {
                Clause::Opener(a)
            }
            (Clause::Content, Clause::Content) => Clause::Content,
        }
    }
}

/// A phrase match at a clause start.
enum Match {
    No,
    /// The text ends inside the phrase or before its boundary is known.
    Partial,
    /// Matched through this byte.
    Yes(usize),
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

    /// The decision on `text`, the answer received so far; `complete` when no more will come.
    /// A complete answer is always decided.
    pub fn decide(&self, text: &str, complete: bool) -> Decision {
        self.scan(text, 0, false, complete, &mut Memo::default()).0
    }

    /// The split of a complete answer.
    pub fn split(&self, text: &str) -> Split {
        match self.decide(text, true) {
            Decision::Decided(s) => s,
            Decision::Undecided => unreachable!("a complete answer is always decided"),
        }
    }

    /// The byte length of the boilerplate at the start of a complete answer (0 when none).
    pub fn skip_len(&self, text: &str) -> usize {
        self.split(text).opener
    }

    /// Reads clauses from byte `pos` (after `any` opener clauses). Returns the decision and,
    /// when undecided, where to resume (the start of the undecided clause) and whether an
    /// opener was seen.
    fn scan(
        &self,
        text: &str,
        mut pos: usize,
        mut any: bool,
        complete: bool,
        memo: &mut Memo,
    ) -> (Decision, usize, bool) {
        loop {
            let at = pos + memo.leading_ws(&text[pos..]);
            let split = |content: Option<usize>| Split {
                opener: if any {
                    content.unwrap_or(text.len())
                } else {
                    0
                },
                content,
            };
            if at == text.len() {
                if !complete {
                    return (Decision::Undecided, at, any);
                }
                return (Decision::Decided(split(None)), pos, any);
            }
            match self.clause(text, at, complete, true, memo) {
                // Resuming at the clause, not before the whitespace ahead of it, keeps that
                // whitespace from being read again on every update.
                Clause::Undecided => return (Decision::Undecided, at, any),
                Clause::Content => return (Decision::Decided(split(Some(at))), pos, any),
                Clause::Opener(end) => {
                    pos = end;
                    any = true;
                }
            }
        }
    }

    /// The verdict on the clause starting at byte `at` (not whitespace). `standalone` allows
    /// standalone phrases (lead-ins always count).
    fn clause(
        &self,
        text: &str,
        at: usize,
        complete: bool,
        standalone: bool,
        memo: &mut Memo,
    ) -> Clause {
        let mut verdict = Clause::Content;
        // The clause's first character, read once: a phrase starting otherwise cannot match.
        let first = text[at..].chars().next().map(norm);
        memo.examined += 1;
        for p in &self.patterns {
            let (phrase, lead_in) = parse(p);
            if phrase.is_empty()
                || !(lead_in || standalone)
                || phrase.chars().next().map(norm) != first
            {
                continue;
            }
            let v = match match_phrase(phrase, text, at, complete, memo) {
                Match::No => Clause::Content,
                Match::Partial => Clause::Undecided,
                Match::Yes(end) if lead_in => lead_in_clause(text, at, end, phrase, complete, memo),
                Match::Yes(end) => self.standalone_clause(text, end, phrase, complete, memo),
            };
            verdict = verdict.or(v);
            if verdict == Clause::Undecided {
                return verdict;
            }
        }
        verdict
    }

    /// A standalone phrase matched through `end`: it needs punctuation (or a lead-in) next.
    fn standalone_clause(
        &self,
        text: &str,
        end: usize,
        phrase: &str,
        complete: bool,
        memo: &mut Memo,
    ) -> Clause {
        let last = phrase.chars().next_back().unwrap_or(' ');
        let cjk = is_cjk(last);
        let mut q = end;
        if !cjk && !is_punct(last) {
            q = memo.run_end(text, Run::Blank, end);
        }
        let ok = match text[q..].chars().next() {
            None => {
                if !complete {
                    return Clause::Undecided;
                }
                true
            }
            Some(c) => {
                is_punct(last)
                    || c == '\n'
                    || c == '\r'
                    || (cjk && c.is_whitespace())
                    || punct_at(text, q)
            }
        };
        if !ok {
            // "Of course I can help…", "好的我来帮你…": one clause with the lead-in.
            if q == end && !cjk {
                return Clause::Content;
            }
            return self.clause(text, q, complete, false, memo);
        }
        let e = memo.run_end(text, Run::Trailer, end);
        if e == text.len() && !complete {
            return Clause::Undecided;
        }
        Clause::Opener(e)
    }
}

/// A lead-in phrase matched from `at` through `end`: its clause, to its end.
fn lead_in_clause(
    text: &str,
    at: usize,
    end: usize,
    phrase: &str,
    complete: bool,
    memo: &mut Memo,
) -> Clause {
    // A negation right after the phrase: "Let me not…", "以下是不…".
    let next_word = &text[memo.run_end(text, Run::Blank, end)..];
    if is_cjk(phrase.chars().next_back().unwrap_or(' ')) {
        if next_word.starts_with(CJK_NEGATIONS) {
            return Clause::Content;
        }
    } else if word_in(next_word, NEGATIONS, complete, memo) {
        return Clause::Content;
    }
    let mut prev: Option<char> = phrase.chars().next_back();
    // Only whether the clause outgrows the limit matters: count no further.
    let mut count = text[at..end].chars().take(MAX_CLAUSE_CHARS + 1).count();
    memo.examined += count as u64;
    for (i, c) in text[end..].char_indices() {
        let i = end + i;
        memo.examined += 1;
        count += 1;
        if count > MAX_CLAUSE_CHARS {
            return Clause::Content;
        }
        let next = text[i + c.len_utf8()..].chars().next();
        // A contrast: "…, but I can't", "…，但是…".
        if c.is_alphabetic()
            && !is_cjk(c)
            && !prev.is_some_and(char::is_alphanumeric)
            && word_in(&text[i..], CONTRASTS, complete, memo)
        {
            return Clause::Content;
        }
        if CJK_CONTRASTS.iter().any(|w| text[i..].starts_with(w))
            || (c == '但' && prev.is_some_and(|p| p == '，' || p == ','))
        {
            return Clause::Content;
        }
        let ends = match c {
            '\n' | '\r' | '。' | '！' | '？' | '!' | '?' => Some(true),
            '.' => match next {
                None => complete.then_some(true),
                Some(n) => Some(n.is_whitespace()),
            },
            ':' => match next {
                None => complete.then_some(true),
                Some('/') => Some(false),
                Some(n) if n.is_ascii_digit() && prev.is_some_and(|p| p.is_ascii_digit()) => {
                    Some(false)
                }
                Some(n) => Some(n.is_whitespace() || prev.is_some_and(is_cjk)),
            },
            '：' => match next {
                None if prev.is_some_and(|p| p.is_ascii_digit()) => complete.then_some(true),
                Some(n) if n.is_ascii_digit() && prev.is_some_and(|p| p.is_ascii_digit()) => {
                    Some(false)
                }
                _ => Some(true),
            },
            _ => Some(false),
        };
        match ends {
            None => return Clause::Undecided,
            Some(false) => {}
            Some(true) => {
                let mut e = i + c.len_utf8();
                if c != '\n' && c != '\r' {
                    e = memo.run_end(text, Run::Marks, e);
                }
                if e == text.len() && !complete {
                    return Clause::Undecided;
                }
                return Clause::Opener(e);
            }
        }
        prev = Some(c);
    }
    if complete {
        Clause::Opener(text.len())
    } else {
        Clause::Undecided
    }
}

/// Streaming form of [`Openers::decide`]: feed it the answer as it grows.
///
/// Its cost is linear in the answer however it is chunked: opener clauses already confirmed
/// are not read again, and the runs of spaces, punctuation or sentence marks that keep a
/// clause undecided ("Sure" followed by blank lines, "Here's the list!!!") are measured once,
/// each update reading only how far they grew. What stays is re-reading the undecided
/// clause's own words, at most [`MAX_CLAUSE_CHARS`] characters for a lead-in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenerScan {
    /// Where the next undecided clause starts (after the opener clauses already confirmed).
    resume: usize,
    /// An opener clause was confirmed.
    any: bool,
    /// The decision, once made.
    split: Option<Split>,
    /// Runs measured in the undecided clause, and the work done.
    memo: Memo,
}

impl OpenerScan {
    /// A scan of an answer not yet started.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decides on `text`, the whole answer received so far (each call must extend the text
    /// of the previous one, with the same `openers`). Equal to `openers.decide(text, false)`,
    /// but resumes after the opener clauses already confirmed and the runs already measured.
    pub fn update(&mut self, openers: &Openers, text: &str) -> Decision {
        if let Some(s) = self.split {
            return Decision::Decided(s);
        }
        let from = self.resume.min(text.len());
        let (d, resume, any) = openers.scan(text, from, self.any, false, &mut self.memo);
        if resume != self.resume {
            self.memo.runs.clear(); // runs of clauses now behind us are not asked for again
        }
        self.resume = resume;
        self.any = any;
        if let Decision::Decided(s) = d {
            self.split = Some(s);
        }
        d
    }

    /// Characters read so far, over every update: a work count that stays linear in the
    /// answer's length however it was chunked (tests hold it to that).
    pub fn examined(&self) -> u64 {
        self.memo.examined
    }

    /// The split of the complete answer `text` (the decision already made, if any).
    pub fn finish(&mut self, openers: &Openers, text: &str) -> Split {
        if let Some(s) = self.split {
            return s;
        }
        let from = self.resume.min(text.len());
        let (d, _, _) = openers.scan(text, from, self.any, true, &mut self.memo);
        let s = match d {
            Decision::Decided(s) => s,
            Decision::Undecided => unreachable!("a complete answer is always decided"),
        };
        self.split = Some(s);
        s
    }

    /// The decision so far.
    pub fn decision(&self) -> Decision {
        self.split.map_or(Decision::Undecided, Decision::Decided)
    }
}

/// A pattern's phrase and whether it is a lead-in (trailing `…` or `...`).
fn parse(p: &str) -> (&str, bool) {
    let p = p.trim();
    match p.strip_suffix('…').or_else(|| p.strip_suffix("...")) {
        Some(s) => (s.trim_end(), true),
        None => (p, false),
    }
}

/// Matches `phrase` at byte `at` of `text`, with a word boundary after a Latin phrase.
fn match_phrase(phrase: &str, text: &str, at: usize, complete: bool, memo: &mut Memo) -> Match {
    let short = if complete { Match::No } else { Match::Partial };
    let mut end = at;
    let mut p = phrase.chars().peekable();
    while let Some(pc) = p.next() {
        let next = text[end..].chars().next();
        memo.examined += 1;
        if pc.is_whitespace() {
            while p.next_if(|c| c.is_whitespace()).is_some() {}
            match next {
                None => return short,
                Some(' ' | '\t') => {}
                Some(_) => return Match::No,
            }
            end = memo.run_end(text, Run::Blank, end);
            continue;
        }
        match next {
            None => return short,
            Some(c) if norm(c) == norm(pc) => end += c.len_utf8(),
            Some(_) => return Match::No,
        }
    }
    let last = phrase.chars().next_back().unwrap_or(' ');
    if last.is_alphanumeric() && !is_cjk(last) {
        let mut after = text[end..].chars();
        match (after.next(), after.next()) {
            (None, _) if !complete => return Match::Partial,
            (Some(c), _) if c.is_alphanumeric() || c == '_' => return Match::No,
            (Some(c), n) if norm(c) == '\'' || c == '-' => match n {
                None if !complete => return Match::Partial,
                Some(n) if n.is_alphanumeric() => return Match::No,
                _ => {}
            },
            _ => {}
        }
    }
    Match::Yes(end)
}

/// Whether the word (letters and digits) at the start of `s`, as phrases compare it, is one
/// of `words`; a word running to the end of `s` counts only when the answer is `complete`
/// (else more text could lengthen it). Reads no further than the longest of `words`.
fn word_in(s: &str, words: &[&str], complete: bool, memo: &mut Memo) -> bool {
    let longest = words.iter().map(|w| w.chars().count()).max().unwrap_or(0);
    let mut word = String::new();
    for (n, c) in s.chars().enumerate() {
        memo.examined += 1;
        if !c.is_alphanumeric() {
            return words.contains(&word.as_str());
        }
        if n == longest {
            return false; // longer than any of them
        }
        word.push(norm(c));
    }
    complete && words.contains(&word.as_str())
}

/// A character as phrases compare it: lower case, typographic apostrophes as `'`.
fn norm(c: char) -> char {
    match c {
        '\u{2019}' | '\u{2018}' | '\u{02BC}' | '\u{2032}' | '`' | '\u{00B4}' => '\'',
        c if c.is_ascii() => c.to_ascii_lowercase(),
        c => {
            let mut l = c.to_lowercase();
            match (l.next(), l.next()) {
                (Some(x), None) => x,
                _ => c,
            }
        }
    }
}

/// Clause punctuation that may follow a standalone phrase.
fn is_punct(c: char) -> bool {
    matches!(
        c,
        ',' | '，'
            | '.'
            | '。'
            | '!'
            | '！'
            | ':'
            | '：'
            | ';'
            | '；'
            | '、'
            | '~'
            | '～'
            | '—'
            | '–'
            | '-'
            | '…'
            | '⋯'
    )
}

/// Punctuation at byte `i`, except `.` or `-` starting a word or number (".5", "-1").
fn punct_at(text: &str, i: usize) -> bool {
    let mut cs = text[i..].chars();
    let Some(c) = cs.next() else {
        return false;
    };
    if !is_punct(c) {
        return false;
    }
    !((c == '.' || c == '-') && cs.next().is_some_and(char::is_alphanumeric))
}

fn is_cjk(c: char) -> bool {
    matches!(
        c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FFFF
    )
}

/// Runs of characters the rules step over; [`Memo::run_end`] measures each once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Run {
    /// Spaces and tabs: inside a phrase, after a standalone phrase, before a lead-in's next
    /// word.
    Blank,
    /// Whitespace and clause punctuation ([`punct_at`]) after a standalone phrase.
    Trailer,
    /// Sentence marks after the end of a lead-in clause.
    Marks,
}

impl Run {
    /// Whether character `c` at byte `i` of `text` belongs to the run, and whether that is
    /// settled: a `.` or `-` ending the text is punctuation only until a letter follows it.
    fn holds(self, text: &str, i: usize, c: char) -> (bool, bool) {
        match self {
            Run::Blank => (c == ' ' || c == '\t', true),
            Run::Marks => (
                matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '…'),
                true,
            ),
            Run::Trailer => {
                let holds = c.is_whitespace() || punct_at(text, i);
                let last = i + c.len_utf8() == text.len();
                (holds, !(holds && last && (c == '.' || c == '-')))
            }
        }
    }
}

/// What the decision remembers between calls on an answer that only grows: how far each run
/// it measured is known to reach, and the characters it read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Memo {
    /// (run, start byte) → (byte the run is settled to, whether it ends there for good).
    runs: HashMap<(Run, usize), (usize, bool)>,
    /// Characters read.
    examined: u64,
}

impl Memo {
    /// The byte where the run of `run` starting at byte `start` of `text` ends (`text.len()`
    /// when it reaches the end); reads only what an earlier call on a shorter text did not
    /// settle.
    fn run_end(&mut self, text: &str, run: Run, start: usize) -> usize {
        let (from, ended) = self
            .runs
            .get(&(run, start))
            .copied()
            .unwrap_or((start, false));
        if ended {
            return from;
        }
        let (mut settled, mut end, mut ended) = (from, text.len(), false);
        for (i, c) in text[from..].char_indices() {
            self.examined += 1;
            let i = from + i;
            match run.holds(text, i, c) {
                (false, _) => {
                    (settled, end, ended) = (i, i, true);
                    break;
                }
                (true, true) => settled = i + c.len_utf8(),
                (true, false) => {} // the text's last character: read again next time
            }
        }
        self.runs.insert((run, start), (settled, ended));
        end
    }

    /// Bytes of whitespace at the start of `s`.
    fn leading_ws(&mut self, s: &str) -> usize {
        let n = s.len() - s.trim_start().len();
        self.examined += s[..n].chars().count() as u64 + 1;
        n
    }
}
