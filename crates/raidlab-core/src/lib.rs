//! raidlab-core: a trace-driven simulator of RAID-structured storage under drive failure.

pub mod api;
pub mod disk;
pub mod error;
pub mod sim;
pub mod workload;

pub use error::{Error, Result};
