//! The peer tools' result files of the core's `tests/it/peer_files.rs` (and their share links),
//! read from `crates/ttft-core/tests/data/peers/`.

use ttft_core::import::{Format, ImportError};
use ttft_core::report::Report;

/// The folder of the peer tools' files (`crates/ttft-core/tests/data/peers/`, see its README).
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ttft-core/tests/data/peers");

/// The text of the peer file at `path` under [`DATA`].
pub fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{DATA}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The one run an import of `format` gave (panics on an error, another format or other counts).
pub fn only(result: Result<(Format, Vec<Report>), ImportError>, format: Format) -> Report {
    let (f, mut reports) = result.unwrap();
    assert_eq!(f, format);
    assert_eq!(reports.len(), 1);
    reports.remove(0)
}
