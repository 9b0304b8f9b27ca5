//! Block-trace readers: streaming, with transparent gzip/bzip2, one file per format.
//!
//! A trace is read once, line by line, through a pipeline that keeps at most
//! [`REORDER_WINDOW`] requests in memory:
//!
//! ```text
//!  file ─▶ gzip/bzip2? ─▶ lines ─▶ format parser ─▶ RawRecord ─▶ sectors + folding ─┐
//!  (magic bytes)          (one reused buffer;   (spc.rs, msr.rs, …;   (offset, size in  │
//!                          blank lines skipped)  one registry line)    bytes, time ns)  │
//!                                                                                      ▼
//!  TraceRecord ◀─ arrival = (t − t_first) × time_scale ◀─ reorder window (min-heap by
//!                                                          (time, line); late records
//!                                                          are clamped and counted)
//! ```
//!
//! * **Formats.** Each format is one file with a [`LineParser`] that turns one line into a
//!   [`RawRecord`] (time in ns from the format's own origin, offset and size in bytes), and
//!   one line of the registry [`TRACE_FORMATS`], which `TraceConfig.format` is resolved
//!   against.
//! * **Order.** Real traces are not sorted (Systor '17 steps back by milliseconds, Tencent
//!   CBS by whole seconds). Records enter a min-heap of [`REORDER_WINDOW`] records keyed by
//!   (time, line number) and leave it in time order. A record older than one already emitted
//!   is *clamped* to the last emitted time and counted ([`TraceSource::clamped_records`]), so
//!   arrival times never decrease.
//! * **Addresses.** Offsets are rounded down to a 512-byte sector, sizes up to whole sectors
//!   (at least one). [`FoldMode`] brings addresses beyond the array onto it; a request larger
//!   than the whole array is an error.
//! * [`stats`] summarises a trace in one streaming pass over the raw records.

mod csv;
mod fields;
mod input;
mod msr;
mod spc;
mod summary;
mod systor;
mod tencent;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::disk::SECTOR_BYTES;
use crate::error::{Error, Result};
use crate::sim::Nanos;
use input::RecordReader;

pub use summary::stats;

/// One request of a block trace in raidlab's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time relative to the first record of the trace (the earliest one, which is
    /// the first emitted), ns, after time scaling.
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
    /// Format: `spc`, `msr`, `systor`, `tencent` or `csv` (see [`trace_formats`]).
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
}

/// Builds a format's parser from the config (`key` is the config key path for errors).
type ParserConstructor = fn(&TraceConfig, &str) -> Result<Box<dyn LineParser>>;

/// One trace format: the name used in `TraceConfig.format`, its parser, and a one-line
/// description.
struct TraceFormat {
    name: &'static str,
    parser: ParserConstructor,
    description: &'static str,
}

/// The registry of trace formats. Adding a format = one file with a [`LineParser`] + one line.
#[rustfmt::skip]
const TRACE_FORMATS: &[TraceFormat] = &[
    TraceFormat { name: "spc", parser: spc::parser, description: "SPC ASCII (UMass Financial, WebSearch): ASU,LBA,Size,Opcode,Timestamp; sectors, bytes, r/w, seconds" },
    TraceFormat { name: "msr", parser: msr::parser, description: "MSR Cambridge: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime; filetime, Read/Write, bytes" },
    TraceFormat { name: "systor", parser: systor::parser, description: "Systor '17 VDI: header, Timestamp,Response,IOType,LUN,Offset,Size; epoch seconds, R/W, bytes" },
    TraceFormat { name: "tencent", parser: tencent::parser, description: "Tencent CBS: Timestamp,Offset,Size,IOType,VolumeID; epoch seconds, sectors, 0 read / 1 write" },
    TraceFormat { name: "csv", parser: csv::parser, description: "generic delimited text, columns and units given by the `csv` mapping" },
];

/// The known trace formats as (name, one-line description), in registry order.
pub fn trace_formats() -> impl Iterator<Item = (&'static str, &'static str)> {
    TRACE_FORMATS.iter().map(|format| (format.name, format.description))
}

/// Check the config and build the line parser of its format.
fn resolve_parser(cfg: &TraceConfig, key: &str) -> Result<Box<dyn LineParser>> {
    let Some(format) = TRACE_FORMATS.iter().find(|format| format.name == cfg.format) else {
        let known: Vec<&str> = TRACE_FORMATS.iter().map(|format| format.name).collect();
        return Err(Error::config(
            format!("{key}.format"),
            format!("unknown trace format \"{}\"; known formats: {}", cfg.format, known.join(", ")),
        ));
    };
    if cfg.csv.is_some() && format.name != "csv" {
        return Err(Error::config(
            format!("{key}.csv"),
            format!("a column mapping is only used with format = \"csv\", not \"{}\"", format.name),
        ));
    }
    (format.parser)(cfg, key)
}

