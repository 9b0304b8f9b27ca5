//! The buffer cache (`raidlab_core::cache`) from the outside: policies against each other,
//! the stand-alone simulator against the VDF paper's conclusions.
//!
//! Long randomized runs are behind `RAIDLAB_LONG_TESTS=1`.

mod common;
mod conclusions;
mod equivalence;
