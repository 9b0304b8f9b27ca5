//! Block-trace readers: streaming, with transparent gzip/bzip2, one file per format.
//!
//! A trace is read once, line by line, through a pipeline that keeps at most
//! [`REORDER_WINDOW`] requests in memory:
//!
//! ```text
//!  file ─▶ gzip/bzip2? ─▶ lines ─────────▶ format parser ──────▶ sectors + folding ───┐
//!         (magic bytes)   (one reused       (spc.rs, msr.rs, …:   (modulo, scale or   │
//!                          buffer; blank     line → RawRecord in   reject; too large  │
//!                          lines skipped)    bytes and ns)         is an error)       │
//!                                                                                     ▼
//!  TraceRecord ◀── arrival = (t − t_first) × time_scale ◀── reorder window: min-heap by
//!                                                           (time, line); a record behind
//!                                                           the last emitted time is
//!                                                           clamped to it and counted
//! ```
//!
//! * **Formats.** Each format is one file with a `LineParser` that turns one line into a
//!   `RawRecord` (time in ns from the format's own origin, offset and size in bytes), and
//!   one line of the registry `TRACE_FORMATS`, which `TraceConfig.format` is resolved
//!   against ([`trace_formats`] lists it). Adding a format = one file + one registry line.
//!   `format = "auto"` (the default) offers the first lines to every parser that needs no
//!   column mapping and takes the one format that accepts them all (`detect.rs`).
//! * **Order.** Real traces are not sorted (Systor '17 steps back by milliseconds, Tencent
//!   CBS by whole seconds). Records enter a min-heap of [`REORDER_WINDOW`] records keyed by
//!   (time, line number) and leave it in time order. A record older than one already emitted
//!   is *clamped* to the last emitted time and counted ([`TraceSource::clamped_records`]), so
//!   arrival times never decrease. Until the first record that steps back, the window is a
//!   first-in first-out queue: records in time order leave in the order they came, which is
//!   the heap's order, without its cost (a sift through a dozen levels per record, which took
//!   about a seventh of a sorted trace's replay).
//! * **Addresses.** Offsets are rounded down to a 512-byte sector, sizes up to whole sectors
//!   (at least one). [`FoldMode`] brings addresses beyond the array onto it; a request larger
//!   than the whole array is an error.
//! * [`stats`] summarises a trace in one streaming pass over the raw records.

mod csv;
mod detect;
mod disksim;
mod fields;
mod input;
mod msr;
pub mod oracle_general;
mod spc;
mod summary;
mod systor;
mod tencent;
pub(crate) mod threaded;
mod validate;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::disk::SECTOR_BYTES;
use crate::error::{Error, Result};
use crate::sim::Nanos;
use input::RecordReader;

pub use summary::{stats, stats_until};
pub use threaded::ThreadedSource;
pub use validate::{read_validate_trace, BufferAction, ValidateRequest};

/// One request of a block trace in raidlab's units: a [`RequestRecord`] whose `arrival` is the
/// time since the first record of the trace (the earliest one, which is the first emitted),
/// ns, after time scaling, and whose `lba` is the first 512-byte sector on the array, after
/// folding (`sectors` at least 1). The controller's own request type, so that a trace's
/// batches reach the engine as they are, without a pass over them.
pub type TraceRecord = crate::request::RequestRecord;

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
    /// Format: `auto` (the default: told from the first lines, or `csv` when a column mapping
    /// is given), `spc`, `msr`, `systor`, `tencent`, `csv` (needs `csv`, the column mapping),
    /// `disksim` (DiskSim's default `ascii` format) or `validate` (`raidlab list trace_formats`).
    #[serde(default = "auto")]
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
    /// A record that steps back in time further than the reorder window reaches (4,096
    /// records) is an error naming its line. By default it is moved forward to the latest
    /// time already replayed, counted, and warned about in the summary.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub strict_order: bool,
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

fn one() -> f64 {
    1.0
}
fn auto() -> String {
    detect::AUTO.to_string()
}

/// Column mapping of a generic CSV trace (0-based column indices).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CsvColumns {
    /// Column (0-based) of the arrival time, in units of `time_unit_s`.
    pub time_column: usize,
    /// Column (0-based) of the start address, in units of `offset_unit_bytes`.
    pub offset_column: usize,
    /// Column (0-based) of the request size, in units of `size_unit_bytes`.
    pub size_column: usize,
    /// Column (0-based) saying read or write (see `read_values`, `write_values`).
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
    /// Values of the op column meaning read (case-insensitive).
    #[serde(default = "default_read_values")]
    pub read_values: Vec<String>,
    /// Lines to skip at the top (a header).
    #[serde(default)]
    pub skip_lines: u64,
    /// Field delimiter (one character).
    #[serde(default = "comma")]
    pub delimiter: char,
}

impl CsvColumns {
    /// Columns `time`, `offset`, `size` and `op` (0-based), every other key at its default
    /// (times in seconds, offsets and sizes in bytes, `w`/`write`/`1` and `r`/`read`/`0`, no
    /// header, commas).
    pub fn new(time_column: usize, offset_column: usize, size_column: usize, op_column: usize) -> Self {
        CsvColumns {
            time_column,
            offset_column,
            size_column,
            op_column,
            time_unit_s: one(),
            offset_unit_bytes: one_u64(),
            size_unit_bytes: one_u64(),
            write_values: default_write_values(),
            read_values: default_read_values(),
            skip_lines: 0,
            delimiter: comma(),
        }
    }
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

/// One request as the trace file states it, before any conversion to the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawRecord {
    /// Timestamp in ns from the format's own origin (trace start, Unix epoch, or
    /// 1601-01-01 for MSR's Windows filetime); only differences matter.
    pub time_ns: u64,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    pub is_write: bool,
}

/// Turns one line of a trace file into a [`RawRecord`]; one implementation per format.
pub(crate) trait LineParser: Send {
    /// Parse one non-blank line (trimmed). `Ok(None)` for a line that holds no request (a
    /// header); `Err` says what is wrong (the reader adds file and line).
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String>;

    /// Physical lines to skip at the top of the file before any parsing.
    fn skip_lines(&self) -> u64 {
        0
    }

    /// The field of a line (one [`LineParser::parse_line`] accepted) that names the volume
    /// the request went to (an ASU, a LUN, a host's disk), for `trace info`, which flags
    /// traces that mix volumes (a replay puts them in one address space); `None` for
    /// formats without one.
    fn volume<'a>(&self, _line: &'a str) -> Option<&'a str> {
        None
    }
}

/// Fields `first..=last` (0-based) of `line` split at `delimiter`, as one slice; `None`
/// when the line has fewer fields.
pub(crate) fn fields_between(line: &str, delimiter: char, first: usize, last: usize) -> Option<&str> {
    let mut delimiters = line.match_indices(delimiter).map(|(at, _)| at);
    let start = if first == 0 { 0 } else { delimiters.nth(first - 1)? + 1 };
    let end = delimiters.nth(last - first).unwrap_or(line.len());
    Some(&line[start..end])
}

/// Builds a format's parser from the config (`key` is the config key path for errors).
type ParserConstructor = fn(&TraceConfig, &str) -> Result<Box<dyn LineParser>>;

