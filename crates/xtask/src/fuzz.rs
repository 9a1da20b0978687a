//! Coverage-guided fuzzing of `crates/ttft-fuzz` with AFL++ through cargo-afl.
//!
//! `cargo xtask fuzz [--seconds N]` runs every target N seconds (default 120), one after the
//! other on one core, from its seed corpus, prints the totals per target (executions, corpus
//! entries, crashes, hangs, the peak memory of one input), writes them to `bench/fuzz.json` and
//! re-renders `BENCHMARKS.md` with them (its "Fuzzing" section). The test command's step
//! ([`smoke`], alone: `cargo xtask fuzz --smoke`) runs each target 15 s and fails on any crash
//! or hang.
//!
//! The tools: cargo-afl at [`CARGO_AFL_VERSION`] (`cargo install`), whose install builds its
//! own AFL++ (4.40c) from the source it ships: the runtime linked into the targets and the
//! `afl-fuzz` that drives them come from that one build and must (Debian's `afl-fuzz` 4.04c
//! cannot start a target linked with 4.40c's runtime: "Unable to request new process from
//! fork server"). Building AFL++ needs a C compiler and make (`build-essential`, installed with
//! apt-get when running as root). The targets are built with `cargo afl build --profile fuzz`
//! into `target/afl/` (cargo-afl's flags would otherwise rebuild the shared target each time).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::tools::{apt_install, cmd, output, root, run};

/// The cargo-afl release installed; the `afl` crate of `crates/ttft-fuzz/Cargo.toml` is pinned
/// to the same version (a test holds them together).
pub(crate) const CARGO_AFL_VERSION: &str = "0.18.2";

/// The seconds each target runs in the test command.
const SMOKE_SECONDS: u64 = 15;

/// The seconds each target runs in `cargo xtask fuzz` unless `--seconds` says.
const DEFAULT_SECONDS: u64 = 120;

/// An execution slower than this is a hang (ms): far above any input's time, so a busy CI
/// machine does not report one, and an endless loop still does.
const HANG_MS: &str = "1000";

/// The targets, as `crates/ttft-fuzz/src/lib.rs` `TARGETS` lists them (the folders of its
/// corpus; a test holds the two lists together).
pub(crate) const TARGETS: [&str; 7] = [
    "share_link",
    "stream",
    "import",
    "timeline_file",
    "report_file",
    "server_metrics",
    "trace",
];

/// The fuzz crate's folder.
fn crate_dir() -> PathBuf {
    root().join("crates/ttft-fuzz")
}

/// Where the targets are built and the fuzzer writes (`<target dir>/afl`).
fn afl_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), |d| root().join(d))
        .join("afl")
}

/// Installs cargo-afl (with the AFL++ it builds) when it is missing, at another version, or
/// has no AFL++ built for this Rust; a C compiler and make first, with apt-get, as root.
pub(crate) fn ensure_cargo_afl() -> Result<()> {
    let ready = || {
        output("cargo", &["afl", "--version"]).is_some_and(|v| {
            v.contains(&format!("cargo-afl {CARGO_AFL_VERSION} ")) && v.contains("AFL++ version")
        })
    };
    if ready() {
        return Ok(());
    }
    if output("cc", &["--version"]).is_none() || output("make", &["--version"]).is_none() {
        apt_install(
            &["build-essential"],
            "cargo-afl builds AFL++ from source and needs a C compiler and make",
        )?;
    }
    if !output("cargo", &["afl", "--version"])
        .is_some_and(|v| v.contains(&format!("cargo-afl {CARGO_AFL_VERSION} ")))
    {
        // Its build script builds AFL++ (runtime and afl-fuzz) for the current Rust.
        run("install cargo-afl and its AFL++ (≈2 min, once)", {
            let mut c = cmd("cargo");
            c.args([
                "install",
                "cargo-afl",
                "--version",
                CARGO_AFL_VERSION,
                "--locked",
            ]);
            c
        })?;
    }
    if !ready() {
        // Installed for another Rust: AFL++'s runtime is built per toolchain.
        run("cargo afl config --build (AFL++ for this Rust)", {
            let mut c = cmd("cargo");
            c.args(["afl", "config", "--build", "--force"]);
            c
        })?;
    }
    if !ready() {
        bail!(
            "cargo-afl {CARGO_AFL_VERSION} is installed but reports no AFL++ build: run `cargo afl config --build --force --verbose` and read its error"
        );
    }
    Ok(())
}

