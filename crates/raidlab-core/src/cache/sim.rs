//! The stand-alone cache simulator (`raidlab cache`): one pass over a trace through many
//! caches at once, reporting hit ratio and RGR (`papers/003_…`, Eq. 1) per cache.
//!
//! ```text
//!  trace ─▶ CacheTrace ─▶ batch of block requests (cut at window and failure boundaries)
//!                              │
//!            ┌─────────────────┼───────────────────────────────────┐
//!            ▼                 ▼                                   ▼
//!      LRU stack          one cache per size            one cache per size × array
//!      (LRU, ≥ 2 sizes:   (LRU at one size, LFU,        (VDF: its choices depend on the
//!      all sizes at once) ARC, CLOCK: shared by every   drives and the failed drive)
//!            │            array)  │                                │
//!            └──── per request: the smallest size that hit ────────┘
//!                              ▼
//!      cells (policy × size × drives × failed drive): the penalty of each request under that
//!      array's failure state (penalty::MissPenalty), totals, totals after warm-up, windows;
//!      the miss stream of one cell to a trace file
//! ```
//!
//! * A **request** is one 4 KiB block request (a trace record touching several blocks is
//!   several requests, §5). Requests are numbered from 0 in trace order; `fail_at_request`,
//!   `repair_at_request` and the windows count them.
//! * **Writes** (`writes = "access"`, the default) are cache requests like reads (allocated
//!   on a miss, as libCacheSim counts them) and, the cache writing through, each costs its
//!   write penalty whether it hits or not (§6.5). `writes = "skip"` leaves them out, as the
//!   paper's simulations do (§5: reads only).
//! * **RGR** of a cell = the surviving-drive I/Os its requests caused / its requests; the
//!   read RGR counts reads alone. Both are reported over the whole trace and after warm-up:
//!   the requests after the one that filled the cache (its first `size` misses), which the
//!   paper leaves out of its miss streams (§6.3).
//! * **The failure** (`failed_drive`: a drive number, `"all"` for one cell per drive, or
//!   `"none"`) is in effect from request `fail_at_request` (default 0) until
//!   `repair_at_request` (default: never), when the drive counts as rebuilt: the array is
//!   fault-free again and VDF goes back to its base policy's choices.
//! * **The miss stream** (`miss_trace`, one cell only) is what the cache sends to the array
//!   after warm-up: each read miss, and each write (write-through), one line per block in
//!   SPC format (`0,LBA,4096,r|w,seconds`, LBA in 512-byte sectors = block × 8, seconds
//!   from the trace's first record), which `raidlab run` replays as `workload.trace`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::penalty::{penalty_layout, MissPenalty, WriteModel};
use super::stack::LruStack;
use super::trace::{Batch, CacheTrace, CacheTraceConfig, TraceTally};
use super::{checked_capacity, entry_for, BufferCache, CacheEntry};
use crate::sim::Progress;
use crate::error::{Error, Result};
use crate::layout::ParityRotation;

/// The configuration key every error of the simulator starts with.
pub const KEY: &str = "cache";

/// Block requests per batch.
const BATCH: usize = 1 << 15;

/// Requests between two calls of the progress callback.
const PROGRESS_EVERY: u64 = 1 << 20;

/// What the simulator does with write requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Writes {
    /// Writes are cache requests, and each costs its write penalty (write-through).
    #[default]
    Access,
    /// Writes are left out (the paper's simulations: reads only).
    Skip,
}

/// Which drive has failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "FailedDriveValue", into = "FailedDriveValue")]
pub enum FailedDrive {
    /// None: the array stays fault-free.
    None,
    /// Each drive in turn: one cell per drive.
    All,
    /// This drive (the notes' default: drive 0).
    Drive(u32),
}

impl FailedDrive {
    fn default_drive() -> Self {
        FailedDrive::Drive(0)
    }
}

/// How [`FailedDrive`] is written: a drive number, `"all"` or `"none"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FailedDriveValue {
    Drive(u32),
    Name(String),
}

impl TryFrom<FailedDriveValue> for FailedDrive {
    type Error = String;
    fn try_from(value: FailedDriveValue) -> std::result::Result<Self, String> {
        match value {
            FailedDriveValue::Drive(drive) => Ok(FailedDrive::Drive(drive)),
            FailedDriveValue::Name(name) => match name.as_str() {
                "none" => Ok(FailedDrive::None),
                "all" => Ok(FailedDrive::All),
                other => other
                    .parse()
                    .map(FailedDrive::Drive)
                    .map_err(|_| format!("expected a drive number, \"all\" or \"none\", not \"{other}\"")),
            },
        }
    }
}

