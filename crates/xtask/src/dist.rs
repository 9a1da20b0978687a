//! `cargo xtask dist [--check]`: one binary that serves the studio and the reference endpoint
//! with no other file. Builds the app with trunk (unless `dist/` is up to date), then
//! `ttft-server` in release with feature `embed-app` (the app compiled in), copies it to
//! `target/dist/ttft-server` and prints its path and size. `--check` then runs the check
//! `cargo xtask test` runs: the binary, copied alone and started from an empty directory, serves
//! the studio with the right headers and the reference endpoint
//! (`crates/ttft-server/tests/embedded.rs`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::tools::{app_is_fresh, build_app, cmd, ensure_tools, root, run};

/// Builds the app if needed and the one binary; with `--check`, checks it too.
pub(crate) fn dist(args: &[String]) -> Result<()> {
    let check = match args {
        [] => false,
        [a] if a == "--check" => true,
        _ => bail!("usage: cargo xtask dist [--check]"),
    };
    ensure_tools()?;
    if app_is_fresh() {
        eprintln!("==> the built app in dist/ is up to date");
    } else {
        build_app()?;
    }
    let bin = build_server()?;
    if check {
        check_binary(&bin)?;
    }
    Ok(())
}

/// `cargo build --release -p ttft-server --features embed-app` on the app in `dist/`, copied to
/// `target/dist/` (where a later `cargo run -p ttft-server` cannot replace it); prints and
/// returns its path.
pub(crate) fn build_server() -> Result<PathBuf> {
    run(
        "cargo build --release -p ttft-server --features embed-app",
        {
            let mut c = cmd("cargo");
            c.args([
                "build",
                "--release",
                "-p",
                "ttft-server",
                "--features",
                "embed-app",
            ]);
            c
        },
    )?;
    let name = format!("ttft-server{}", std::env::consts::EXE_SUFFIX);
    let built = root().join("target/release").join(&name);
    let out_dir = root().join("target/dist");
    std::fs::create_dir_all(&out_dir)?;
    let bin = out_dir.join(&name);
    std::fs::copy(&built, &bin)
        .with_context(|| format!("copy {} to {}", built.display(), bin.display()))?;
    let size = std::fs::metadata(&bin)?.len();
    println!(
        "{}  ({:.1} MB: the studio and the reference endpoint, no other file needed)",
        bin.display(),
        size as f64 / 1e6
    );
    Ok(bin)
}

/// Runs `crates/ttft-server/tests/embedded.rs` against `bin`.
pub(crate) fn check_binary(bin: &std::path::Path) -> Result<()> {
    run("the one binary, alone in an empty directory", {
        let mut c = cmd("cargo");
        c.args([
            "test",
            "-p",
            "ttft-server",
            "--test",
            "embedded",
            "--",
            "--ignored",
        ])
        .env("TTFT_SERVER_BIN", bin);
        c
    })
}
