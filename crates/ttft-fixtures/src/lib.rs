//! Test fixtures of ttft-studio: the runs the core's tests (`crates/ttft-core/tests/it/`) and the
//! share format's tests (`crates/ttft-share/tests/it/`) build, so each is written once.
//!
//! Each module is named after the core's test file whose runs it builds; the share crate's
//! tests open the same runs through links. A dev-dependency only (`publish = false`): the core's
//! integration tests use it, never its unit tests, since it depends on the core itself.

pub mod analysis;
pub mod peer_files;
pub mod probe;
pub mod prompt_cache;
pub mod report_file;
pub mod review;
pub mod timeline_file;
pub mod traces;
pub mod user_figures;

/// The wall clock (unix ms) the runs' send times count from: a request sent at `t` ms was sent
/// at `WALL0 + t` by the wall clock.
pub const WALL0: f64 = 1_764_542_467_000.0;
