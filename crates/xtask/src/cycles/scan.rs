//! One file read for the cycle check: the modules it declares (`mod x;`, `mod x { … }`), the
//! paths it names (`use` trees expanded, and paths in code such as `crate::a::f()`), each with
//! the inline modules it sits in, and the `macro_rules!` macros it defines and invokes. Items under `#[cfg(test)]` (or `cfg(all(test, …))`) are
//! skipped whole: tests may import anything.

use super::lex::{Tok, Token};

/// What one file declares and names.
#[derive(Debug, Default)]
pub(super) struct Scan {
    pub(super) mods: Vec<ModDecl>,
    pub(super) refs: Vec<Ref>,
    /// The `macro_rules!` macros it defines, by name.
    pub(super) macros: Vec<String>,
    /// Lines of `#[path = …]` attributes, which the check cannot follow.
    pub(super) path_attrs: Vec<usize>,
}

/// `mod name;` (its own file) or `mod name { … }` (inline).
#[derive(Debug)]
pub(super) struct ModDecl {
    /// The inline modules, within the file, that the declaration sits in.
    pub(super) within: Vec<String>,
    pub(super) name: String,
    pub(super) inline: bool,
    pub(super) line: usize,
}

/// A path the file names.
#[derive(Debug)]
pub(super) struct Ref {
    /// The inline modules, within the file, that the path sits in.
    pub(super) within: Vec<String>,
    /// The path's segments (`["crate", "a", "B"]`); a leading `::` is an empty segment.
    pub(super) segs: Vec<String>,
    pub(super) kind: RefKind,
    pub(super) line: usize,
}

/// Where a path was named.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum RefKind {
    /// In code (an expression, a type, a macro body…).
    Code,
    /// In a `use` tree: the name it brings into scope (`None` for `as _`), or a glob (`::*`).
    Use { name: Option<String>, glob: bool },
    /// A macro invoked (`name!(…)`, `crate::name!{…}`): the path's last segment is its name.
    Macro,
}

