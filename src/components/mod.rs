//! UI components. They read results from the core; they compute no metrics.

pub mod charts;
pub mod compare;
pub mod endpoint_panel;
pub mod replay;
pub mod report_view;
pub mod roofline;
pub mod run_controls;
pub mod runs_list;
pub mod scenario_panel;
pub mod status_bar;