/// One trace format: the name used in `TraceConfig.format`, its parser, and a one-line
/// description.
struct TraceFormat {
    name: &'static str,
    parser: ParserConstructor,
    description: &'static str,
    /// The format reads nothing without more configuration (a column mapping), so `auto`
    /// does not try it.
    needs_configuration: bool,
}

/// The registry of trace formats. Adding a format = one file with a [`LineParser`] + one line.
#[rustfmt::skip]
const TRACE_FORMATS: &[TraceFormat] = &[
    TraceFormat { name: "spc", parser: spc::parser, description: "SPC ASCII (UMass Financial, WebSearch): ASU,LBA,Size,Opcode,Timestamp; sectors, bytes, r/w, seconds", needs_configuration: false },
    TraceFormat { name: "msr", parser: msr::parser, description: "MSR Cambridge: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime; filetime, Read/Write, bytes", needs_configuration: false },
    TraceFormat { name: "systor", parser: systor::parser, description: "Systor '17 VDI: header, Timestamp,Response,IOType,LUN,Offset,Size; epoch seconds, R/W, bytes", needs_configuration: false },
    TraceFormat { name: "tencent", parser: tencent::parser, description: "Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID; epoch seconds, sectors, 0 read / 1 write", needs_configuration: false },
    TraceFormat { name: "csv", parser: csv::parser, description: "generic delimited text, columns and units given by the `csv` mapping", needs_configuration: true },
    TraceFormat { name: "disksim", parser: disksim::parser, description: "DiskSim ascii: arrival_ms device block blocks flags; whitespace, 512-byte blocks, hex flags (bit 0: read)", needs_configuration: false },
    TraceFormat { name: "validate", parser: validate::parser, description: "DiskSim validate: R|W Hit|Miss LBN blocks service_us next_interarrival_us; whitespace, 512-byte blocks, µs", needs_configuration: false },
];

/// The known trace formats as (name, one-line description), in registry order.
pub fn trace_formats() -> impl Iterator<Item = (&'static str, &'static str)> {
    TRACE_FORMATS.iter().map(|format| (format.name, format.description))
}

/// The format `cfg` names, or with `auto` the one its first lines fit.
fn format_of(cfg: &TraceConfig, key: &str) -> Result<&'static TraceFormat> {
    // libCacheSim's format names objects, not block addresses: the cache simulator reads it.
    const CACHE_TRACE: &str = "is libCacheSim's oracleGeneral format, a cache trace of object ids and sizes with no block \
                               addresses: a run replays block traces on the array; replay it through a buffer cache alone \
                               with `raidlab cache`";
    if cfg.format.eq_ignore_ascii_case(oracle_general::ORACLE_GENERAL) {
        return Err(Error::config(format!("{key}.format"), format!("\"{}\" {CACHE_TRACE}", cfg.format)));
    }
    if cfg.format == detect::AUTO && cfg.csv.is_none() && oracle_general::is_oracle_general(&cfg.path).unwrap_or(false) {
        return Err(Error::trace(&cfg.path, 1, format!("this file {CACHE_TRACE}")));
    }
    let name = match cfg.format.as_str() {
        // A column mapping says what the file is.
        detect::AUTO if cfg.csv.is_some() => "csv",
        detect::AUTO => detect::detect(cfg, key)?,
        name => name,
    };
    let Some(format) = TRACE_FORMATS.iter().find(|format| format.name == name) else {
        let known: Vec<&str> = TRACE_FORMATS.iter().map(|format| format.name).collect();
        return Err(Error::config(
            format!("{key}.format"),
            format!("unknown trace format \"{}\"; known formats: {}, or auto", cfg.format, known.join(", ")),
        ));
    };
    if cfg.csv.is_some() && format.name != "csv" {
        return Err(Error::config(
            format!("{key}.csv"),
            format!("a column mapping is only used with format = \"csv\", not \"{}\"", cfg.format),
        ));
    }
    Ok(format)
}

/// Open the trace's records (parsed, not yet converted to the array), with the name of the
/// format read.
fn open_records(cfg: &TraceConfig, key: &str) -> Result<(RecordReader, &'static str)> {
    open_records_counting(cfg, key, None)
}

/// [`open_records`], adding the bytes of the file read to `bytes_read`.
fn open_records_counting(
    cfg: &TraceConfig,
    key: &str,
    bytes_read: Option<Arc<AtomicU64>>,
) -> Result<(RecordReader, &'static str)> {
    let format = format_of(cfg, key)?;
    let parser = (format.parser)(cfg, key)?;
    let skip_lines = parser.skip_lines();
    Ok((RecordReader::open(&cfg.path, parser, skip_lines, cfg.max_requests, bytes_read)?, format.name))
}

/// `cfg.time_scale` is a positive finite factor (`key`: the trace table's key path).
fn check_time_scale(cfg: &TraceConfig, key: &str) -> Result<()> {
    if cfg.time_scale.is_finite() && cfg.time_scale > 0.0 {
        return Ok(());
    }
    Err(Error::config(
        format!("{key}.time_scale"),
        format!("expected a positive finite factor, got {}", cfg.time_scale),
    ))
}

/// Records held back to put an unsorted trace in time order (see the module docs).
pub const REORDER_WINDOW: usize = 4096;

/// What a replay counts as it reads its trace, shared with the thread that reads it: the
/// simulation reads them for its progress and, at the end, for the summary's warnings.
/// Counts are of the records read, which may run a few batches ahead of those replayed.
#[derive(Debug, Default)]
pub struct TraceCounts {
    /// Size of the trace file as stored (compressed or not), bytes.
    file_bytes: u64,
    /// Bytes of the file read so far (before decompression).
    bytes_read: Arc<AtomicU64>,
    /// Records read.
    records: AtomicU64,
    /// Records that stepped back in time beyond the reorder window and were moved forward.
    clamped: AtomicU64,
    /// Records whose addresses lay (at least partly) beyond the array and were folded onto it.
    beyond_array: AtomicU64,
    /// The array's capacity, sectors, and the fold mode.
    capacity_sectors: u64,
    fold: FoldMode,
    /// The first record replayed later than a run may simulate, set once.
    beyond_horizon: std::sync::OnceLock<BeyondHorizon>,
}

/// The first record of a replay whose arrival lies beyond [`crate::sim::MAX_SIM_TIME_NS`]:
/// the run stops with an error when it reaches it, and the error names both records that
/// set the gap, since either timestamp may be the one far from the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeyondHorizon {
    /// The record's line in the trace file (1-based).
    pub line: u64,
    /// The line of the first record replayed (arrival 0).
    pub first_line: u64,
    /// Its arrival: time since the first record, after `time_scale`, ns.
    pub arrival_ns: u64,
}

impl TraceCounts {
    /// The fraction of the trace file read, in [0, 1] (NaN for an empty file).
    pub fn fraction_read(&self) -> f64 {
        if self.file_bytes == 0 {
            return f64::NAN;
        }
        (self.bytes_read.load(Ordering::Relaxed) as f64 / self.file_bytes as f64).min(1.0)
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.records.load(Ordering::Relaxed)
    }

    /// Records moved forward in time ([`TraceSource::clamped_records`]).
    pub fn clamped(&self) -> u64 {
        self.clamped.load(Ordering::Relaxed)
    }

