//! A finding: one plain-language statement about a run, with the numbers behind it and what
//! to do. The diagnosis rules ([`crate::diagnosis`], [`crate::first_token`]) produce them; the
//! views show them. A leaf: it knows nothing of reports or rules.

use serde::{Deserialize, Serialize};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Users will feel it.
    Warning,
    /// Numbers are unusable or users suffer.
    Problem,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id (`queueing`, `bandwidth`, …).
    pub id: String,
    /// Severity.
    pub severity: Severity,
    /// One-line statement.
    pub title: String,
    /// The numbers behind it.
    pub evidence: String,
    /// What to do.
    pub advice: String,
}
