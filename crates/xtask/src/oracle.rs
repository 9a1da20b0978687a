//! The independent-oracle check (a step of `cargo xtask test`): the reference endpoint must not
//! link any studio crate, so its ground truth cannot share a bug with the measurement it checks.
//! Its tests may use the core (to read its streams as the studio does); its build may not.

use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::build_dependencies;

    #[test]
    fn only_build_tables_count() {
        let manifest = "[package]\nname = \"x\"\n\n[dependencies]\naxum.workspace = true\n\"ttft-core\" = { path = \"../ttft-core\" }\n# ttft-charts = \"1\"\n\n[dev-dependencies]\nttft-charts.workspace = true\nttft-core.workspace = true\n\n[build-dependencies]\ncc = \"1\"\n";
        assert_eq!(build_dependencies(manifest), ["axum", "ttft-core", "cc"]);
    }
}