impl From<FailedDrive> for FailedDriveValue {
    fn from(value: FailedDrive) -> Self {
        match value {
            FailedDrive::None => FailedDriveValue::Name("none".into()),
            FailedDrive::All => FailedDriveValue::Name("all".into()),
            FailedDrive::Drive(drive) => FailedDriveValue::Drive(drive),
        }
    }
}

/// A cache simulation: which trace, which caches, which arrays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheSimConfig {
    /// The trace.
    pub trace: CacheTraceConfig,
    /// Policies (registry names or aliases: `lru`, `vdf-lru`, …).
    pub policies: Vec<String>,
    /// Cache sizes, 4 KiB blocks.
    pub sizes: Vec<u64>,
    /// Drive counts of the arrays (RGR depends on them; so do VDF's choices).
    #[serde(default = "default_drives")]
    pub drives: Vec<u32>,
    /// The failed drive: a number, `"all"` or `"none"`.
    #[serde(default = "FailedDrive::default_drive")]
    pub failed_drive: FailedDrive,
    /// Penalty layout: `raid5` or `raid6`.
    #[serde(default = "default_layout")]
    pub layout: String,
    /// Parity rotation of the placement.
    #[serde(default)]
    pub parity_rotation: ParityRotation,
    /// Stripe unit, KiB (a multiple of 4).
    #[serde(default = "default_chunk_kib")]
    pub chunk_kib: u64,
    /// What writes do.
    #[serde(default)]
    pub writes: Writes,
    /// How a write's penalty is counted (none: the layout's default, `paper` for RAID-5 and
    /// `direct` for RAID-6, which the paper's §6.5 figures do not cover).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_penalty: Option<WriteModel>,
    /// The request from which the failed drive is failed.
    #[serde(default)]
    pub fail_at_request: u64,
    /// The request from which it counts as rebuilt (none: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_at_request: Option<u64>,
    /// Requests per window of the RGR-over-time series.
    #[serde(default = "default_window")]
    pub window_requests: u64,
    /// Where to write the miss stream of the one cell (SPC format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_trace: Option<PathBuf>,
}

fn default_drives() -> Vec<u32> {
    vec![5]
}
fn default_layout() -> String {
    "raid5".into()
}
fn default_chunk_kib() -> u64 {
    64
}
fn default_window() -> u64 {
    1_000_000
}

/// Counts of one cell over some requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    requests: u64,
    reads: u64,
    hits: u64,
    read_misses: u64,
    write_misses: u64,
    read_penalty: u64,
    write_penalty: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.requests += other.requests;
        self.reads += other.reads;
        self.hits += other.hits;
        self.read_misses += other.read_misses;
        self.write_misses += other.write_misses;
        self.read_penalty += other.read_penalty;
        self.write_penalty += other.write_penalty;
    }

    fn report(&self) -> TallyReport {
        let ratio = |n: u64, d: u64| if d == 0 { None } else { Some(n as f64 / d as f64) };
        TallyReport {
            requests: self.requests,
            reads: self.reads,
            writes: self.requests - self.reads,
            hits: self.hits,
            misses: self.read_misses + self.write_misses,
            read_misses: self.read_misses,
            hit_ratio: ratio(self.hits, self.requests),
            penalty_blocks: self.read_penalty + self.write_penalty,
            read_penalty_blocks: self.read_penalty,
            rgr: ratio(self.read_penalty + self.write_penalty, self.requests),
            read_rgr: ratio(self.read_penalty, self.reads),
        }
    }
}

/// Counts and ratios of one cell over some requests (ratios `null` over no request).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TallyReport {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub hits: u64,
    pub misses: u64,
    pub read_misses: u64,
    pub hit_ratio: Option<f64>,
    /// Surviving-drive block I/Os the requests caused (Eq. 1's numerator).
    pub penalty_blocks: u64,
    /// Of which by read misses.
    pub read_penalty_blocks: u64,
    /// `penalty_blocks / requests`.
    pub rgr: Option<f64>,
    /// `read_penalty_blocks / reads`.
    pub read_rgr: Option<f64>,
}

/// RGR over time: one entry per window of `window_requests` requests (the last may be
/// shorter).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WindowSeries {
    /// The window's first request.
    pub first_request: Vec<u64>,
    /// The trace time of that request, s.
    pub start_s: Vec<f64>,
    pub requests: Vec<u64>,
    pub misses: Vec<u64>,
    pub penalty_blocks: Vec<u64>,
    /// `penalty_blocks / requests` of the window.
    pub rgr: Vec<f64>,
}