/// Builds every target with cargo-afl's instrumentation into `target/afl/fuzz/`.
fn build() -> Result<()> {
    run("cargo afl build (the fuzz targets)", {
        let mut c = cmd("cargo");
        c.args([
            "afl",
            "build",
            "--profile",
            "fuzz",
            "-p",
            "ttft-fuzz",
            "--features",
            "afl",
            "--bins",
        ])
        .env("CARGO_TARGET_DIR", afl_dir());
        c
    })
}

/// One target's run: AFL++'s own figures (`fuzzer_stats`) and the peak memory of one input.
#[derive(Debug, Clone, PartialEq)]
struct Totals {
    target: String,
    stats: BTreeMap<String, String>,
    /// The largest peak resident memory of one input of the final corpus, run alone (MB).
    peak_input_mb: Option<f64>,
}

impl Totals {
    fn number(&self, key: &str) -> Option<f64> {
        self.stats
            .get(key)
            .and_then(|v| v.trim_end_matches('%').parse().ok())
    }

    /// A count AFL++ names `key` (or `older`, its name before 4.x).
    fn count(&self, key: &str, older: &str) -> u64 {
        self.number(key)
            .or_else(|| self.number(older))
            .unwrap_or(0.0) as u64
    }

    fn crashes(&self) -> u64 {
        self.count("saved_crashes", "unique_crashes")
    }

    fn hangs(&self) -> u64 {
        self.count("saved_hangs", "unique_hangs")
    }

    fn execs(&self) -> u64 {
        self.count("execs_done", "execs_done")
    }

    /// Executions per second over the whole run (AFL++'s `execs_per_sec` is a recent rate).
    fn execs_per_sec(&self) -> f64 {
        let secs = self.number("run_time").unwrap_or(0.0);
        if secs > 0.0 {
            self.execs() as f64 / secs
        } else {
            self.number("execs_per_sec").unwrap_or(0.0)
        }
    }

    fn json(&self) -> Value {
        json!({
            "target": self.target,
            "seconds": self.number("run_time"),
            "execs": self.execs(),
            "execs_per_sec": (self.execs_per_sec() * 10.0).round() / 10.0,
            "corpus_count": self.count("corpus_count", "paths_total"),
            "corpus_found": self.count("corpus_found", "paths_found"),
            "edges_found": self.count("edges_found", "edges_found"),
            "total_edges": self.count("total_edges", "total_edges"),
            "stability_percent": self.number("stability"),
            "crashes": self.crashes(),
            "hangs": self.hangs(),
            "peak_rss_mb_afl": self.number("peak_rss_mb"),
            "peak_rss_mb_one_input": self.peak_input_mb.map(|m| (m * 10.0).round() / 10.0),
        })
    }

    fn row(&self) -> String {
        format!(
            "{:<15} {:>12} {:>9.0} {:>8} {:>7} {:>5} {:>10}",
            self.target,
            self.execs(),
            self.execs_per_sec(),
            self.count("corpus_count", "paths_total"),
            self.crashes(),
            self.hangs(),
            self.peak_input_mb
                .map_or("—".into(), |m| format!("{m:.1} MB")),
        )
    }
}