    /// The first record replayed later than a run may simulate, once the source reached it.
    pub fn beyond_horizon(&self) -> Option<BeyondHorizon> {
        self.beyond_horizon.get().copied()
    }

    /// Records that lay beyond the array and were folded onto it.
    pub fn beyond_array(&self) -> u64 {
        self.beyond_array.load(Ordering::Relaxed)
    }

    /// The warnings a replay's counts call for (`key`: the trace table's key path): records
    /// moved forward in time, and addresses folded onto the array.
    pub fn warnings(&self, key: &str) -> Vec<String> {
        let records = self.records().max(1);
        let share = |n: u64| format!("{n} of {records} records read ({:.2} %)", n as f64 * 100.0 / records as f64);
        let mut warnings = Vec::new();
        let clamped = self.clamped();
        if clamped > 0 {
            warnings.push(format!(
                "{key}: {} step back in time further than the reorder window of {REORDER_WINDOW} records and were \
                 replayed at the latest time already replayed instead of their own; set `strict_order = true` to \
                 make that an error naming the line",
                share(clamped)
            ));
        }
        let beyond = self.beyond_array();
        if beyond > 0 {
            let how = match self.fold {
                FoldMode::Modulo => "folded onto it (address modulo the capacity, fold = \"modulo\")",
                FoldMode::Scale => "brought onto it with every other address (scaled by the capacity over the largest address, fold = \"scale\")",
                FoldMode::Reject => "rejected",
            };
            warnings.push(format!(
                "{key}: {} lie beyond the array's {} sectors ({:.3} GB) and were {how}: is the array as large as the \
                 trace's volume? `fold = \"reject\"` refuses them",
                share(beyond),
                self.capacity_sectors,
                (self.capacity_sectors * SECTOR_BYTES) as f64 / 1e9
            ));
        }
        warnings
    }
}

/// First sector and length in sectors of a raw record: the offset rounded down to a sector,
/// the size rounded up to whole sectors.
fn to_sectors(raw: &RawRecord) -> Result<(u64, u32), String> {
    let lba = raw.offset_bytes / SECTOR_BYTES;
    let sectors = raw.size_bytes.div_ceil(SECTOR_BYTES).max(1);
    let sectors = u32::try_from(sectors).map_err(|_| {
        format!(
            "request of {} bytes is larger than raidlab supports (2^32 − 1 sectors)",
            raw.size_bytes
        )
    })?;
    Ok((lba, sectors))
}

/// Brings trace addresses onto an array of `capacity` sectors according to a [`FoldMode`].
#[derive(Debug, Clone, Copy)]
struct Folder {
    mode: FoldMode,
    capacity: u64,
    /// For [`FoldMode::Scale`]: the largest end sector (exclusive) of any request.
    largest_end: u64,
}

impl Folder {
    /// The first sector on the array of a request of `sectors` starting at trace sector `lba`.
    fn fold(&self, lba: u64, sectors: u32) -> Result<u64, String> {
        let sectors = u64::from(sectors);
        if sectors > self.capacity {
            return Err(format!(
                "request of {sectors} sectors is larger than the array ({} sectors)",
                self.capacity
            ));
        }
        let last_start = self.capacity - sectors;
        match self.mode {
            // Most traces fit: no division for them.
            FoldMode::Modulo if lba < self.capacity => Ok(lba.min(last_start)),
            FoldMode::Modulo => Ok((lba % self.capacity).min(last_start)),
            FoldMode::Scale => {
                let scaled =
                    u128::from(lba) * u128::from(self.capacity) / u128::from(self.largest_end);
                Ok((scaled as u64).min(last_start))
            }
            FoldMode::Reject if lba > last_start => Err(format!(
                "request at sectors {lba}..{} runs past the array's {} sectors (fold = \"reject\")",
                lba + sectors,
                self.capacity
            )),
            FoldMode::Reject => Ok(lba),
        }
    }
}

/// A record waiting in the reorder window; ordered by (time, line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    time_ns: u64,
    line: u64,
    lba: u64,
    sectors: u32,
    is_write: bool,
}

/// The reorder window: the records read ahead, leaving smallest (time, line) first.
#[derive(Debug)]
enum Window {
    /// Every record so far came in (time, line) order: a queue gives them in that order.
    InOrder(VecDeque<Pending>),
    /// A record came out of order: a min-heap from then on.
    Heap(BinaryHeap<Reverse<Pending>>),
}

impl Window {
    fn len(&self) -> usize {
        match self {
            Window::InOrder(queue) => queue.len(),
            Window::Heap(heap) => heap.len(),
        }
    }

    fn push(&mut self, record: Pending) {
        match self {
            // Lines only grow, so a time no earlier than the last one keeps the order.
            Window::InOrder(queue) if queue.back().is_none_or(|last| last.time_ns <= record.time_ns) => {
                queue.push_back(record)
            }
            Window::InOrder(queue) => {
                let mut heap: BinaryHeap<Reverse<Pending>> = queue.drain(..).map(Reverse).collect();
                heap.push(Reverse(record));
                *self = Window::Heap(heap);
            }
            Window::Heap(heap) => heap.push(Reverse(record)),
        }
    }

    fn pop(&mut self) -> Option<Pending> {
        match self {
            Window::InOrder(queue) => queue.pop_front(),
            Window::Heap(heap) => heap.pop().map(|Reverse(record)| record),
        }
    }
}

/// A streaming source of trace records brought onto an array of `capacity_sectors`.
///
/// Applies, in order: `max_requests` (the first N records of the file); conversion to
/// sectors and folding; the reorder window; time relative to the first emitted record,
/// multiplied by `time_scale`. Memory is bounded by [`REORDER_WINDOW`] records.
pub struct TraceSource {
    records: RecordReader,
    folder: Folder,
    time_scale: f64,
    window: Window,
    window_capacity: usize,
    exhausted: bool,
    /// Raw time of the first emitted record (arrival 0), and its line.
    first_time_ns: Option<u64>,
    first_line: u64,
    /// Raw time of the last emitted record.
    last_emitted_ns: Option<u64>,
    clamped: u64,
    /// `TraceConfig::max_requests`: with `Some(0)` an empty replay is what was asked for.
    max_requests: Option<u64>,
    /// `TraceConfig::strict_order`: a clamped record is an error.
    strict_order: bool,
    /// Records read, and those beyond the array, not yet published to `counts`.
    records_read: u64,
    beyond_array: u64,
    counts: Arc<TraceCounts>,
}

impl TraceSource {
    /// Open the trace. `key` is the config key path for configuration errors.
    ///
    /// With [`FoldMode::Scale`] this reads the whole trace once (streaming) to find its
    /// largest address.
    pub fn open(cfg: &TraceConfig, capacity_sectors: u64, key: &str) -> Result<Self> {
        Self::open_with_window(cfg, capacity_sectors, key, REORDER_WINDOW)
    }

