//! Import of DiskSim 4 drive parameter files.

pub mod parser;
