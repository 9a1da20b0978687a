//! App actions: the one place the studio's state changes. Views call these; they never change
//! the store themselves (the settings forms bind the endpoint and scenario stores' fields).
//!
//! Each module holds what changes together: [`run`] (start, cancel, finish: where a run
//! starts), [`storage`] (saved runs: open, save, rename, delete, a full quota), [`migrate`]
//! (runs of the old localStorage format), [`settings`] (endpoint and scenario settings, the
//! reader and SLO a run is scored with), [`links`] (share links), [`import`] and [`export`]
//! (result files in and out), [`votes`] (blind review), [`calibrate`], [`tour`] (the article's
//! comparison), [`ground_truth`] (the reference server's record). [`studio`] is what they all
//! share: notices, the shown and compared runs, runs added to the list.
//!
//! This module declares them and nothing else: its children depend on each other, never on it.

pub mod calibrate;
pub mod export;
pub mod ground_truth;
pub mod import;
pub mod links;
pub mod migrate;
pub mod run;
pub mod settings;
pub mod storage;
pub mod studio;
pub mod tour;
pub mod trace;
pub mod votes;
