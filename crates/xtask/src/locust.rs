//! Locust (the distributed load engine the studio exports to) from PyPI, pinned, in a
//! virtualenv under `target/locust/` (outside git), the way the bench installs its peer tools
//! under `target/peers/`: reused while its marker names the pinned requirement, pip's output in
//! `target/locust-pip.log`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::tools::{cmd, root, run};

/// The pinned requirement (the version the generated locustfile is tested with).
pub(crate) const LOCUST_REQUIREMENT: &str = "locust==2.47.0";

/// Installs Locust into `target/locust` once (or reuses it); returns its `locust` executable.
pub(crate) fn ensure_locust() -> Result<PathBuf> {
    let venv = root().join("target/locust");
    let python = venv.join("bin/python");
    let locust = venv.join("bin/locust");
    let marker = venv.join("ttft-installed.txt");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == LOCUST_REQUIREMENT)
        && locust.exists()
    {
        return Ok(locust);
    }
    if !python.exists() {
        run("python3 -m venv target/locust", {
            let mut c = cmd("python3");
            c.args(["-m", "venv"]).arg(&venv);
            c
        })
        .context("python3 with its venv module is needed for Locust")?;
    }
    let log = root().join("target/locust-pip.log");
    let out = std::fs::File::create(&log)?;
    run(
        &format!("pip install {LOCUST_REQUIREMENT} (log: {})", log.display()),
        {
            let mut c = cmd(&python.display().to_string());
            c.args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                LOCUST_REQUIREMENT,
            ])
            .stdout(out.try_clone()?)
            .stderr(out);
            c
        },
    )
    .with_context(|| {
        format!(
            "could not install {LOCUST_REQUIREMENT} from PyPI (log: {})",
            log.display()
        )
    })?;
    if !locust.exists() {
        bail!("pip installed Locust but {} is missing", locust.display());
    }
    std::fs::write(&marker, LOCUST_REQUIREMENT)?;
    Ok(locust)
}