/// One cache on one array.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellReport {
    pub policy: String,
    /// Cache size, blocks.
    pub size_blocks: u64,
    pub drives: u32,
    /// `None`: fault-free.
    pub failed_drive: Option<u32>,
    pub layout: String,
    /// Every request.
    pub total: TallyReport,
    /// Requests until the cache was first full (the last included); `None` if it never was.
    pub warmup_requests: Option<u64>,
    /// The requests after warm-up.
    pub after_warmup: TallyReport,
    pub windows: WindowSeries,
}

/// The miss stream written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissTraceReport {
    pub path: String,
    /// Always `spc`.
    pub format: &'static str,
    /// Lines written (read misses and writes after warm-up).
    pub lines: u64,
}

/// What the trace held.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceReport {
    pub path: String,
    pub format: String,
    #[serde(flatten)]
    pub tally: TraceTally,
    /// Time of the last request, s since the first record.
    pub duration_s: f64,
}

/// Everything a cache simulation produces (deterministic: no timing in it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheReport {
    pub trace: TraceReport,
    pub cells: Vec<CellReport>,
    pub miss_trace: Option<MissTraceReport>,
}

/// One array and failed drive: the penalties of its requests.
struct Account {
    drives: u32,
    failed: Option<u32>,
    penalty: MissPenalty,
}

/// Caches run together over the same requests, answering per request the smallest size
/// index that hit.
enum Group {
    /// LRU at every size of the cells that use it.
    Stack(Box<LruStack>),
    /// One cache; `account` is set for a failure-aware one (it follows that array).
    Single { cache: Box<dyn BufferCache>, account: Option<usize> },
}

struct Cell {
    policy: &'static str,
    size: u64,
    group: usize,
    /// The size's index in its group: a request hits when the group's level is at most it.
    level: u8,
    account: usize,
    total: Tally,
    after: Tally,
    warmup_requests: Option<u64>,
    windows: Vec<Tally>,
    window_first: Vec<(u64, u64)>,
}

struct MissWriter {
    path: PathBuf,
    partial: PathBuf,
    out: BufWriter<File>,
    lines: u64,
    cell: usize,
}

impl MissWriter {
    fn create(path: &Path, cell: usize) -> Result<Self> {
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial).map_err(|err| Error::io(&partial, err))?;
        Ok(MissWriter { path: path.to_path_buf(), partial, out: BufWriter::with_capacity(1 << 20, file), lines: 0, cell })
    }

    fn write(&mut self, block: u64, time_ns: u64, is_write: bool) -> Result<()> {
        let lba = block.checked_mul(super::placement::BLOCK_SECTORS).filter(|&lba| lba < 1 << 62).ok_or_else(|| {
            Error::config(
                format!("{KEY}.miss_trace"),
                format!("block {block} is beyond what a sector address can hold; the miss stream cannot be written"),
            )
        })?;
        let op = if is_write { 'w' } else { 'r' };
        writeln!(self.out, "0,{lba},4096,{op},{}.{:09}", time_ns / 1_000_000_000, time_ns % 1_000_000_000)
            .map_err(|err| Error::io(&self.partial, err))?;
        self.lines += 1;
        Ok(())
    }

    fn finish(mut self) -> Result<MissTraceReport> {
        self.out.flush().map_err(|err| Error::io(&self.partial, err))?;
        std::fs::rename(&self.partial, &self.path).map_err(|err| Error::io(&self.path, err))?;
        Ok(MissTraceReport { path: self.path.display().to_string(), format: "spc", lines: self.lines })
    }

    fn abandon(self) {
        drop(self.out);
        let _ = std::fs::remove_file(&self.partial);
    }
}

/// Parse and run a TOML cache simulation; relative paths start from `base_dir`. The report
/// as JSON, or `None` when `progress` said stop.
pub fn run_toml(toml_text: &str, base_dir: &Path, progress: Option<&mut dyn FnMut(Progress) -> bool>) -> Result<Option<String>> {
    let de = toml::Deserializer::parse(toml_text).map_err(|err| Error::config(KEY, err.to_string()))?;
    let mut config: CacheSimConfig = serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let key = if path == "." { KEY.to_string() } else { format!("{KEY}.{path}") };
        Error::config(key, crate::error::in_plain_words(err.inner().to_string().trim_end()))
    })?;
    if config.trace.path.is_relative() {
        config.trace.path = base_dir.join(&config.trace.path);
    }
    if let Some(path) = config.miss_trace.as_mut().filter(|path| path.is_relative()) {
        *path = base_dir.join(&*path);
    }
    let report = run(&config, progress)?;
    Ok(report.map(|report| serde_json::to_string_pretty(&report).expect("the report serializes")))
}