    fn open_with_window(
        cfg: &TraceConfig,
        capacity_sectors: u64,
        key: &str,
        window_capacity: usize,
    ) -> Result<Self> {
        check_time_scale(cfg, key)?;
        if capacity_sectors == 0 {
            return Err(Error::config(key, "the array has no capacity to replay the trace on"));
        }
        let largest_end = match cfg.fold {
            FoldMode::Scale => largest_end_sector(&mut open_records(cfg, key)?.0)?,
            FoldMode::Modulo | FoldMode::Reject => 0,
        };
        let bytes_read = Arc::new(AtomicU64::new(0));
        let (records, _) = open_records_counting(cfg, key, Some(bytes_read.clone()))?;
        let file_bytes = std::fs::metadata(&cfg.path).map(|m| m.len()).unwrap_or(0);
        let counts = Arc::new(TraceCounts {
            file_bytes,
            bytes_read,
            capacity_sectors,
            fold: cfg.fold,
            ..TraceCounts::default()
        });
        let window_capacity = window_capacity.max(1);
        Ok(TraceSource {
            records,
            folder: Folder { mode: cfg.fold, capacity: capacity_sectors, largest_end },
            time_scale: cfg.time_scale,
            window: Window::InOrder(VecDeque::with_capacity(window_capacity + 1)),
            window_capacity,
            exhausted: false,
            first_time_ns: None,
            first_line: 0,
            last_emitted_ns: None,
            clamped: 0,
            max_requests: cfg.max_requests,
            strict_order: cfg.strict_order,
            records_read: 0,
            beyond_array: 0,
            counts,
        })
    }

    /// The counts this source keeps, shared: [`TraceSource::publish_counts`] brings them up
    /// to date.
    pub fn counts(&self) -> Arc<TraceCounts> {
        self.counts.clone()
    }

    /// Bring the shared counts up to date (done after each batch the reading thread reads:
    /// once a record would cost an atomic operation per record).
    pub fn publish_counts(&self) {
        self.counts.records.store(self.records_read, Ordering::Relaxed);
        self.counts.clamped.store(self.clamped, Ordering::Relaxed);
        self.counts.beyond_array.store(self.beyond_array, Ordering::Relaxed);
    }

    /// The next record in arrival order, `None` at the end; errors name file and line.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        while !self.exhausted && self.window.len() < self.window_capacity {
            match self.records.next_record()? {
                Some((line, raw)) => self.admit(line, raw)?,
                None => self.exhausted = true,
            }
        }
        let Some(next) = self.window.pop() else {
            // A run on a trace without a single request would look like a run that went well.
            if self.first_time_ns.is_none() && self.max_requests != Some(0) {
                let lines = self.records.lines_read();
                return Err(Error::trace(
                    self.records.path(),
                    lines.max(1),
                    format!("the trace holds no requests ({lines} lines, all blank or skipped)"),
                ));
            }
            return Ok(None);
        };
        let first = match self.first_time_ns {
            Some(first) => first,
            None => {
                self.first_line = next.line;
                *self.first_time_ns.insert(next.time_ns)
            }
        };
        self.last_emitted_ns = Some(next.time_ns);
        let arrival = self.scaled(next.time_ns - first);
        if arrival > crate::sim::MAX_SIM_TIME_NS {
            // Kept, not an error here: a run that ends earlier (`duration_s`) never reaches it.
            let _ = self.counts.beyond_horizon.set(BeyondHorizon { line: next.line, first_line: self.first_line, arrival_ns: arrival });
        }
        Ok(Some(TraceRecord {
            arrival,
            lba: next.lba,
            sectors: next.sectors,
            is_write: next.is_write,
        }))
    }

    /// Records that arrived after a later one had already been emitted (out of order by more
    /// than the reorder window) and were moved forward to the last emitted time.
    pub fn clamped_records(&self) -> u64 {
        self.clamped
    }

    /// The trace file.
    pub fn path(&self) -> &Path {
        self.records.path()
    }

    /// Convert, fold and clamp one record and put it in the reorder window.
    fn admit(&mut self, line: u64, raw: RawRecord) -> Result<()> {
        let path = self.records.path();
        let (lba, sectors) = to_sectors(&raw).map_err(|m| Error::trace(path, line, m))?;
        self.records_read += 1;
        self.beyond_array += u64::from(lba.saturating_add(u64::from(sectors)) > self.folder.capacity);
        let lba = self.folder.fold(lba, sectors).map_err(|m| Error::trace(path, line, m))?;
        let mut time_ns = raw.time_ns;
        if let Some(last) = self.last_emitted_ns.filter(|&last| time_ns < last) {
            if self.strict_order {
                return Err(Error::trace(
                    path,
                    line,
                    format!(
                        "this record is {} s earlier than one already replayed, further back than the reorder window \
                         of {} records reaches (strict_order = true)",
                        crate::sim::ns_to_s(last - time_ns),
                        self.window_capacity
                    ),
                ));
            }
            time_ns = last;
            self.clamped += 1;
        }
        self.window.push(Pending { time_ns, line, lba, sectors, is_write: raw.is_write });
        Ok(())
    }

    /// A time since the first record, scaled by `time_scale`.
    fn scaled(&self, since_first_ns: u64) -> Nanos {
        if self.time_scale == 1.0 {
            since_first_ns
        } else {
            crate::sim::round_ns(since_first_ns as f64 * self.time_scale)
        }
    }
}

/// First pass of [`FoldMode::Scale`]: the largest end sector (exclusive) of any request.
fn largest_end_sector(records: &mut RecordReader) -> Result<u64> {
    let mut largest_end = 1;
    while let Some((line, raw)) = records.next_record()? {
        let (lba, sectors) = to_sectors(&raw).map_err(|m| Error::trace(records.path(), line, m))?;
        largest_end = largest_end.max(lba + u64::from(sectors));
    }
    Ok(largest_end)
}

/// Summary statistics of a trace (for `raidlab trace info`); see [`stats`] for the exact
/// definitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    /// The format read (the one detected when the configuration said `auto`).
    pub format: &'static str,
    pub requests: u64,
    pub read_fraction: f64,
    pub mean_size_bytes: f64,
    pub duration_s: f64,
    pub iops: f64,
    pub footprint_bytes: u64,
    /// Whether `footprint_bytes` is exact (else a HyperLogLog estimate).
    pub footprint_exact: bool,
    /// Three relative standard errors of the footprint estimate (0 when exact).
    pub footprint_error: f64,
    pub locality_hot20: f64,
    /// Whether `locality_hot20` is exact (else estimated from a distinct sample of blocks).
    pub locality_hot20_exact: bool,
    /// Three standard errors of the hot-share estimate, absolute (0 when exact).
    pub locality_hot20_error: f64,
    /// Distinct volumes the format's volume field names (`None` for formats without one).
    pub volumes: Option<u64>,
    /// Whether every timestamp is a whole second.
    pub whole_second_timestamps: bool,
    /// What a user should know about the figures, in words.
    pub notes: Vec<String>,
}

impl TraceStats {
    /// The statistics of a trace of no request in `format`, with `notes`.
    pub(crate) fn empty(format: &'static str, notes: Vec<String>) -> TraceStats {
        TraceStats {
            format,
            requests: 0,
            read_fraction: 0.0,
            mean_size_bytes: 0.0,
            duration_s: 0.0,
            iops: 0.0,
            footprint_bytes: 0,
            footprint_exact: true,
            footprint_error: 0.0,
            locality_hot20: 0.0,
            locality_hot20_exact: true,
            locality_hot20_error: 0.0,
            volumes: None,
            whole_second_timestamps: false,
            notes,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    pub(crate) const MSR_SAMPLE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/msr-cambridge1-sample.csv");
    pub(crate) const SYSTOR_SAMPLE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/systor17-traces-sample.csv.gz"
    );
    pub(crate) const TENCENT_SAMPLE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/tencent-cbs-cloud_storage-sample.bz2"
    );

