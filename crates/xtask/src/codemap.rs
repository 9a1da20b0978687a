//! The code-map check (`cargo xtask codemap`, and a step of `cargo xtask test`): the "Code map"
//! section of `ARCHITECTURE.md` must name every crate and every top-level folder, and every path
//! the document names must exist, so the map can neither leave a folder out nor lie.
//!
//! The folders the map must name are every folder at the root (`src/`, `style/`, `tests/`,
//! `crates/` …) but hidden ones (`.cargo/`) and those the root `.gitignore` names (`target/`,
//! `dist/`), and every folder directly in one of [`DETAILED`]: each crate (`crates/ttft-core/`)
//! and each folder of the app's source (`src/components/`). A folder is named by a code span
//! (`` `…` ``) of the code map that is its path, with or without the final `/`
//! (`crates/ttft-core`), or a brace pattern one of whose expansions is
//! (`src/{actions,browser}/`); a file inside it or a glob (`crates/*/`) does not name it.
//!
//! A code span anywhere in the document (fenced blocks aside) whose first segment is an entry of
//! the root other than an ignored one (`src/…`, `crates/…`, `Cargo.toml`, `.ci/run`) is a path
//! from the root and must exist: each expansion of a brace pattern
//! (`crates/ttft-server/src/sim/{plan,text}.rs`), a folder where it ends in `/`, and for a glob
//! (`*` within one segment: `src/components/*.rs`) at least one path. Other spans
//! (`GET /v1/models`, `ttft_core::report`, `target/dist/`) are not read as paths, and neither is
//! one relative to some folder (`report/mod.rs`): a path the check should hold is written from
//! the root.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};

/// The folders whose every folder the code map must name, besides the root's: the crates and
/// the app's source.
const DETAILED: &[&str] = &["crates", "src"];

/// Checks `root/ARCHITECTURE.md` against the folders under `root`, printing every folder its
/// code map does not name and every path it names that does not exist.
pub(crate) fn check(root: &Path) -> Result<()> {
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md"))
        .context("ARCHITECTURE.md is missing")?;
    let patterns = code_map_patterns(&doc)?;
    let folders = required_folders(root)?;
    let unnamed = unnamed(&folders, &patterns);
    let missing = missing_paths(root, &root_entries(root)?, &spans(&doc));
    if unnamed.is_empty() && missing.is_empty() {
        eprintln!(
            "    the code map names all {} folders, and every path ARCHITECTURE.md names exists",
            folders.len()
        );
        return Ok(());
    }
    if !unnamed.is_empty() {
        eprintln!(
            "    ARCHITECTURE.md's code map does not name these {} of {} folders:",
            unnamed.len(),
            folders.len()
        );
        for f in &unnamed {
            eprintln!("      {f}");
        }
        eprintln!(
            "    add a row naming each (its path, like `crates/ttft-core/`, or a brace pattern like `src/{{a,b}}/`)"
        );
    }
    if !missing.is_empty() {
        eprintln!(
            "    ARCHITECTURE.md names these {} paths, which do not exist:",
            missing.len()
        );
        for p in &missing {
            eprintln!("      {p}");
        }
        eprintln!(
            "    a span starting with a folder or file of the root is read from the root: write it in full, or mend it"
        );
    }
    bail!(
        "the code map misses {} of {} folders; {} named paths do not exist",
        unnamed.len(),
        folders.len(),
        missing.len()
    )
}

/// The folders of `folders` that no pattern names, in order.
fn unnamed(folders: &[String], patterns: &[String]) -> Vec<String> {
    folders
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
    Ok(spans(&section.join("\n")))
}