/// Run a cache simulation. `None` when `progress` said stop.
pub fn run(config: &CacheSimConfig, mut progress: Option<&mut dyn FnMut(Progress) -> bool>) -> Result<Option<CacheReport>> {
    let mut simulation = Simulation::build(config)?;
    let mut trace = CacheTrace::open(&config.trace, config.writes == Writes::Skip, &format!("{KEY}.trace"))?;
    let mut miss_writer = match &config.miss_trace {
        Some(path) => Some(MissWriter::create(path, 0)?),
        None => None,
    };
    let outcome = simulation.stream(&mut trace, &mut miss_writer, &mut progress);
    let finished = match outcome {
        Ok(finished) => finished,
        Err(err) => {
            if let Some(writer) = miss_writer {
                writer.abandon();
            }
            return Err(err);
        }
    };
    if !finished {
        if let Some(writer) = miss_writer {
            writer.abandon();
        }
        return Ok(None);
    }
    let miss_trace = miss_writer.map(MissWriter::finish).transpose()?;
    Ok(Some(simulation.report(config, &trace, miss_trace)))
}

struct Simulation {
    accounts: Vec<Account>,
    groups: Vec<Group>,
    cells: Vec<Cell>,
    window: u64,
    fail_at: u64,
    repair_at: u64,
    /// Whether the accounts' penalties are those of the failure now.
    faulty: bool,
    levels: Vec<u8>,
    last_time_ns: u64,
}

impl Simulation {
    fn build(config: &CacheSimConfig) -> Result<Self> {
        let entries = policies(config)?;
        let sizes = sizes(config)?;
        let layout = penalty_layout(&config.layout, &format!("{KEY}.layout"))?;
        let write_model = config.write_penalty.unwrap_or(layout.default_write);
        if config.chunk_kib == 0 || !config.chunk_kib.is_multiple_of(4) {
            return Err(Error::config(
                format!("{KEY}.chunk_kib"),
                format!("a stripe unit is a whole number of 4 KiB blocks, not {} KiB", config.chunk_kib),
            ));
        }
        if config.drives.is_empty() {
            return Err(Error::config(format!("{KEY}.drives"), "name at least one drive count"));
        }
        if config.window_requests == 0 {
            return Err(Error::config(format!("{KEY}.window_requests"), "a window holds at least one request"));
        }
        if config.repair_at_request.is_some_and(|repair| repair <= config.fail_at_request) {
            return Err(Error::config(
                format!("{KEY}.repair_at_request"),
                format!("the rebuild ends after the failure (request {}), not at or before it", config.fail_at_request),
            ));
        }
        let mut accounts = Vec::new();
        for (index, &drives) in config.drives.iter().enumerate() {
            if config.drives[..index].contains(&drives) {
                return Err(Error::config(format!("{KEY}.drives[{index}]"), format!("{drives} drives listed twice")));
            }
            let placement = (layout.placement)(drives, config.chunk_kib / 4, config.parity_rotation, KEY)?;
            let failed: Vec<Option<u32>> = match config.failed_drive {
                FailedDrive::None => vec![None],
                FailedDrive::All => (0..drives).map(Some).collect(),
                FailedDrive::Drive(drive) => vec![Some(drive)],
            };
            for failed in failed {
                let mut penalty = MissPenalty::new(layout, placement.clone(), write_model, KEY)?;
                // Checks the drive against the array now, not when the failure comes.
                penalty.set_failed(failed.as_slice(), KEY)?;
                penalty.set_failed(&[], KEY)?;
                accounts.push(Account { drives, failed, penalty });
            }
        }
        let mut groups = Vec::new();
        let mut cells = Vec::new();
        for entry in entries {
            let cell = |group: usize, level: usize, size: u64, account: usize| Cell {
                policy: entry.name,
                size,
                group,
                level: level as u8,
                account,
                total: Tally::default(),
                after: Tally::default(),
                warmup_requests: None,
                windows: Vec::new(),
                window_first: Vec::new(),
            };
            if entry.failure_aware {
                for &size in &sizes {
                    for (account_index, account) in accounts.iter().enumerate() {
                        let cache = super::build(entry.name, size, Some(account.penalty.placement()), KEY)?;
                        groups.push(Group::Single { cache, account: Some(account_index) });
                        cells.push(cell(groups.len() - 1, 0, size, account_index));
                    }
                }
            } else if entry.name == "lru" && sizes.len() > 1 {
                let mut ascending: Vec<usize> = sizes.iter().map(|&size| size as usize).collect();
                ascending.sort_unstable();
                groups.push(Group::Stack(Box::new(LruStack::new(&ascending, &format!("{KEY}.sizes"))?)));
                let group = groups.len() - 1;
                for &size in &sizes {
                    let level = ascending.iter().position(|&s| s as u64 == size).expect("listed");
                    for account in 0..accounts.len() {
                        cells.push(cell(group, level, size, account));
                    }
                }
            } else {
                for &size in &sizes {
                    groups.push(Group::Single { cache: super::build(entry.name, size, None, KEY)?, account: None });
                    let group = groups.len() - 1;
                    for account in 0..accounts.len() {
                        cells.push(cell(group, 0, size, account));
                    }
                }
            }
        }
        if config.miss_trace.is_some() && cells.len() != 1 {
            return Err(Error::config(
                format!("{KEY}.miss_trace"),
                format!("a miss stream is one cache's: name one policy, size, drive count and failed drive (this run has {} caches)", cells.len()),
            ));
        }
        Ok(Simulation {
            accounts,
            groups,
            cells,
            window: config.window_requests,
            fail_at: config.fail_at_request,
            repair_at: config.repair_at_request.unwrap_or(u64::MAX),
            faulty: false,
            levels: vec![0; BATCH],
            last_time_ns: 0,
        })
    }