    /// Large enough that no sample address is folded.
    const HUGE_ARRAY: u64 = 1 << 40;
    const KEY: &str = "workload.trace";

    pub(crate) fn config(path: impl Into<PathBuf>, format: &str) -> TraceConfig {
        TraceConfig {
            path: path.into(),
            format: format.into(),
            csv: None,
            time_scale: 1.0,
            fold: FoldMode::Modulo,
            max_requests: None,
            strict_order: false,
        }
    }

    /// Every record of the trace, and the number of clamped records.
    fn read_all(cfg: &TraceConfig, capacity: u64) -> Result<(Vec<TraceRecord>, u64)> {
        let mut source = TraceSource::open(cfg, capacity, KEY)?;
        let mut records = Vec::new();
        while let Some(record) = source.next_record()? {
            records.push(record);
        }
        Ok((records, source.clamped_records()))
    }

    /// The error `read_all` stops with.
    fn read_error(cfg: &TraceConfig, capacity: u64) -> Error {
        match read_all(cfg, capacity) {
            Err(err) => err,
            Ok((records, _)) => panic!("expected an error, read {} records", records.len()),
        }
    }

    fn trace_error_line(err: &Error) -> (u64, &str) {
        match err {
            Error::Trace { line, message, .. } => (*line, message),
            other => panic!("expected a trace error, got {other}"),
        }
    }

    fn config_error_key(err: Error) -> String {
        match err {
            Error::Config { key, .. } => key,
            other => panic!("expected a config error, got {other}"),
        }
    }

    fn assert_arrivals_never_decrease(records: &[TraceRecord]) {
        for pair in records.windows(2) {
            assert!(pair[0].arrival <= pair[1].arrival, "{:?} then {:?}", pair[0], pair[1]);
        }
    }

    /// A file in the temp directory, removed on drop.
    pub(crate) struct TempFile(pub PathBuf);

