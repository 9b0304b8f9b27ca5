//! The coarse entry points used by the Python binding and the benchmarks.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use crate::config::Config;
use crate::engine::Simulation;
use crate::error::{Error, Result};
use crate::metrics::CLASS_NAMES;
use crate::sim::{ns_to_ms, ns_to_s};
use crate::workload::Workload;

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
    /// `timeseries`, `histogram`, `drives`, `outcomes`, (with `metrics.record_responses`)
    /// `responses`, or (with `metrics.record_rebuild_progress`) `rebuild_progress`.
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

pub use crate::sim::Progress;


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
    let warnings = crate::config::warnings::config_warnings(&config);
    // A target utilization becomes the rate whose pilot runs reach it.
    let config = crate::calibrate::with_calibrated_rate(config)?;
    let mut sim = Simulation::new(config)?;
    run_reporting(&mut sim, progress)?;
    let mut summary = summary(&sim, &config_hash);
    add_warnings_to_summary(&mut summary, warnings, &sim);
    Ok(RunOutput { summary, tables: tables(&sim), resolved_config, config_hash })
}

/// Run `sim` to the end, reporting to `progress` as [`Progress`]; returning `false` from it
/// cancels the run (`sim.cancelled`).
fn run_reporting(sim: &mut Simulation, progress: Option<&mut dyn FnMut(Progress) -> bool>) -> Result<()> {
    match progress {
        Some(p) => {
            let mut hook = |fraction: f64, completed_requests: u64| p(Progress { fraction, completed_requests });
            sim.run(Some(&mut hook))
        }
        None => sim.run(None),
    }
}

fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

/// Count, mean and quantiles (ms) of a response-time histogram, as the summary gives them.
fn response_stats(h: &crate::metrics::Histogram) -> serde_json::Value {
    let ms = |ns: f64| finite(ns / 1e6);
    json!({
        "count": h.count(),
        "mean": ms(h.mean()),
        "p50": ms(h.quantile(0.5)),
        "p90": ms(h.quantile(0.9)),
        "p99": ms(h.quantile(0.99)),
    })
}

