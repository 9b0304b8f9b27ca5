//! Traces as the cache sees them: a stream of 4 KiB block requests.
//!
//! * **libCacheSim's `oracleGeneral`** binary traces (`workload::trace::oracle_general`),
//!   plain or zstd-compressed: 24-byte little-endian records of `u32` timestamp (s), `u64` object
//!   id, `u32` object size (bytes) and `i64` next access (ignored). Each record is one
//!   request for the block numbered by its object id: a cache slot per object, whatever its
//!   size, as libCacheSim counts with `ignore_obj_size`. Records of size 0 are skipped, as
//!   libCacheSim's reader skips them by default.
//! * **Every block-trace format raidlab reads** (`workload::trace`: SPC, MSR Cambridge,
//!   Systor '17, Tencent CBS, DiskSim, CSV; gzip/bzip2), in time order through its reorder
//!   window. A request touches every 4 KiB block from its first byte's to its last's
//!   (`offset / 4096` …); each is one block request, at the request's time (VDF-Sim "slices
//!   the trace records into block requests", §5). Addresses are kept as they are (no
//!   folding).
//!
//! `format = "auto"` reads `oracleGeneral` when the file name says so (libCacheSim's own
//! names: `….oracleGeneral`, `….oracleGeneral.bin.zst`, …), when the file is
//! zstd-compressed, or when its first 4 KiB hold a NUL byte (text traces hold none, and
//! gzip and bzip2 files are recognised first); otherwise the block formats' own detection.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::placement::BLOCK_SECTORS;
use crate::error::{Error, Result};
use crate::workload::trace::oracle_general::{detect, OracleReader};
pub use crate::workload::trace::oracle_general::{is_oracle_general, OracleRecord, OracleRecords, ORACLE_GENERAL, ORACLE_RECORD_BYTES};
use crate::workload::trace::{trace_formats, CsvColumns, FoldMode, TraceConfig, TraceSource};

/// The trace of a cache simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheTraceConfig {
    /// Trace file.
    pub path: PathBuf,
    /// `auto`, `oracleGeneral`, or any block-trace format of `workload.trace.format`.
    #[serde(default = "auto")]
    pub format: String,
    /// Column mapping of a `csv` trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<CsvColumns>,
    /// Read only the first N records of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_records: Option<u64>,
}

fn auto() -> String {
    "auto".to_string()
}

/// A batch of block requests, as columns.
#[derive(Debug, Default, Clone)]
pub struct Batch {
    /// Block numbers.
    pub blocks: Vec<u64>,
    /// Times since the trace's first record, ns.
    pub times_ns: Vec<u64>,
    /// Whether each request is a write.
    pub writes: Vec<bool>,
}

impl Batch {
    /// Requests in the batch.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }
    /// Whether the batch holds no request.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
    fn clear(&mut self) {
        self.blocks.clear();
        self.times_ns.clear();
        self.writes.clear();
    }
    fn push(&mut self, block: u64, time_ns: u64, is_write: bool) {
        self.blocks.push(block);
        self.times_ns.push(time_ns);
        self.writes.push(is_write);
    }
}

/// Counts of what a trace held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TraceTally {
    /// Records (lines, or binary records) read.
    pub records: u64,
    /// Block requests handed to the caches.
    pub requests: u64,
    /// Of which writes.
    pub writes: u64,
    /// Write block requests left out (`writes = "skip"`).
    pub writes_skipped: u64,
    /// `oracleGeneral` records of size 0, skipped.
    pub size_zero_skipped: u64,
}

/// A trace opened for the cache.
pub struct CacheTrace {
    reader: Reader,
    format: String,
    skip_writes: bool,
    tally: TraceTally,
}

enum Reader {
    Oracle(OracleReader),
    Block(BlockReader),
}

