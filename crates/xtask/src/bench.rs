//! `cargo xtask bench [MODE]`: builds the app if needed and the release server, installs Locust
//! if it can, and runs the `ttft-bench` binary (crate `crates/ttft-bench`) in release, which
//! writes `BENCHMARKS.md` and `bench/results.json`. `MODE` goes to `ttft-bench` as it is
//! (`--server-compare`, `--fidelity-only`, `--render-only`, …).

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
    // The reference endpoint runs as a deployment runs it: the release server, its own process
    // (`TTFT_BENCH_SERVER=in-process` runs it inside the bench instead).
    run("release server (the bench's reference endpoint)", {
        let mut c = cmd("cargo");
        c.args(["build", "--release", "-p", "ttft-server"]);
        c
    })?;
    let args: Vec<String> = std::env::args().skip(2).collect();
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
        .arg(root())
        .args(&args);
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