/// The run summary (`summary.json`).
pub fn summary(sim: &Simulation, config_hash: &str) -> serde_json::Value {
    let now = sim.now();
    let rec = &sim.recorder;
    let histograms = rec.histograms();
    let mut response = serde_json::Map::new();
    for (i, name) in CLASS_NAMES.iter().enumerate() {
        let h = &histograms[i];
        let mut stats = response_stats(h);
        stats["max"] = if h.count() > 0 { finite(ns_to_ms(h.max())) } else { serde_json::Value::Null };
        response.insert(name.to_string(), stats);
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
            "rebuilt_sectors_checked": c.stats.rebuilt_sectors_checked,
            "rebuilt_sectors_wrong": c.stats.rebuilt_sectors_wrong,
            "first_wrong_rebuilt": c.first_wrong_rebuilt.map(|(slot, pba, e, a)| json!({"slot": slot, "sector": pba, "expected": format!("{e:016x}"), "actual": format!("{a:016x}")})),
        })
    });
    let cache = sim.front.as_ref().map(|front| {
        let s = &front.stats;
        let (hit_ratio, rgr, rgr_faulty) = front.ratios();
        let (cached, dirty) = front.occupancy();
        json!({
            "policy": front.policy(),
            "size_blocks": front.capacity(),
            "read_blocks": s.read_blocks,
            "read_hits": s.read_hits,
            "read_hit_ratio": finite(hit_ratio),
            "write_blocks": s.write_blocks,
            "write_hits": s.write_hits,
            "evictions": s.evictions,
            "fill_reads": s.fill_reads,
            "writes_sent_on": s.writes_sent_on,
            "destage_writes": s.destage_writes,
            "lost_destages": s.lost_destages,
            "lost_fill_blocks": s.lost_fill_blocks,
            "superseded_fill_blocks": s.superseded_fill_blocks,
            "rgr": if front.has_placement() { finite(rgr) } else { serde_json::Value::Null },
            "rgr_faulty": if front.has_placement() { finite(rgr_faulty) } else { serde_json::Value::Null },
            "faulty_read_blocks": s.faulty_read_blocks,
            "blocks_cached_at_end": cached,
            "dirty_blocks_at_end": dirty,
            "content": sim.controller.content().map(|_| json!({
                "sectors_checked": front.content.sectors_checked,
                "stale_sectors": front.content.stale_sectors,
                "stale_reads": front.content.stale_reads,
                "first_stale": front.first_stale.map(|(lba, e, a)| json!({"lba": lba, "expected": format!("{e:016x}"), "actual": format!("{a:016x}")})),
            })),
        })
    });
    let log = sim.controller.placement().and_then(|p| p.as_any().downcast_ref::<crate::log::layout::LogState>()).map(|state| {
        let s = &state.stats;
        let block_bytes = state.block_sectors * crate::disk::SECTOR_BYTES;
        let mut table = json!({
            "scheme": sim.config.log.as_ref().map(|l| l.scheme.clone()),
            "write_requests": stats.write_requests,
            "pre_read_blocks": s.pre_read_blocks,
            "pre_read_blocks_per_write_request": finite(s.pre_read_blocks as f64 / stats.write_requests as f64),
            "merge_read_blocks": s.merge_read_blocks,
            "row_writes": s.row_writes,
            "read_modify_write_rows": s.rmw_rows,
            "reconstruct_write_rows": s.rcw_rows,
            "records": s.records,
            "lookups": s.lookups,
            "lookups_per_write_request": finite(s.lookups as f64 / stats.write_requests as f64),
            "log_full_rows": s.log_full_rows,
            "lost_blocks": s.lost_blocks,
            "crashes": s.crashes,
            "idle_resyncs": s.idle_resyncs,
            "peak_used_bytes": s.peak_used_blocks * block_bytes,
            "capacity_bytes": state.index.capacity_blocks() * block_bytes,
            "peak_logged_blocks": s.peak_logged_blocks,
            "peak_logged_rows": s.peak_logged_rows,
            "logged_rows_at_end": state.index.rows(),
            "resyncs": s.resyncs,
            "resync_stripes": s.resync_stripes,
            "resync_rows": s.resync_rows,
            "resync_lookups": s.resync_lookups,
            "resync_s": ns_to_s(s.resync_ns),
            "resync_running_at_end": state.resync.active,
            "recovery_sectors_checked": sim.config.content.check.then_some(s.recovery_sectors_checked),
            "recovery_sectors_wrong": sim.config.content.check.then_some(s.recovery_sectors_wrong),
            "first_wrong_recovery": state.first_wrong_recovery.map(|(row, block, sector)| json!({"row": row, "block": block, "sector": sector})),
        });
        if matches!(state.scheme.consistency(), crate::log::Consistency::Journal | crate::log::Consistency::PartialParity) {
            // md's schemes: what their logs wrote, and what a crash left to recover.
            table["md_writes"] = json!(s.md_writes);
            table["md_log_bytes"] = json!(s.md_log_sectors * crate::disk::SECTOR_BYTES);
            table["md_log_bytes_per_write"] = finite(s.md_log_sectors as f64 * crate::disk::SECTOR_BYTES as f64 / s.md_writes as f64);
            table["unprotected_writes"] = json!(s.unprotected_writes);
            table["interrupted_writes"] = json!(s.interrupted_writes);
            table["recovered_stripes"] = json!(s.recovered_stripes);
            table["recoveries_pending_at_end"] = json!(state.md.pending.len());
        }
        table
    });
    let mut by_period = serde_json::Map::new();
    let period_histograms = rec.period_histograms();
    let healed = sim.rebuilds.iter().any(|r| r.healing);
    for (i, name) in crate::metrics::PERIOD_NAMES.iter().enumerate() {
        // (The healing period is reported only for runs that copied a member out of a
        // distributed spare.)
        if i == crate::metrics::Period::Healing as usize && !healed {
            continue;
        }
        let starts: Vec<f64> = rec.period_starts().iter().filter(|p| p.1 as usize == i).map(|p| ns_to_s(p.0)).collect();
        let mut stats = response_stats(&period_histograms[i]);
        stats["starts_s"] = json!(starts);
        by_period.insert(name.to_string(), stats);
    }
    let rebuilds: Vec<serde_json::Value> = sim
        .rebuilds
        .iter()
        .map(|r| {
            let unit_bytes = sim.controller.layout().member_sectors() as f64 * crate::disk::SECTOR_BYTES as f64;
            let seconds = r.ended_at.map(|e| ns_to_s(e - r.started_at));
            let mut record = json!({
                "member": r.member,
                "target_slot": r.target,
                "failed_at_s": ns_to_s(r.failed_at),
                "started_at_s": ns_to_s(r.started_at),
                "ended_at_s": r.ended_at.map(ns_to_s),
                "rebuild_time_s": seconds,
                "outcome": r.outcome,
                "kind": if r.healing { "healing" } else { "rebuild" },
                "reason": if r.reason.is_empty() { serde_json::Value::Null } else { json!(r.reason) },
                "units": r.units,
                "units_by_executor": r.made_current[0],
                "units_by_user_writes": r.made_current[1],
                "units_by_piggyback": r.made_current[2],
                "target_write_mb_s": seconds.map(|t| finite(unit_bytes / 1e6 / t)),
            });
            // Only an order that counts something (PRO) adds its counts.
            if !r.order_counters.is_empty() {
                record["order"] = r.order_counters.iter().map(|&(k, v)| (k.to_string(), json!(v))).collect();
            }
            record
        })
        .collect();
    // In time order, each with what the slot held when it failed (the outcome's detail: a
    // spare, a rebuild's target, or a member rebuilt into a spare's slot).
    let failures: Vec<serde_json::Value> = sim
        .recorder
        .outcomes
        .iter()
        .filter(|o| o.kind == "drive_failed")
        .map(|o| json!({"drive": o.drive, "at_s": ns_to_s(o.time), "held": o.detail}))
        .collect();
    let rebuild_time_s =
        sim.rebuilds.iter().find(|r| r.outcome == "complete" && !r.healing).and_then(|r| r.ended_at.map(|e| ns_to_s(e - r.started_at)));
    let mut summary = json!({
        "raidlab_version": env!("CARGO_PKG_VERSION"),
        "seed": sim.config.seed,
        "config_hash": config_hash,
        "layout": sim.config.array.layout,
        "drives_in_array": sim.config.array.drives,
        "capacity_bytes": sim.controller.capacity_sectors() * crate::disk::SECTOR_BYTES,
        "simulated_seconds": ns_to_s(now),
        "cancelled": sim.cancelled,
        "overloaded": sim.overloaded_at.is_some(),
        "overloaded_at_s": sim.overloaded_at.map(ns_to_s),
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
        "failures": failures,
        "members_not_rebuilt": sim
            .members_not_rebuilt()
            .into_iter()
            .map(|(member, why)| json!({"member": member, "reason": why}))
            .collect::<Vec<_>>(),
        "data_loss": data_loss_at.is_some(),
        "data_loss_at_s": data_loss_at,
        "lost_requests": rec.lost_requests,
        "crashed_requests": sim.crashed_requests,
        "crashes_at_s": sim
            .recorder
            .outcomes
            .iter()
            .filter(|o| o.kind == "controller_crashed")
            .map(|o| ns_to_s(o.time))
            .collect::<Vec<_>>(),
        "lost_read_sectors": stats.lost_read_sectors,
        "lost_write_sectors": stats.lost_write_sectors,
        "content": content,
        "response_ms_by_period": by_period,
        "rebuilds": rebuilds,
        "rebuild_time_s": rebuild_time_s,
        "cache": cache,
        "events": sim.events_processed,
        "warnings": sim.warnings,
    });
    if healed {
        // The first healing copy that completed, s (reported only for runs that healed).
        summary["healing_time_s"] =
            json!(sim.rebuilds.iter().find(|r| r.outcome == "complete" && r.healing).and_then(|r| r.ended_at.map(|e| ns_to_s(e - r.started_at))));
    }

    // Only a log-assisted array's summary has the key (the others' are unchanged).
    if let Some(log) = log {
        summary["log"] = log;
    }
    summary
}

/// Add `config_warnings` (from [`crate::config::warnings::config_warnings`], decided before the run) and what the run
/// counted in its trace to the summary's `warnings`, after the drive import's.
fn add_warnings_to_summary(summary: &mut serde_json::Value, config_warnings: Vec<String>, sim: &crate::engine::Simulation) {
    let mut added = config_warnings;
    if let Some(counts) = sim.workload().trace_counts() {
        added.extend(counts.warnings("workload.trace"));
    }
    if added.is_empty() {
        return;
    }
    match summary.get_mut("warnings").and_then(|w| w.as_array_mut()) {
        Some(list) => list.extend(added.into_iter().map(serde_json::Value::from)),
        None => summary["warnings"] = serde_json::Value::from(added),
    }
}

fn f64s(name: &str, v: Vec<f64>) -> Column {
    Column { name: name.into(), data: ColumnData::F64(v) }
}
fn i64s(name: &str, v: Vec<i64>) -> Column {
    Column { name: name.into(), data: ColumnData::I64(v) }
}

