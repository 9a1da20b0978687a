//! The ttft-core tests in one binary (each file a module), so the crate is linked once for all of them.

mod ab_runs;
mod analysis;
mod capture;
mod compare_import;
mod compare_verdicts;
mod conformance;
mod diagnosis;
mod dialects;
mod experience;
mod fuzz;
mod linear;
mod locust;
mod naming;
mod openers;
mod peer_files;
mod probe;
mod prompt_cache;
mod report_file;
mod review;
mod scenario;
mod server_metrics;
mod sse;
mod summary_file;
mod timeline_file;
mod uncertainty;
mod votes;
