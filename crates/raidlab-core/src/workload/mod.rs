//! Workloads: synthetic generators, trace replay, open- and closed-loop drivers, failures.

pub mod trace;
