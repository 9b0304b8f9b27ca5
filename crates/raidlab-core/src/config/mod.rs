//! The run configuration: one source of truth for every tunable. The JSON Schema and the
//! configuration reference (`docs/config.md`) are generated from these types.

pub mod warnings;

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::array::ArrayConfig;
use crate::disk::{self, DriveConfig, DriveModelConfig};
use crate::error::{Error, Result};
use crate::metrics::MetricsConfig;
use crate::sim::{ns_to_s, MAX_SIM_TIME_NS};
use crate::workload::{ArrivalConfig, WorkloadConfig};

/// A complete simulation run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Master seed; every random stream of the run derives from it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The array: layout, drive count, stripe unit.
    pub array: ArrayConfig,
    /// The drive every array member is.
    #[serde(default)]
    pub drive: DriveConfig,
    /// The user workload.
    pub workload: WorkloadConfig,
    /// Drive failures, in any order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureConfig>,
    /// Measurement options.
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// Data-integrity checking.
    #[serde(default)]
    pub content: ContentConfig,
    /// Rebuilding failed drives onto spares; absent, a failed drive stays failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<crate::rebuild::RebuildConfig>,
    /// A buffer cache in front of the array; absent, requests go straight to the array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::cache::config::CacheConfig>,
    /// A log drive beside a RAID-5 array and the scheme that writes through it (seed 002);
    /// absent, writes update the parity in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<crate::log::config::LogConfig>,
}

fn default_seed() -> u64 {
    1
}

/// Largest array raidlab accepts (each drive carries its own queue and state).
pub const MAX_DRIVES: u32 = 65_536;

/// Most requests a closed loop may keep outstanding: each holds a queued arrival and a request
/// slot from the start, so 2^32 of them exhausted memory before the first completion.
pub const MAX_OUTSTANDING: u32 = 1 << 20;

/// Smallest time-series window, s: finer windows would make the series larger than the run.
pub const MIN_WINDOW_S: f64 = 0.001;

/// The latest simulated time a run may reach, s.
fn max_sim_time_s() -> f64 {
    ns_to_s(MAX_SIM_TIME_NS)
}

fn beyond_the_horizon(seconds: f64) -> String {
    format!("{seconds:e} s is beyond the {:.0} s (about 146 years) a run may simulate", max_sim_time_s())
}

/// What a failure-schedule entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Drive `drive` fails.
    #[default]
    DriveFails,
    /// A new spare drive arrives (`drive` is not given); a failed member waiting for one is
    /// rebuilt onto it.
    SpareArrives,
    /// The controller crashes and restarts at once (`drive` is not given): what it held only
    /// in memory is lost. The requests in flight end unanswered (`crashed_requests`), the
    /// drives' queued operations are dropped, a rebuild's units in flight are unrebuilt again
    /// (its progress is kept, as md's superblock and a hardware controller's NVRAM keep it),
    /// and each layout loses what it declares volatile. A write caught in flight leaves the
    /// drives as far as it got: the content model takes what its data units hold as the
    /// value last written, so a RAID-5 stripe whose parity it left stale is found out by a
    /// later degraded read (the write hole). Not with `[cache]` (its memory is not modelled
    /// through a crash yet).
    Crash,
    /// The log drive of a `[log]` array fails (`drive` is not given): every logged row is
    /// re-synchronized from the data drives (seed 002 §III-D), and later writes update the
    /// parity in place. Beside a lost data drive, the blocks only the log could recover are
    /// lost (reported, never read stale); md's write-back journal loses every block it held.
    LogFails,
}

fn is_default_kind(kind: &FailureKind) -> bool {
    *kind == FailureKind::DriveFails
}

/// One entry of the failure schedule: a drive failure, a spare's arrival, or a crash of the
/// controller.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureConfig {
    /// `drive_fails` (default), `spare_arrives` or `crash`.
    #[serde(default, skip_serializing_if = "is_default_kind")]
    pub kind: FailureKind,
    /// Drive slot, 0-based: a member (below `array.drives`) or a spare (the slots after).
    /// Not given for `spare_arrives` and `crash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<u32>,
    /// When it fails, seconds of simulated time (at most 2⁶² ns, about 146 years, the
    /// longest a run can simulate).
    pub at_s: f64,
}

/// The content model (see `docs/architecture.md`): every read is checked against the value
/// last written. Costs memory proportional to the sectors written.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContentConfig {
    /// Check every read's data. A request may then move at most 8 GiB (2²⁴ sectors) in one
    /// stripe: the model holds a value per sector of each stripe piece in flight.
    #[serde(default)]
    pub check: bool,
}

