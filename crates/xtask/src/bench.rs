//! `cargo xtask bench`: builds the app if needed, installs Locust if it can, and runs the
//! `ttft-bench` binary (crate `crates/ttft-bench`) in release, which writes `BENCHMARKS.md` and
//! `bench/results.json`.

use std::time::Instant;

use anyhow::Result;

use crate::tools::{app_is_fresh, build_app, cmd, ensure_browser, ensure_tools, root, run};

/// `cargo xtask bench`: the studio in headless Chromium against the reference endpoint;
/// writes BENCHMARKS.md and bench/results.json (not part of `test`).
pub(crate) fn bench() -> Result<()> {
    let started = Instant::now();
    ensure_tools()?;
    ensure_browser()?;
    if app_is_fresh() {
        eprintln!("==> the built app in dist/ is up to date");
    } else {
        build_app()?;
    }
    // The Locust section needs Locust; without it the bench skips that section and says so.
    let locust = match crate::locust::ensure_locust() {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("==> no Locust ({e:#}): the benchmark skips its Locust section");
            None
        }
    };
    run("benchmark (headless Chromium, reference endpoint)", {
        let mut c = cmd("cargo");
        c.args([
            "run",
            "--release",
            "-p",
            "ttft-bench",
            "--bin",
            "ttft-bench",
            "--",
        ])
        .arg(root());
        if let Some(l) = locust {
            c.env("LOCUST", l);
        }
        c
    })?;
    eprintln!(
        "==> benchmark finished in {:.0} s: BENCHMARKS.md, bench/results.json",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