    impl TempFile {
        pub(crate) fn new(name: &str, contents: &[u8]) -> TempFile {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("raidlab-trace-{}-{unique}-{name}", std::process::id()));
            std::fs::write(&path, contents).unwrap();
            TempFile(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn spc_trace(lines: &[&str]) -> TempFile {
        TempFile::new("trace.spc", lines.join("\n").as_bytes())
    }

    #[test]
    fn msr_sample_has_the_published_counts_and_decodes_line_one() {
        let (records, clamped) = read_all(&config(MSR_SAMPLE, "msr"), HUGE_ARRAY).unwrap();
        eprintln!("MSR sample: {} records, {clamped} clamped", records.len());
        assert_eq!(records.len(), 1000);
        assert_eq!(records.iter().filter(|r| !r.is_write).count(), 508);
        assert_eq!(records.iter().filter(|r| r.is_write).count(), 492);
        // Line 1: 128166385295514663,hm,0,Write,9056014336,2048,2833
        // 9056014336 B / 512 = sector 17687528; 2048 B = 4 sectors; the earliest record.
        assert_eq!(
            records[0],
            TraceRecord { arrival: 0, lba: 17_687_528, sectors: 4, is_write: true }
        );
        // Line 1000: 128166386567849604 ticks; (…849604 − …514663) × 100 ns = 127.2334941 s.
        assert_eq!(records[999].arrival, 127_233_494_100);
        assert_arrivals_never_decrease(&records);
        assert_eq!(clamped, 0, "the MSR sample is sorted");
    }

    #[test]
    fn systor_sample_is_reordered_and_decodes_line_two() {
        let (records, clamped) = read_all(&config(SYSTOR_SAMPLE, "systor"), HUGE_ARRAY).unwrap();
        eprintln!("Systor sample: {} records, {clamped} clamped", records.len());
        assert_eq!(records.len(), 999);
        assert_eq!(records.iter().filter(|r| !r.is_write).count(), 826);
        assert_arrivals_never_decrease(&records);
        // Out of order by a few ms only, well inside the window: nothing clamped.
        assert_eq!(clamped, 0);
        // Line 3 is the earliest: 1456095145.126285000,0.008044000,R,0,4256049987072,122880
        assert_eq!(
            records[0],
            TraceRecord { arrival: 0, lba: 8_312_597_631, sectors: 240, is_write: false }
        );
        // Line 2, the first record of the file, comes 6.791 ms later:
        // 1456095145.133076000,0.000806000,R,0,899056122368,131072
        let line_two =
            TraceRecord { arrival: 6_791_000, lba: 1_755_968_989, sectors: 256, is_write: false };
        assert!(records.contains(&line_two));
        assert_eq!(records.last().unwrap().arrival, 2_447_767_000);
    }

    #[test]
    fn tencent_sample_is_reordered_and_decodes_line_one() {
        let (records, clamped) = read_all(&config(TENCENT_SAMPLE, "tencent"), HUGE_ARRAY).unwrap();
        eprintln!("Tencent sample: {} records, {clamped} clamped", records.len());
        assert_eq!(records.len(), 50_000);
        assert_eq!(records.iter().filter(|r| !r.is_write).count(), 24_521);
        assert_arrivals_never_decrease(&records);
        // Line 2 (1538323199,13896880,128,0,1063) is in the earliest second.
        assert_eq!(
            records[0],
            TraceRecord { arrival: 0, lba: 13_896_880, sectors: 128, is_write: false }
        );
        // Line 1 (1538323200,4247200,128,1,1058): one second later, sectors as stated.
        let line_one =
            TraceRecord { arrival: 1_000_000_000, lba: 4_247_200, sectors: 128, is_write: true };
        assert!(records.contains(&line_one));
        // 18 records of second …199 turn up after more than a window of second …200 has
        // been emitted (measured; an independent model of the window agrees).
        assert_eq!(clamped, 18);
        assert_eq!(records.last().unwrap().arrival, 1_000_000_000);
    }

    #[test]
    fn generic_csv_mapping_reads_the_msr_sample_like_the_msr_format() {
        let mut cfg = config(MSR_SAMPLE, "csv");
        cfg.csv = Some(CsvColumns {
            time_column: 0,
            offset_column: 4,
            size_column: 5,
            op_column: 3,
            time_unit_s: 1e-7,
            offset_unit_bytes: 1,
            size_unit_bytes: 1,
            write_values: vec!["Write".into()],
            read_values: vec!["Read".into()],
            skip_lines: 0,
            delimiter: ',',
        });
        let (as_csv, _) = read_all(&cfg, HUGE_ARRAY).unwrap();
        let (as_msr, _) = read_all(&config(MSR_SAMPLE, "msr"), HUGE_ARRAY).unwrap();
        assert_eq!(as_csv, as_msr);
    }

    #[test]
    fn csv_skip_lines_skips_a_header() {
        let file =
            TempFile::new("trace.csv", b"time_us,op,lba,bytes\n\n10,R,8,4096\n30,W,16,512\n");
        let mut cfg = config(&file.0, "csv");
        cfg.csv = Some(CsvColumns { time_unit_s: 1e-6, offset_unit_bytes: 512, skip_lines: 1, ..CsvColumns::new(0, 2, 3, 1) });
        let (records, _) = read_all(&cfg, HUGE_ARRAY).unwrap();
        assert_eq!(
            records,
            [
                TraceRecord { arrival: 0, lba: 8, sectors: 8, is_write: false },
                TraceRecord { arrival: 20_000, lba: 16, sectors: 1, is_write: true },
            ]
        );
    }

    /// A deterministic SPC trace of `n` lines with varied sizes, opcodes and times.
    fn generated_spc(n: u64) -> String {
        let mut text = String::new();
        for i in 0..n {
            let lba = (i * 7919) % 100_000;
            let size = 512 * (1 + i % 16) + (i % 3) * 100;
            let op = ["r", "W", "w", "R"][(i % 4) as usize];
            text.push_str(&format!(
                "{},{lba},{size},{op},{}.{:06}\n",
                i % 2,
                i / 10,
                (i * 37) % 1_000_000
            ));
        }
        text
    }

    /// `text` compressed with gzip and with bzip2.
    fn gzip_and_bzip2(text: &str) -> (Vec<u8>, Vec<u8>) {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gzip.write_all(text.as_bytes()).unwrap();
        let mut bzip2 = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        bzip2.write_all(text.as_bytes()).unwrap();
        (gzip.finish().unwrap(), bzip2.finish().unwrap())
    }

    #[test]
    fn gzip_and_bzip2_round_trip_to_identical_records() {
        let text = generated_spc(2000);
        let (gzip, bzip2) = gzip_and_bzip2(&text);
        assert_eq!(&gzip[..2], &[0x1f, 0x8b]);
        assert_eq!(&bzip2[..3], b"BZh");

        // The file names say nothing: the content decides.
        let plain_file = TempFile::new("plain", text.as_bytes());
        let gzip_file = TempFile::new("gzipped", &gzip);
        let bzip2_file = TempFile::new("bzipped", &bzip2);
        let (plain, _) = read_all(&config(&plain_file.0, "spc"), HUGE_ARRAY).unwrap();
        let (from_gzip, _) = read_all(&config(&gzip_file.0, "spc"), HUGE_ARRAY).unwrap();
        let (from_bzip2, _) = read_all(&config(&bzip2_file.0, "spc"), HUGE_ARRAY).unwrap();
        assert_eq!(plain.len(), 2000);
        assert_eq!(from_gzip, plain);
        assert_eq!(from_bzip2, plain);
    }

    #[test]
    fn concatenated_gzip_members_are_read_through() {
        let text = generated_spc(300);
        let (head, tail) = text.split_at(text.find("\n1,").unwrap() + 1);
        let mut members = Vec::new();
        for part in [head, tail] {
            let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gzip.write_all(part.as_bytes()).unwrap();
            members.extend(gzip.finish().unwrap());
        }
        let plain_file = TempFile::new("plain", text.as_bytes());
        let gzip_file = TempFile::new("members.gz", &members);
        let (plain, _) = read_all(&config(&plain_file.0, "spc"), HUGE_ARRAY).unwrap();
        let (from_gzip, _) = read_all(&config(&gzip_file.0, "spc"), HUGE_ARRAY).unwrap();
        assert_eq!(from_gzip, plain);
    }

    #[test]
    fn a_bad_number_on_line_three_is_a_trace_error_naming_file_and_line() {
        let file =
            spc_trace(&["0,1,512,r,0.0", "0,2,512,w,0.1", "0,3x,512,r,0.2", "0,4,512,r,0.3"]);
        let err = read_error(&config(&file.0, "spc"), HUGE_ARRAY);
        let (line, message) = trace_error_line(&err);
        assert_eq!(line, 3);
        assert!(message.contains("bad LBA \"3x\""), "{message}");
        let shown = err.to_string();
        assert!(shown.starts_with(&format!("{}:3: ", file.0.display())), "{shown}");
    }

    #[test]
    fn blank_lines_are_skipped_but_counted() {
        let file = spc_trace(&["", "0,1,512,r,0.0", "   ", "0,2,512,q,0.1"]);
        let err = read_error(&config(&file.0, "spc"), HUGE_ARRAY);
        let (line, message) = trace_error_line(&err);
        assert_eq!(line, 4);
        assert!(message.contains("unknown opcode \"q\""), "{message}");
    }

    #[test]
    fn wrong_field_count_and_zero_size_are_trace_errors() {
        let file = TempFile::new("msr.csv", b"1,hm,0,Read,0,512,1\n2,hm,0,Read,512,1\n");
        let err = read_error(&config(&file.0, "msr"), HUGE_ARRAY);
        let (line, message) = trace_error_line(&err);
        assert_eq!((line, message), (2, "expected 7 fields (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found 6"));

        let file = spc_trace(&["0,1,0,r,0.0"]);
        let err = read_error(&config(&file.0, "spc"), HUGE_ARRAY);
        assert_eq!(trace_error_line(&err).0, 1);
    }

    #[test]
    fn a_trace_without_requests_is_an_error_naming_the_file() {
        for (contents, line) in [(&b""[..], 1), (b"\n  \n\n", 3)] {
            let file = TempFile::new("empty.spc", contents);
            let err = read_error(&config(&file.0, "spc"), HUGE_ARRAY);
            let (at, message) = trace_error_line(&err);
            assert_eq!(at, line);
            assert!(message.starts_with("the trace holds no requests"), "{message}");
        }
        // Unless none were asked for.
        let file = TempFile::new("empty.spc", b"");
        let mut cfg = config(&file.0, "spc");
        cfg.max_requests = Some(0);
        assert_eq!(read_all(&cfg, HUGE_ARRAY).unwrap().0, []);
    }

    #[test]
    fn truncated_compressed_traces_are_trace_errors_at_the_line_reached() {
        let text = generated_spc(2000);
        let (gzip, bzip2) = gzip_and_bzip2(&text);
        // gzip streams out what it has decoded before failing; one bzip2 block holds the
        // whole text, so not even line 1 can be decoded from half of it.
        for (compressed, first_line_decoded) in [(&gzip, true), (&bzip2, false)] {
            let file = TempFile::new("truncated", &compressed[..compressed.len() / 2]);
            let err = read_error(&config(&file.0, "spc"), HUGE_ARRAY);
            let (line, message) = trace_error_line(&err);
            assert!(line < 2000 && (line > 1) == first_line_decoded, "{line}");
            assert!(message.starts_with("cannot decompress the trace here"), "{message}");
        }
    }

    #[test]
    fn a_line_longer_than_a_mebibyte_is_a_trace_error() {
        let mut contents = b"0,1,512,r,0\n".to_vec();
        contents.resize(contents.len() + (1 << 20) + 10, b'0');
        let file = TempFile::new("binary.spc", &contents);
        let err = read_error(&config(&file.0, "spc"), HUGE_ARRAY);
        let (line, message) = trace_error_line(&err);
        assert_eq!(line, 2);
        assert!(message.starts_with("line longer than 1048576 bytes"), "{message}");
    }

    /// libCacheSim's oracleGeneral traces name objects, not block addresses: a run refuses
    /// one, named or found by `auto`, with an error pointing at `raidlab cache`, instead of
    /// reading its bytes as text.
    #[test]
    fn an_oracle_general_trace_is_refused_with_the_command_that_reads_it() {
        let bytes = crate::cache::trace::tests::oracle_bytes(&[(1, 7, 4096), (2, 8, 4096)]);
        let file = TempFile::new("objects.bin", &bytes);
        let err = TraceSource::open(&config(&file.0, "auto"), HUGE_ARRAY, KEY).err().unwrap();
        let (line, message) = trace_error_line(&err);
        assert_eq!(line, 1);
        assert!(message.contains("oracleGeneral") && message.contains("raidlab cache"), "{message}");
        let err = TraceSource::open(&config(&file.0, "oracleGeneral"), HUGE_ARRAY, KEY).err().unwrap().to_string();
        assert!(err.starts_with(&format!("{KEY}.format:")) && err.contains("raidlab cache"), "{err}");
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let cfg = config("/nonexistent/raidlab/trace.csv", "msr");
        assert!(matches!(TraceSource::open(&cfg, HUGE_ARRAY, KEY), Err(Error::Io { .. })));
    }

    #[test]
    fn config_mistakes_are_config_errors_naming_the_key() {
        let err =
            TraceSource::open(&config(MSR_SAMPLE, "blktrace"), HUGE_ARRAY, KEY).err().unwrap();
        let shown = err.to_string();
        assert!(shown.contains("unknown trace format \"blktrace\""), "{shown}");
        assert!(shown.contains("spc, msr, systor, tencent, csv"), "{shown}");
        assert_eq!(config_error_key(err), "workload.trace.format");

        for time_scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut cfg = config(MSR_SAMPLE, "msr");
            cfg.time_scale = time_scale;
            let err = TraceSource::open(&cfg, HUGE_ARRAY, KEY).err().unwrap();
            assert_eq!(config_error_key(err), "workload.trace.time_scale");
        }

        let err = TraceSource::open(&config(MSR_SAMPLE, "csv"), HUGE_ARRAY, KEY).err().unwrap();
        assert_eq!(config_error_key(err), "workload.trace.csv");

        let mut cfg = config(MSR_SAMPLE, "msr");
        cfg.csv = Some(CsvColumns::new(0, 1, 2, 3));
        let err = TraceSource::open(&cfg, HUGE_ARRAY, KEY).err().unwrap();
        assert_eq!(config_error_key(err), "workload.trace.csv");
    }