/// The result tables: `timeseries`, `histogram`, `drives`, `outcomes`, `responses` when
/// `metrics.record_responses` is on, and `rebuild_progress` when
/// `metrics.record_rebuild_progress` is.
pub fn tables(sim: &Simulation) -> Vec<Table> {
    let rec = &sim.recorder;
    let w = rec.window_ns() as f64 / 1e9;
    let n = rec.windows.len();
    let mean = |sum: u128, count: u64| if count == 0 { f64::NAN } else { sum as f64 / count as f64 / 1e6 };
    let mut timeseries = Table {
        name: "timeseries".into(),
        columns: vec![
            f64s("window_start_s", (0..n).map(|i| i as f64 * w).collect()),
            f64s("window_end_s", (0..n).map(|i| (i + 1) as f64 * w).collect()),
            i64s("arrivals", rec.windows.iter().map(|x| x.arrivals as i64).collect()),
            i64s("completions", rec.windows.iter().map(|x| x.completions as i64).collect()),
            i64s("lost", rec.windows.iter().map(|x| x.lost as i64).collect()),
            f64s("mean_response_ms", rec.windows.iter().map(|x| mean(x.response_sum_ns, x.completions)).collect()),
            f64s("read_mean_response_ms", rec.windows.iter().map(|x| mean(x.read_response_sum_ns, x.read_completions)).collect()),
            f64s("throughput_iops", rec.windows.iter().map(|x| x.completions as f64 / w).collect()),
            f64s("rebuilt_fraction", rebuilt_fraction(sim, n)),
        ],
    };
    if let Some(front) = sim.front.as_ref() {
        // The buffer cache's read hit ratio and RGR in each window (NaN without reads).
        let windows = front.windows();
        let per_window = |f: fn(&crate::cache::front::WindowCounts) -> u64| -> Vec<f64> {
            (0..n)
                .map(|i| match windows.get(i) {
                    Some(counts) if counts.read_blocks > 0 => f(counts) as f64 / counts.read_blocks as f64,
                    _ => f64::NAN,
                })
                .collect()
        };
        timeseries.columns.push(f64s("cache_read_hit_ratio", per_window(|c| c.read_hits)));
        // RGR only where the summary has one (a layout the cache knows the placement of).
        let rgr = if front.has_placement() { per_window(|c| c.miss_penalty) } else { vec![f64::NAN; n] };
        timeseries.columns.push(f64s("cache_rgr", rgr));
    }
    let (mut class, mut upper, mut count) = (Vec::new(), Vec::new(), Vec::new());
    let histograms = rec.histograms();
    for (i, name) in CLASS_NAMES.iter().enumerate() {
        for (u, c) in histograms[i].buckets() {
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
            f64s("user_busy_s", sim.drives.iter().map(|d| ns_to_s(d.busy_ns - d.rebuild_busy_ns)).collect()),
            f64s("rebuild_busy_s", sim.drives.iter().map(|d| ns_to_s(d.rebuild_busy_ns)).collect()),
            f64s("rebuild_mb", sim.drives.iter().map(|d| (d.rebuild_sectors * crate::disk::SECTOR_BYTES) as f64 / 1e6).collect()),
            i64s("rebuild_operations", sim.drives.iter().map(|d| d.rebuild_operations() as i64).collect()),
            i64s("rebuild_runs", sim.drives.iter().map(|d| d.rebuild_runs as i64).collect()),
            f64s("rebuild_run_first_busy_s", sim.drives.iter().map(|d| ns_to_s(d.rebuild_run_first_busy_ns)).collect()),
            f64s("rebuild_blocked_s", {
                let blocked = sim.rebuild.as_ref().map_or(&[][..], |r| r.blocked_ns_by_slot());
                (0..sim.drives.len()).map(|i| ns_to_s(blocked.get(i).copied().unwrap_or(0))).collect()
            }),
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
    let mut tables = vec![timeseries, histogram, drives, outcomes];
    if let Some(progress) = sim.rebuild_progress.as_ref() {
        tables.push(rebuild_progress_table(progress, w));
    }
    if let Some(responses) = rec.responses_by_arrival() {
        tables.push(responses_table(&responses));
    }
    tables
}

/// c(t) per time-series window of `n`: the fraction of the lost units current at the
/// window's end, carried forward; NaN before the first rebuild starts and in runs without one.
fn rebuilt_fraction(sim: &Simulation, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n);
    let mut last = f64::NAN;
    for i in 0..n {
        if let Some(&f) = sim.rebuilt_fraction.get(i) {
            last = f;
        }
        out.push(last);
    }
    out
}

/// The `rebuild_progress` table (only with `metrics.record_rebuild_progress`): one row per
/// drive slot that did rebuild work and per window from its first such window to its last,
/// with the rebuild operations it completed in the window and in all windows up to it.
fn rebuild_progress_table(progress: &[Vec<u32>], window_s: f64) -> Table {
    let (mut drive, mut start, mut ops, mut cumulative) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (slot, counts) in progress.iter().enumerate() {
        let Some(first) = counts.iter().position(|&c| c > 0) else { continue };
        let mut total = 0i64;
        for (window, &c) in counts.iter().enumerate().skip(first) {
            total += i64::from(c);
            drive.push(slot as i64);
            start.push(window as f64 * window_s);
            ops.push(i64::from(c));
            cumulative.push(total);
        }
    }
    Table {
        name: "rebuild_progress".into(),
        columns: vec![
            i64s("drive", drive),
            f64s("window_start_s", start),
            i64s("rebuild_operations", ops),
            i64s("cumulative_rebuild_operations", cumulative),
        ],
    }
}

/// The `responses` table (only with `metrics.record_responses`): one row per request after
/// warm-up, in order of arrival; times in integer ns, so they are exact.
fn responses_table(responses: &[crate::metrics::ResponseRecord]) -> Table {
    Table {
        name: "responses".into(),
        columns: vec![
            i64s("arrival_ns", responses.iter().map(|r| r.arrival as i64).collect()),
            i64s("response_ns", responses.iter().map(|r| r.response as i64).collect()),
            i64s("is_write", responses.iter().map(|r| r.is_write as i64).collect()),
            i64s("degraded", responses.iter().map(|r| r.degraded as i64).collect()),
            i64s("lost", responses.iter().map(|r| r.lost as i64).collect()),
        ],
    }
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
    /// Case name (one of [`bench_cases`]).
    pub case: String,
    /// User requests simulated.
    pub requests: u64,
    /// Disk operations simulated.
    pub disk_ops: u64,
    /// Wall-clock seconds of the simulation loop (excluding set-up; for [`TRACE_CASE`],
    /// from building the simulation on, when its trace reader starts).
    pub wall_seconds: f64,
    /// Simulated user requests per wall-clock second.
    pub requests_per_second: f64,
    /// Simulated disk operations per wall-clock second.
    pub disk_ops_per_second: f64,
    /// Whether the progress hook stopped the case early; the figures then cover the
    /// requests simulated until it did.
    pub cancelled: bool,
    /// Simulated seconds the case covered.
    pub simulated_seconds: f64,
    /// For a rebuild case: the rebuild time it simulated, s (`None` for the others).
    pub rebuild_time_s: Option<f64>,
}

/// The benchmark case of a whole rebuild: an 8+1 RAID-5 of `hc550` (18 TB) with a hot
/// spare loses a drive 10 s in and rebuilds it in 1 MiB units, DOR + VSM, under 200 random
/// 4 KiB user requests per second (70 % reads); the case ends with the rebuild. Not among
/// [`bench_cases`] (it runs for minutes): [`long_bench_cases`].
pub const REBUILD_CASE: &str = "rebuild_20tb";

/// [`REBUILD_CASE`] with PRO's rebuild order (seed 000) in place of the sequential one: the
/// cost of the Access Monitor and the scheduler beside DOR's own (`make bench` runs both).
pub const REBUILD_PRO_CASE: &str = "rebuild_20tb_pro";

/// Benchmark cases left out of the default set because they run for minutes.
pub fn long_bench_cases() -> &'static [&'static str] {
    &[REBUILD_CASE, REBUILD_PRO_CASE]
}

