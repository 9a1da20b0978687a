//! The code-map check (`cargo xtask codemap`, and a step of `cargo xtask test`): every Rust
//! source file of the app and the crates must be named in the "Code map" section of
//! `ARCHITECTURE.md`.
//!
//! The files checked are the `*.rs` under `src/` and `tests/` at the root and under `src/`,
//! `tests/`, `examples/` and `benches/` of every `crates/*`. A file is named when a code span
//! (`` `…` ``) of the code map is
//!
//! - its path, relative to the root (`src/runner.rs`);
//! - a brace pattern that expands to it (`crates/ttft-server/src/sim/{plan,text}.rs`);
//! - a glob whose `*` stands for part of one path segment (`src/components/*.rs` names the
//!   files directly in `src/components/`, not those in its subfolders).
//!
//! A folder alone (`crates/ttft-charts`, `src/components/`) names no file: a row for a folder
//! must say which files it covers.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// The folders searched for `*.rs` files at the root, and in every `crates/*`.
const ROOT_DIRS: &[&str] = &["src", "tests"];
const CRATE_DIRS: &[&str] = &["src", "tests", "examples", "benches"];

/// Checks the code map of `root/ARCHITECTURE.md` against the sources under `root`, printing
/// every file it does not name.
pub(crate) fn check(root: &Path) -> Result<()> {
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
        .context("ARCHITECTURE.md is missing")?;
    let patterns = code_map_patterns(&doc)?;
    let files = source_files(root)?;
    let missing = unnamed(&files, &patterns);
    if missing.is_empty() {
        eprintln!("    the code map names all {} source files", files.len());
        return Ok(());
    }
    eprintln!(
        "    ARCHITECTURE.md's code map does not name these {} of {} source files:",
        missing.len(),
        files.len()
    );
    for f in &missing {
        eprintln!("      {f}");
    }
    eprintln!(
        "    add a row naming each (its path, a brace pattern like `dir/{{a,b}}.rs`, or `dir/*.rs`)"
    );
    bail!(
        "the code map misses {} of {} source files",
        missing.len(),
        files.len()
    )
}

/// The files of `files` that no pattern names, in order.
fn unnamed(files: &[String], patterns: &[String]) -> Vec<String> {
    files
        .iter()
        .filter(|f| !is_named(f, patterns))
        .cloned()
        .collect()
}

/// The code spans of the "Code map" section (from its `## ` heading to the next one).
fn code_map_patterns(doc: &str) -> Result<Vec<String>> {
    let section: Vec<&str> = doc
        .lines()
        .skip_while(|l| !l.trim().eq_ignore_ascii_case("## code map"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect();
    if section.is_empty() {
        bail!("ARCHITECTURE.md has no `## Code map` section");
    }
    let mut spans = Vec::new();
    for line in section {
        // Odd pieces between backticks are code spans.
        spans.extend(
            line.split('`')
                .skip(1)
                .step_by(2)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
    }
    Ok(spans)
}

/// Whether a code span names `file` (a root-relative path with `/` separators): literally, by
/// brace expansion, or by a `*` glob within one segment.
fn is_named(file: &str, patterns: &[String]) -> bool {
    patterns
        .iter()
        .flat_map(|p| expand_braces(p))
        .any(|p| glob_match(&p, file))
}

/// Expands every `{a,b,…}` group (nested or several): `x/{a,b}.rs` → `x/a.rs`, `x/b.rs`.
fn expand_braces(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_owned()];
    };
    // The matching close brace, and the top-level commas between them.
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, ch) in pattern[open..].char_indices() {
        let i = open + i;
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![pattern.to_owned()];
    };
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    bounds
        .windows(2)
        .flat_map(|w| expand_braces(&format!("{head}{}{tail}", &pattern[w[0] + 1..w[1]])))
        .collect()
}

/// Whether `path` matches `pattern` segment by segment, `*` matching any run of characters
/// within one segment (so `a/*.rs` matches `a/b.rs` but not `a/b/c.rs`).
fn glob_match(pattern: &str, path: &str) -> bool {
    let (p, f): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    p.len() == f.len() && p.iter().zip(&f).all(|(p, f)| segment_match(p, f))
}

