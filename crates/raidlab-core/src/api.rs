//! The coarse entry points used by the Python binding and the benchmarks.

use std::path::Path;

use serde_json::json;

use crate::config::Config;
use crate::engine::Simulation;
use crate::error::{Error, Result};
use crate::metrics::CLASS_NAMES;
use crate::sim::{ns_to_ms, ns_to_s};

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
    toml_text: &str,
    base_dir: &Path,
    progress: Option<&mut dyn FnMut(Progress) -> bool>,
) -> Result<RunOutput> {
    let config = Config::from_toml(toml_text, base_dir)?;
    run_config(config, progress)
}

/// Run an already parsed configuration.
pub fn run_config(config: Config, progress: Option<&mut dyn FnMut(Progress) -> bool>) -> Result<RunOutput> {
    let resolved_config = config.to_toml();
    let config_hash = config.hash();
    let mut sim = Simulation::new(config)?;
    match progress {
        Some(p) => {
            let mut hook = |fraction: f64, completed_requests: u64| p(Progress { fraction, completed_requests });
            sim.run(Some(&mut hook))?
        }
        None => sim.run(None)?,
    }
    Ok(RunOutput { summary: summary(&sim, &config_hash), tables: tables(&sim), resolved_config, config_hash })
}

fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

/// The run summary (`summary.json`).
pub fn summary(sim: &Simulation, config_hash: &str) -> serde_json::Value {
    let now = sim.now();
    let rec = &sim.recorder;
    let mut response = serde_json::Map::new();
    for (i, name) in CLASS_NAMES.iter().enumerate() {
        let h = &rec.histograms[i];
        let ms = |ns: f64| finite(ns / 1e6);
        response.insert(
            name.to_string(),
            json!({
                "count": h.count(),
                "mean": ms(h.mean()),
                "p50": ms(h.quantile(0.5)),
                "p90": ms(h.quantile(0.9)),
                "p99": ms(h.quantile(0.99)),
                "max": if h.count() > 0 { finite(ns_to_ms(h.max())) } else { serde_json::Value::Null },
            }),
        );
    }
    let utilization: Vec<f64> = sim.drives.iter().map(|d| d.utilization(now)).collect();
    let mean_util = utilization.iter().sum::<f64>() / utilization.len() as f64;
    let max_util = utilization.iter().cloned().fold(0.0, f64::max);
    let ops: u64 = sim.drives.iter().map(|d| d.operations).sum();
    let stats = &sim.controller.stats;
    let data_loss_at = rec.outcomes.iter().find(|o| o.kind == "data_loss").map(|o| ns_to_s(o.time));
    let content = sim.controller.content().map(|c| {
        json!({
            "sectors_checked": c.stats.sectors_checked,
            "stale_sectors": c.stats.stale_sectors,
            "stale_reads": c.stats.stale_reads,
            "first_stale": c.first_stale.map(|(lba, e, a)| json!({"lba": lba, "expected": format!("{e:016x}"), "actual": format!("{a:016x}")})),
        })
    });
    json!({
        "raidlab_version": env!("CARGO_PKG_VERSION"),
        "seed": sim.config.seed,
        "config_hash": config_hash,
        "layout": sim.config.array.layout,
        "drives_in_array": sim.config.array.drives,
        "capacity_bytes": sim.controller.capacity_sectors() * crate::disk::SECTOR_BYTES,
        "simulated_seconds": ns_to_s(now),
        "cancelled": sim.cancelled,
        "arrival_rate_per_s": sim.arrival_rate_per_s.map(finite),
        "requests_completed": rec.completed,
        "response_ms": response,
        "drives": {
            "mean_utilization": finite(mean_util),
            "max_utilization": finite(max_util),
            "disk_operations": ops,
        },
        "writes": {
            "pieces": stats.write_pieces,
            "pre_read_sectors": stats.pre_read_sectors,
            "pre_read_sectors_per_piece": finite(stats.pre_read_sectors as f64 / stats.write_pieces as f64),
            "read_modify_write_segments": stats.rmw_segments,
            "reconstruct_write_segments": stats.rcw_segments,
        },
        "replans": stats.replans,
        "failures": sim.drives.iter().enumerate().filter_map(|(i, d)| d.failed_at.map(|t| json!({"drive": i, "at_s": ns_to_s(t)}))).collect::<Vec<_>>(),
        "data_loss": data_loss_at.is_some(),
        "data_loss_at_s": data_loss_at,
        "lost_requests": rec.lost_requests,
        "lost_read_sectors": stats.lost_read_sectors,
        "lost_write_sectors": stats.lost_write_sectors,
        "content": content,
        "events": sim.events_processed,
    })
}

fn f64s(name: &str, v: Vec<f64>) -> Column {
    Column { name: name.into(), data: ColumnData::F64(v) }
}
fn i64s(name: &str, v: Vec<i64>) -> Column {
    Column { name: name.into(), data: ColumnData::I64(v) }
}