/// Names of the built-in benchmark cases: `single_drive` (one IBM 0661, random 4 KiB reads),
/// `raid5` (8 IBM 0661 as RAID-5, 70 % reads, 4–64 KiB), `ibm18es_cached` (one IBM 18ES
/// with its DiskSim-validated on-drive cache, random 4 KiB requests, 70 % reads: the drive
/// DiskSim's own speed is quoted for) and `ibm18es_cached_trace` (the same requests replayed
/// from a trace file, as DiskSim's speed was measured: see [`TRACE_CASE`]).
pub fn bench_cases() -> &'static [&'static str] {
    &["single_drive", "raid5", "raid5_swo", "ibm18es_cached", TRACE_CASE]
}

/// The bench case that replays a trace: the requests of `ibm18es_cached`, generated with its
/// seed and written to a trace file in DiskSim's default (`ascii`) format before the case
/// runs, then read back by the replay, which parses it while it simulates. Its time includes
/// building the simulation, when the trace reader starts.
pub const TRACE_CASE: &str = "ibm18es_cached_trace";

/// A bench case's trace file, removed when dropped.
struct BenchTrace(PathBuf);

impl Drop for BenchTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Write the requests of `ibm18es_cached` (`requests` of them) to a new DiskSim ascii trace
/// in the temporary directory: arrival in ms to the ns, device 0, block, blocks, flags 1 for a
/// read and 0 for a write.
fn write_bench_trace(requests: u64) -> Result<BenchTrace> {
    static WRITTEN: AtomicU64 = AtomicU64::new(0);
    let (_, mut workload) = bench_case_workload("ibm18es_cached", requests)?;
    let name = format!("raidlab-{TRACE_CASE}-{}-{}.trace", std::process::id(), WRITTEN.fetch_add(1, Ordering::Relaxed));
    let trace = BenchTrace(std::env::temp_dir().join(name));
    let file = std::fs::File::create(&trace.0).map_err(|err| Error::io(&trace.0, err))?;
    let mut out = std::io::BufWriter::new(file);
    while let Some(r) = workload.next(0)? {
        let (ms, ns) = (r.arrival / 1_000_000, r.arrival % 1_000_000);
        writeln!(out, "{ms}.{ns:06} 0 {} {} {}", r.lba, r.sectors, u8::from(!r.is_write))
            .map_err(|err| Error::io(&trace.0, err))?;
    }
    out.flush().map_err(|err| Error::io(&trace.0, err))?;
    Ok(trace)
}

/// Synthetic bench case `case` with `requests` requests, built, and a second copy of its
/// workload, which draws the requests the simulation will issue (same seed, same streams) for
/// a caller to use apart from it.
pub fn bench_case_workload(case: &str, requests: u64) -> Result<(Simulation, Workload)> {
    let config = Config::from_toml(&bench_case_config(case, requests)?, Path::new("."))?;
    // Building the simulation resolves the arrival rate from the target utilization.
    let sim = Simulation::new(config)?;
    let capacity = sim.controller.capacity_sectors();
    let workload = Workload::new(&sim.config.workload, capacity, sim.arrival_rate_per_s, sim.config.seed, "workload")?;
    Ok((sim, workload))
}

/// The configuration of [`TRACE_CASE`], replaying the trace at `path`.
fn trace_case_config(path: &Path) -> String {
    let path = toml::Value::String(path.display().to_string());
    format!(
        "seed = 1\n[array]\nlayout = \"raid0\"\ndrives = 1\nstripe_unit_kib = 64\n\
         [drive]\npreset = \"ibm18es\"\n\
         [workload]\ntrace = {{ path = {path}, format = \"disksim\" }}\n\
         [workload.arrival]\nprocess = \"trace\"\n"
    )
}

/// The configuration of a bench case: Poisson arrivals at `utilization` of the drives.
fn bench_config(layout: &str, drives: u32, preset: &str, workload: &str, utilization: f64, requests: u64) -> String {
    format!(
        "seed = 1\n[array]\nlayout = \"{layout}\"\ndrives = {drives}\nstripe_unit_kib = 64\n\
         [drive]\npreset = \"{preset}\"\n\
         [workload]\nrequests = {requests}\n{workload}\n\
         [workload.arrival]\nprocess = \"poisson\"\ntarget_utilization = {utilization}\n"
    )
}

/// Run benchmark case `case` with `requests` user requests. `progress`, as for [`run_toml`],
/// lets a caller cancel a long case (the binding does, on Ctrl-C); it is asked about every
/// 100 ms of wall time, so it does not slow the case down.
pub fn bench(case: &str, requests: u64, progress: Option<&mut dyn FnMut(Progress) -> bool>) -> Result<BenchResult> {
    let trace = if case == TRACE_CASE { Some(write_bench_trace(requests)?) } else { None };
    let text = match &trace {
        Some(trace) => trace_case_config(&trace.0),
        None => bench_case_config(case, requests)?,
    };
    let config = Config::from_toml(&text, Path::new("."))?;
    let building = std::time::Instant::now();
    let mut sim = Simulation::new(config)?;
    let start = if trace.is_some() { building } else { std::time::Instant::now() };
    run_reporting(&mut sim, progress)?;
    let wall_seconds = start.elapsed().as_secs_f64();
    let disk_ops: u64 = sim.drives.iter().map(|d| d.operations).sum();
    Ok(BenchResult {
        case: case.to_string(),
        requests: sim.recorder.completed,
        disk_ops,
        wall_seconds,
        requests_per_second: sim.recorder.completed as f64 / wall_seconds,
        disk_ops_per_second: disk_ops as f64 / wall_seconds,
        cancelled: sim.cancelled,
        simulated_seconds: ns_to_s(sim.now()),
        rebuild_time_s: sim.rebuilds.first().and_then(|r| r.ended_at.map(|e| ns_to_s(e - r.started_at))),
    })
}