/// `*` wildcards within one path segment.
fn segment_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty(); // no `*`: the whole segment must match
    };
    for m in middle {
        match rest.find(m) {
            Some(i) => rest = &rest[i + m.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Every `*.rs` file under the checked folders, root-relative with `/` separators, sorted.
fn source_files(root: &Path) -> Result<Vec<String>> {
    let mut dirs: Vec<String> = ROOT_DIRS.iter().map(|d| (*d).to_owned()).collect();
    let mut crates: Vec<String> = std::fs::read_dir(root.join("crates"))
        .context("no crates/ folder")?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort();
    for c in &crates {
        dirs.extend(CRATE_DIRS.iter().map(|d| format!("crates/{c}/{d}")));
    }
    let mut files = Vec::new();
    let mut stack: Vec<String> = dirs;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue; // a crate without tests/, examples/ or benches/
        };
        for e in entries {
            let e = e?;
            let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
            if e.file_type()?.is_dir() {
                stack.push(rel);
            } else if rel.ends_with(".rs") {
                files.push(rel);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Architecture

Mentions `src/outside.rs` before the map.

## Code map

| path | what it is |
| --- | --- |
| `src/main.rs` | mounts the app |
| `crates/ttft-server/src/sim/{profile,plan,text}.rs` | the simulator |
| `src/components/*.rs` | components |
| `crates/ttft-charts` | a folder: names no file |
| `src/state.rs`, `src/clock.rs` | two in one row |
| `crates/ttft-server/src/lib.rs` | the server's library |

## Invariants

- `src/after.rs` is after the map.
";

    fn named(file: &str) -> bool {
        is_named(file, &code_map_patterns(DOC).unwrap())
    }

    #[test]
    fn a_literal_path_is_named() {
        assert!(named("src/main.rs"));
        assert!(named("src/state.rs"));
        assert!(named("src/clock.rs"));
    }

    #[test]
    fn a_brace_pattern_names_each_alternative() {
        assert!(named("crates/ttft-server/src/sim/profile.rs"));
        assert!(named("crates/ttft-server/src/sim/plan.rs"));
        assert!(named("crates/ttft-server/src/sim/text.rs"));
        assert!(!named("crates/ttft-server/src/sim/truth.rs"));
        assert_eq!(
            expand_braces("a/{b,c/{d,e}}.rs"),
            ["a/b.rs", "a/c/d.rs", "a/c/e.rs"]
        );
        assert_eq!(expand_braces("{a,b}/{c,d}"), ["a/c", "a/d", "b/c", "b/d"]);
    }

    #[test]
    fn a_glob_names_the_files_directly_in_its_folder() {
        assert!(named("src/components/replay.rs"));
        assert!(!named("src/components/report/view.rs"));
        assert!(!named("src/components.rs"));
        assert!(segment_match("*.rs", "a.rs"));
        assert!(segment_match("a*b*c", "aXbYc"));
        assert!(!segment_match("a*b*c", "aXc"));
        assert!(!segment_match("ab*ba", "aba"));
    }

    #[test]
    fn a_missing_file_is_reported() {
        let patterns = code_map_patterns(DOC).unwrap();
        let files = [
            "src/main.rs",
            "src/runner.rs",
            "crates/ttft-charts/src/lib.rs",
            "src/lib.rs",
            "src/outside.rs",
            "src/after.rs",
        ]
        .map(str::to_owned);
        // A folder row names nothing; `src/lib.rs` is not named by `crates/ttft-server/src/lib.rs`
        // (whole spans, not substrings); only the code map section counts.
        assert_eq!(
            unnamed(&files, &patterns),
            [
                "src/runner.rs",
                "crates/ttft-charts/src/lib.rs",
                "src/lib.rs",
                "src/outside.rs",
                "src/after.rs",
            ]
        );
    }

    #[test]
    fn a_document_without_a_code_map_is_an_error() {
        assert!(code_map_patterns("# Architecture\n\nNo map here.\n").is_err());
    }

    #[test]
    fn source_files_walks_the_checked_folders() {
        let dir = std::env::temp_dir().join(format!("xtask-codemap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in [
            "src/main.rs",
            "src/components/a.rs",
            "tests/web.rs",
            "crates/c/src/lib.rs",
            "crates/c/examples/e.rs",
            "crates/c/benches/b.rs",
            "crates/c/tests/t.rs",
            "crates/c/build.rs",
            "crates/c/src/data.json",
            "other/x.rs",
        ] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let files = source_files(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            files,
            [
                "crates/c/benches/b.rs",
                "crates/c/examples/e.rs",
                "crates/c/src/lib.rs",
                "crates/c/tests/t.rs",
                "src/components/a.rs",
                "src/main.rs",
                "tests/web.rs",
            ]
        );
    }
}