/// The result tables: `timeseries`, `histogram`, `drives`, `outcomes`.
pub fn tables(sim: &Simulation) -> Vec<Table> {
    let rec = &sim.recorder;
    let w = rec.window_ns() as f64 / 1e9;
    let n = rec.windows.len();
    let mean = |sum: u128, count: u64| if count == 0 { f64::NAN } else { sum as f64 / count as f64 / 1e6 };
    let timeseries = Table {
        name: "timeseries".into(),
        columns: vec![
            f64s("window_start_s", (0..n).map(|i| i as f64 * w).collect()),
            f64s("window_end_s", (0..n).map(|i| (i + 1) as f64 * w).collect()),
            i64s("arrivals", rec.windows.iter().map(|x| x.arrivals as i64).collect()),
            i64s("completions", rec.windows.iter().map(|x| x.completions as i64).collect()),
            f64s("mean_response_ms", rec.windows.iter().map(|x| mean(x.response_sum_ns, x.completions)).collect()),
            f64s("read_mean_response_ms", rec.windows.iter().map(|x| mean(x.read_response_sum_ns, x.read_completions)).collect()),
            f64s("throughput_iops", rec.windows.iter().map(|x| x.completions as f64 / w).collect()),
        ],
    };
    let (mut class, mut upper, mut count) = (Vec::new(), Vec::new(), Vec::new());
    for (i, name) in CLASS_NAMES.iter().enumerate() {
        for (u, c) in rec.histograms[i].buckets() {
            class.push(name.to_string());
            upper.push(u as f64 / 1e6);
            count.push(c as i64);
        }
    }
    let histogram = Table {
        name: "histogram".into(),
        columns: vec![Column { name: "class".into(), data: ColumnData::Str(class) }, f64s("upper_ms", upper), i64s("count", count)],
    };
    let now = sim.now();
    let drives = Table {
        name: "drives".into(),
        columns: vec![
            i64s("drive", (0..sim.drives.len() as i64).collect()),
            f64s("utilization", sim.drives.iter().map(|d| d.utilization(now)).collect()),
            f64s("mean_queue_length", sim.drives.iter().map(|d| d.mean_queue_length(now)).collect()),
            i64s("operations", sim.drives.iter().map(|d| d.operations as i64).collect()),
            f64s("failed_at_s", sim.drives.iter().map(|d| d.failed_at.map_or(f64::NAN, ns_to_s)).collect()),
        ],
    };
    let outcomes = Table {
        name: "outcomes".into(),
        columns: vec![
            f64s("time_s", rec.outcomes.iter().map(|o| ns_to_s(o.time)).collect()),
            Column { name: "kind".into(), data: ColumnData::Str(rec.outcomes.iter().map(|o| o.kind.to_string()).collect()) },
            i64s("drive", rec.outcomes.iter().map(|o| o.drive).collect()),
            Column { name: "detail".into(), data: ColumnData::Str(rec.outcomes.iter().map(|o| o.detail.clone()).collect()) },
        ],
    };
    vec![timeseries, histogram, drives, outcomes]
}

/// Parse and validate a configuration; returns (resolved TOML, config hash).
pub fn resolve_toml(toml_text: &str, base_dir: &Path) -> Result<(String, String)> {
    let config = Config::from_toml(toml_text, base_dir)?;
    // Building the simulation checks what needs the drive model (capacity, geometry).
    Simulation::new(config.clone())?;
    Ok((config.to_toml(), config.hash()))
}

/// The JSON Schema of the configuration, generated from the Rust types.
pub fn config_schema() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(Config)).expect("schema serializes")
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
pub fn bench(case: &str, requests: u64) -> Result<BenchResult> {
    let text = match case {
        "single_drive" => format!(
            "seed = 1
[array]
layout = \"raid0\"
drives = 1
stripe_unit_kib = 64
\
             [drive]
preset = \"ibm0661\"
[workload]
requests = {requests}
read_fraction = 1.0
size_kib = 4
\
             [workload.arrival]
process = \"poisson\"
target_utilization = 0.7
"
        ),
        "raid5" => format!(
            "seed = 1
[array]
layout = \"raid5\"
drives = 8
stripe_unit_kib = 64
\
             [drive]
preset = \"ibm0661\"
[workload]
requests = {requests}
read_fraction = 0.7
\
             size = {{ distribution = \"uniform\", min_kib = 4, max_kib = 64 }}
\
             [workload.arrival]
process = \"poisson\"
target_utilization = 0.6
"
        ),
        other => {
            return Err(Error::config("case", format!("unknown bench case {other:?}; known: {}", bench_cases().join(", "))))
        }
    };
    let config = Config::from_toml(&text, Path::new("."))?;
    let mut sim = Simulation::new(config)?;
    let start = std::time::Instant::now();
    sim.run(None)?;
    let wall_seconds = start.elapsed().as_secs_f64();
    let disk_ops: u64 = sim.drives.iter().map(|d| d.operations).sum();
    Ok(BenchResult {
        case: case.to_string(),
        requests: sim.recorder.completed,
        disk_ops,
        wall_seconds,
        requests_per_second: sim.recorder.completed as f64 / wall_seconds,
        disk_ops_per_second: disk_ops as f64 / wall_seconds,
    })
}

/// Statistics of a trace described by a TOML table with the keys of `workload.trace`
/// (`path`, `format`, optional `csv`), as JSON.
pub fn trace_info_toml(toml_text: &str, base_dir: &Path) -> Result<String> {
    let de = toml::Deserializer::parse(toml_text).map_err(|e| Error::config("trace", e.to_string()))?;
    let mut cfg: crate::workload::TraceConfig = serde_path_to_error::deserialize(de)
        .map_err(|e| Error::config(format!("trace.{}", e.path()), e.inner().to_string()))?;
    if cfg.path.is_relative() {
        cfg.path = base_dir.join(&cfg.path);
    }
    let stats = crate::workload::trace::stats(&cfg)?;
    Ok(serde_json::to_string_pretty(&stats).expect("stats serialize"))
}