    #[test]
    fn registry_lists_every_format_once_with_a_description() {
        let names: Vec<&str> = trace_formats().map(|(name, _)| name).collect();
        assert_eq!(names, ["spc", "msr", "systor", "tencent", "csv", "disksim", "validate"]);
        assert!(trace_formats().all(|(_, description)| !description.is_empty()));
    }

    #[test]
    fn sizes_round_up_and_offsets_down_to_sectors() {
        // Offset 1000 B is inside sector 1; 1 B is one sector; 1025 B are three.
        let file = TempFile::new("msr.csv", b"1,hm,0,Read,1000,1,0\n2,hm,0,Write,1024,1025,0\n");
        let (records, _) = read_all(&config(&file.0, "msr"), HUGE_ARRAY).unwrap();
        assert_eq!((records[0].lba, records[0].sectors), (1, 1));
        assert_eq!((records[1].lba, records[1].sectors), (2, 3));
    }

    #[test]
    fn modulo_folding_wraps_and_keeps_requests_inside() {
        // 4096 B = 8 sectors on a 1000-sector array.
        let file =
            spc_trace(&["0,5,4096,r,0", "0,996,4096,r,1", "0,2500,4096,r,2", "0,1998,4096,r,3"]);
        let (records, _) = read_all(&config(&file.0, "spc"), 1000).unwrap();
        let lbas: Vec<u64> = records.iter().map(|r| r.lba).collect();
        // 996 and 1998 % 1000 = 998 would run past the end: moved to end at 1000.
        assert_eq!(lbas, [5, 992, 500, 992]);
    }

    #[test]
    fn scale_folding_maps_proportionally_onto_the_array() {
        // Largest end = 1992 + 8 = 2000 sectors → factor 1000 / 2000.
        let file =
            spc_trace(&["0,0,4096,r,0", "0,500,4096,r,1", "0,1000,512,r,2", "0,1992,4096,r,3"]);
        let mut cfg = config(&file.0, "spc");
        cfg.fold = FoldMode::Scale;
        let (records, _) = read_all(&cfg, 1000).unwrap();
        let lbas: Vec<u64> = records.iter().map(|r| r.lba).collect();
        assert_eq!(lbas, [0, 250, 500, 992]);
    }

    #[test]
    fn folding_keeps_every_sample_request_inside_a_small_array() {
        let capacity = 1_000_000; // 488 MiB; the MSR sample spans about 12 GB.
        for fold in [FoldMode::Modulo, FoldMode::Scale] {
            let mut cfg = config(MSR_SAMPLE, "msr");
            cfg.fold = fold;
            let (records, _) = read_all(&cfg, capacity).unwrap();
            assert_eq!(records.len(), 1000);
            assert!(records.iter().all(|r| r.lba + u64::from(r.sectors) <= capacity), "{fold:?}");
        }
    }

    #[test]
    fn reject_folding_names_the_line_that_runs_past_the_array() {
        let file = spc_trace(&["0,0,4096,r,0", "0,995,4096,r,1", "0,8,512,r,2"]);
        let mut cfg = config(&file.0, "spc");
        cfg.fold = FoldMode::Reject;
        let err = read_error(&cfg, 1000);
        let (line, message) = trace_error_line(&err);
        assert_eq!(line, 2);
        assert!(message.contains("runs past the array's 1000 sectors"), "{message}");
        // Up to the last sector is fine.
        let file = spc_trace(&["0,992,4096,r,0"]);
        let mut cfg = config(&file.0, "spc");
        cfg.fold = FoldMode::Reject;
        assert_eq!(read_all(&cfg, 1000).unwrap().0[0].lba, 992);
    }

    #[test]
    fn a_request_larger_than_the_array_is_an_error_in_every_fold_mode() {
        let file = spc_trace(&["0,0,512,r,0", "0,0,8192,w,1"]);
        for fold in [FoldMode::Modulo, FoldMode::Scale, FoldMode::Reject] {
            let mut cfg = config(&file.0, "spc");
            cfg.fold = fold;
            let err = read_error(&cfg, 8);
            let (line, message) = trace_error_line(&err);
            assert_eq!(line, 2);
            assert!(message.contains("larger than the array (8 sectors)"), "{message}");
        }
    }

    #[test]
    fn time_scale_one_half_halves_arrival_times() {
        let (full, _) = read_all(&config(MSR_SAMPLE, "msr"), HUGE_ARRAY).unwrap();
        let mut cfg = config(MSR_SAMPLE, "msr");
        cfg.time_scale = 0.5;
        let (half, _) = read_all(&cfg, HUGE_ARRAY).unwrap();
        assert_eq!(half.len(), full.len());
        for (h, f) in half.iter().zip(&full) {
            assert_eq!(h.arrival, (f.arrival as f64 / 2.0).round() as u64);
            assert_eq!((h.lba, h.sectors, h.is_write), (f.lba, f.sectors, f.is_write));
        }
        assert_eq!(half[999].arrival, 63_616_747_050);
    }