impl CacheTrace {
    /// Open `cfg`'s trace; `skip_writes` leaves write requests out. Errors name `key`.
    pub fn open(cfg: &CacheTraceConfig, skip_writes: bool, key: &str) -> Result<Self> {
        let known = || trace_formats().any(|(name, _)| name == cfg.format);
        let format = match cfg.format.as_str() {
            "auto" => detect(&cfg.path)?,
            ORACLE_GENERAL => ORACLE_GENERAL.to_string(),
            _ if known() => cfg.format.clone(),
            other => {
                let names: Vec<&str> = trace_formats().map(|(name, _)| name).collect();
                return Err(Error::config(
                    format!("{key}.format"),
                    format!("unknown trace format \"{other}\"; known formats: {ORACLE_GENERAL}, {}, or auto", names.join(", ")),
                ));
            }
        };
        let (reader, format) = if format == ORACLE_GENERAL {
            if cfg.csv.is_some() {
                return Err(Error::config(format!("{key}.csv"), "a column mapping is only used with format = \"csv\""));
            }
            (Reader::Oracle(OracleReader::open(&cfg.path, cfg.max_records)?), format)
        } else {
            // Built through serde, so that keys this module does not know keep their defaults.
            let mut table = serde_json::json!({ "path": cfg.path, "format": format, "time_scale": 1.0, "fold": FoldMode::Modulo });
            if let Some(csv) = &cfg.csv {
                table["csv"] = serde_json::to_value(csv).expect("a column mapping serializes");
            }
            if let Some(max) = cfg.max_records {
                table["max_requests"] = max.into();
            }
            let trace: TraceConfig = serde_json::from_value(table).map_err(|err| Error::config(key, err.to_string()))?;
            let source = TraceSource::open(&trace, u64::MAX, key)?;
            (Reader::Block(BlockReader { source, pending: None }), trace.format)
        };
        Ok(CacheTrace { reader, format, skip_writes, tally: TraceTally::default() })
    }

    /// The format read: `oracleGeneral`, a block format named in the configuration, or
    /// `auto` for a block trace whose format the block readers detected.
    pub fn format(&self) -> &str {
        &self.format
    }

    /// What has been read so far.
    pub fn tally(&self) -> TraceTally {
        self.tally
    }

    /// The share of the file read, in [0, 1] (NaN when unknown: text traces).
    pub fn fraction_read(&self) -> f64 {
        match &self.reader {
            Reader::Oracle(oracle) => oracle.fraction_read(),
            Reader::Block(_) => f64::NAN,
        }
    }

    /// Replace `batch` with the next block requests, at most `limit` (at least 1); an empty
    /// batch at the end of the trace.
    pub fn next_batch(&mut self, batch: &mut Batch, limit: usize) -> Result<()> {
        batch.clear();
        let limit = limit.max(1);
        while batch.len() < limit {
            let before = batch.len();
            let more = match &mut self.reader {
                Reader::Oracle(oracle) => read_oracle(oracle, batch, limit, &mut self.tally)?,
                Reader::Block(block) => block.read(batch, limit, self.skip_writes, &mut self.tally)?,
            };
            self.tally.requests += (batch.len() - before) as u64;
            if !more {
                break;
            }
        }
        self.tally.writes += batch.writes.iter().filter(|&&write| write).count() as u64;
        Ok(())
    }
}


/// Append requests to `batch` up to `limit`; false at the end of the trace.
fn read_oracle(reader: &mut OracleReader, batch: &mut Batch, limit: usize, tally: &mut TraceTally) -> Result<bool> {
    while batch.len() < limit {
        if reader.max_records.is_some_and(|max| reader.records >= max) {
            return Ok(false);
        }
        if reader.start == reader.end && !reader.refill()? {
            return Ok(false);
        }
        let mut room = limit - batch.len();
        if let Some(max) = reader.max_records {
            room = room.min((max - reader.records) as usize);
        }
        let available = (reader.end - reader.start) / ORACLE_RECORD_BYTES;
        let take = room.min(available);
        let chunk = &reader.buffer[reader.start..reader.start + take * ORACLE_RECORD_BYTES];
        for record in chunk.chunks_exact(ORACLE_RECORD_BYTES) {
            let time_s = u32::from_le_bytes(record[0..4].try_into().expect("4 bytes"));
            let object = u64::from_le_bytes(record[4..12].try_into().expect("8 bytes"));
            let size = u32::from_le_bytes(record[12..16].try_into().expect("4 bytes"));
            if size == 0 {
                tally.size_zero_skipped += 1;
                continue;
            }
            let first = *reader.first_time_s.get_or_insert(time_s);
            // Times before the first record's (an unsorted file) count as its time.
            let since_first = u64::from(time_s.saturating_sub(first)) * 1_000_000_000;
            batch.push(object, since_first, false);
        }
        reader.start += take * ORACLE_RECORD_BYTES;
        reader.records += take as u64;
        tally.records += take as u64;
    }
    Ok(true)
}

