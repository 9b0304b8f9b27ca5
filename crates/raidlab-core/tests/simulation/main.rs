//! Integration tests of whole simulations: one binary, one module per behaviour.
//!
//! Long randomized runs are behind `RAIDLAB_LONG_TESTS=1`.

mod common;
mod config_errors;
mod cache_front;
mod content_integrity;
mod crash;
mod determinism;
mod failure_schedules;
mod failures;
mod declustering;
mod distorted;
mod draid;
mod layout_registry;
mod log_raid;
mod parity_declustering;
mod pro;
mod queueing;
mod raid6;
mod rebuild;
mod rebuild_throttles;
mod thesis_normal_mode;
mod trace_replay;
mod validation;