    /// Read the whole trace through the caches; false when `progress` said stop.
    fn stream(
        &mut self,
        trace: &mut CacheTrace,
        miss_writer: &mut Option<MissWriter>,
        progress: &mut Option<&mut dyn FnMut(Progress) -> bool>,
    ) -> Result<bool> {
        let mut batch = Batch::default();
        let mut done = 0u64;
        let mut next_report = PROGRESS_EVERY;
        loop {
            // A batch lies in one window and one failure state.
            let mut end = (done / self.window + 1) * self.window;
            for boundary in [self.fail_at, self.repair_at] {
                if boundary > done {
                    end = end.min(boundary);
                }
            }
            let limit = (end - done).min(BATCH as u64) as usize;
            trace.next_batch(&mut batch, limit)?;
            if batch.is_empty() {
                return Ok(true);
            }
            let faulty = (self.fail_at..self.repair_at).contains(&done);
            if faulty != self.faulty {
                for account in &mut self.accounts {
                    account.penalty.set_failed(if faulty { account.failed.as_slice() } else { &[] }, KEY)?;
                }
                self.faulty = faulty;
            }
            self.run_batch(&batch, done, miss_writer)?;
            done += batch.len() as u64;
            self.last_time_ns = *batch.times_ns.last().expect("not empty");
            if done >= next_report {
                next_report = done + PROGRESS_EVERY;
                if let Some(report) = progress.as_mut() {
                    if !report(Progress { fraction: trace.fraction_read(), completed_requests: done }) {
                        return Ok(false);
                    }
                }
            }
        }
    }

    fn run_batch(&mut self, batch: &Batch, first: u64, miss_writer: &mut Option<MissWriter>) -> Result<()> {
        let n = batch.len();
        let levels = &mut self.levels[..n];
        for (group_index, group) in self.groups.iter_mut().enumerate() {
            match group {
                Group::Stack(stack) => {
                    for (level, &block) in levels.iter_mut().zip(&batch.blocks) {
                        *level = stack.access(block);
                    }
                }
                Group::Single { cache, account } => match account {
                    Some(account) => cache.access_all(&batch.blocks, &self.accounts[*account].penalty, levels),
                    None => cache.access_all(&batch.blocks, &super::FaultFree, levels),
                },
            }
            for (cell_index, cell) in self.cells.iter_mut().enumerate().filter(|(_, cell)| cell.group == group_index) {
                let writer = miss_writer.as_mut().filter(|writer| writer.cell == cell_index);
                count(cell, levels, batch, first, &self.accounts[cell.account].penalty, self.window, writer)?;
            }
        }
        Ok(())
    }

    fn report(self, config: &CacheSimConfig, trace: &CacheTrace, miss_trace: Option<MissTraceReport>) -> CacheReport {
        let cells = self
            .cells
            .iter()
            .map(|cell| {
                let account = &self.accounts[cell.account];
                let mut total = Tally::default();
                let mut windows = WindowSeries::default();
                for (tally, &(first_request, start_ns)) in cell.windows.iter().zip(&cell.window_first) {
                    total.add(tally);
                    windows.first_request.push(first_request);
                    windows.start_s.push(start_ns as f64 / 1e9);
                    windows.requests.push(tally.requests);
                    windows.misses.push(tally.read_misses + tally.write_misses);
                    windows.penalty_blocks.push(tally.read_penalty + tally.write_penalty);
                    windows.rgr.push((tally.read_penalty + tally.write_penalty) as f64 / tally.requests as f64);
                }
                debug_assert_eq!(total, cell.total);
                CellReport {
                    policy: cell.policy.to_string(),
                    size_blocks: cell.size,
                    drives: account.drives,
                    failed_drive: account.failed,
                    layout: config.layout.clone(),
                    total: cell.total.report(),
                    warmup_requests: cell.warmup_requests,
                    after_warmup: cell.after.report(),
                    windows,
                }
            })
            .collect();
        CacheReport {
            trace: TraceReport {
                path: config.trace.path.display().to_string(),
                format: trace.format().to_string(),
                tally: trace.tally(),
                duration_s: self.last_time_ns as f64 / 1e9,
            },
            cells,
            miss_trace,
        }
    }
}