/// Requests of a block trace, cut into blocks.
struct BlockReader {
    source: TraceSource,
    /// The request being cut: its next block, its last block, time, write.
    pending: Option<(u64, u64, u64, bool)>,
}

impl BlockReader {
    fn read(&mut self, batch: &mut Batch, limit: usize, skip_writes: bool, tally: &mut TraceTally) -> Result<bool> {
        while batch.len() < limit {
            let (next, last, time_ns, is_write) = match self.pending.take() {
                Some(pending) => pending,
                None => {
                    let Some(record) = self.source.next_record()? else {
                        return Ok(false);
                    };
                    tally.records += 1;
                    let first = record.lba / BLOCK_SECTORS;
                    let last = (record.lba + u64::from(record.sectors) - 1) / BLOCK_SECTORS;
                    if record.is_write && skip_writes {
                        tally.writes_skipped += last - first + 1;
                        continue;
                    }
                    (first, last, record.arrival, record.is_write)
                }
            };
            let room = (limit - batch.len()) as u64;
            let end = last.min(next + room - 1);
            for block in next..=end {
                batch.push(block, time_ns, is_write);
            }
            if end < last {
                self.pending = Some((end + 1, last, time_ns, is_write));
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::workload::trace::tests::TempFile;
    use std::path::Path;

    /// An `oracleGeneral` file's bytes for (time s, object, size).
    pub(crate) fn oracle_bytes(records: &[(u32, u64, u32)]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for &(time, object, size) in records {
            bytes.extend_from_slice(&time.to_le_bytes());
            bytes.extend_from_slice(&object.to_le_bytes());
            bytes.extend_from_slice(&size.to_le_bytes());
            bytes.extend_from_slice(&(-1i64).to_le_bytes());
        }
        bytes
    }

    fn config(path: &Path, format: &str) -> CacheTraceConfig {
        CacheTraceConfig { path: path.to_path_buf(), format: format.into(), csv: None, max_records: None }
    }

    fn read_all(cfg: &CacheTraceConfig, skip_writes: bool, limit: usize) -> Result<(Batch, TraceTally, String)> {
        let mut trace = CacheTrace::open(cfg, skip_writes, "cache.trace")?;
        let mut all = Batch::default();
        let mut batch = Batch::default();
        loop {
            trace.next_batch(&mut batch, limit)?;
            if batch.is_empty() {
                break;
            }
            assert!(batch.len() <= limit);
            all.blocks.extend(&batch.blocks);
            all.times_ns.extend(&batch.times_ns);
            all.writes.extend(&batch.writes);
        }
        Ok((all, trace.tally(), trace.format().to_string()))
    }

    #[test]
    fn oracle_general_plain_and_zstd_read_the_same_requests() {
        let records = [(100, 7, 4096), (100, 8, 4096), (101, 7, 0), (103, u64::MAX - 1, 512)];
        let plain = TempFile::new("cache-plain.bin", &oracle_bytes(&records));
        let compressed = zstd::stream::encode_all(&oracle_bytes(&records)[..], 3).unwrap();
        let zstd_file = TempFile::new("cache-compressed.bin", &compressed);
        for (file, format) in [(&plain, "auto"), (&zstd_file, "auto"), (&plain, ORACLE_GENERAL)] {
            for limit in [1, 2, 100] {
                let (batch, tally, detected) = read_all(&config(&file.0, format), false, limit).unwrap();
                assert_eq!(detected, ORACLE_GENERAL);
                assert_eq!(batch.blocks, [7, 8, u64::MAX - 1]);
                assert_eq!(batch.times_ns, [0, 0, 3_000_000_000]);
                assert_eq!(tally, TraceTally { records: 4, requests: 3, writes: 0, writes_skipped: 0, size_zero_skipped: 1 });
            }
        }
    }

    #[test]
    fn a_cut_record_is_an_error_naming_the_file_and_record() {
        let mut bytes = oracle_bytes(&[(1, 1, 1), (2, 2, 2)]);
        bytes.truncate(24 + 10);
        let file = TempFile::new("cache-cut.oracleGeneral.bin", &bytes);
        let err = read_all(&config(&file.0, "auto"), false, 10).unwrap_err();
        match err {
            Error::Trace { line, message, .. } => {
                assert_eq!(line, 2);
                assert!(message.contains("10 of its 24 bytes"), "{message}");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn a_text_or_gzip_file_read_as_oracle_general_is_an_error_naming_it() {
        // 48 bytes of CSV: two whole "records", which were read as binary requests.
        let text = b"0.000,123456,4096,R\n0.001,654321,4096,W\n12345678";
        assert_eq!(text.len(), 2 * ORACLE_RECORD_BYTES);
        let file = TempFile::new("cache-text-as-oracle.csv", text);
        let gz = TempFile::new("cache-gz-as-oracle.bin", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
        for (file, why) in [(&file, "its first bytes are text"), (&gz, "it is gzip-compressed")] {
            match read_all(&config(&file.0, ORACLE_GENERAL), false, 10).unwrap_err() {
                Error::Trace { file: named, message, .. } => {
                    assert_eq!(named, file.0);
                    assert!(message.starts_with("not an oracleGeneral trace: ") && message.contains(why), "{message}");
                }
                other => panic!("{other}"),
            }
        }
        // Real records are far from text, even with printable times and ids.
        let records: Vec<(u32, u64, u32)> = (0..200).map(|i| (0x4141_4141, 0x4242_4242_4242_4242 + i, 0x4343_4343)).collect();
        let file = TempFile::new("cache-printable.oracleGeneral", &oracle_bytes(&records));
        assert_eq!(read_all(&config(&file.0, ORACLE_GENERAL), false, 1000).unwrap().1.records, 200);
    }

    #[test]
    fn max_records_stops_the_oracle_reader() {
        let file = TempFile::new("cache-max.oracleGeneral", &oracle_bytes(&[(1, 1, 1), (2, 2, 2), (3, 3, 3)]));
        let mut cfg = config(&file.0, "auto");
        cfg.max_records = Some(2);
        let (batch, tally, _) = read_all(&cfg, false, 1).unwrap();
        assert_eq!((batch.blocks, tally.records), (vec![1, 2], 2));
    }

    #[test]
    fn block_traces_are_cut_into_4k_blocks_and_writes_can_be_skipped() {
        // SPC: LBA in sectors, size in bytes. Sector 7 + 4096 bytes spans blocks 0 and 1;
        // sector 16, 1 byte: block 2; a write of 3 blocks from sector 800 (block 100).
        let text = "0,7,4096,r,0.5\n0,16,1,R,1.0\n0,800,12288,w,2.0\n";
        let file = TempFile::new("cache-blocks.spc", text.as_bytes());
        for limit in [1, 2, 64] {
            let (batch, tally, format) = read_all(&config(&file.0, "spc"), false, limit).unwrap();
            assert_eq!(format, "spc");
            assert_eq!(batch.blocks, [0, 1, 2, 100, 101, 102]);
            assert_eq!(batch.times_ns, [0, 0, 500_000_000, 1_500_000_000, 1_500_000_000, 1_500_000_000]);
            assert_eq!(batch.writes, [false, false, false, true, true, true]);
            assert_eq!((tally.records, tally.requests, tally.writes), (3, 6, 3));
            let (batch, tally, _) = read_all(&config(&file.0, "auto"), true, limit).unwrap();
            assert_eq!(batch.blocks, [0, 1, 2]);
            assert_eq!((tally.writes_skipped, tally.writes), (3, 0));
        }
    }

    #[test]
    fn unknown_formats_and_missing_files_are_reported() {
        let file = TempFile::new("cache-text.csv", b"0,1,512,r,0\n");
        let err = CacheTrace::open(&config(&file.0, "parquet"), false, "cache.trace").err().unwrap().to_string();
        assert!(err.starts_with("cache.trace.format: unknown trace format \"parquet\"; known formats: oracleGeneral, spc"), "{err}");
        let err = CacheTrace::open(&config(Path::new("/nonexistent/x.oracleGeneral"), "auto"), false, "cache.trace")
            .err()
            .unwrap();
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }
}