/// The configuration (TOML) of benchmark case `case` with `requests` user requests; not for
/// [`TRACE_CASE`], whose configuration names the trace file [`bench`] writes for it.
pub fn bench_case_config(case: &str, requests: u64) -> Result<String> {
    Ok(match case {
        "single_drive" => bench_config("raid0", 1, "ibm0661", "read_fraction = 1.0\nsize_kib = 4", 0.7, requests),
        "raid5" => bench_config(
            "raid5",
            8,
            "ibm0661",
            "read_fraction = 0.7\nsize = { distribution = \"uniform\", min_kib = 4, max_kib = 64 }",
            0.6,
            requests,
        ),
        "ibm18es_cached" => bench_config("raid0", 1, "ibm18es", "read_fraction = 0.7\nsize_kib = 4", 0.7, requests),
        // The raid5 case written through SWO's log (a 100 MB log that fills and re-syncs):
        // what the log's index and planning add to a write's simulated cost.
        "raid5_swo" => bench_case_config("raid5", requests)? + "[log]\nscheme = \"swo\"\ncapacity_gb = 0.1\n",
        REBUILD_PRO_CASE => bench_case_config(REBUILD_CASE, requests)?
            .replace("executor = \"dor\"\n", "executor = \"dor\"\norder = \"pro\"\n"),
        REBUILD_CASE => "seed = 1\n[array]\nlayout = \"raid5\"\ndrives = 9\nstripe_unit_kib = 64\nspares = 1\n\
             [drive]\npreset = \"hc550\"\n\
             [workload]\nduration_s = 10000000\nread_fraction = 0.7\nsize_kib = 4\n\
             [workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 200\n\
             [[failures]]\ndrive = 0\nat_s = 10\n\
             [rebuild]\nexecutor = \"dor\"\ndiscipline = \"vsm\"\nunit = { sectors = 2048 }\nend_run = true\n\
             [metrics]\nwindow_s = 60\n"
            .to_string(),
        TRACE_CASE => {
            return Err(Error::config("case", format!("{TRACE_CASE} replays a trace that `bench` writes when it runs")))
        }
        other => {
            return Err(Error::config("case", format!("unknown bench case {other:?}; known: {}", bench_cases().join(", "))))
        }
    })
}

/// Statistics of a trace described by a TOML table with the keys of `workload.trace`
/// (`path`, `format`, optional `csv`), as JSON.
/// `progress`, as for [`run_toml`], is told the requests read so far (`fraction` is NaN: the
/// length of a trace is not known before it is read) and may stop the pass: `None` then.
pub fn trace_info_toml(
    toml_text: &str,
    base_dir: &Path,
    progress: Option<&mut dyn FnMut(Progress) -> bool>,
) -> Result<Option<String>> {
    let de = toml::Deserializer::parse(toml_text).map_err(|e| Error::config("trace", e.to_string()))?;
    let mut cfg: crate::workload::TraceConfig = serde_path_to_error::deserialize(de)
        .map_err(|e| Error::config(format!("trace.{}", e.path()), e.inner().to_string()))?;
    if cfg.path.is_relative() {
        cfg.path = base_dir.join(&cfg.path);
    }
    let stats = match progress {
        Some(report) => crate::workload::trace::stats_until(&cfg, &mut |read| {
            report(Progress { fraction: f64::NAN, completed_requests: read })
        })?,
        None => Some(crate::workload::trace::stats(&cfg)?),
    };
    Ok(stats.map(|stats| serde_json::to_string_pretty(&stats).expect("stats serialize")))
}

// ---------------------------------------------------------------------------------------------
// Drive validation against a real-drive trace
// ---------------------------------------------------------------------------------------------

/// How [`validate_toml`] replays a validate trace, as the summary states it.
pub const VALIDATION_REPLAY: &str =
    "one drive; closed loop, one request outstanding, each request issued the trace's gap after the previous one completes (DiskSim's validate replay)";

/// Replay a DiskSim `validate` trace on one drive and compare the simulated response times
/// with those the real drive measured (see `docs/validation.md`).
///
/// `drive_toml` gives the drive as the keys of a `[drive]` table (`preset = "ibm0661"`, a
/// DiskSim spec, `scheduler = …`), or as a configuration document of which only `[drive]` and
/// `seed` are used. The run is built around it: `layout = "raid0"`, `drives = 1`, one stripe
/// unit spanning the whole drive (so no request is split), the trace with
/// `format = "validate"` and DiskSim's arrival rule (`process = "closed"`, `outstanding = 1`,
/// `think_from_trace = true`), and `metrics.record_responses = true`. Trace addresses beyond
/// the drive are folded onto it (modulo) and counted in `beyond_capacity`. Relative paths
/// start from `base_dir`.
///
/// The output's summary has the request count, measured and simulated mean (ms), the demerit
/// ([`crate::metrics::demerit`]) in ms and as % of the measured mean, the mean per-request
/// absolute difference, and the same figures for reads and writes alone. Its tables are
/// `measured_cdf` and `simulated_cdf` (`response_ms`, `fraction`: the corners of the
/// empirical CDFs) and `requests` (one row per trace line: `line`, `is_write`, `buffer`,
/// `lbn`, `blocks`, `measured_ms`, `simulated_ms`).
pub fn validate_toml(drive_toml: &str, trace_path: &Path, base_dir: &Path) -> Result<RunOutput> {
    let trace_path = if trace_path.is_relative() { base_dir.join(trace_path) } else { trace_path.to_path_buf() };
    let config = validation_config(drive_toml, &trace_path, base_dir)?;
    let measured = crate::workload::trace::read_validate_trace(&trace_path)?;
    let resolved_config = config.to_toml();
    let config_hash = config.hash();
    let mut sim = Simulation::new(config)?;
    sim.run(None)?;
    let simulated = sim.recorder.responses_by_arrival().unwrap_or_default();
    if simulated.len() != measured.len() {
        return Err(Error::Invariant(format!(
            "the trace has {} requests but {} were simulated",
            measured.len(),
            simulated.len()
        )));
    }
    let capacity = sim.controller.capacity_sectors();
    let beyond_capacity = measured.iter().filter(|r| r.lbn.saturating_add(r.blocks) > capacity).count();
    let measured_ms: Vec<f64> = measured.iter().map(|r| ns_to_ms(r.measured_ns)).collect();
    let simulated_ms: Vec<f64> = simulated.iter().map(|r| ns_to_ms(r.response)).collect();

    let comparison = |keep: &dyn Fn(bool) -> bool| {
        let pick = |values: &[f64]| -> Vec<f64> {
            values.iter().zip(&measured).filter(|(_, r)| keep(r.is_write)).map(|(v, _)| *v).collect()
        };
        let (m, s) = (pick(&measured_ms), pick(&simulated_ms));
        let Some(d) = crate::metrics::demerit::Demerit::of(&m, &s) else {
            return serde_json::Value::Null;
        };
        let mean_abs = m.iter().zip(&s).map(|(a, b)| (a - b).abs()).sum::<f64>() / m.len() as f64;
        json!({
            "requests": m.len(),
            "measured_mean_ms": finite(d.measured_mean),
            "simulated_mean_ms": finite(d.simulated_mean),
            "demerit_ms": finite(d.rms_distance),
            "demerit_percent": finite(d.percent_of_measured_mean()),
            "mean_abs_difference_ms": finite(mean_abs),
        })
    };
    let all = comparison(&|_| true);
    if all.is_null() {
        return Err(Error::config("trace", format!("{} holds no requests", trace_path.display())));
    }
    let mut summary = json!({
        "raidlab_version": env!("CARGO_PKG_VERSION"),
        "trace": trace_path.display().to_string(),
        "drive": serde_json::to_value(&sim.config.drive).expect("the drive config serializes"),
        "seed": sim.config.seed,
        "config_hash": config_hash,
        "replay": VALIDATION_REPLAY,
        "reads": measured.iter().filter(|r| !r.is_write).count(),
        "writes": measured.iter().filter(|r| r.is_write).count(),
        "capacity_sectors": capacity,
        "beyond_capacity": beyond_capacity,
        "simulated_seconds": ns_to_s(sim.now()),
        "read": comparison(&|is_write| !is_write),
        "write": comparison(&|is_write| is_write),
    });
    if let (Some(summary), Some(all)) = (summary.as_object_mut(), all.as_object()) {
        for (key, value) in all {
            summary.insert(key.clone(), value.clone());
        }
    }

    let cdf_table = |name: &str, sample: &[f64]| {
        let points = crate::metrics::demerit::empirical_cdf(&crate::metrics::demerit::sorted(sample));
        Table {
            name: name.into(),
            columns: vec![
                f64s("response_ms", points.iter().map(|p| p.0).collect()),
                f64s("fraction", points.iter().map(|p| p.1).collect()),
            ],
        }
    };
    let requests = Table {
        name: "requests".into(),
        columns: vec![
            i64s("line", measured.iter().map(|r| r.line as i64).collect()),
            i64s("is_write", measured.iter().map(|r| r.is_write as i64).collect()),
            Column {
                name: "buffer".into(),
                data: ColumnData::Str(measured.iter().map(|r| r.buffer.label().to_string()).collect()),
            },
            i64s("lbn", measured.iter().map(|r| r.lbn as i64).collect()),
            i64s("blocks", measured.iter().map(|r| r.blocks as i64).collect()),
            f64s("measured_ms", measured_ms.clone()),
            f64s("simulated_ms", simulated_ms.clone()),
        ],
    };
    let tables = vec![cdf_table("measured_cdf", &measured_ms), cdf_table("simulated_cdf", &simulated_ms), requests];
    Ok(RunOutput { summary, tables, resolved_config, config_hash })
}

