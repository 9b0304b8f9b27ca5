//! The coarse entry points used by the Python binding and the benchmarks.
//! CONTRACT STUB — the engine work fills these in.

use std::path::Path;

use crate::error::Result;

/// A column of a result table.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    F64(Vec<f64>),
    I64(Vec<i64>),
    Str(Vec<String>),
}

/// A named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub data: ColumnData,
}

/// A columnar result table (becomes a pandas DataFrame / Parquet file).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// `timeseries`, `histogram`, `drives` or `outcomes`.
    pub name: String,
    pub columns: Vec<Column>,
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The run summary (becomes `summary.json`); keys are stable and documented.
    pub summary: serde_json::Value,
    /// Result tables.
    pub tables: Vec<Table>,
    /// The configuration with every default filled in, as TOML.
    pub resolved_config: String,
    /// Hex digest of the resolved configuration.
    pub config_hash: String,
}

/// Progress of a running simulation.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Fraction done in [0, 1] (by simulated time or by requests, whichever bounds the run).
    pub fraction: f64,
    /// User requests completed so far.
    pub completed_requests: u64,
}

/// Parse, validate and run a TOML configuration. Relative paths in it (traces, drive specs)
/// are resolved against `base_dir`. `progress` is called now and then; returning `false`
/// from it cancels the run (an `Error::Config` is not raised for that; the run stops early
/// and the summary says `"cancelled": true`).
pub fn run_toml(
    _toml_text: &str,
    _base_dir: &Path,
    _progress: Option<&mut dyn FnMut(Progress) -> bool>,
) -> Result<RunOutput> {
    todo!()
}

/// Parse and validate a configuration; returns (resolved TOML, config hash).
pub fn resolve_toml(_toml_text: &str, _base_dir: &Path) -> Result<(String, String)> {
    todo!()
}

/// The JSON Schema of the configuration, generated from the Rust types.
pub fn config_schema() -> String {
    todo!()
}

/// Result of one built-in benchmark case.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchResult {
    /// Case name (`single_drive` or `raid5`).
    pub case: String,
    /// User requests simulated.
    pub requests: u64,
    /// Disk operations simulated.
    pub disk_ops: u64,
    /// Wall-clock seconds of the simulation loop (excluding set-up).
    pub wall_seconds: f64,
    /// Simulated user requests per wall-clock second.
    pub requests_per_second: f64,
    /// Simulated disk operations per wall-clock second.
    pub disk_ops_per_second: f64,
}

/// Names of the built-in benchmark cases: `single_drive` (one drive, random 4 KiB reads) and
/// `raid5` (8-drive RAID-5, 70 % reads, 4–64 KiB).
pub fn bench_cases() -> &'static [&'static str] {
    &["single_drive", "raid5"]
}

/// Run benchmark case `case` with `requests` user requests.
pub fn bench(_case: &str, _requests: u64) -> Result<BenchResult> {
    todo!()
}

/// Statistics of a trace described by a TOML table with the keys of `workload.trace`
/// (`path`, `format`, optional `csv`), as JSON.
pub fn trace_info_toml(_toml_text: &str, _base_dir: &Path) -> Result<String> {
    todo!()
}
