//! Dependency rules (steps of `cargo xtask test`):
//! - the independent oracle: the reference endpoint must not link any studio crate, so its
//!   ground truth cannot share a bug with the measurement it checks (its tests may use the core,
//!   to read its streams as the studio does; its build may not);
//! - the sans-IO core: the measurement core and the share format build against no web, browser,
//!   async-runtime or server crate, directly or through another (`cargo tree`), so every figure
//!   is computed by code that runs natively in tests and the same in the browser.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The studio's crates the server must not depend on.
const STUDIO_CRATES: &[&str] = &["ttft-core", "ttft-share", "ttft-charts", "ttft-studio"];

/// Names of the dependencies declared in a manifest's `[dependencies]` and
/// `[build-dependencies]` tables (dev-dependencies are allowed: they build tests only).
fn build_dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = matches!(line, "[dependencies]" | "[build-dependencies]");
            continue;
        }
        if in_table
            && let Some((name, _)) = line.split_once('=')
            && !line.starts_with('#')
        {
            // `name = …`, `name.workspace = true`, `"name" = …`
            let name = name.trim().split('.').next().unwrap_or_default();
            out.push(name.trim_matches('"').to_owned());
        }
    }
    out
}

/// Fails when `crates/ttft-server/Cargo.toml` builds against a studio crate.
pub(crate) fn check(root: &Path) -> Result<()> {
    let manifest = root.join("crates/ttft-server/Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .with_context(|| format!("{} is missing", manifest.display()))?;
    let linked: Vec<String> = build_dependencies(&text)
        .into_iter()
        .filter(|d| STUDIO_CRATES.contains(&d.as_str()))
        .collect();
    if linked.is_empty() {
        eprintln!(
            "    ttft-server builds without any studio crate: it stays an independent oracle"
        );
        Ok(())
    } else {
        bail!(
            "ttft-server depends on {}: the reference endpoint must stay an independent oracle (move the use into its tests, as a dev-dependency)",
            linked.join(", ")
        )
    }
}

/// The crates that must stay sans-IO, and the crates (by name or name prefix) none of them may
/// build against.
const SANS_IO: &[&str] = &["ttft-core", "ttft-share", "ttft-render"];
const IO_CRATES: &[&str] = &[
    "leptos",
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "gloo",
    "tokio",
    "axum",
    "hyper",
    "tower",
    "reqwest",
    "mio",
    "async-std",
];

/// The IO crates in a `cargo tree --prefix none --format {p}` listing (`name vX.Y.Z (path)`).
fn io_crates_in(tree: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| {
            IO_CRATES
                .iter()
                .any(|io| *name == *io || name.starts_with(&format!("{io}-")))
        })
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Fails when the core or the share format builds against a web, async or server crate.
pub(crate) fn check_sans_io(root: &Path) -> Result<()> {
    for krate in SANS_IO {
        if !root.join("crates").join(krate).join("Cargo.toml").exists() {
            continue;
        }
        let out = Command::new("cargo")
            .current_dir(root)
            .args([
                "tree",
                "-p",
                krate,
                "-e",
                "normal,build",
                "--prefix",
                "none",
            ])
            .args(["--format", "{p}"])
            .output()
            .with_context(|| format!("running cargo tree -p {krate}"))?;
        if !out.status.success() {
            bail!(
                "cargo tree -p {krate} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let io = io_crates_in(&String::from_utf8_lossy(&out.stdout));
        if !io.is_empty() {
            bail!(
                "{krate} builds against {}: the core is sans-IO (bytes and times in, events and figures out); move the I/O to the app or the bench",
                io.join(", ")
            );
        }
    }
    eprintln!(
        "    {} build against no web, async or server crate",
        SANS_IO.join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{build_dependencies, io_crates_in};

    #[test]
    fn io_crates_are_found_by_name_and_prefix_only() {
        let tree = "ttft-core v0.1.0 (/w/crates/ttft-core)\nserde v1.0.0\nwasm-bindgen-shared v0.2.1\ntokio v1.0.0\ntokionic v0.1.0\nserde v1.0.0\n";
        assert_eq!(io_crates_in(tree), ["tokio", "wasm-bindgen-shared"]);
        assert!(io_crates_in("ttft-core v0.1.0\nbase64 v0.22.0\n").is_empty());
    }

    #[test]
    fn only_build_tables_count() {
        let manifest = "[package]\nname = \"x\"\n\n[dependencies]\naxum.workspace = true\n\"ttft-core\" = { path = \"../ttft-core\" }\n# ttft-charts = \"1\"\n\n[dev-dependencies]\nttft-charts.workspace = true\nttft-core.workspace = true\n\n[build-dependencies]\ncc = \"1\"\n";
        assert_eq!(build_dependencies(manifest), ["axum", "ttft-core", "cc"]);
    }
}
