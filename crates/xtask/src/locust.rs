//! Locust (the distributed load engine the studio exports to) from PyPI, pinned, in a
//! virtualenv under `target/locust/` (outside git), the way the bench installs its peer tools
//! under `target/peers/`: reused while its marker names the pinned requirement, pip's output in
//! `target/locust-pip.log` ([`crate::pip`]).

use std::path::PathBuf;

use anyhow::Result;

use crate::pip::PipTool;

/// The pinned requirement (the version the generated locustfile is tested with).
pub(crate) const LOCUST_REQUIREMENT: &str = "locust==2.47.0";

/// Installs Locust into `target/locust` once (or reuses it); returns its `locust` executable.
pub(crate) fn ensure_locust() -> Result<PathBuf> {
    PipTool {
        venv: "target/locust",
        requirement: LOCUST_REQUIREMENT,
        executable: "locust",
        log: "target/locust-pip.log",
    }
    .ensure()
}
