//! The ttft-share tests in one binary (each file a module), so the crate is linked once for all of them.

mod common;
mod fuzz;
mod golden;
mod legacy;
mod openers;
mod painted;
mod probe;
mod saturation;
mod share;
mod travels;