/// The one-drive configuration [`validate_toml`] runs (its docs say what it contains).
pub fn validation_config(drive_toml: &str, trace_path: &Path, base_dir: &Path) -> Result<Config> {
    let document: toml::Table =
        drive_toml.parse().map_err(|e: toml::de::Error| Error::config("drive", e.to_string().trim_end().to_string()))?;
    let (drive, seed) = match document.get("drive") {
        Some(toml::Value::Table(drive)) => (drive.clone(), document.get("seed").cloned()),
        Some(_) => return Err(Error::config("drive", "expected a table")),
        None => (document, None),
    };
    let build = |stripe_unit_kib: f64| -> Result<Config> {
        let mut table = toml::Table::new();
        table.insert("seed".into(), seed.clone().unwrap_or(toml::Value::Integer(1)));
        let array: toml::Table = [
            ("layout".to_string(), toml::Value::from("raid0")),
            ("drives".to_string(), toml::Value::from(1)),
            ("stripe_unit_kib".to_string(), toml::Value::from(stripe_unit_kib)),
        ]
        .into_iter()
        .collect();
        table.insert("array".into(), toml::Value::Table(array));
        table.insert("drive".into(), toml::Value::Table(drive.clone()));
        let trace: toml::Table = [
            ("path".to_string(), toml::Value::from(trace_path.display().to_string())),
            ("format".to_string(), toml::Value::from("validate")),
        ]
        .into_iter()
        .collect();
        let arrival: toml::Table = [
            ("process".to_string(), toml::Value::from("closed")),
            ("outstanding".to_string(), toml::Value::from(1)),
            ("think_from_trace".to_string(), toml::Value::from(true)),
        ]
        .into_iter()
        .collect();
        let workload: toml::Table = [
            ("trace".to_string(), toml::Value::Table(trace)),
            ("arrival".to_string(), toml::Value::Table(arrival)),
        ]
        .into_iter()
        .collect();
        table.insert("workload".into(), toml::Value::Table(workload));
        let metrics: toml::Table = [("record_responses".to_string(), toml::Value::from(true))].into_iter().collect();
        table.insert("metrics".into(), toml::Value::Table(metrics));
        Config::from_toml(&toml::to_string(&table).expect("a TOML table serializes"), base_dir)
            .map_err(without_toml_excerpt)
    };
    // One stripe unit as large as the drive: RAID-0 over one drive then maps every request
    // to one disk operation at its own address.
    let provisional = build(64.0)?;
    let capacity = crate::disk::DriveModel::new(&provisional.drive_model()?, "drive.model")?.capacity_sectors();
    build(capacity as f64 / 2.0)
}

