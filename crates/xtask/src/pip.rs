//! Python tools from PyPI, each pinned, in its own virtualenv under `target/` (outside git),
//! the way the bench installs its peer tools: reused while the venv's `ttft-installed.txt`
//! marker names the pinned requirement, pip's output in a log under `target/`.
//!
//! AIPerf goes where the bench puts it (`target/peers/aiperf`, the same marker), so the test
//! command and `cargo xtask bench` install it once between them.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::tools::{cmd, root, run};

/// AIPerf, pinned at the version the bench measures (`crates/ttft-bench/src/peers.rs`).
pub(crate) const AIPERF_REQUIREMENT: &str = "aiperf==0.13.0";

/// A tool to install: its venv and log (relative to the workspace root), the pinned
/// requirement and the executable the venv must then hold.
pub(crate) struct PipTool {
    /// The venv, e.g. `target/locust`.
    pub venv: &'static str,
    /// The pinned requirement, e.g. `locust==2.47.0`.
    pub requirement: &'static str,
    /// The executable under the venv's `bin/`.
    pub executable: &'static str,
    /// pip's log, e.g. `target/locust-pip.log`.
    pub log: &'static str,
}

impl PipTool {
    /// Installs the tool once (or reuses its venv); returns its executable. The time an
    /// install took is printed.
    pub(crate) fn ensure(&self) -> Result<PathBuf> {
        let venv = root().join(self.venv);
        let python = venv.join("bin/python");
        let exe = venv.join("bin").join(self.executable);
        let marker = venv.join("ttft-installed.txt");
        if std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == self.requirement)
            && exe.exists()
        {
            return Ok(exe);
        }
        let started = Instant::now();
        if !python.exists() {
            run(&format!("python3 -m venv {}", self.venv), {
                let mut c = cmd("python3");
                c.args(["-m", "venv"]).arg(&venv);
                c
            })
            .with_context(|| {
                format!(
                    "python3 with its venv module is needed for {}",
                    self.requirement
                )
            })?;
        }
        let log = root().join(self.log);
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let out = std::fs::File::create(&log)
            .with_context(|| format!("cannot write {}", log.display()))?;
        run(
            &format!("pip install {} (log: {})", self.requirement, log.display()),
            {
                let mut c = cmd(&python.display().to_string());
                c.args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    self.requirement,
                ])
                .stdout(out.try_clone()?)
                .stderr(out);
                c
            },
        )
        .with_context(|| {
            format!(
                "could not install {} from PyPI (log: {})",
                self.requirement,
                log.display()
            )
        })?;
        if !exe.exists() {
            bail!(
                "pip installed {} but {} is missing",
                self.requirement,
                exe.display()
            );
        }
        std::fs::write(&marker, self.requirement)?;
        eprintln!(
            "    {} installed into {} in {:.0} s",
            self.requirement,
            venv.display(),
            started.elapsed().as_secs_f64()
        );
        Ok(exe)
    }
}

/// Installs AIPerf into `target/peers/aiperf` once (the bench's venv); returns its `aiperf`
/// executable.
pub(crate) fn ensure_aiperf() -> Result<PathBuf> {
    PipTool {
        venv: "target/peers/aiperf",
        requirement: AIPERF_REQUIREMENT,
        executable: "aiperf",
        log: "target/peers/aiperf-pip.log",
    }
    .ensure()
}
