//! raidlab-core: a trace-driven simulator of RAID-structured storage under drive failure.
//!
//! The model, in the order a request meets it (see `docs/architecture.md`):
//!
//! ```text
//! workload (synthetic | trace) ─▶ engine event loop ─▶ array controller
//!   ─▶ layout (stripe map) ─▶ planner (access plan: phases of disk ops)
//!   ─▶ drive queues (FCFS/SSTF/C-LOOK/SPTF, two priority classes)
//!   ─▶ drive mechanics (seek, rotation, transfer) ─▶ completion ─▶ metrics
//! ```

pub mod api;
pub mod array;
pub mod calibrate;
pub mod cache;
pub mod catalogue;
pub mod config;
pub mod content;
pub mod disk;
pub mod engine;
pub mod error;
pub mod layout;
pub mod log;
pub mod metrics;
pub mod rebuild;
pub mod request;
pub mod results;
pub mod sim;
pub mod workload;

pub use config::Config;
pub use error::{Error, Result};