/// Open the trace's records (parsed, not yet converted to the array).
fn open_records(cfg: &TraceConfig, key: &str) -> Result<RecordReader> {
    let parser = resolve_parser(cfg, key)?;
    let skip_lines = parser.skip_lines();
    RecordReader::open(&cfg.path, parser, skip_lines, cfg.max_requests)
}

/// Records held back to put an unsorted trace in time order (see the module docs).
pub const REORDER_WINDOW: usize = 4096;

/// First sector and length in sectors of a raw record: the offset rounded down to a sector,
/// the size rounded up to whole sectors.
fn to_sectors(raw: &RawRecord) -> Result<(u64, u32), String> {
    let lba = raw.offset_bytes / SECTOR_BYTES;
    let sectors = raw.size_bytes.div_ceil(SECTOR_BYTES).max(1);
    let sectors = u32::try_from(sectors).map_err(|_| {
        format!(
            "request of {} bytes is larger than raidlab models (2^32 − 1 sectors)",
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

/// A streaming source of trace records brought onto an array of `capacity_sectors`.
///
/// Applies, in order: `max_requests` (the first N records of the file); conversion to
/// sectors and folding; the reorder window; time relative to the first emitted record,
/// multiplied by `time_scale`. Memory is bounded by [`REORDER_WINDOW`] records.
pub struct TraceSource {
    records: RecordReader,
    folder: Folder,
    time_scale: f64,
    window: BinaryHeap<Reverse<Pending>>,
    window_capacity: usize,
    exhausted: bool,
    /// Raw time of the first emitted record (arrival 0).
    first_time_ns: Option<u64>,
    /// Raw time of the last emitted record.
    last_emitted_ns: Option<u64>,
    clamped: u64,
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
        if !(cfg.time_scale.is_finite() && cfg.time_scale > 0.0) {
            return Err(Error::config(
                format!("{key}.time_scale"),
                format!("expected a positive finite factor, got {}", cfg.time_scale),
            ));
        }
        if capacity_sectors == 0 {
            return Err(Error::config(key, "the array has no capacity to replay the trace on"));
        }
        let mut records = open_records(cfg, key)?;
        let largest_end = match cfg.fold {
            FoldMode::Scale => largest_end_sector(&mut records)?,
            FoldMode::Modulo | FoldMode::Reject => 0,
        };
        if cfg.fold == FoldMode::Scale {
            records = open_records(cfg, key)?;
        }
        let window_capacity = window_capacity.max(1);
        Ok(TraceSource {
            records,
            folder: Folder { mode: cfg.fold, capacity: capacity_sectors, largest_end },
            time_scale: cfg.time_scale,
            window: BinaryHeap::with_capacity(window_capacity + 1),
            window_capacity,
            exhausted: false,
            first_time_ns: None,
            last_emitted_ns: None,
            clamped: 0,
        })
    }

    /// The next record in arrival order, `None` at the end; errors name file and line.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>> {
        while !self.exhausted && self.window.len() < self.window_capacity {
            match self.records.next_record()? {
                Some((line, raw)) => self.admit(line, raw)?,
                None => self.exhausted = true,
            }
        }
        let Some(Reverse(next)) = self.window.pop() else {
            return Ok(None);
        };
        let first = *self.first_time_ns.get_or_insert(next.time_ns);
        self.last_emitted_ns = Some(next.time_ns);
        Ok(Some(TraceRecord {
            arrival: self.scaled(next.time_ns - first),
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
        let lba = self.folder.fold(lba, sectors).map_err(|m| Error::trace(path, line, m))?;
        let mut time_ns = raw.time_ns;
        if let Some(last) = self.last_emitted_ns.filter(|&last| time_ns < last) {
            time_ns = last;
            self.clamped += 1;
        }
        self.window.push(Reverse(Pending { time_ns, line, lba, sectors, is_write: raw.is_write }));
        Ok(())
    }

    /// A time since the first record, scaled by `time_scale`.
    fn scaled(&self, since_first_ns: u64) -> Nanos {
        if self.time_scale == 1.0 {
            since_first_ns
        } else {
            (since_first_ns as f64 * self.time_scale).round() as Nanos
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
    pub requests: u64,
    pub read_fraction: f64,
    pub mean_size_bytes: f64,
    pub duration_s: f64,
    pub iops: f64,
    pub footprint_bytes: u64,
    pub locality_hot20: f64,
}