/// `key : value` lines of AFL++'s `fuzzer_stats`.
fn parse_stats(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// Runs `target` for `seconds` from its seed corpus into a fresh `target/afl/out/<target>`,
/// stopping at the first crash when `until_crash`.
fn fuzz_target(target: &str, seconds: u64, until_crash: bool) -> Result<Totals> {
    let out = afl_dir().join("out").join(target);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;
    let log = out.join("afl-fuzz.log");
    let mut c = cmd("cargo");
    c.args(["afl", "fuzz", "-i"])
        .arg(crate_dir().join("corpus").join(target))
        .arg("-o")
        .arg(&out)
        .args(["-V", &seconds.to_string(), "-t", HANG_MS, "--"])
        .arg(afl_dir().join("fuzz").join(target))
        // A machine not set up for fuzzing (CI's, a shared one): no core-pattern or CPU
        // governor demands, no screen, no pinning to a core others use.
        .env("AFL_SKIP_CPUFREQ", "1")
        .env("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1")
        .env("AFL_NO_UI", "1")
        .env("AFL_NO_AFFINITY", "1")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log)?)
        .stderr(std::fs::File::create(out.join("afl-fuzz.err"))?);
    if until_crash {
        c.env("AFL_BENCH_UNTIL_CRASH", "1");
    }
    eprintln!("==> fuzz {target} ({seconds} s)");
    let status = c.status().context("could not start `cargo afl fuzz`")?;
    let stats = std::fs::read_to_string(out.join("default/fuzzer_stats")).unwrap_or_default();
    if stats.is_empty() {
        let tail = |p: &Path| {
            let t = std::fs::read_to_string(p).unwrap_or_default();
            let lines: Vec<&str> = t.lines().collect();
            lines[lines.len().saturating_sub(12)..].join("\n")
        };
        bail!(
            "afl-fuzz on {target} stopped ({status}) without statistics:\n{}\n{}",
            tail(&log),
            tail(&out.join("afl-fuzz.err"))
        );
    }
    Ok(Totals {
        target: target.to_owned(),
        stats: parse_stats(&stats),
        peak_input_mb: None,
    })
}

/// The largest peak resident memory (MB) of one input of `target`'s final corpus, each input
/// run alone by the target binary under GNU time (`None` without `/usr/bin/time`).
fn peak_input_mb(target: &str) -> Option<f64> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let queue = afl_dir().join("out").join(target).join("default/queue");
    let report = afl_dir().join("out").join(target).join("rss-kb");
    let binary = afl_dir().join("fuzz").join(target);
    let mut peak_kb: Option<u64> = None;
    for input in std::fs::read_dir(queue).ok()?.flatten().map(|e| e.path()) {
        if !input.is_file() {
            continue;
        }
        let ran = Command::new(time)
            .args(["-f", "%M", "-o"])
            .arg(&report)
            .arg(&binary)
            .stdin(std::fs::File::open(&input).ok()?)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let kb = ran
            .ok()
            .and_then(|_| std::fs::read_to_string(&report).ok())
            .and_then(|t| t.lines().last()?.trim().parse::<u64>().ok());
        peak_kb = peak_kb.max(kb);
    }
    peak_kb.map(|kb| kb as f64 / 1024.0)
}