/// A configuration error about the TOML [`validation_config`] generates: its line and excerpt
/// mean nothing to the caller, so keep only the message's last line (what is wrong).
fn without_toml_excerpt(error: Error) -> Error {
    match error {
        Error::Config { key, message } if message.starts_with("TOML parse error") => {
            let last = message.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("");
            Error::config(key, last.trim().to_string())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::RequestRecord;

    /// The trace case replays exactly the requests of `ibm18es_cached`: the same addresses,
    /// sizes and kinds, at the same times counted from the first (a replay starts at its
    /// first record), to the nanosecond; the file is gone once the case has run.
    #[test]
    fn the_trace_case_replays_the_requests_of_the_synthetic_case() {
        let requests = 5_000;
        let trace = write_bench_trace(requests).unwrap();
        let (sim, mut synthetic) = bench_case_workload("ibm18es_cached", requests).unwrap();
        let capacity = sim.controller.capacity_sectors();
        let replay_config = Config::from_toml(&trace_case_config(&trace.0), Path::new(".")).unwrap();
        let mut replay = Workload::new(&replay_config.workload, capacity, None, 1, "workload").unwrap();
        let mut first = None;
        let mut count = 0;
        while let Some(expected) = synthetic.next(0).unwrap() {
            let origin = *first.get_or_insert(expected.arrival);
            let replayed = replay.next(0).unwrap().expect("as many requests in the trace");
            assert_eq!(replayed, RequestRecord { arrival: expected.arrival - origin, ..expected }, "request {count}");
            count += 1;
        }
        assert_eq!(count, requests);
        assert!(replay.next(0).unwrap().is_none());
        let path = trace.0.clone();
        drop(trace);
        assert!(!path.exists());
        let result = bench(TRACE_CASE, 500, None).unwrap();
        assert_eq!((result.requests, result.cancelled), (500, false));
    }

    #[test]
    fn a_progress_hook_returning_false_cancels_a_bench_case() {
        // Far more requests than the test could simulate: only the cancel ends it quickly.
        let requests = 1_000_000_000;
        let mut asked = 0;
        let mut cancel = |_: Progress| {
            asked += 1;
            false
        };
        let result = bench("single_drive", requests, Some(&mut cancel)).expect("bench case runs");
        assert_eq!(asked, 1);
        assert!(result.cancelled);
        assert!(result.requests > 0 && result.requests < requests, "{} requests", result.requests);
    }

    #[test]
    fn a_bench_case_whose_hook_carries_on_runs_to_the_end() {
        let mut last = None;
        let mut carry_on = |step: Progress| {
            last = Some((step.fraction, step.completed_requests));
            true
        };
        let result = bench("raid5", 2_000, Some(&mut carry_on)).expect("bench case runs");
        assert!(!result.cancelled);
        assert_eq!(result.requests, 2_000);
        assert_eq!(last, Some((1.0, 2_000)));
    }
}

// ---------------------------------------------------------------------------------------------
// Layout facts: what the configured array's layout holds and loses
// ---------------------------------------------------------------------------------------------

/// Arrays of at most this many members have every member's exposure listed by
/// [`layout_facts`]; larger arrays have member 0's and those of the members the configuration's
/// failures name (a RAID-5 of 65,536 drives would list 65,535 members 65,536 times).
pub const EXPOSURE_EVERY_MEMBER_MAX: u32 = 64;

/// Exposed members [`MemberExposure::members`] lists at most (the lowest slots): a parity
/// array of thousands of drives exposes every other member, which a count says as well.
pub const EXPOSURE_LISTED_MAX: usize = 64;

/// The configured array's layout as the simulation builds it, described by the layout's own
/// answers ([`layout_facts`]). Sectors are 512 bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LayoutFacts {
    /// Registry name of the layout (`raid5`).
    pub layout: String,
    /// Members of the array (`array.drives`; hot spares are not members).
    pub drives: u32,
    /// Logical capacity the users see, sectors.
    pub capacity_sectors: u64,
    /// Logical capacity the users see, bytes.
    pub capacity_bytes: u64,
    /// Sectors of each member that hold stripe units (the rest of a drive is unused): what a
    /// rebuild restores.
    pub member_sectors: u64,
    /// Bytes each member holds: `member_sectors` × 512.
    pub member_bytes: u64,
    /// Failures of one redundancy set the data survives: 0 for RAID-0, `copies − 1` for
    /// RAID-1, 1 for RAID-5.
    pub fault_tolerance: u32,
    /// The exposure of each member examined, in slot order: every member for arrays of at
    /// most [`EXPOSURE_EVERY_MEMBER_MAX`] drives, else member 0 and the members the
    /// configuration's failures name.
    pub exposure: Vec<MemberExposure>,
    /// Whether `exposure` covers every member.
    pub every_member_examined: bool,
    /// Whether every member in `exposure` has the same count (every member of the array when
    /// `every_member_examined`).
    pub same_exposure_count: bool,
    /// Units of one stripe (data and parity, or every copy of a mirror's): the drives one
    /// stripe spans.
    pub stripe_width: u32,
    /// The fraction of the array's stripes with a unit on one member (member 0): 1 for RAID-5
    /// and RAID-6, G/C for parity declustering. While a member is lost, this share of the
    /// stripes has lost a unit, until the rebuild restores it.
    pub member_stripe_fraction: f64,
    /// Distributed spares the layout keeps in its members' free columns (dRAID's S, parsed
    /// from `array.draid` by the layout itself); 0 for every other layout.
    pub distributed_spares: u32,
    /// The drive's spindle speed, revolutions per minute, and recording surfaces.
    pub drive_rpm: f64,
    pub drive_surfaces: u32,
    /// The drive's zones, outermost first, as its model describes the whole drive (whatever
    /// `drive.capacity_sectors` leaves of it): what a sequential pass over each costs.
    pub drive_zones: Vec<DriveZone>,
}

/// One zone of the drive model ([`LayoutFacts::drive_zones`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DriveZone {
    /// Cylinders in the zone.
    pub cylinders: u32,
    /// 512-byte sectors on every track of the zone.
    pub sectors_per_track: u32,
    /// Skew at a switch to the next track of a cylinder, sectors: what a sequential pass
    /// loses per track beside the revolution.
    pub track_skew_sectors: u32,
}

/// The members whose failure, while `member` is failed, takes the data closer to loss: those
/// that share a redundancy set with it, as the layout states them
/// ([`crate::layout::Layout::redundancy_set`]: RAID-5 every other member, RAID-1 the other
/// copies of its mirror set). Empty when `member`'s failure alone loses data (RAID-0).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MemberExposure {
    /// The failed member's slot.
    pub member: u32,
    /// How many members are exposed.
    pub count: u32,
    /// The exposed members' slots, lowest first, at most [`EXPOSURE_LISTED_MAX`] of them.
    pub members: Vec<u32>,
}

/// Build the layout a TOML configuration describes, as [`Simulation::new`] does (the drive
/// model's capacity, `array.stripe_unit_kib`, `copies`, `parity_rotation`), and report it from
/// the layout's own answers: its name, members, capacity, what a member holds, the failures it
/// tolerates and the exposure of members while one is failed ([`MemberExposure`]). Relative
/// paths (drive specs, traces) start from `base_dir`. A configuration the core refuses is an
/// [`Error::Config`] naming the key.
///
pub fn layout_facts(config_toml: &str, base_dir: &Path) -> Result<LayoutFacts> {
    let config = Config::from_toml(config_toml, base_dir)?;
    let (model_config, _warnings) = config.drive_model_with_warnings()?;
    let model = crate::disk::DriveModel::new(&model_config, "drive.model")?;
    let layout = config.build_layout(model.capacity_sectors())?;
    let drives = layout.drives();

    let every_member_examined = drives <= EXPOSURE_EVERY_MEMBER_MAX;
    let examined: Vec<u32> = if every_member_examined {
        (0..drives).collect()
    } else {
        let mut named: Vec<u32> = std::iter::once(0)
            .chain(
                config
                    .failures
                    .iter()
                    .filter(|f| f.kind == crate::config::FailureKind::DriveFails)
                    .filter_map(|f| f.drive)
                    .filter(|&slot| slot < drives),
            )
            .collect();
        named.sort_unstable();
        named.dedup();
        named
    };
    let exposure: Vec<MemberExposure> = examined
        .into_iter()
        .map(|member| {
            let exposed = layout.redundancy_set(member);
            MemberExposure {
                member,
                count: exposed.len() as u32,
                members: exposed.into_iter().take(EXPOSURE_LISTED_MAX).collect(),
            }
        })
        .collect();
    let same_exposure_count = exposure.windows(2).all(|pair| pair[0].count == pair[1].count);
    let mut map = crate::layout::StripeMap::default();
    layout.map_stripe(0, &mut map);
    let stripe_width = (map.data.len() + map.parity.len()) as u32;
    // (A stripe has at most one unit on a member, so the member's units count its stripes.)
    let member_units = layout.member_sectors() / layout.stripe_unit_sectors();
    let member_stripe_fraction = (member_units as f64 / layout.stripes().max(1) as f64).min(1.0);
    let sector_bytes = crate::disk::SECTOR_BYTES;
    Ok(LayoutFacts {
        layout: layout.name().to_string(),
        drives,
        capacity_sectors: layout.capacity_sectors(),
        capacity_bytes: layout.capacity_sectors() * sector_bytes,
        member_sectors: layout.member_sectors(),
        member_bytes: layout.member_sectors() * sector_bytes,
        fault_tolerance: layout.fault_tolerance(),
        exposure,
        every_member_examined,
        same_exposure_count,
        stripe_width,
        member_stripe_fraction,
        distributed_spares: layout.distributed_spares(),
        drive_rpm: model_config.rpm,
        drive_surfaces: model_config.surfaces,
        drive_zones: model_config
            .zones
            .iter()
            .map(|zone| DriveZone {
                cylinders: zone.cylinders,
                sectors_per_track: zone.sectors_per_track,
                track_skew_sectors: zone.track_switch_skew_sectors.unwrap_or(model_config.track_skew_sectors),
            })
            .collect(),
    })
}