/// Whether the configuration's table sets `workload.arrival`.
fn arrival_given(table: &toml::Table) -> bool {
    table.get("workload").and_then(|workload| workload.get("arrival")).is_some()
}

pub use crate::workload::SYNTHETIC_ONLY_KEYS;

/// The first synthetic-only key the configuration's table gives beside a `workload.trace`.
fn synthetic_key_given_with_trace(table: &toml::Table) -> Option<&'static str> {
    let workload = table.get("workload")?.as_table()?;
    workload.get("trace")?;
    SYNTHETIC_ONLY_KEYS.into_iter().find(|key| workload.contains_key(*key))
}

/// (Kept in [`crate::error`], which every part of the crate may use: re-exported here, where
/// configuration errors are made.)
pub use crate::error::in_plain_words;

impl Config {
    /// Parse TOML; errors name the key path and the line. Relative file paths are resolved
    /// against `base_dir`.
    pub fn from_toml(text: &str, base_dir: &Path) -> Result<Config> {
        let de = toml::Deserializer::parse(text)
            .map_err(|e| Error::config("config", e.to_string().trim_end().to_string()))?;
        let mut cfg: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let key = if path == "." || path.is_empty() { "config".to_string() } else { path };
            Error::config(key, in_plain_words(e.inner().to_string().trim_end()))
        })?;
        // Ignored, it would still be saved in the run's configuration as if it had counted.
        // What was given, as opposed to what serde's defaults filled in (the text parsed above).
        let given = toml::from_str::<toml::Table>(text).unwrap_or_default();
        if let Some(key) = synthetic_key_given_with_trace(&given) {
            return Err(Error::config(
                format!("workload.{key}"),
                "only a synthetic workload uses it; a trace workload takes sizes, addresses and reads \
                 and writes from the trace: remove it (or remove `workload.trace`)",
            ));
        }
        cfg.array.check_layout_keys()?;
        // A `[drive]` table that names no drive (only its queue, or `capacity_sectors`) is the
        // default preset's, as an absent `[drive]` is.
        let drive = &mut cfg.drive;
        if drive.preset.is_none() && drive.model.is_none() && drive.diskspec.is_none() {
            drive.preset = crate::disk::DriveConfig::default().preset;
        }
        // Serde's default arrival process is the synthetic workload's Poisson one; a trace
        // workload without `[workload.arrival]` replays at its own timestamps instead.
        if cfg.workload.trace.is_some() && !arrival_given(&given) {
            cfg.workload.arrival = ArrivalConfig::Trace;
        }
        if let Some(trace) = cfg.workload.trace.as_mut() {
            if trace.path.is_relative() {
                trace.path = base_dir.join(&trace.path);
            }
        }
        if let Some(spec) = cfg.drive.diskspec.as_mut() {
            if spec.is_relative() {
                *spec = base_dir.join(&*spec);
            }
        }
        cfg.validate()?;
        Ok(cfg)
    }

    /// The configuration as TOML with every default filled in; a trace workload leaves out
    /// the keys only a synthetic workload reads ([`SYNTHETIC_ONLY_KEYS`]), which it does not use.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a validated configuration serializes")
    }

    /// Stable 64-bit FNV-1a digest of the resolved TOML, as 16 hex digits.
    pub fn hash(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.to_toml().bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }

    /// The drive parameters (preset resolved, DiskSim file imported). Errors name the key,
    /// or the spec file and line.
    pub fn drive_model(&self) -> Result<DriveModelConfig> {
        self.drive_model_with_warnings().map(|(model, _)| model)
    }

    /// The drive parameters and, for `drive.diskspec`, the import's warnings: one line per
    /// DiskSim parameter raidlab does not model (`file:line: …`).
    pub fn drive_model_with_warnings(&self) -> Result<(DriveModelConfig, Vec<String>)> {
        let (mut model, warnings) = self.drive_model_as_given()?;
        if let Some(zero) = self.drive.zero_latency {
            model.zero_latency = zero;
            model.zero_latency_writes = None;
        }
        if self.drive.host_bus == Some(false) {
            model.bus_sector_ms = 0.0;
            model.bus_sector_write_ms = None;
            model.interface = None;
        }
        if let Some(limit) = self.drive.capacity_sectors {
            let holds = disk::Geometry::new(&model, "drive.model")?.capacity_sectors();
            if limit == 0 || limit > holds {
                return Err(Error::config(
                    "drive.capacity_sectors",
                    format!("must be between 1 and the {holds} sectors the drive holds, not {limit}"),
                ));
            }
            model.capacity_sectors = Some(limit);
        }
        Ok((model, warnings))
    }

    /// The drive parameters as the preset, model or file gives them.
    fn drive_model_as_given(&self) -> Result<(DriveModelConfig, Vec<String>)> {
        let d = &self.drive;
        let given = [d.preset.is_some(), d.model.is_some(), d.diskspec.is_some()];
        match given.iter().filter(|&&g| g).count() {
            0 => return Err(Error::config("drive", "give a `preset`, a `model` or a `diskspec`")),
            1 => {}
            _ => return Err(Error::config("drive", "give only one of `preset`, `model` and `diskspec`")),
        }
        if let Some(m) = &d.model {
            return Ok((m.clone(), Vec::new()));
        }
        if let Some(path) = &d.diskspec {
            let spec = disk::diskspec::load(path)?;
            return Ok((spec.model, spec.warnings));
        }
        let name = d.preset.as_deref().unwrap_or_default();
        disk::presets::preset(name).map(|m| (m, Vec::new())).ok_or_else(|| {
            Error::config(
                "drive.preset",
                format!("unknown drive preset {name:?}; known presets: {}", disk::presets::names().join(", ")),
            )
        })
    }

    /// The array's layout over drives of `drive_capacity_sectors` sectors, as every part of
    /// raidlab builds it (the simulation, the layout facts a rebuild plan reads). Errors name
    /// the `array` key at fault.
    pub fn build_layout(&self, drive_capacity_sectors: u64) -> Result<Box<dyn crate::layout::Layout>> {
        let stripe_unit_sectors = self.stripe_unit_sectors()?;
        // md's PPL keeps its log in an area at the end of every member.
        let reserved = self.log.as_ref().map_or(0, |l| l.member_reserved_sectors(stripe_unit_sectors));
        if reserved > 0 && reserved >= drive_capacity_sectors {
            return Err(Error::config(
                "log.scheme",
                format!("{} reserves {reserved} sectors of every member, and a drive holds {drive_capacity_sectors}", self.log.as_ref().map_or("", |l| l.scheme.as_str())),
            ));
        }
        let params = crate::layout::LayoutParams {
            drives: self.array.drives,
            stripe_unit_sectors,
            drive_capacity_sectors: drive_capacity_sectors - reserved,
            own: self.array.layout_keys.clone(),
        };
        let layout = crate::layout::build(&self.array.layout, &params, "array")?;
        match &self.log {
            Some(log) => crate::log::layout::LogAssisted::wrap(layout, log, self.log_slot(), drive_capacity_sectors),
            None => Ok(layout),
        }
    }

    /// The slot of the log drive (after the members, the spares and the spares that arrive
    /// later), when the array has one.
    pub fn log_slot(&self) -> u32 {
        let arriving = self.failures.iter().filter(|f| f.kind == FailureKind::SpareArrives).count() as u32;
        self.array.drives + self.array.spares + arriving
    }

    /// Stripe unit in sectors.
    pub fn stripe_unit_sectors(&self) -> Result<u64> {
        let sectors = self.array.stripe_unit_kib * 2.0;
        if !(sectors.is_finite() && sectors >= 1.0 && sectors.fract() == 0.0) {
            return Err(Error::config(
                "array.stripe_unit_kib",
                format!("{} KiB is not a positive multiple of 0.5 KiB (one sector)", self.array.stripe_unit_kib),
            ));
        }
        // Beyond 2⁶⁴ sectors the conversion would saturate and later messages would quote
        // the saturated count, not the value given.
        if sectors >= u64::MAX as f64 {
            return Err(Error::config(
                "array.stripe_unit_kib",
                format!("{} KiB is larger than any drive", crate::error::readable(self.array.stripe_unit_kib)),
            ));
        }
        Ok(sectors as u64)
    }

    /// Checks that need no drive model (the rest happen when the run is built).
    pub fn validate(&self) -> Result<()> {
        if self.array.drives == 0 {
            return Err(Error::config("array.drives", "must be at least 1"));
        }
        if self.array.drives > MAX_DRIVES {
            return Err(Error::config("array.drives", format!("at most {MAX_DRIVES} drives are supported")));
        }
        self.stripe_unit_sectors()?;
        if disk::scheduler::make(&self.drive.scheduler).is_none() {
            return Err(Error::config(
                "drive.scheduler",
                format!(
                    "unknown scheduler {:?}; known schedulers: {}",
                    self.drive.scheduler,
                    disk::scheduler::names().join(", ")
                ),
            ));
        }
        if disk::scheduler::classes::entry(&self.drive.classes).is_none() {
            return Err(Error::config(
                "drive.classes",
                format!(
                    "unknown class discipline {:?}; known class disciplines: {}",
                    self.drive.classes,
                    disk::scheduler::classes::names().join(", ")
                ),
            ));
        }
        let slots = self.array.drives as u64 + self.array.spares as u64;
        for (i, f) in self.failures.iter().enumerate() {
            match (f.kind, f.drive) {
                (FailureKind::DriveFails, None) => {
                    return Err(Error::config(format!("failures[{i}].drive"), "a drive failure names its drive"))
                }
                (FailureKind::DriveFails, Some(d)) if d as u64 >= slots => {
                    return Err(Error::config(
                        format!("failures[{i}].drive"),
                        format!(
                            "drive {d} does not exist in an array of {} drives and {} spares",
                            self.array.drives, self.array.spares
                        ),
                    ));
                }
                (FailureKind::SpareArrives, Some(_)) => {
                    return Err(Error::config(
                        format!("failures[{i}].drive"),
                        "a spare's arrival takes the next free slot: leave `drive` out",
                    ))
                }
                (FailureKind::Crash, Some(_)) => {
                    return Err(Error::config(
                        format!("failures[{i}].drive"),
                        "a crash is the controller's, not a drive's: leave `drive` out",
                    ))
                }
                (FailureKind::LogFails, Some(_)) => {
                    return Err(Error::config(format!("failures[{i}].drive"), "the log drive has no number: leave `drive` out"))
                }
                (FailureKind::LogFails, None) if self.log.is_none() => {
                    return Err(Error::config(format!("failures[{i}].kind"), "log_fails needs a `[log]` table (a log drive)"))
                }
                (FailureKind::LogFails, None) if self.log.as_ref().is_some_and(|l| !l.has_log_drive()) => {
                    return Err(Error::config(
                        format!("failures[{i}].kind"),
                        "md_ppl keeps its log on the members (a failed member is `drive = N`): there is no log drive to fail",
                    ))
                }
                (FailureKind::Crash, None) if self.cache.is_some() => {
                    return Err(Error::config(
                        format!("failures[{i}].kind"),
                        "a crash with a `[cache]` is not modelled yet (what the cache holds through a crash): remove \
                         one of the two",
                    ))
                }
                _ => {}
            }
            if !(f.at_s.is_finite() && f.at_s >= 0.0) {
                return Err(Error::config(format!("failures[{i}].at_s"), "must be a non-negative number of seconds"));
            }
            if f.at_s > max_sim_time_s() {
                return Err(Error::config(format!("failures[{i}].at_s"), beyond_the_horizon(f.at_s)));
            }
        }
        if self.array.spares > MAX_DRIVES - self.array.drives.min(MAX_DRIVES) {
            return Err(Error::config("array.spares", format!("at most {MAX_DRIVES} drives and spares together")));
        }
        if self.array.spares > 0 && !self.failures.iter().any(|f| f.kind == FailureKind::DriveFails) {
            return Err(Error::config(
                "array.spares",
                match self.array.spares {
                    1 => "1 spare is never used: no drive fails (add a `[[failures]]` entry)".to_string(),
                    n => format!("{n} spares are never used: no drive fails (add a `[[failures]]` entry)"),
                },
            ));
        }
        if let Some(cache) = &self.cache {
            cache.validate()?;
            if let ArrivalConfig::Closed { think_ms, think_from_trace: false, .. } = &self.workload.arrival {
                if *think_ms == 0.0 && cache.hit_ms == 0.0 && self.workload.requests.is_none() {
                    return Err(Error::config(
                        "cache.hit_ms",
                        "a closed loop with no think time and hits answered at once would stop simulated time if every \
                         request hit: give a hit time, a think time, or `workload.requests`",
                    ));
                }
            }
        }
        if let Some(log) = &self.log {
            log.validate()?;
        }
        if let Some(r) = &self.rebuild {
            r.validate()?;
        } else if self.array.spares > 0 || self.failures.iter().any(|f| f.kind == FailureKind::SpareArrives) {
            return Err(Error::config(
                "array.spares",
                "spares are only used by a rebuild: add a `[rebuild]` table (or remove the spares)",
            ));
        }
        if let ArrivalConfig::Closed { outstanding, .. } = &self.workload.arrival {
            if *outstanding > MAX_OUTSTANDING {
                return Err(Error::config(
                    "workload.arrival.outstanding",
                    format!("at most {MAX_OUTSTANDING} requests can be outstanding, not {outstanding}"),
                ));
            }
        }
        if !(self.metrics.window_s.is_finite() && self.metrics.window_s >= MIN_WINDOW_S) {
            return Err(Error::config(
                "metrics.window_s",
                format!("must be at least {MIN_WINDOW_S} s (one window per millisecond at most)"),
            ));
        }
        if !(self.metrics.warmup_s.is_finite() && self.metrics.warmup_s >= 0.0) {
            return Err(Error::config("metrics.warmup_s", "must be non-negative"));
        }
        if self.metrics.max_backlog_requests == 0 {
            return Err(Error::config("metrics.max_backlog_requests", "must be at least 1"));
        }
        let w = &self.workload;
        if let Some(d) = w.duration_s {
            if !(d.is_finite() && d > 0.0) {
                return Err(Error::config("workload.duration_s", "must be positive"));
            }
        }
        if w.trace.is_none() && w.requests.is_none() && w.duration_s.is_none() {
            return Err(Error::config("workload", "a synthetic workload needs `requests` or `duration_s` to end"));
        }
        match &w.arrival {
            ArrivalConfig::Poisson { rate_per_s, target_utilization, service_time_ms } => match (rate_per_s, target_utilization) {
                _ if service_time_ms.is_some_and(|t| !(t.is_finite() && t > 0.0)) => {
                    return Err(Error::config("workload.arrival.service_time_ms", "must be positive"))
                }
                (Some(_), _) if service_time_ms.is_some() => {
                    return Err(Error::config(
                        "workload.arrival.service_time_ms",
                        "sets the service time `target_utilization` is computed from; with `rate_per_s` it means nothing",
                    ))
                }
                (Some(r), None) if r.is_finite() && *r > 0.0 => {}
                (Some(_), None) => return Err(Error::config("workload.arrival.rate_per_s", "must be positive")),
                (None, Some(u)) if *u > 0.0 && *u < 1.0 => {}
                (None, Some(_)) => {
                    return Err(Error::config("workload.arrival.target_utilization", "must be in (0, 1)"))
                }
                _ => {
                    return Err(Error::config(
                        "workload.arrival",
                        "give exactly one of `rate_per_s` and `target_utilization`",
                    ))
                }
            },
            ArrivalConfig::Closed { outstanding, think_ms, .. } => {
                if *outstanding == 0 {
                    return Err(Error::config("workload.arrival.outstanding", "must be at least 1"));
                }
                if !(think_ms.is_finite() && *think_ms >= 0.0) {
                    return Err(Error::config("workload.arrival.think_ms", "must be non-negative"));
                }
                if think_ms / 1e3 > max_sim_time_s() {
                    return Err(Error::config("workload.arrival.think_ms", beyond_the_horizon(think_ms / 1e3)));
                }
            }
            ArrivalConfig::Trace => {}
        }
        self.check_run_length()?;
        warnings::refuse_nonsense(self)?;
        Ok(())
    }

    /// When the workload stops issuing requests, as the configuration alone tells it, with
    /// the key that sets it: `workload.duration_s` exactly; for `requests` Poisson arrivals at
    /// `rate_per_s`, the expected time of the last one (requests / rate; the draws put it
    /// within a few √requests / rate of that). `None` when only the run tells (a trace, a
    /// closed loop, a rate from `target_utilization`).
    pub fn planned_workload_end(&self) -> Option<PlannedEnd> {
        let w = &self.workload;
        if let Some(seconds) = w.duration_s {
            let by_requests = self.planned_end_by_requests().filter(|end| end.seconds < seconds);
            return Some(by_requests.unwrap_or(PlannedEnd { seconds, key: "workload.duration_s", expected: false }));
        }
        self.planned_end_by_requests()
    }

    fn planned_end_by_requests(&self) -> Option<PlannedEnd> {
        let w = &self.workload;
        match (w.trace.as_ref(), w.requests, &w.arrival) {
            (None, Some(requests), ArrivalConfig::Poisson { rate_per_s: Some(rate), .. }) if *rate > 0.0 => {
                Some(PlannedEnd { seconds: requests as f64 / rate, key: "workload.requests", expected: true })
            }
            _ => None,
        }
    }

    /// A run fills one time-series window per `metrics.window_s` of simulated time, at most
    /// [`MAX_WINDOWS`](crate::metrics::MAX_WINDOWS) of them: a run planned longer is refused
    /// now, naming the key that sets its length, rather than stopped when it gets there.
    fn check_run_length(&self) -> Result<()> {
        if let Some(d) = self.workload.duration_s {
            if d > max_sim_time_s() {
                return Err(Error::config("workload.duration_s", beyond_the_horizon(d)));
            }
        }
        let window_s = self.metrics.window_s;
        let longest_s = window_s * crate::metrics::MAX_WINDOWS as f64;
        let mut planned: Vec<(f64, String)> = Vec::new();
        if let Some(end) = self.planned_workload_end() {
            planned.push((end.seconds, end.key.to_string()));
        }
        // A rebuild keeps the series going to the run's end, which a failure late in the run
        // puts after it.
        if self.rebuild.is_some() {
            for (i, f) in self.failures.iter().enumerate() {
                planned.push((f.at_s, format!("failures[{i}].at_s")));
            }
        }
        for (seconds, key) in planned {
            if seconds > longest_s {
                let windows = (seconds / window_s).ceil();
                return Err(Error::config(
                    key,
                    format!(
                        "a run of {} s fills {} windows of metrics.window_s = {} s, more than the {} a run may fill: \
                         shorten the run or make metrics.window_s at least {} s",
                        crate::error::readable(seconds),
                        crate::error::readable(windows),
                        crate::error::readable(window_s),
                        crate::metrics::MAX_WINDOWS,
                        crate::error::readable((seconds / crate::metrics::MAX_WINDOWS as f64).ceil()),
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The end of a workload as the configuration plans it ([`Config::planned_workload_end`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedEnd {
    /// Simulated seconds from the start.
    pub seconds: f64,
    /// The key that sets it.
    pub key: &'static str,
    /// Whether it is the expected end of random arrivals rather than a fixed one.
    pub expected: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[array]\nlayout = \"raid5\"\ndrives = 5\n[workload]\nrequests = 10\n";

    fn err(text: &str) -> String {
        Config::from_toml(text, Path::new(".")).unwrap_err().to_string()
    }

    #[test]
    fn unknown_keys_and_bad_types_name_the_key_and_line() {
        let e = err(&format!("{BASE}[drive]\nspeed = 3\n"));
        assert!(e.starts_with("drive.speed:"), "{e}");
        assert!(e.contains("line 7"), "{e}");
        let e = err(&BASE.replace("drives = 5", "drives = -5"));
        assert!(e.starts_with("array.drives:"), "{e}");
    }

    #[test]
    fn type_errors_say_whole_number_not_u32() {
        let e = err(&BASE.replace("drives = 5", "drives = -5"));
        assert!(e.ends_with("invalid value: `-5`, expected a whole number from 0 to 4294967295"), "{e}");
        let e = err(&BASE.replace("requests = 10", "requests = 1.5"));
        assert!(e.ends_with("invalid type: `1.5`, expected a whole number, 0 or more"), "{e}");
        let e = err(&BASE.replace("drives = 5", "drives = 5\nstripe_unit_kib = \"big\""));
        assert!(e.ends_with("invalid type: string \"big\", expected a number"), "{e}");
        assert!(!e.contains("f64") && !e.contains("u32"), "{e}");
    }

    #[test]
    fn impossible_values_name_the_key() {
        assert!(err(&BASE.replace("drives = 5", "drives = 0")).starts_with("array.drives: must be at least 1"));
        assert!(err(&BASE.replace("drives = 5", "drives = 4000000000")).starts_with("array.drives: at most"));
        assert!(err(&format!("{BASE}[metrics]\nwindow_s = 1e-9\n")).starts_with("metrics.window_s:"));
        let e = err(&format!("{BASE}[[failures]]\ndrive = 9\nat_s = 1\n"));
        assert!(e.starts_with("failures[0].drive:"), "{e}");
        let e = err(&format!("{BASE}[drive]\nscheduler = \"elevator9\"\n"));
        assert!(e.starts_with("drive.scheduler: unknown scheduler"), "{e}");
        let e = err(&format!("{BASE}[drive]\nclasses = \"round_robin\"\n"));
        assert!(e.starts_with("drive.classes: unknown class discipline \"round_robin\"; known class disciplines: foreground_first"), "{e}");
        let e = err(&BASE.replace("requests = 10", "read_fraction = 0.5"));
        assert!(e.starts_with("workload:"), "{e}");
        // The value given, not a count saturated to 2⁶⁴ − 1 sectors.
        let e = err(&BASE.replace("drives = 5", "drives = 5\nstripe_unit_kib = 1e30"));
        assert_eq!(e, "array.stripe_unit_kib: 1e30 KiB is larger than any drive");
    }

    #[test]
    fn too_many_outstanding_requests_name_the_key() {
        let closed = |n: u32| format!("{BASE}[workload.arrival]\nprocess = \"closed\"\noutstanding = {n}\n");
        let e = err(&closed(u32::MAX));
        assert!(e.starts_with("workload.arrival.outstanding: at most 1048576 requests"), "{e}");
        Config::from_toml(&closed(MAX_OUTSTANDING), Path::new(".")).unwrap();
    }

    #[test]
    fn times_beyond_what_a_run_can_simulate_name_the_key() {
        // Were saturated to 2^64 ns (a failure reported at 18446744073.7 s) or wrapped around
        // when added to the clock (a think time that vanished).
        let e = err(&format!("{BASE}[[failures]]\ndrive = 1\nat_s = 1e300\n"));
        assert!(e.starts_with("failures[0].at_s: 1e300 s is beyond the"), "{e}");
        let closed = "[workload.arrival]\nprocess = \"closed\"\noutstanding = 1\nthink_ms = 1e300\n";
        let e = err(&format!("{BASE}{closed}"));
        assert!(e.starts_with("workload.arrival.think_ms: 1e297 s is beyond the"), "{e}");
        // A century is fine.
        Config::from_toml(&format!("{BASE}[[failures]]\ndrive = 1\nat_s = 3.2e9\n"), Path::new(".")).unwrap();
    }

    #[test]
    fn a_run_longer_than_its_windows_allow_is_refused_before_it_starts() {
        // Was accepted, then stopped after 40 s and 1.2 GB of windows, naming metrics.window_s.
        let long = BASE.replace("requests = 10", "duration_s = 1e9");
        let e = err(&long);
        assert!(e.starts_with("workload.duration_s: a run of 1000000000 s fills 1000000000 windows of metrics.window_s = 1 s, more than the 16777216"), "{e}");
        assert!(e.ends_with("make metrics.window_s at least 60 s"), "{e}");
        // The window it names is enough.
        Config::from_toml(&format!("{long}[metrics]\nwindow_s = 60\n"), Path::new(".")).unwrap();
        // Beyond what a run can simulate at all (the 1e15 s).
        let e = err(&BASE.replace("requests = 10", "duration_s = 1e15"));
        assert!(e.starts_with("workload.duration_s: 1e15 s is beyond the"), "{e}");
        // Requests at a rate: their expected end (2^24 + 1 s here).
        let many = BASE.replace("requests = 10", "requests = 16777217\n[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 1");
        assert!(err(&many).starts_with("workload.requests: a run of 16777217 s"), "{}", err(&many));
        Config::from_toml(&many.replace("16777217", "16777216"), Path::new(".")).unwrap();
    }

    #[test]
    fn synthetic_keys_beside_a_trace_are_refused_and_never_saved() {
        let trace = "[array]\ndrives = 5\n[workload]\nREPLACE\n[workload.trace]\npath = \"/traces/t.csv\"\nformat = \"spc\"\n";
        for (given, key) in [
            ("read_fraction = 0.3", "workload.read_fraction"),
            ("size_kib = 64", "workload.size_kib"),
            ("align_kib = 8", "workload.align_kib"),
            ("address = { distribution = \"uniform\" }", "workload.address"),
        ] {
            let e = err(&trace.replace("REPLACE", given));
            assert!(e.starts_with(&format!("{key}: only a synthetic workload uses it")), "{e}");
        }
        // The resolved configuration of a trace workload leaves them out, and reads back.
        let cfg = Config::from_toml(&trace.replace("REPLACE", ""), Path::new(".")).unwrap();
        let resolved = cfg.to_toml();
        for key in SYNTHETIC_ONLY_KEYS {
            assert!(!resolved.contains(&format!("{key} =")), "{resolved}");
        }
        assert_eq!(Config::from_toml(&resolved, Path::new(".")).unwrap().to_toml(), resolved);
        // A synthetic workload keeps them.
        assert!(Config::from_toml(BASE, Path::new(".")).unwrap().to_toml().contains("read_fraction = 1.0"));
    }

    #[test]
    fn layout_only_keys_are_refused_for_other_layouts_and_saved_only_for_theirs() {
        let base = "[array]\nlayout = \"LAYOUT\"\ndrives = 4\nREPLACE\n[workload]\nrequests = 10\n";
        let with = |layout: &str, given: &str| base.replace("LAYOUT", layout).replace("REPLACE", given);
        // Ignored today by RAID-5 and RAID-0 alike: refused, naming the key and its layout.
        let e = err(&with("raid5", "copies = 3"));
        assert!(e.starts_with("array.copies: only the raid1 layout reads it, and this array is raid5"), "{e}");
        let e = err(&with("raid0", "copies = 2"));
        assert!(e.starts_with("array.copies: only the raid1 layout reads it, and this array is raid0"), "{e}");
        let e = err(&with("raid1", "parity_rotation = \"left-asymmetric\""));
        assert!(e.starts_with("array.parity_rotation: only the raid5 layout reads it, and this array is raid1"), "{e}");
        // Each layout takes its own, and an unknown layout is left to its own error.
        Config::from_toml(&with("raid1", "copies = 4"), Path::new(".")).unwrap();
        Config::from_toml(&with("raid5", "parity_rotation = \"right-symmetric\""), Path::new(".")).unwrap();
        Config::from_toml(&with("raid9", "copies = 2"), Path::new(".")).unwrap();
        // The resolved configuration shows a key only for its layout, and reads back.
        let cases: [(&str, Option<&str>, &[&str]); 3] = [
            ("raid0", None, &["copies", "parity_rotation"]),
            ("raid1", Some("copies = 2"), &["parity_rotation"]),
            ("raid5", Some("parity_rotation = \"left-symmetric\""), &["copies"]),
        ];
        for (layout, shown, hidden) in cases {
            let resolved = Config::from_toml(&with(layout, ""), Path::new(".")).unwrap().to_toml();
            for key in hidden {
                assert!(!resolved.contains(&format!("{key} =")), "{layout}: {resolved}");
            }
            if let Some(line) = shown {
                assert!(resolved.contains(line), "{layout}: {resolved}");
            }
            assert_eq!(Config::from_toml(&resolved, Path::new(".")).unwrap().to_toml(), resolved);
        }
    }

    #[test]
    fn the_drive_comes_from_exactly_one_of_preset_model_and_diskspec() {
        let shared = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/diskspecs");
        // Relative to the configuration's directory.
        let text = format!("{BASE}[drive]\npreset = \"ibm0661\"\n");
        let text = text.replace("preset = \"ibm0661\"", "diskspec = \"ibm18es.parv\"");
        let cfg = Config::from_toml(&text, Path::new(shared)).unwrap();
        assert_eq!(cfg.drive.diskspec.as_deref(), Some(Path::new(shared).join("ibm18es.parv").as_path()));
        let (model, warnings) = cfg.drive_model_with_warnings().unwrap();
        assert_eq!((model.rpm, model.surfaces), (7200.0, 5));
        assert!(warnings.iter().any(|w| w.contains("ibm18es.diskspecs:")), "{warnings:?}");
        // An absolute path is kept.
        let absolute = format!("{BASE}[drive]\ndiskspec = \"{shared}/cheetah9LP.parv\"\n");
        let cfg = Config::from_toml(&absolute, Path::new("/elsewhere")).unwrap();
        assert_eq!(cfg.drive_model().unwrap().surfaces, 12);
        // Not two at once, not none.
        let both = format!("{BASE}[drive]\npreset = \"ibm0661\"\ndiskspec = \"x.parv\"\n");
        let e = Config::from_toml(&both, Path::new(".")).unwrap().drive_model().unwrap_err().to_string();
        assert!(e.starts_with("drive: give only one of"), "{e}");
        let mut cfg = Config::from_toml(BASE, Path::new(".")).unwrap();
        cfg.drive.preset = None;
        let e = cfg.drive_model().unwrap_err().to_string();
        assert!(e.starts_with("drive: give a `preset`"), "{e}");
        // A missing or malformed spec file is reported with its file.
        let missing = format!("{BASE}[drive]\ndiskspec = \"nowhere.parv\"\n");
        let e = Config::from_toml(&missing, Path::new("/tmp")).unwrap().drive_model().unwrap_err().to_string();
        assert!(e.starts_with("/tmp/nowhere.parv"), "{e}");
    }

    #[test]
    fn a_trace_workload_replays_at_its_own_timestamps_unless_told_otherwise() {
        let trace = "[array]\ndrives = 5\n[workload.trace]\npath = \"t.csv\"\nformat = \"spc\"\n";
        let cfg = Config::from_toml(trace, Path::new(".")).unwrap();
        assert_eq!(cfg.workload.arrival, ArrivalConfig::Trace);
        // The resolved configuration says so, and reads back the same.
        let again = Config::from_toml(&cfg.to_toml(), Path::new(".")).unwrap();
        assert_eq!(again.workload.arrival, ArrivalConfig::Trace);
        let poisson = format!("{trace}[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 7\n");
        let cfg = Config::from_toml(&poisson, Path::new(".")).unwrap();
        assert_eq!(cfg.workload.arrival, ArrivalConfig::Poisson { rate_per_s: Some(7.0), target_utilization: None, service_time_ms: None });
        // A synthetic workload keeps the Poisson default.
        assert!(matches!(Config::from_toml(BASE, Path::new(".")).unwrap().workload.arrival, ArrivalConfig::Poisson { .. }));
    }

    #[test]
    fn resolved_config_round_trips_with_a_stable_hash() {
        let cfg = Config::from_toml(BASE, Path::new(".")).unwrap();
        let again = Config::from_toml(&cfg.to_toml(), Path::new(".")).unwrap();
        assert_eq!(cfg.to_toml(), again.to_toml());
        assert_eq!(cfg.hash(), again.hash());
        assert_eq!(cfg.hash().len(), 16);
    }
}