    #[test]
    fn max_requests_takes_the_first_records_of_the_file() {
        let mut cfg = config(SYSTOR_SAMPLE, "systor");
        cfg.max_requests = Some(2);
        let (records, _) = read_all(&cfg, HUGE_ARRAY).unwrap();
        // Lines 2 and 3 of the file, emitted in time order (line 3 is 6.791 ms earlier).
        assert_eq!(
            records,
            [
                TraceRecord { arrival: 0, lba: 8_312_597_631, sectors: 240, is_write: false },
                TraceRecord {
                    arrival: 6_791_000,
                    lba: 1_755_968_989,
                    sectors: 256,
                    is_write: false
                },
            ]
        );
    }

    #[test]
    fn records_are_emitted_in_time_order_within_the_window() {
        let file =
            spc_trace(&["0,1,512,r,3", "0,2,512,r,1", "0,3,512,r,2", "0,4,512,r,1", "0,5,512,r,0"]);
        let (records, clamped) = read_all(&config(&file.0, "spc"), HUGE_ARRAY).unwrap();
        let order: Vec<(u64, Nanos)> = records.iter().map(|r| (r.lba, r.arrival)).collect();
        // Equal times leave in line order.
        let s = 1_000_000_000;
        assert_eq!(order, [(5, 0), (2, s), (4, s), (3, 2 * s), (1, 3 * s)]);
        assert_eq!(clamped, 0);
    }

    /// What a min-heap window of `capacity` (time, line) keys emits for `times`, one per line:
    /// (line, emitted time) in emission order, with the number clamped.
    fn heap_window_model(times: &[u64], capacity: usize) -> (Vec<(u64, u64)>, u64) {
        let mut heap = BinaryHeap::new();
        let (mut emitted, mut last, mut clamped) = (Vec::new(), None, 0);
        let mut lines = times.iter().enumerate();
        loop {
            while heap.len() < capacity {
                let Some((index, &time)) = lines.next() else { break };
                let time = match last {
                    Some(last) if time < last => {
                        clamped += 1;
                        last
                    }
                    _ => time,
                };
                heap.push(Reverse((time, index as u64 + 1)));
            }
            let Some(Reverse((time, line))) = heap.pop() else { return (emitted, clamped) };
            last = Some(time);
            emitted.push((line, time));
        }
    }

    #[test]
    fn the_window_emits_what_a_min_heap_would_sorted_or_not() {
        let mut rng = crate::sim::RngStream::new(7, crate::sim::StreamId::Policy(0));
        for case in 0..40u64 {
            // Sorted traces, traces that step back now and then by up to `back` seconds, with
            // ties; the first case is sorted throughout, the others turn unsorted at some line.
            let lines = 1 + rng.below(300);
            let sorted_until = if case == 0 { lines } else { rng.below(lines) };
            let back = 1 + rng.below(20);
            let mut time = 100;
            let times: Vec<u64> = (0..lines)
                .map(|line| {
                    time += rng.below(3);
                    if line >= sorted_until && rng.below(4) == 0 { time.saturating_sub(rng.below(back + 1)) } else { time }
                })
                .collect();
            let text: String = times.iter().enumerate().map(|(i, t)| format!("0,{i},512,r,{t}\n")).collect();
            let file = TempFile::new("window.spc", text.as_bytes());
            let capacity = 1 + rng.below(8) as usize;
            let mut source = TraceSource::open_with_window(&config(&file.0, "spc"), HUGE_ARRAY, KEY, capacity).unwrap();
            let mut emitted = Vec::new();
            while let Some(record) = source.next_record().unwrap() {
                // The LBA is the line's index; arrivals count from the first emitted time.
                emitted.push((record.lba + 1, record.arrival));
            }
            let (expected, clamped) = heap_window_model(&times, capacity);
            let first = expected[0].1;
            let expected: Vec<(u64, u64)> =
                expected.iter().map(|&(line, t)| (line, (t - first) * 1_000_000_000)).collect();
            assert_eq!(emitted, expected, "case {case}: window {capacity}, times {times:?}");
            assert_eq!(source.clamped_records(), clamped, "case {case}");
        }
    }

    #[test]
    fn strict_order_makes_a_record_beyond_the_window_an_error_naming_its_line() {
        let file = spc_trace(&["0,1,512,r,5", "0,2,512,r,1", "0,3,512,r,2", "0,4,512,r,3", "0,5,512,r,4", "0,6,512,r,0"]);
        let mut cfg = config(&file.0, "spc");
        cfg.strict_order = true;
        let mut source = TraceSource::open_with_window(&cfg, HUGE_ARRAY, KEY, 2).unwrap();
        let err = loop {
            match source.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("expected an error"),
                Err(err) => break err,
            }
        };
        let (line, message) = trace_error_line(&err);
        assert_eq!(line, 6);
        assert!(message.starts_with("this record is 4 s earlier than one already replayed"), "{message}");
    }

    #[test]
    fn a_replay_counts_records_moved_in_time_and_folded_and_the_bytes_it_read() {
        // Line 6 steps back past a window of 2; lines 2 and 4 run past a 1000-sector array.
        let file = spc_trace(&["0,1,512,r,5", "0,995,4096,r,1", "0,3,512,r,2", "0,2000,512,r,3", "0,5,512,r,4", "0,6,512,r,0"]);
        let cfg = config(&file.0, "spc");
        let mut source = TraceSource::open_with_window(&cfg, 1000, KEY, 2).unwrap();
        let counts = source.counts();
        while source.next_record().unwrap().is_some() {}
        source.publish_counts();
        assert_eq!((counts.records(), counts.clamped(), counts.beyond_array()), (6, 1, 2));
        assert_eq!(counts.fraction_read(), 1.0);
        let warnings = counts.warnings("workload.trace");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("workload.trace: 1 of 6 records read (16.67 %) step back in time"), "{warnings:?}");
        assert!(warnings[1].starts_with("workload.trace: 2 of 6 records read (33.33 %) lie beyond the array's 1000 sectors"), "{warnings:?}");
        // A sorted trace inside the array: nothing to say.
        let file = spc_trace(&["0,1,512,r,0", "0,2,512,r,1"]);
        let mut source = TraceSource::open(&config(&file.0, "spc"), 1000, KEY).unwrap();
        while source.next_record().unwrap().is_some() {}
        source.publish_counts();
        assert!(source.counts().warnings("workload.trace").is_empty());
    }

    #[test]
    fn records_later_than_the_window_are_clamped_and_counted() {
        let file = spc_trace(&[
            "0,1,512,r,5",
            "0,2,512,r,1",
            "0,3,512,r,2",
            "0,4,512,r,3",
            "0,5,512,r,4",
            "0,6,512,r,0",
        ]);
        let cfg = config(&file.0, "spc");
        let mut source = TraceSource::open_with_window(&cfg, HUGE_ARRAY, KEY, 2).unwrap();
        let mut order = Vec::new();
        while let Some(record) = source.next_record().unwrap() {
            order.push((record.lba, record.arrival / 1_000_000_000));
        }
        // Line 6 (t = 0) arrives after t = 4 was emitted: it is emitted at t = 4.
        assert_eq!(order, [(2, 0), (3, 1), (4, 2), (5, 3), (6, 3), (1, 4)]);
        assert_eq!(source.clamped_records(), 1);
    }
}
