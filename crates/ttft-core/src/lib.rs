//! ttft-core: the measurement core of ttft-studio.
//!
//! Sans-IO: bytes and timestamps in, events and metrics out. No networking, no async runtime,
//! no web or server dependencies, so every rule is tested natively and fast.
//!
//! Pipeline: a client's [`capture::Capture`] (bytes + times) → [`sse::FrameDecoder`] (SSE / NDJSON framing) → [`dialect::DialectDecoder`]
//! (classified [`dialect::StreamEvent`]s) → [`timeline::RequestRecorder`] (the per-request
//! [`timeline::RequestTimeline`]) → [`metrics::RequestMetrics`] → [`report::Report`] and its
//! [`report::Aggregates`] → [`diagnosis`] findings; [`experience`] scores how each stream felt (Etalon
//! deadline fluidity, Andes-style reading QoE and reader waits); [`roofline`] bounds; [`compare`] runs side by side; [`import`] result
//! files of other tools (keeping their own summaries beside ours); [`llmd`] exports a run as llm-d
//! Benchmark Reports; [`timeline_file`] reads and writes the raw timeline format
//! (`ttft-timeline/1`) every vantage shares. [`scenario`] plans what a run sends, [`arrivals`] when (load
//! shapes), [`trace`] turns production traces (Mooncake, Azure, BurstGPT) into open-loop plans, [`schedule`] whether the client kept to it; [`report::file`] owns the report
//! format. [`prometheus`] reads a server's `/metrics`, [`server_metrics`] turns a run's scrapes
//! into series and server-side percentiles, [`first_token`] takes the first token apart. Share
//! links (a report as a URL) are the `ttft-share` crate's.

pub mod agent_json;
pub mod arrivals;
pub mod calibration;
pub mod capture;
pub mod client_health;
pub mod compare;
pub mod diagnosis;
pub mod dialect;
pub mod differences;
pub mod experience;
pub mod finding;
pub mod first_token;
pub mod format;
pub mod house_openers;
pub mod import;
pub mod llmd;
pub mod locust;
pub mod metrics;
pub mod naming;
pub mod openers;
pub mod paint;
pub mod pairing;
pub mod probe;
pub mod prometheus;
pub mod quota;
pub mod raw;
pub mod record_experience;
pub mod report;
pub mod request;
pub mod result_files;
pub mod review;
pub mod roofline;
pub mod run_intervals;
pub mod run_stats;
pub mod saturation;
pub mod saturation_guard;
pub mod scenario;
pub mod schedule;
pub mod server_metrics;
pub mod slo;
pub mod sse;
pub mod stats;
pub mod summary_file;
pub mod time_slices;
pub mod timeline;
pub mod timeline_file;
pub mod trace;
pub mod uncertainty;

pub use dialect::{Dialect, StreamEvent};
pub use metrics::{MetricsConfig, RequestMetrics};
pub use report::{Aggregates, Report, RequestRecord};
pub use timeline::{Outcome, RequestRecorder, RequestTimeline};
