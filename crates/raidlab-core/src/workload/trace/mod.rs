//! Block-trace readers: streaming, with transparent gzip/bzip2, one file per format.
//! CONTRACT STUB — bodies are filled in by the trace-reader work.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::sim::Nanos;

/// One request of a block trace in raidlab's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time relative to the first record of the trace, ns, after time scaling.
    pub arrival: Nanos,
    /// First 512-byte sector on the array, after folding.
    pub lba: u64,
    /// Length in 512-byte sectors (at least 1).
    pub sectors: u32,
    /// Write (true) or read (false).
    pub is_write: bool,
}

/// How trace addresses beyond the array's capacity are brought onto it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum FoldMode {
    /// Address modulo the capacity (keeps locality at fine grain).
    #[default]
    Modulo,
    /// Scale addresses by capacity / (largest trace address), which needs a first pass over
    /// the trace to find it.
    Scale,
    /// Stop with an error naming the line.
    Reject,
}

/// A block trace used as the workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Trace file; `.gz` and `.bz2` (detected from the content) are decompressed on the fly.
    pub path: PathBuf,
    /// Format: `spc`, `msr`, `systor`, `tencent` or `csv`.
    pub format: String,
    /// Column mapping, required when `format = "csv"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<CsvColumns>,
    /// Multiply every inter-arrival time by this factor (0.5 = twice as intense).
    #[serde(default = "one")]
    pub time_scale: f64,
    /// What to do with addresses beyond the array.
    #[serde(default)]
    pub fold: FoldMode,
    /// Use only the first N requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_requests: Option<u64>,
}

fn one() -> f64 {
    1.0
}

/// Column mapping of a generic CSV trace (0-based column indices).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CsvColumns {
    pub time_column: usize,
    pub offset_column: usize,
    pub size_column: usize,
    pub op_column: usize,
    /// Seconds per unit of the time column (1e-6 for microseconds).
    #[serde(default = "one")]
    pub time_unit_s: f64,
    /// Bytes per unit of the offset column (512 for sectors).
    #[serde(default = "one_u64")]
    pub offset_unit_bytes: u64,
    /// Bytes per unit of the size column.
    #[serde(default = "one_u64")]
    pub size_unit_bytes: u64,
    /// Values of the op column meaning write (case-insensitive); anything else in
    /// `read_values` is a read, and any other value is an error.
    #[serde(default = "default_write_values")]
    pub write_values: Vec<String>,
    #[serde(default = "default_read_values")]
    pub read_values: Vec<String>,
    /// Lines to skip at the top (a header).
    #[serde(default)]
    pub skip_lines: u64,
    /// Field delimiter (one character).
    #[serde(default = "comma")]
    pub delimiter: char,
}

fn one_u64() -> u64 {
    1
}
fn comma() -> char {
    ','
}
fn default_write_values() -> Vec<String> {
    vec!["w".into(), "write".into(), "1".into()]
}
fn default_read_values() -> Vec<String> {
    vec!["r".into(), "read".into(), "0".into()]
}

/// A streaming source of trace records brought onto an array of `capacity_sectors`.
pub struct TraceSource {
    _private: (),
}

impl TraceSource {
    /// Open the trace. `key` is the config key path for configuration errors.
    pub fn open(_cfg: &TraceConfig, _capacity_sectors: u64, _key: &str) -> Result<Self> {
        todo!()
    }
    /// The next record in arrival order, `None` at the end; errors name file and line.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        todo!()
    }
}

/// Summary statistics of a trace (for `raidlab trace info`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    pub requests: u64,
    pub read_fraction: f64,
    pub mean_size_bytes: f64,
    pub duration_s: f64,
    pub iops: f64,
    pub footprint_bytes: u64,
    pub locality_hot20: f64,
}

/// Read the whole trace once (streaming) and summarise it.
pub fn stats(_cfg: &TraceConfig) -> Result<TraceStats> {
    todo!()
}