#[cfg(test)]
mod layout_facts_tests {
    use super::*;

    /// A configuration of small drives (100 cylinders × 4 surfaces × 96 sectors, 4 KiB stripe
    /// units) with the `[array]` lines `array`, and the TOML `extra` after it.
    fn config(array: &str, extra: &str) -> String {
        format!(
            "seed = 1\n[array]\n{array}\nstripe_unit_kib = 4\n\
             [drive.model]\nrpm = 7200\nsurfaces = 4\nzones = [{{ cylinders = 100, sectors_per_track = 96 }}]\n\
             seek = {{ kind = \"formula\", a_ms = 1.0, b_ms = 0.002, c_ms = 0.25 }}\n\
             head_switch_ms = 0.3\ncommand_overhead_ms = 0.2\n\
             [workload]\nrequests = 10\n{extra}"
        )
    }

    fn facts(array: &str) -> LayoutFacts {
        layout_facts(&config(array, ""), Path::new(".")).unwrap()
    }

    /// The members listed as exposed while `member` is failed.
    fn exposed(facts: &LayoutFacts, member: u32) -> &[u32] {
        &facts.exposure.iter().find(|e| e.member == member).expect("member examined").members
    }

    #[test]
    fn raid5_of_five_exposes_the_four_others_and_holds_four_members() {
        let f = facts("layout = \"raid5\"\ndrives = 5");
        assert_eq!((f.layout.as_str(), f.drives, f.fault_tolerance), ("raid5", 5, 1));
        assert_eq!(f.capacity_sectors, 4 * f.member_sectors);
        assert_eq!((f.capacity_bytes, f.member_bytes), (f.capacity_sectors * 512, f.member_sectors * 512));
        // Every member's stripe units: 100 × 4 × 96 sectors in 8-sector units.
        assert_eq!(f.member_sectors, 100 * 4 * 96 / 8 * 8);
        assert!(f.every_member_examined && f.same_exposure_count);
        assert_eq!(f.exposure.len(), 5);
        for e in &f.exposure {
            assert_eq!(e.count, 4);
            let others: Vec<u32> = (0..5).filter(|&o| o != e.member).collect();
            assert_eq!(e.members, others);
        }
    }

    /// The share of stripes with a unit on a member is 1 where every stripe spans every
    /// drive, and G/C for parity declustering (each drive in r of the b tuples, r/b = G/C).
    #[test]
    fn a_member_holds_a_unit_of_every_stripe_or_of_the_declustering_share() {
        let raid5 = facts("layout = \"raid5\"\ndrives = 5");
        assert_eq!((raid5.stripe_width, raid5.member_stripe_fraction), (5, 1.0));
        let raid6 = facts("layout = \"raid6\"\ndrives = 6");
        assert_eq!((raid6.stripe_width, raid6.member_stripe_fraction), (6, 1.0));
        let declustered = facts("layout = \"declustered\"\ndrives = 7\nstripe_width = 3");
        assert_eq!(declustered.stripe_width, 3);
        assert!((declustered.member_stripe_fraction - 3.0 / 7.0).abs() < 1e-12, "{}", declustered.member_stripe_fraction);
        assert_eq!((raid5.distributed_spares, declustered.distributed_spares), (0, 0));
    }

    #[test]
    fn raid1_exposes_the_other_copies_of_the_mirror_set() {
        let two = facts("layout = \"raid1\"\ndrives = 4\ncopies = 2");
        assert_eq!((two.fault_tolerance, two.capacity_sectors), (1, 2 * two.member_sectors));
        assert!(two.same_exposure_count && two.exposure.iter().all(|e| e.count == 1));
        let partners: Vec<&[u32]> = (0..4).map(|member| exposed(&two, member)).collect();
        assert_eq!(partners, [&[1][..], &[0], &[3], &[2]]);
        // Three copies: no second failure loses data, but each of the two other copies takes
        // the set to its last one.
        let three = facts("layout = \"raid1\"\ndrives = 6\ncopies = 3");
        assert_eq!((three.fault_tolerance, three.capacity_sectors), (2, 2 * three.member_sectors));
        assert!(three.same_exposure_count && three.exposure.iter().all(|e| e.count == 2));
        assert_eq!((exposed(&three, 1), exposed(&three, 5)), (&[0, 2][..], &[3, 4][..]));
    }

    #[test]
    fn raid0_tolerates_nothing_and_exposes_nothing_more() {
        let f = facts("layout = \"raid0\"\ndrives = 3");
        assert_eq!((f.fault_tolerance, f.capacity_sectors), (0, 3 * f.member_sectors));
        assert!(f.exposure.iter().all(|e| e.count == 0 && e.members.is_empty()));
    }

    #[test]
    fn a_large_array_lists_member_0_and_the_failed_members_capped() {
        // The most members a configuration may have beside one spare.
        let array = "layout = \"raid5\"\ndrives = 65535\nspares = 1";
        let failure = "[[failures]]\ndrive = SLOT\nat_s = 1\n[rebuild]\n";
        let f = layout_facts(&config(array, &failure.replace("SLOT", "4097")), Path::new(".")).unwrap();
        assert!(!f.every_member_examined && f.same_exposure_count);
        assert_eq!(f.exposure.iter().map(|e| e.member).collect::<Vec<_>>(), [0, 4097]);
        for e in &f.exposure {
            assert_eq!((e.count, e.members.len()), (65_534, EXPOSURE_LISTED_MAX));
        }
        // A failure of the spare's slot names no member.
        let spare = config(array, &failure.replace("SLOT", "65535"));
        let f = layout_facts(&spare, Path::new(".")).unwrap();
        assert_eq!(f.exposure.iter().map(|e| e.member).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn a_configuration_the_core_refuses_names_the_key() {
        let err = layout_facts(&config("layout = \"raid1\"\ndrives = 5", ""), Path::new(".")).unwrap_err().to_string();
        assert!(err.starts_with("array.drives:"), "{err}");
        let err = layout_facts(&config("layout = \"raid9\"\ndrives = 4", ""), Path::new(".")).unwrap_err().to_string();
        assert!(err.starts_with("array.layout:"), "{err}");
        let err = layout_facts(&config("layout = \"raid5\"\ndrives = 4\ncopies = 2", ""), Path::new("."))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("array.copies:"), "{err}");
    }
}