impl Ref {
    /// The path as written, after expanding its `use` tree (`crate::a::B as C`, `super::x::*`).
    pub(super) fn text(&self) -> String {
        let mut t = self.segs.join("::");
        if self.kind == RefKind::Macro {
            t.push('!');
        }
        if let RefKind::Use { name, glob } = &self.kind {
            if *glob {
                t.push_str("::*");
            } else if name.as_deref() != self.segs.last().map(String::as_str) {
                t.push_str(&format!(" as {}", name.as_deref().unwrap_or("_")));
            }
        }
        t
    }
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t.map(|t| &t.tok) {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

fn is(t: Option<&Token>, ch: char) -> bool {
    matches!(t.map(|t| &t.tok), Some(Tok::Punct(c)) if *c == ch)
}

fn is_sep(t: Option<&Token>) -> bool {
    matches!(t.map(|t| &t.tok), Some(Tok::PathSep))
}

/// Whether a macro's `!` and its opening bracket start at `i`.
fn is_bang(toks: &[Token], i: usize) -> bool {
    is(toks.get(i), '!')
        && (is(toks.get(i + 1), '(') || is(toks.get(i + 1), '[') || is(toks.get(i + 1), '{'))
}

/// Reads one file's tokens.
pub(super) fn scan(toks: &[Token]) -> Scan {
    let mut s = Scan::default();
    // The inline modules open at this point, each with the brace depth inside it.
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let within = || open.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        if let Some((end, inner)) = test_only_attr(toks, i) {
            if !inner {
                i = skip_item(toks, end);
            } else if open.is_empty() {
                return Scan::default(); // `#![cfg(test)]`: the file is test code whole
            } else {
                i = skip_to_scope_end(toks, end);
            }
            continue;
        }
        let line = toks[i].line;
        match &toks[i].tok {
            Tok::Punct('#')
                if is(toks.get(i + 1), '[') && ident(toks.get(i + 2)) == Some("path") =>
            {
                s.path_attrs.push(line);
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if open.last().is_some_and(|&(_, d)| d == depth) {
                    open.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some(name) = ident(toks.get(i + 1)).filter(|n| !n.starts_with('$')) {
                    let inline = is(toks.get(i + 2), '{');
                    if inline || is(toks.get(i + 2), ';') {
                        s.mods.push(ModDecl {
                            within: within(),
                            name: name.to_owned(),
                            inline,
                            line,
                        });
                        if inline {
                            depth += 1;
                            open.push((name.to_owned(), depth));
                        }
                        i += 3;
                        continue;
                    }
                }
            }
            Tok::Ident(k) if k == "macro_rules" && is(toks.get(i + 1), '!') => {
                if let Some(name) = ident(toks.get(i + 2)) {
                    s.macros.push(name.to_owned());
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(name)
                if is_bang(toks, i + 1)
                    && !(i > 0 && (is_sep(toks.get(i - 1)) || is(toks.get(i - 1), '.'))) =>
            {
                s.refs.push(Ref {
                    within: within(),
                    segs: vec![name.clone()],
                    kind: RefKind::Macro,
                    line,
                });
                i += 2;
                continue;
            }
            Tok::Ident(k) if k == "use" => {
                let mut items = Vec::new();
                if let Some(end) = use_tree(toks, i + 1, Vec::new(), &mut items)
                    && is(toks.get(end), ';')
                {
                    let within = within();
                    s.refs.extend(items.into_iter().map(|(segs, kind)| Ref {
                        within: within.clone(),
                        segs,
                        kind,
                        line,
                    }));
                    i = end + 1;
                    continue;
                }
            }
            // `pub(in crate::a)` restricts visibility; it imports nothing.
            Tok::Ident(k)
                if k == "pub"
                    && is(toks.get(i + 1), '(')
                    && ident(toks.get(i + 2)) == Some("in") =>
            {
                i = (i..toks.len())
                    .find(|&j| is(toks.get(j), ')'))
                    .unwrap_or(toks.len());
                continue;
            }
            Tok::Ident(first)
                if is_sep(toks.get(i + 1))
                    && ident(toks.get(i + 2)).is_some()
                    && !(i > 0 && (is_sep(toks.get(i - 1)) || is(toks.get(i - 1), '.'))) =>
            {
                let mut segs = vec![first.clone()];
                let mut j = i + 1;
                while is_sep(toks.get(j))
                    && let Some(next) = ident(toks.get(j + 1))
                {
                    segs.push(next.to_owned());
                    j += 2;
                }
                let kind = if is_bang(toks, j) {
                    RefKind::Macro
                } else {
                    RefKind::Code
                };
                s.refs.push(Ref {
                    within: within(),
                    segs,
                    kind,
                    line,
                });
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    s
}

/// Expands the `use` tree starting at `i` (after `use`, or inside a group) under `prefix`
/// into `out`, returning the index after it; `None` when this is no use tree (`use<'a>`).
fn use_tree(
    toks: &[Token],
    mut i: usize,
    mut segs: Vec<String>,
    out: &mut Vec<(Vec<String>, RefKind)>,
) -> Option<usize> {
    if segs.is_empty() && is_sep(toks.get(i)) {
        segs.push(String::new()); // `use ::std::…`: another crate
        i += 1;
    }
    loop {
        match &toks.get(i)?.tok {
            Tok::Ident(name) => {
                segs.push(name.clone());
                i += 1;
                if is_sep(toks.get(i)) {
                    i += 1;
                    continue;
                }
                let alias = if ident(toks.get(i)) == Some("as") {
                    i += 2;
                    Some(ident(toks.get(i - 1))?.to_owned())
                } else {
                    None
                };
                // `a::{self}` names `a` itself.
                if segs.len() > 1 && segs.last().is_some_and(|s| s == "self") {
                    segs.pop();
                }
                let name = match alias {
                    Some(a) if a == "_" => None,
                    Some(a) => Some(a),
                    None => segs.last().cloned(),
                };
                out.push((segs, RefKind::Use { name, glob: false }));
                return Some(i);
            }
            Tok::Punct('*') => {
                out.push((
                    segs,
                    RefKind::Use {
                        name: None,
                        glob: true,
                    },
                ));
                return Some(i + 1);
            }
            Tok::Punct('{') => {
                i += 1;
                loop {
                    if is(toks.get(i), '}') {
                        return Some(i + 1);
                    }
                    i = use_tree(toks, i, segs.clone(), out)?;
                    if is(toks.get(i), ',') {
                        i += 1;
                    } else if !is(toks.get(i), '}') {
                        return None;
                    }
                }
            }
            _ => return None,
        }
    }
}

/// When an outer or inner attribute that keeps code to tests (`#[cfg(test)]`,
/// `#[cfg(all(test, …))]`) starts at `i`: the index after it, and whether it is inner (`#!`).
fn test_only_attr(toks: &[Token], i: usize) -> Option<(usize, bool)> {
    if !is(toks.get(i), '#') {
        return None;
    }
    let inner = is(toks.get(i + 1), '!');
    let mut j = i + 1 + usize::from(inner);
    if !(is(toks.get(j), '[') && ident(toks.get(j + 1)) == Some("cfg") && is(toks.get(j + 2), '('))
    {
        return None;
    }
    j += 3;
    let end = close_of(toks, j - 1)?; // the `)` of `cfg(`
    let test = match ident(toks.get(j))? {
        "test" => j + 1 == end,
        // `all(…)` with `test` as one of its own terms.
        "all" if is(toks.get(j + 1), '(') => {
            let all_end = close_of(toks, j + 1)?;
            all_end + 1 == end
                && (j + 2..all_end).any(|k| {
                    ident(toks.get(k)) == Some("test")
                        && (is(toks.get(k - 1), '(') || is(toks.get(k - 1), ','))
                        && (is(toks.get(k + 1), ',') || k + 1 == all_end)
                })
        }
        _ => false,
    };
    (test && is(toks.get(end + 1), ']')).then_some((end + 2, inner))
}

/// The index of the bracket closing the one opened at `open`.
fn close_of(toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index after the item starting at `i`: after its `;` or its closing `}` at its own
/// level (further attributes included), or at a bracket closing an enclosing one (a field).
fn skip_item(toks: &[Token], i: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(i) {
        match t.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(c @ (')' | ']' | '}')) => {
                if depth == 0 {
                    return k;
                }
                depth -= 1;
                if depth == 0 && c == '}' {
                    return k + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return k + 1,
            _ => {}
        }
    }
    toks.len()
}

/// The index of the bracket closing the scope `i` is in.
fn skip_to_scope_end(toks: &[Token], i: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(i) {
        match t.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                if depth == 0 {
                    return k;
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    toks.len()
}

#[cfg(test)]
mod tests {
    use super::super::lex::{strip, tokens};
    use super::*;

    fn refs(src: &str) -> Vec<String> {
        refs_of(&scan(&tokens(&strip(src))))
    }

    #[test]
    fn use_trees_are_expanded() {
        assert_eq!(
            refs(
                "pub(crate) use crate::a::{b::{self, C as D}, e::*, f as _, g};\nuse ::std::fmt;\nuse super::super::h;"
            ),
            [
                "crate::a::b",
                "crate::a::b::C as D",
                "crate::a::e::*",
                "crate::a::f as _",
                "crate::a::g",
                "::std::fmt",
                "super::super::h",
            ]
        );
    }

    #[test]
    fn paths_in_code_are_read_whole() {
        assert_eq!(
            refs(
                "fn f() -> crate::a::B { let x = super::c::d(1).e::<u8>(); Vec::<u8>::new(); self.g; crate::h::I { j: 1 } }"
            ),
            ["crate::a::B", "super::c::d", "crate::h::I"]
        );
    }

    #[test]
    fn test_only_items_are_skipped_and_what_follows_is_read() {
        let src = "#[cfg(test)]\nmod tests {\n    use crate::a::A;\n    fn f() { crate::b::g() }\n}\n#[cfg(test)] use crate::c::C;\n#[cfg(all(test, feature = \"x\"))] #[allow(unused)] fn h() -> [u8; 2] { crate::d::e() }\n#[cfg(any(test, feature = \"x\"))] use crate::kept::K;\n#[cfg(not(test))] use crate::kept::L;\nuse crate::after::Z;";
        assert_eq!(
            refs(src),
            ["crate::kept::K", "crate::kept::L", "crate::after::Z"]
        );
        assert!(refs("#![cfg(test)]\nmod a;\nuse crate::a::B;").is_empty());
    }

    #[test]
    fn modules_are_declared_and_inline_ones_scope_their_paths() {
        let s = scan(&tokens(&strip(
            "mod a;\npub mod b {\n    pub(crate) mod c;\n    use super::a::X;\n}\nuse self::b::Y;\n#[cfg(test)]\nmod tests;\nmacro_rules! m { ($n:ident) => { mod $n; } }",
        )));
        let mods: Vec<_> = s
            .mods
            .iter()
            .map(|m| (m.within.join("::"), m.name.as_str(), m.inline, m.line))
            .collect();
        assert_eq!(
            mods,
            [
                (String::new(), "a", false, 1),
                (String::new(), "b", true, 2),
                ("b".to_owned(), "c", false, 3)
            ]
        );
        assert_eq!(refs_of(&s), ["[b] super::a::X", "self::b::Y"]);
    }

    fn refs_of(s: &Scan) -> Vec<String> {
        s.refs
            .iter()
            .map(|r| {
                let within = r.within.join("::");
                if within.is_empty() {
                    r.text()
                } else {
                    format!("[{within}] {}", r.text())
                }
            })
            .collect()
    }

    #[test]
    fn macros_defined_and_invoked() {
        let s = scan(&tokens(&strip(
            "macro_rules! here { () => { $crate::a::B } }\nhere!();\ncrate::there![1];\nlet v = vec![a != b];\nx.y!();",
        )));
        assert_eq!(s.macros, ["here"]);
        assert_eq!(
            refs_of(&s),
            ["crate::a::B", "here!", "crate::there!", "vec!"]
        );
    }

    #[test]
    fn visibility_paths_and_precise_captures_are_no_imports() {
        assert_eq!(
            refs("pub(in crate::a) fn f() -> impl Sized + use<'a> { crate::b::c() }"),
            ["crate::b::c"]
        );
    }
}
