//! Rust source reduced to what the cycle check reads: [`strip`] blanks comments and literals,
//! [`tokens`] cuts the rest into identifiers, `::` and single punctuation, each with its line.

/// `src` with every comment (line, block, nested block, doc) and every string, byte-string,
/// C-string, raw-string and char literal replaced by spaces, newlines kept so lines still
/// count. Lifetimes and labels (`'a`, `'outer:`) are code and stay.
pub(super) fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, from: usize, to: usize| {
        out.extend(
            c[from..to]
                .iter()
                .map(|&ch| if ch == '\n' { '\n' } else { ' ' }),
        );
    };
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            let end = (i..c.len()).find(|&j| c[j] == '\n').unwrap_or(c.len());
            blank(&mut out, i, end);
            i = end;
        } else if ch == '/' && next == Some('*') {
            let end = block_comment_end(&c, i);
            blank(&mut out, i, end);
            i = end;
        } else if is_ident_start(ch) {
            let start = i;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let end = match (word.as_str(), c.get(i)) {
                ("r" | "br" | "cr", Some('"' | '#')) => raw_string_end(&c, i),
                ("b" | "c", Some('"')) => Some(string_end(&c, i)),
                ("b", Some('\'')) => char_end(&c, i),
                _ => None,
            };
            match end {
                Some(end) => {
                    blank(&mut out, start, end);
                    i = end;
                }
                // An identifier (or `r#ident`, whose `#` the tokens skip).
                None => out.push_str(&word),
            }
        } else if ch.is_ascii_digit() {
            // A number with its suffix (`0x1F`, `2u8`), kept whole so `1e3` is no identifier.
            let start = i;
            while i < c.len() && is_ident_continue(c[i]) {
                i += 1;
            }
            out.extend(&c[start..i]);
        } else if ch == '"' {
            let end = string_end(&c, i);
            blank(&mut out, i, end);
            i = end;
        } else if ch == '\'' {
            match char_end(&c, i) {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => {
                    out.push(ch); // a lifetime or a label
                    i += 1;
                }
            }
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

fn is_ident_start(ch: char) -> bool {
    ch == '_' || ch.is_alphabetic()
}

fn is_ident_continue(ch: char) -> bool {
    ch == '_' || ch.is_alphanumeric()
}

/// The end (exclusive) of the block comment opening at `i`, nested comments included.
fn block_comment_end(c: &[char], i: usize) -> usize {
    let (mut j, mut depth) = (i + 2, 1);
    while j < c.len() {
        if c[j] == '/' && c.get(j + 1) == Some(&'*') {
            depth += 1;
            j += 2;
        } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    c.len()
}

/// The end (exclusive) of the string whose opening `"` is at `i`, escapes skipped.
fn string_end(c: &[char], i: usize) -> usize {
    let mut j = i + 1;
    while j < c.len() {
        match c[j] {
            '\\' => j += 2,
            '"' => return j + 1,
            _ => j += 1,
        }
    }
    c.len()
}

/// The end of the raw string whose hashes or quote start at `i` (after its `r`, `br` or
/// `cr`), or `None` when this is no raw string (`r#ident`).
fn raw_string_end(c: &[char], i: usize) -> Option<usize> {
    let hashes = c[i..].iter().take_while(|&&ch| ch == '#').count();
    if c.get(i + hashes) != Some(&'"') {
        return None;
    }
    let mut j = i + hashes + 1;
    while j < c.len() {
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(c.len())
}

/// The end of the char literal whose `'` is at `i` (`'x'`, `'\n'`, `'\''`, `'\u{1F600}'`), or
/// `None` when the quote starts a lifetime or a label (`'a`, `'static`, `'outer:`).
fn char_end(c: &[char], i: usize) -> Option<usize> {
    match c.get(i + 1) {
        Some('\\') => {
            // Past the escaped character, to the closing quote.
            let close = (i + 3..c.len()).find(|&j| c[j] == '\'')?;
            Some(close + 1)
        }
        Some(&ch) if ch != '\'' && c.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// One token of stripped source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Tok {
    /// An identifier or keyword; `$crate` is `crate`, another `$name` keeps its `$`, `r#x` is
    /// `x`.
    Ident(String),
    /// `::`
    PathSep,
    /// Any other punctuation, one character at a time.
    Punct(char),
}

/// A token and the line (from 1) it is on.
#[derive(Clone, Debug)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
}

/// The tokens of stripped source (see [`strip`]). Numbers and lifetimes are left out.
pub(super) fn tokens(stripped: &str) -> Vec<Token> {
    let c: Vec<char> = stripped.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let ident_at = |j: usize| -> (String, usize) {
        let mut k = j;
        while k < c.len() && is_ident_continue(c[k]) {
            k += 1;
        }
        (c[j..k].iter().collect(), k)
    };
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == 'r' && next == Some('#') && c.get(i + 2).is_some_and(|&n| is_ident_start(n))
        {
            let (word, end) = ident_at(i + 2);
            out.push(Token {
                tok: Tok::Ident(word),
                line,
            });
            i = end;
        } else if is_ident_start(ch) {
            let (word, end) = ident_at(i);
            out.push(Token {
                tok: Tok::Ident(word),
                line,
            });
            i = end;
        } else if ch.is_ascii_digit() {
            i = ident_at(i).1;
        } else if ch == '\'' && next.is_some_and(is_ident_start) {
            i = ident_at(i + 1).1; // a lifetime or a label
        } else if ch == '$' && next.is_some_and(is_ident_start) {
            let (word, end) = ident_at(i + 1);
            let word = if word == "crate" {
                word
            } else {
                format!("${word}")
            };
            out.push(Token {
                tok: Tok::Ident(word),
                line,
            });
            i = end;
        } else if ch == ':' && next == Some(':') {
            out.push(Token {
                tok: Tok::PathSep,
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                tok: Tok::Punct(ch),
                line,
            });
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(src: &str) -> Vec<String> {
        tokens(&strip(src))
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Ident(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_and_strings_are_blanked_with_their_lines_kept() {
        let src = "a // crate::x\n/* crate::y /* nested */ crate::z */ b\n\"crate::s\\\"q\" c";
        let s = strip(src);
        assert_eq!(s.lines().count(), 3);
        assert!(!s.contains("crate"), "{s}");
        assert_eq!(idents(src), ["a", "b", "c"]);
        assert_eq!(tokens(&s).last().unwrap().line, 3);
    }

    #[test]
    fn raw_byte_and_c_strings_are_blanked() {
        let src = r####"a r#"crate::x " still"# b br##"crate::y"#"##) c b"crate::z" c"crate::w" d cr#"crate::v"# e"####;
        assert_eq!(idents(src), ["a", "b", "c", "d", "e"]);
    }

    #[test]
    fn char_literals_are_blanked_and_lifetimes_kept_out_of_the_way() {
        let src = "fn f<'a>(x: &'a str) -> char { 'outer: loop { break 'outer; } '\"' } const Q: char = '\\''; const U: char = '\\u{1F600}'; const B: u8 = b'\"'; g";
        let ids = idents(src);
        assert_eq!(ids.last().unwrap(), "g", "{ids:?}");
        // No quote was taken for a string opening: everything after it was read as code.
        assert!(ids.contains(&"U".to_owned()) && ids.contains(&"B".to_owned()));
        assert!(
            !ids.contains(&"a".to_owned()),
            "a lifetime is no identifier: {ids:?}"
        );
    }

    #[test]
    fn raw_identifiers_and_macro_variables() {
        assert_eq!(
            idents("r#type $crate::x $name"),
            ["type", "crate", "x", "$name"]
        );
        let toks = tokens(&strip("a::b: c"));
        assert_eq!(toks[1].tok, Tok::PathSep);
        assert_eq!(toks[3].tok, Tok::Punct(':'));
    }
}
