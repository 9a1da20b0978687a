//! Markdown to HTML as a streaming answer grows, with pulldown-cmark (CommonMark, GFM tables,
//! strikethrough and task lists): re-render the whole answer on every update
//! ([`RenderMode::All`]), or only its last open block ([`RenderMode::Incremental`]).
//!
//! Incremental rendering splits the answer at block boundaries a later chunk cannot change: a
//! blank line outside a fenced code block that is followed by a line starting a new block at
//! the margin (not indented, not a list item, which could continue a loose list). Blocks
//! before the last boundary are closed: rendered once, when they close. What follows is the
//! open tail, re-rendered on each update. For such answers the closed blocks and the tail
//! render to exactly the HTML of the whole (a property test holds it to that); what can
//! differ is a reference-style link whose definition comes in a later block, which chat
//! answers do not use.

use pulldown_cmark::{Options, Parser, html};
use serde::{Deserialize, Serialize};

/// The markdown the surface understands: CommonMark with GFM's tables, strikethrough and task
/// lists (what chat answers use).
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// `text` as HTML.
pub fn render_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3 / 2);
    html::push_html(&mut out, Parser::new_ext(text, options()));
    out
}

/// How the surface renders what it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenderMode {
    /// The whole answer on every update.
    All,
    /// The closed blocks once, the open tail on every update.
    Incremental,
}

/// What the page changes after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// Replace the whole answer's HTML.
    All(String),
    /// Append the newly closed blocks' HTML, in order, then replace the open tail's.
    Tail {
        /// Blocks closed by this update.
        closed: Vec<String>,
        /// The open tail.
        tail: String,
    },
}

/// An answer being drawn: the text so far and, when incremental, where its closed blocks end.
#[derive(Debug, Clone)]
pub struct Surface {
    mode: RenderMode,
    text: String,
    /// Bytes of `text` in closed blocks.
    closed_len: usize,
    /// The closed blocks' HTML (incremental).
    closed_html: Vec<String>,
    /// The last update's HTML of everything (all) or of the tail (incremental).
    last_html: String,
    /// Bytes of markdown parsed by the last update.
    last_parsed: usize,
}

impl Surface {
    /// An empty answer rendered in `mode`.
    pub fn new(mode: RenderMode) -> Self {
        Self {
            mode,
            text: String::new(),
            closed_len: 0,
            closed_html: Vec::new(),
            last_html: String::new(),
            last_parsed: 0,
        }
    }

    /// Appends `piece` and renders: what the page must change.
    pub fn push(&mut self, piece: &str) -> Update {
        self.text.push_str(piece);
        match self.mode {
            RenderMode::All => {
                self.last_html = render_html(&self.text);
                self.last_parsed = self.text.len();
                Update::All(self.last_html.clone())
            }
            RenderMode::Incremental => self.push_incremental(),
        }
    }

    fn push_incremental(&mut self) -> Update {
        let mut closed = Vec::new();
        let mut parsed = 0;
        if let Some(boundary) = last_boundary(&self.text, self.closed_len) {
            let segment = &self.text[self.closed_len..boundary];
            parsed += segment.len();
            let html = render_html(segment);
            self.closed_html.push(html.clone());
            closed.push(html);
            self.closed_len = boundary;
        }
        let tail = &self.text[self.closed_len..];
        parsed += tail.len();
        self.last_html = render_html(tail);
        self.last_parsed = parsed;
        Update::Tail {
            closed,
            tail: self.last_html.clone(),
        }
    }

    /// The whole answer's HTML as drawn now.
    pub fn html(&self) -> String {
        match self.mode {
            RenderMode::All => self.last_html.clone(),
            RenderMode::Incremental => {
                let mut all = self.closed_html.concat();
                all.push_str(&self.last_html);
                all
            }
        }
    }

    /// The answer's text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Bytes of markdown the last update parsed: the work that grows with the answer's length
    /// when everything is re-rendered, and stays near a block's when only the tail is.
    pub fn last_parsed_bytes(&self) -> usize {
        self.last_parsed
    }
}

/// Whether `line` opens or closes a fenced code block: its fence character and length.
fn fence_of(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// Whether `line` could continue the block before a blank line: indented (code or a list
/// item's continuation) or a list item (a loose list).
fn may_continue(line: &str) -> bool {
    if line.starts_with([' ', '\t']) {
        return true;
    }
    let t = line.trim_end();
    if ["- ", "* ", "+ "].iter().any(|m| t.starts_with(m)) || matches!(t, "-" | "*" | "+") {
        return true;
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    (1..=9).contains(&digits) && t[digits..].starts_with(['.', ')'])
}

/// The byte offset of the last block boundary in `text` after `from` (a boundary itself, so
/// outside any fence): the start of a line at the margin that follows a blank line outside a
/// fenced code block and cannot continue the block before it. Only complete lines count: the
/// last line may still grow.
fn last_boundary(text: &str, from: usize) -> Option<usize> {
    let mut fence: Option<(char, usize)> = None;
    let mut after_blank = false;
    let mut found = None;
    let mut at = from;
    let rest = &text[from..];
    // Lines that end in '\n' are complete; the text after the last '\n' may still grow.
    let complete = rest.rfind('\n').map_or("", |i| &rest[..=i]);
    for line in complete.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        match fence {
            Some((c, n)) => {
                if fence_of(body).is_some_and(|(c2, n2)| c2 == c && n2 >= n)
                    && body.trim_start().chars().all(|x| x == c)
                {
                    fence = None;
                }
                after_blank = false;
            }
            None if body.trim().is_empty() => after_blank = true,
            None => {
                if after_blank && at > from && !may_continue(body) {
                    found = Some(at);
                }
                fence = fence_of(body);
                after_blank = false;
            }
        }
        at += line.len();
    }
    found
}