/// Count one batch for one cell (`levels`: per request, the smallest size index of the
/// cell's group that hit). The batch lies in one window.
fn count(
    cell: &mut Cell,
    levels: &[u8],
    batch: &Batch,
    first: u64,
    penalty: &MissPenalty,
    window: u64,
    mut writer: Option<&mut MissWriter>,
) -> Result<()> {
    let mut tally = Tally::default();
    let mut after = Tally::default();
    for (i, &level) in levels.iter().enumerate() {
        let miss = level > cell.level;
        let block = batch.blocks[i];
        let is_write = batch.writes[i];
        let mut request = Tally { requests: 1, ..Tally::default() };
        if is_write {
            request.write_penalty = u64::from(penalty.write_of(block));
            request.write_misses = u64::from(miss);
        } else {
            request.reads = 1;
            if miss {
                request.read_misses = 1;
                request.read_penalty = u64::from(penalty.read_miss_of(block));
            }
        }
        request.hits = u64::from(!miss);
        tally.add(&request);
        match cell.warmup_requests {
            Some(_) => {
                after.add(&request);
                if let Some(writer) = writer.as_deref_mut() {
                    if is_write || miss {
                        writer.write(block, batch.times_ns[i], is_write)?;
                    }
                }
            }
            // The cache fills on its `size`-th miss (nothing leaves it before).
            None if cell.total.read_misses + cell.total.write_misses + tally.read_misses + tally.write_misses == cell.size => {
                cell.warmup_requests = Some(first + i as u64 + 1);
            }
            None => {}
        }
    }
    cell.total.add(&tally);
    cell.after.add(&after);
    let index = (first / window) as usize;
    if cell.windows.len() <= index {
        cell.windows.resize(index + 1, Tally::default());
        cell.window_first.resize(index + 1, (first, batch.times_ns[0]));
    }
    cell.windows[index].add(&tally);
    Ok(())
}