/// The test command's step: every target [`SMOKE_SECONDS`] from its seeds; fails on a crash or
/// a hang, saying where the inputs are and how to keep them as regressions.
pub(crate) fn smoke() -> Result<()> {
    ensure_cargo_afl()?;
    build()?;
    let mut found = Vec::new();
    for target in TARGETS {
        let t = fuzz_target(target, SMOKE_SECONDS, true)?;
        eprintln!("    {}", t.row());
        if t.crashes() + t.hangs() > 0 {
            found.push(target);
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    bail!(
        "crashes or hangs in {}: the inputs are in {}/out/<target>/default/{{crashes,hangs}}/. Reproduce with `target/afl/fuzz/<target> < INPUT`, fix the bug, and keep the input in crates/ttft-fuzz/regressions/<target>/ (replayed by its tests)",
        found.join(", "),
        afl_dir().display()
    )
}

/// `cargo xtask fuzz [--seconds N | --smoke]` (`--smoke`: the test command's step alone).
pub(crate) fn command(args: &[String]) -> Result<()> {
    let seconds = match args {
        [] => DEFAULT_SECONDS,
        [flag] if flag == "--smoke" => return smoke(),
        [flag, n] if flag == "--seconds" => n
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .context("--seconds takes a whole number of seconds above 0")?,
        _ => bail!("usage: cargo xtask fuzz [--seconds N | --smoke]"),
    };
    let started = Instant::now();
    ensure_cargo_afl()?;
    build()?;
    let mut all = Vec::new();
    for target in TARGETS {
        let mut t = fuzz_target(target, seconds, false)?;
        t.peak_input_mb = peak_input_mb(target);
        all.push(t);
    }
    println!(
        "\n{:<15} {:>12} {:>9} {:>8} {:>7} {:>5} {:>10}",
        "target", "executions", "exec/s", "corpus", "crashes", "hangs", "peak/input"
    );
    for t in &all {
        println!("{}", t.row());
    }
    let execs: u64 = all.iter().map(Totals::execs).sum();
    let crashes: u64 = all.iter().map(Totals::crashes).sum();
    let hangs: u64 = all.iter().map(Totals::hangs).sum();
    println!(
        "{:<15} {execs:>12}  crashes {crashes}, hangs {hangs}",
        "total"
    );
    write_results(&all, seconds)?;
    eprintln!(
        "==> fuzzing finished in {:.0} s: bench/fuzz.json, BENCHMARKS.md",
        started.elapsed().as_secs_f64()
    );
    if crashes + hangs > 0 {
        bail!(
            "{crashes} crash(es) and {hangs} hang(s): the inputs are in {}/out/<target>/default/; fix each and keep it in crates/ttft-fuzz/regressions/<target>/",
            afl_dir().display()
        );
    }
    Ok(())
}

/// `bench/fuzz.json`, then joined to `bench/results.json` and BENCHMARKS.md re-rendered with it
/// by the bench's writer (`ttft-bench ROOT --fuzz`).
fn write_results(all: &[Totals], seconds: u64) -> Result<()> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_default();
    let afl_version = all
        .first()
        .and_then(|t| t.stats.get("afl_version").cloned());
    let results = json!({
        "date": output("date", &["-u"]).map(|d| d.trim().to_owned()),
        "cpu": cpu,
        "cores_used": 1,
        "cargo_afl": CARGO_AFL_VERSION,
        "afl_version": afl_version,
        "seconds_per_target": seconds,
        "hang_ms": HANG_MS.parse::<u64>().ok(),
        "targets": all.iter().map(Totals::json).collect::<Vec<_>>(),
        "total": {
            "execs": all.iter().map(Totals::execs).sum::<u64>(),
            "crashes": all.iter().map(Totals::crashes).sum::<u64>(),
            "hangs": all.iter().map(Totals::hangs).sum::<u64>(),
        },
    });
    std::fs::create_dir_all(root().join("bench"))?;
    std::fs::write(
        root().join("bench/fuzz.json"),
        serde_json::to_string_pretty(&results)? + "\n",
    )?;
    run("BENCHMARKS.md re-rendered with the fuzzing totals", {
        let mut c = cmd("cargo");
        c.args(["run", "--quiet", "-p", "ttft-bench", "--"])
            .arg(root())
            .arg("--fuzz");
        c
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_afl_crate_is_pinned_to_the_cargo_afl_installed() {
        let manifest = std::fs::read_to_string(crate_dir().join("Cargo.toml")).unwrap();
        let pin = format!("afl = {{ version = \"={CARGO_AFL_VERSION}\"");
        assert!(
            manifest.contains(&pin),
            "crates/ttft-fuzz/Cargo.toml must pin `{pin}`"
        );
    }

    #[test]
    fn every_target_of_the_fuzz_crate_is_run_and_has_seeds() {
        let lib = std::fs::read_to_string(crate_dir().join("src/lib.rs")).unwrap();
        let listed = lib
            .split_once("pub const TARGETS")
            .and_then(|(_, rest)| rest.split_once("];"))
            .map(|(list, _)| list)
            .unwrap();
        for target in TARGETS {
            assert!(
                listed.contains(&format!("(\"{target}\", {target})")),
                "{target}"
            );
            assert!(crate_dir().join("corpus").join(target).is_dir(), "{target}");
            assert!(
                crate_dir()
                    .join("src/bin")
                    .join(format!("{target}.rs"))
                    .is_file()
            );
        }
        assert_eq!(listed.matches("(\"").count(), TARGETS.len());
    }

    #[test]
    fn statistics_are_read_with_the_older_names_too() {
        let now = parse_stats(
            "run_time          : 10\nexecs_done        : 2000\nsaved_crashes     : 1\nsaved_hangs       : 2\ncorpus_count      : 7\nstability         : 98.5%\n",
        );
        let older = parse_stats("execs_done : 5\nunique_crashes : 3\nunique_hangs : 4\n");
        let totals = |stats| Totals {
            target: "t".into(),
            stats,
            peak_input_mb: None,
        };
        let (now, older) = (totals(now), totals(older));
        assert_eq!((now.execs(), now.crashes(), now.hangs()), (2000, 1, 2));
        assert_eq!(now.execs_per_sec(), 200.0);
        assert_eq!(now.number("stability"), Some(98.5));
        assert_eq!(now.json()["corpus_count"], 7);
        assert_eq!((older.execs(), older.crashes(), older.hangs()), (5, 3, 4));
    }
}
