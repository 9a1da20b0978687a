//! `cargo xtask serve [--port N] [--host H]`: installs what is missing, builds the studio in
//! release and serves it with the reference endpoint, printing the URL.
//!
//! `cargo xtask test`: installs what is missing (Chromium and chromedriver too), then runs
//! fmt, clippy (native and wasm32), rustdoc with warnings denied, the code-map and import-cycle
//! checks, native tests, every fuzz target 15 s under AFL++, wasm tests in headless Chromium, the
//! end-to-end suite against the built app, and prints a summary line.
//!
//! `cargo xtask dist [--check]`: builds the app, then one release `ttft-server` with the app
//! embedded (`target/dist/ttft-server`, printed with its size); `--check` runs its test.
//!
//! `cargo xtask bench`: measurement error against ground truth, client capacity, bundle size,
//! load and chart render times, share-link lengths → `BENCHMARKS.md` + `bench/results.json`.
//!
//! `cargo xtask setup` installs the tools and the browser; `cargo xtask llama` fetches and
//! builds llama.cpp and its model and prints their paths; `cargo xtask locust` installs
//! Locust into `target/locust` and prints its path; `cargo xtask aiperf` installs AIPerf into
//! `target/peers/aiperf` (the bench's venv) and prints its path.
//!
//! `cargo xtask fuzz [--seconds N]`: every fuzz target of `crates/ttft-fuzz` N seconds (default
//! 120) under AFL++ (cargo-afl, installed if missing), its totals printed and written to
//! `bench/fuzz.json` and BENCHMARKS.md; `--smoke` runs the test command's 15 s a target alone.
//!
//! `cargo xtask codemap` checks that ARCHITECTURE.md's code map names every crate and folder and
//! that every path it names exists; `cargo xtask cycles [--edges]` checks that no crate's files
//! import each other around a loop (and the core's layers), `--edges` printing every
//! file-to-file import first.

mod bench;
mod codemap;
mod cycles;
mod dist;
mod fuzz;
mod llama;
mod locust;
mod oracle;
mod pip;
mod serve;
mod test;
#[cfg(test)]
mod testdir;
mod tools;

use anyhow::Result;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => serve::serve(&args[1..]),
        Some("test") => test::test(),
        Some("dist") => dist::dist(&args[1..]),
        Some("setup") => tools::ensure_tools().and_then(|_| tools::ensure_browser()),
        Some("bench") => bench::bench(),
        Some("llama") => llama::ensure_llama()
            .map(|(s, m)| println!("LLAMA_SERVER={}\nLLAMA_MODEL={}", s.display(), m.display())),
        Some("locust") => locust::ensure_locust().map(|l| println!("LOCUST={}", l.display())),
        Some("aiperf") => pip::ensure_aiperf().map(|a| println!("AIPERF={}", a.display())),
        Some("fuzz") => fuzz::command(&args[1..]),
        Some("codemap") => codemap::check(&tools::root()),
        Some("cycles") => cycles::command(&tools::root(), &args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <serve [--port N] [--host H] | test | dist [--check] | bench | fuzz [--seconds N | --smoke] | setup | llama | locust | aiperf | codemap | cycles [--edges]>"
            );
            std::process::exit(2)
        }
    }
}