/// The configured policies' entries (each once).
fn policies(config: &CacheSimConfig) -> Result<Vec<&'static CacheEntry>> {
    if config.policies.is_empty() {
        return Err(Error::config(format!("{KEY}.policies"), "name at least one policy"));
    }
    let mut entries: Vec<&'static CacheEntry> = Vec::new();
    for (index, name) in config.policies.iter().enumerate() {
        let entry = entry_for(name, &format!("{KEY}.policies[{index}]"))?;
        if entries.iter().any(|seen| seen.name == entry.name) {
            return Err(Error::config(format!("{KEY}.policies[{index}]"), format!("{} listed twice", entry.name)));
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// The configured sizes (each once), blocks.
fn sizes(config: &CacheSimConfig) -> Result<Vec<u64>> {
    if config.sizes.is_empty() {
        return Err(Error::config(format!("{KEY}.sizes"), "name at least one cache size"));
    }
    for (index, &size) in config.sizes.iter().enumerate() {
        checked_capacity(size, &format!("{KEY}.sizes[{index}]")).map_err(|err| match err {
            Error::Config { message, .. } => Error::config(format!("{KEY}.sizes[{index}]"), message),
            other => other,
        })?;
        if config.sizes[..index].contains(&size) {
            return Err(Error::config(format!("{KEY}.sizes[{index}]"), format!("{size} blocks listed twice")));
        }
    }
    Ok(config.sizes.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::trace::tests::oracle_bytes;
    use crate::workload::trace::tests::TempFile;

    fn config(path: &Path) -> CacheSimConfig {
        let text = format!("trace = {{ path = {:?} }}\npolicies = [\"lru\"]\nsizes = [2]\n", path.display().to_string());
        let de = toml::Deserializer::parse(&text).unwrap();
        serde_path_to_error::deserialize(de).unwrap()
    }

    fn oracle(name: &str, blocks: &[u64]) -> TempFile {
        let records: Vec<(u32, u64, u32)> = blocks.iter().enumerate().map(|(i, &b)| (i as u32, b, 4096)).collect();
        TempFile::new(name, &oracle_bytes(&records))
    }

    #[test]
    fn defaults_follow_the_notes() {
        let file = oracle("sim-defaults.oracleGeneral", &[1]);
        let config = config(&file.0);
        assert_eq!((config.drives.as_slice(), config.failed_drive, config.chunk_kib), (&[5][..], FailedDrive::Drive(0), 64));
        assert_eq!((config.writes, config.write_penalty, config.layout.as_str()), (Writes::Access, None, "raid5"));
    }

    #[test]
    fn the_write_model_defaults_to_one_the_layout_takes() {
        // RAID-6 with no write_penalty ran into "the paper write model does not apply to
        // raid6": the default is now the layout's, paper for RAID-5 and direct for RAID-6.
        let file = oracle("sim-raid6.oracleGeneral", &[0, 1, 2, 0, 7]);
        let mut config = config(&file.0);
        config.layout = "raid6".into();
        config.drives = vec![6];
        config.chunk_kib = 4;
        let report = run(&config, None).unwrap().unwrap();
        assert_eq!(report.cells[0].layout, "raid6");
        // The same as with write_penalty = "direct" given.
        let mut direct = config.clone();
        direct.write_penalty = Some(WriteModel::Direct);
        assert_eq!(run(&direct, None).unwrap().unwrap().cells, report.cells);
        // Paper named for RAID-6 is still refused, naming the key.
        direct.write_penalty = Some(WriteModel::Paper);
        let err = run(&direct, None).err().unwrap().to_string();
        assert!(err.starts_with("cache.write_penalty: the paper write model does not apply to raid6"), "{err}");
        // RAID-5's default is the paper's.
        let mut raid5 = config.clone();
        raid5.layout = "raid5".into();
        let mut paper = raid5.clone();
        paper.write_penalty = Some(WriteModel::Paper);
        assert_eq!(run(&raid5, None).unwrap().unwrap().cells, run(&paper, None).unwrap().unwrap().cells);
    }

    #[test]
    fn rgr_counts_n_minus_1_per_miss_on_the_failed_drive() {
        // Five drives, 4 KiB chunks: block b on drive b mod 5 (left-symmetric). Drive 0 failed.
        // LRU of 2 blocks over 0 1 0 1 5 6 0: misses 0 1 5 6 0; of which 0, 5, 0 on drive 0.
        let file = oracle("sim-rgr.oracleGeneral", &[0, 1, 0, 1, 5, 6, 0]);
        let mut config = config(&file.0);
        config.chunk_kib = 4;
        let report = run(&config, None).unwrap().unwrap();
        let cell = &report.cells[0];
        assert_eq!((cell.total.hits, cell.total.misses), (2, 5));
        assert_eq!(cell.total.penalty_blocks, 4 + 1 + 4 + 1 + 4);
        assert_eq!(cell.total.rgr, Some(14.0 / 7.0));
        // Full after the second request (its second miss); after it: 0 1 hit, 5 6 0 miss.
        assert_eq!(cell.warmup_requests, Some(2));
        assert_eq!((cell.after_warmup.requests, cell.after_warmup.misses, cell.after_warmup.penalty_blocks), (5, 3, 9));
    }

    #[test]
    fn the_failure_schedule_switches_penalties_and_windows_split_the_run() {
        // Every request misses (cache of 1, no repeats); blocks 0, 5, 10, … all on drive 0.
        let blocks: Vec<u64> = (0..10).map(|i| 5 * i).collect();
        let file = oracle("sim-schedule.oracleGeneral", &blocks);
        let mut config = config(&file.0);
        config.sizes = vec![1];
        config.chunk_kib = 4;
        config.fail_at_request = 3;
        config.repair_at_request = Some(7);
        config.window_requests = 4;
        let report = run(&config, None).unwrap().unwrap();
        let cell = &report.cells[0];
        // Requests 3-6 cost 4, the other six 1.
        assert_eq!(cell.total.penalty_blocks, 4 * 4 + 6);
        assert_eq!(cell.windows.first_request, [0, 4, 8]);
        assert_eq!(cell.windows.penalty_blocks, [3 + 4, 4 * 3 + 1, 2]);
        assert_eq!(cell.windows.rgr, [7.0 / 4.0, 13.0 / 4.0, 1.0]);
        assert_eq!(cell.windows.start_s, [0.0, 4.0, 8.0]);
    }

    #[test]
    fn one_pass_gives_each_cell_what_a_run_of_its_own_gives() {
        let blocks: Vec<u64> = (0..3000u64).map(|i| (i * 2654435761 % 211).min(i * 40503 % 97)).collect();
        let file = oracle("sim-cells.oracleGeneral", &blocks);
        let mut together = config(&file.0);
        together.policies = vec!["lru".into(), "vdf-lfu".into(), "clock".into()];
        together.sizes = vec![40, 8, 20];
        together.drives = vec![4, 6];
        together.failed_drive = FailedDrive::All;
        together.chunk_kib = 8;
        together.window_requests = 700;
        let all = run(&together, None).unwrap().unwrap();
        assert_eq!(all.cells.len(), 3 * 3 * (4 + 6));
        for cell in &all.cells {
            let mut alone = together.clone();
            alone.policies = vec![cell.policy.clone()];
            alone.sizes = vec![cell.size_blocks];
            alone.drives = vec![cell.drives];
            alone.failed_drive = FailedDrive::Drive(cell.failed_drive.unwrap());
            let single = run(&alone, None).unwrap().unwrap();
            assert_eq!(&single.cells[0], cell);
        }
    }

    #[test]
    fn the_miss_stream_is_an_spc_trace_of_the_misses_after_warm_up() {
        let file = oracle("sim-stream.oracleGeneral", &[0, 1, 0, 1, 5, 6, 0]);
        let out = std::env::temp_dir().join(format!("raidlab-miss-{}.spc", std::process::id()));
        let mut config = config(&file.0);
        config.miss_trace = Some(out.clone());
        let report = run(&config, None).unwrap().unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        std::fs::remove_file(&out).unwrap();
        assert_eq!(text, "0,40,4096,r,4.000000000\n0,48,4096,r,5.000000000\n0,0,4096,r,6.000000000\n");
        assert_eq!(report.miss_trace.unwrap().lines, 3);
        // Two cells cannot share one stream.
        config.sizes = vec![2, 3];
        let err = run(&config, None).err().unwrap().to_string();
        assert!(err.starts_with("cache.miss_trace: a miss stream is one cache's"), "{err}");
    }

    #[test]
    fn configuration_mistakes_name_their_key() {
        let file = oracle("sim-errors.oracleGeneral", &[1]);
        type Change = Box<dyn Fn(&mut CacheSimConfig)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|c| c.policies = vec!["lru".into(), "mru".into()]), "cache.policies[1]: unknown cache policy"),
            (Box::new(|c| c.policies = vec!["lru".into(), "lru".into()]), "cache.policies[1]: lru listed twice"),
            (Box::new(|c| c.sizes = vec![4, 0]), "cache.sizes[1]: a cache holds 1 to"),
            (Box::new(|c| c.sizes = vec![]), "cache.sizes: name at least one"),
            (Box::new(|c| c.drives = vec![5, 2]), "cache.drives: RAID-5 needs 3 to 254 drives, not 2"),
            (Box::new(|c| c.failed_drive = FailedDrive::Drive(5)), "cache.failed_drive: drive 5 is not in an array of 5 drives"),
            (Box::new(|c| c.chunk_kib = 6), "cache.chunk_kib: a stripe unit is a whole number"),
            (Box::new(|c| c.layout = "raid7".into()), "cache.layout: unknown layout \"raid7\""),
            (Box::new(|c| c.repair_at_request = Some(0)), "cache.repair_at_request: the rebuild ends after"),
            (Box::new(|c| c.window_requests = 0), "cache.window_requests:"),
        ];
        for (change, expected) in cases {
            let mut config = config(&file.0);
            change(&mut config);
            let err = run(&config, None).err().unwrap().to_string();
            assert!(err.starts_with(expected), "{err}");
        }
        let err = run_toml("trace = { path = \"x\" }\npolicies = [\"lru\"]\nsizes = [2]\nfailed_drive = \"some\"\n", Path::new("."), None)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("cache.failed_drive: "), "{err}");
        let err = run_toml("trace = { path = \"x\" }\npolicies = [\"lru\"]\nsize = [2]\n", Path::new("."), None).unwrap_err().to_string();
        assert!(err.starts_with("cache"), "{err}");
    }

    #[test]
    fn a_cancelled_run_leaves_no_miss_stream() {
        let blocks: Vec<u64> = (0..(PROGRESS_EVERY + 10)).map(|i| i % 1000).collect();
        let file = oracle("sim-cancel.oracleGeneral", &blocks);
        let out = std::env::temp_dir().join(format!("raidlab-cancelled-{}.spc", std::process::id()));
        let mut config = config(&file.0);
        config.miss_trace = Some(out.clone());
        let mut asked = 0;
        let mut stop = |_: Progress| {
            asked += 1;
            false
        };
        assert!(run(&config, Some(&mut stop)).unwrap().is_none());
        assert_eq!(asked, 1);
        assert!(!out.exists());
        let mut partial = out.into_os_string();
        partial.push(".partial");
        assert!(!PathBuf::from(partial).exists());
    }
}