/// The code spans of `text` outside fenced blocks (a span broken over lines joined by a space).
fn spans(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut prose = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    // Odd pieces between backticks are code spans.
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.replace('\n', " ").trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Whether a code span names `folder` (`a/b/`): its path, with or without the final `/`,
/// literally or by brace expansion.
fn is_named(folder: &str, patterns: &[String]) -> bool {
    let folder = folder.trim_end_matches('/');
    patterns
        .iter()
        .flat_map(|p| expand_braces(p))
        .any(|p| p.trim_end_matches('/') == folder)
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

/// The names the root `.gitignore` leaves out as whole entries (`/target`, `dist/`,
/// `node_modules`), and `.git`.
fn ignored(root: &Path) -> BTreeSet<String> {
    let gitignore = std::fs::read_to_string(root.join(".gitignore")).unwrap_or_default();
    let mut names: BTreeSet<String> = gitignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('!'))
        .map(|l| l.trim_start_matches('/').trim_end_matches('/'))
        .filter(|l| !l.contains(['/', '*', '?', '[']))
        .map(str::to_owned)
        .collect();
    names.insert(".git".to_owned());
    names
}

/// The names of the folders directly in `dir`, sorted.
fn folders_in(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let e = e?;
        if e.file_type()?.is_dir() {
            names.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// The folders the code map must name, root-relative with a final `/`, sorted: the root's
/// but hidden and ignored ones, and the folders directly in each of [`DETAILED`].
fn required_folders(root: &Path) -> Result<Vec<String>> {
    let ignored = ignored(root);
    let mut out = Vec::new();
    for name in folders_in(root)? {
        if name.starts_with('.') || ignored.contains(&name) {
            continue;
        }
        out.push(format!("{name}/"));
        if DETAILED.contains(&name.as_str()) {
            out.extend(
                folders_in(&root.join(&name))?
                    .into_iter()
                    .filter(|sub| !sub.starts_with('.'))
                    .map(|sub| format!("{name}/{sub}/")),
            );
        }
    }
    Ok(out)
}

/// The entries of the root a path may start with: every file and folder but ignored ones.
fn root_entries(root: &Path) -> Result<BTreeSet<String>> {
    let ignored = ignored(root);
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(root).context("cannot list the root")? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if !ignored.contains(&name) {
            names.insert(name);
        }
    }
    Ok(names)
}

/// The paths that `spans` name from the root (see the module's doc) and that do not exist,
/// each once, in order.
fn missing_paths(root: &Path, entries: &BTreeSet<String>, spans: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for span in spans {
        for p in expand_braces(span) {
            let first = p.split('/').next().unwrap_or_default();
            if p.contains(char::is_whitespace) || !entries.contains(first) {
                continue;
            }
            if !exists(root, &p) && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Whether the root-relative `path` exists: a folder if it ends in `/`; a `*` within a segment
/// matches any run of characters, and some path must match.
fn exists(root: &Path, path: &str) -> bool {
    let folder = path.ends_with('/');
    let mut found = vec![root.to_path_buf()];
    for seg in path.trim_end_matches('/').split('/') {
        found = found
            .iter()
            .flat_map(|at| -> Vec<std::path::PathBuf> {
                if !seg.contains('*') {
                    return vec![at.join(seg)];
                }
                std::fs::read_dir(at)
                    .map(|entries| {
                        entries
                            .filter_map(|e| e.ok())
                            .filter(|e| segment_match(seg, &e.file_name().to_string_lossy()))
                            .map(|e| e.path())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .filter(|p| p.exists())
            .collect();
    }
    found.iter().any(|p| !folder || p.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::Tree;

    const DOC: &str = "# Architecture

Mentions `style/` before the map.

## Code map

| path | what it is |
| --- | --- |
| `src/main.rs` | mounts the app |
| `crates/ttft-core/` | the core |
| `src/components` | views (no final slash) |
| `src/{actions,browser}/` | two folders in one pattern |
| `crates/*/` | a glob: names no folder |
| `crates/ttft-charts/src/lib.rs` | a file: names not its crate |
| `tests/`, `js/` | two in one row |

## Invariants

- `docs/` is after the map.
";

    fn named(folder: &str) -> bool {
        is_named(folder, &code_map_patterns(DOC).unwrap())
    }

    #[test]
    fn a_folder_is_named_by_its_path_or_a_brace_pattern() {
        assert!(named("crates/ttft-core/"));
        assert!(named("src/components/"));
        assert!(named("src/actions/"));
        assert!(named("src/browser/"));
        assert!(named("tests/"));
        assert!(named("js/"));
        assert_eq!(
            expand_braces("a/{b,c/{d,e}}.rs"),
            ["a/b.rs", "a/c/d.rs", "a/c/e.rs"]
        );
        assert_eq!(expand_braces("{a,b}/{c,d}"), ["a/c", "a/d", "b/c", "b/d"]);
    }

    #[test]
    fn a_folder_left_out_is_reported() {
        let patterns = code_map_patterns(DOC).unwrap();
        let folders = [
            "crates/",
            "crates/ttft-charts/",
            "crates/ttft-core/",
            "docs/",
            "src/",
            "src/components/",
            "style/",
        ]
        .map(str::to_owned);
        // A glob and a file inside name no folder; `src/main.rs` does not name `src/`; only
        // the code map section counts.
        assert_eq!(
            unnamed(&folders, &patterns),
            ["crates/", "crates/ttft-charts/", "docs/", "src/", "style/"]
        );
    }

    #[test]
    fn a_document_without_a_code_map_is_an_error() {
        assert!(code_map_patterns("# Architecture\n\nNo map here.\n").is_err());
    }

    #[test]
    fn spans_leave_fenced_blocks_out_and_join_broken_ones() {
        let doc = "a `x/y` and `broken\nspan` here\n```\nnot `in/a/span`\n```\n`z`\n";
        assert_eq!(spans(doc), ["x/y", "broken span", "z"]);
    }

    #[test]
    fn glob_segments() {
        assert!(segment_match("*.rs", "a.rs"));
        assert!(segment_match("a*b*c", "aXbYc"));
        assert!(!segment_match("a*b*c", "aXc"));
        assert!(!segment_match("ab*ba", "aba"));
    }

    const FILES: &[(&str, &str)] = &[
        (
            ".gitignore",
            "/target\ndist/\nnode_modules\n*.profraw\n# a comment\n",
        ),
        ("Cargo.toml", ""),
        (".ci/run", ""),
        ("target/debug/x", ""),
        ("dist/index.html", ""),
        ("node_modules/a/b.js", ""),
        ("src/main.rs", ""),
        ("src/components/a.rs", ""),
        ("src/components/report/view.rs", ""),
        ("src/browser/mod.rs", ""),
        ("style/main.css", ""),
        ("tests/web.rs", ""),
        ("crates/c/Cargo.toml", ""),
        ("crates/c/src/inner/x.rs", ""),
        ("crates/d/src/lib.rs", ""),
    ];

    #[test]
    fn the_folders_to_name_are_the_roots_the_crates_and_the_apps() {
        let tree = Tree::new("folders", FILES);
        assert_eq!(
            required_folders(&tree.0).unwrap(),
            [
                "crates/",
                "crates/c/",
                "crates/d/",
                "src/",
                "src/browser/",
                "src/components/",
                "style/",
                "tests/",
            ]
        );
    }

    #[test]
    fn a_named_path_that_does_not_exist_is_reported() {
        let tree = Tree::new("paths", FILES);
        let spans = [
            "src/main.rs",
            "src/gone.rs",
            "src/components/*.rs",
            "src/browser/*.rs",
            "src/actions/*.rs",
            "crates/{c,d,e}/",
            "crates/c/src/inner/x.rs/",
            "Cargo.toml",
            ".ci/run",
            ".ci/gone",
            "README.md",
            // Not paths from the root: left alone.
            "GET /v1/models",
            "report/mod.rs",
            "target/dist/",
            "dist/",
            "ttft_core::report",
            "src/main.rs start_run",
        ]
        .map(str::to_owned);
        assert_eq!(
            missing_paths(&tree.0, &root_entries(&tree.0).unwrap(), &spans),
            [
                "src/gone.rs",
                "src/actions/*.rs",
                "crates/e/",
                "crates/c/src/inner/x.rs/",
                ".ci/gone",
            ]
        );
    }

    #[test]
    fn the_check_passes_only_when_the_map_names_all_and_names_no_ghost() {
        let tree = Tree::new("check", FILES);
        let write = |doc: &str| std::fs::write(tree.0.join("ARCHITECTURE.md"), doc).unwrap();
        let map = "# A\n\n## Code map\n\n| `crates/` | crates |\n| `crates/{c,d}/` | two |\n| `src/`, `src/{browser,components}/` | the app |\n| `style/` | css |\n| `tests/` | tests |\n";
        write(map);
        assert!(check(&tree.0).is_ok());
        write(&map.replace("| `style/` | css |\n", ""));
        assert!(check(&tree.0).is_err(), "style/ is not named");
        write(&format!(
            "{map}\n## After\n\n`crates/c/src/lib.rs` is not there\n"
        ));
        assert!(check(&tree.0).is_err(), "a path that does not exist");
    }
}
