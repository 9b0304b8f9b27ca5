//! libCacheSim's `oracleGeneral` binary trace format, plain or zstd-compressed (told by the
//! zstd magic bytes): 24-byte little-endian records of `u32` timestamp (s), `u64` object id,
//! `u32` object size (bytes) and `i64` next access (ignored). `trace info` summarises such a
//! file record by record ([`OracleRecords`]); the cache simulator reads it in batches of
//! block requests (`cache::trace`), through the same reader ([`OracleReader`]).
//!
//! A file is taken for `oracleGeneral` when its name says so (libCacheSim's own names:
//! `….oracleGeneral`, `….oracleGeneral.bin.zst`, …), when it is zstd-compressed, or when its
//! first 4 KiB hold a NUL byte (text traces hold none, and gzip and bzip2 files are
//! recognised first).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::input::read_full;
use crate::error::{Error, Result};

/// The name of libCacheSim's binary format.
pub const ORACLE_GENERAL: &str = "oracleGeneral";

/// Bytes of one `oracleGeneral` record.
pub const ORACLE_RECORD_BYTES: usize = 24;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const BZIP2_MAGIC: &[u8] = b"BZh";

/// Bytes looked at to tell a binary file from a text one.
pub(crate) const SNIFF_BYTES: usize = 4096;

/// `oracleGeneral` or not, from the file's name and first bytes (module docs).
pub(crate) fn detect(path: &Path) -> Result<String> {
    let name = path.file_name().map(|name| name.to_string_lossy().to_lowercase()).unwrap_or_default();
    if name.contains(&ORACLE_GENERAL.to_lowercase()) {
        return Ok(ORACLE_GENERAL.to_string());
    }
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    File::open(path)
        .and_then(|file| file.take(SNIFF_BYTES as u64).read_to_end(&mut head))
        .map_err(|err| Error::io(path, err))?;
    let binary = if head.starts_with(&ZSTD_MAGIC) {
        true
    } else if head.starts_with(&GZIP_MAGIC) || head.starts_with(BZIP2_MAGIC) {
        false
    } else {
        head.contains(&0)
    };
    Ok(if binary { ORACLE_GENERAL.to_string() } else { "auto".to_string() })
}

/// Whether `format = "auto"` reads the file at `path` as `oracleGeneral` (module docs).
pub fn is_oracle_general(path: &Path) -> Result<bool> {
    Ok(detect(path)? == ORACLE_GENERAL)
}

/// One record of an `oracleGeneral` file as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OracleRecord {
    /// 1-based number of the record in the file.
    pub number: u64,
    /// Timestamp, s.
    pub time_s: u32,
    /// Object id.
    pub object: u64,
    /// Object size, bytes (0: libCacheSim and the cache skip the record).
    pub size: u32,
}

/// The records of an `oracleGeneral` file (plain or zstd), one by one: what `trace info`
/// summarises. Text and gzip/bzip2 files are refused as the cache's reader refuses them.
pub struct OracleRecords {
    reader: OracleReader,
}

impl OracleRecords {
    /// Open `path`, reading at most `max_records` records.
    pub fn open(path: &Path, max_records: Option<u64>) -> Result<Self> {
        Ok(OracleRecords { reader: OracleReader::open(path, max_records)? })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.reader.path
    }

    /// The next record; `None` at the end (or after `max_records`).
    pub fn next_record(&mut self) -> Result<Option<OracleRecord>> {
        let reader = &mut self.reader;
        if reader.max_records.is_some_and(|max| reader.records >= max) {
            return Ok(None);
        }
        if reader.start == reader.end && !reader.refill()? {
            return Ok(None);
        }
        let record = &reader.buffer[reader.start..reader.start + ORACLE_RECORD_BYTES];
        let parsed = OracleRecord {
            number: reader.records + 1,
            time_s: u32::from_le_bytes(record[0..4].try_into().expect("4 bytes")),
            object: u64::from_le_bytes(record[4..12].try_into().expect("8 bytes")),
            size: u32::from_le_bytes(record[12..16].try_into().expect("4 bytes")),
        };
        reader.start += ORACLE_RECORD_BYTES;
        reader.records += 1;
        Ok(Some(parsed))
    }
}

/// A reader that adds the bytes it reads to a shared count (the progress of a file).
struct Counting<R> {
    inner: R,
    bytes_read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Records of an `oracleGeneral` file.
pub struct OracleReader {
    pub(crate) path: PathBuf,
    input: Box<dyn Read + Send>,
    bytes_read: Arc<AtomicU64>,
    file_bytes: u64,
    /// Raw records read into memory at once.
    pub(crate) buffer: Vec<u8>,
    /// Records in `buffer` not yet used: `buffer[start..end]`.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) first_time_s: Option<u32>,
    pub(crate) records: u64,
    pub(crate) max_records: Option<u64>,
    exhausted: bool,
}

/// Records read from the file at once.
const ORACLE_RECORDS_PER_READ: usize = 1 << 14;

impl OracleReader {
    /// Open `path`, reading at most `max_records` records.
    pub fn open(path: &Path, max_records: Option<u64>) -> Result<Self> {
        let file = File::open(path).map_err(|err| Error::io(path, err))?;
        let file_bytes = file.metadata().map_err(|err| Error::io(path, err))?.len();
        let bytes_read = Arc::new(AtomicU64::new(0));
        let mut counted = BufReader::with_capacity(1 << 20, Counting { inner: file, bytes_read: bytes_read.clone() });
        let mut magic = [0u8; 4];
        let sniffed = read_full(&mut counted, &mut magic).map_err(|err| Error::io(path, err))?;
        let raw = std::io::Cursor::new(magic).take(sniffed as u64).chain(counted);
        let compression = if magic.starts_with(&GZIP_MAGIC) {
            Some("gzip")
        } else if magic.starts_with(BZIP2_MAGIC) {
            Some("bzip2")
        } else {
            None
        };
        if let Some(compression) = compression {
            return Err(not_oracle_general(
                path,
                &format!("it is {compression}-compressed, and an oracleGeneral file is read plain or zstd-compressed"),
            ));
        }
        let input: Box<dyn Read + Send> = if sniffed == 4 && magic == ZSTD_MAGIC {
            Box::new(zstd::stream::read::Decoder::new(raw).map_err(|err| Error::io(path, err))?)
        } else {
            Box::new(raw)
        };
        Ok(OracleReader {
            path: path.to_path_buf(),
            input,
            bytes_read,
            file_bytes,
            buffer: vec![0; ORACLE_RECORDS_PER_READ * ORACLE_RECORD_BYTES],
            start: 0,
            end: 0,
            first_time_s: None,
            records: 0,
            max_records,
            exhausted: false,
        })
    }

    /// The share of the file read, in [0, 1].
    pub fn fraction_read(&self) -> f64 {
        if self.file_bytes == 0 {
            return 1.0;
        }
        (self.bytes_read.load(Ordering::Relaxed) as f64 / self.file_bytes as f64).min(1.0)
    }

    /// Refill the buffer; false at the end of the file.
    pub(crate) fn refill(&mut self) -> Result<bool> {
        if self.exhausted {
            return Ok(false);
        }
        let filled = read_full(&mut self.input, &mut self.buffer).map_err(|err| Error::io(&self.path, err))?;
        if self.records == 0 && self.start == 0 && self.end == 0 && looks_like_text(&self.buffer[..filled.min(SNIFF_BYTES)]) {
            return Err(not_oracle_general(
                &self.path,
                "its first bytes are text (a block trace?), while an oracleGeneral file is binary 24-byte records",
            ));
        }
        let whole = filled / ORACLE_RECORD_BYTES * ORACLE_RECORD_BYTES;
        if filled < self.buffer.len() {
            self.exhausted = true;
            if whole != filled {
                let record = self.records + (whole / ORACLE_RECORD_BYTES) as u64 + 1;
                return Err(Error::trace(
                    &self.path,
                    record,
                    format!(
                        "record {record} is cut short: {} of its {ORACLE_RECORD_BYTES} bytes (an oracleGeneral file is a whole number of 24-byte records)",
                        filled - whole
                    ),
                ));
            }
        }
        self.start = 0;
        self.end = whole;
        Ok(whole > 0)
    }

}

/// Share of printable ASCII (and tab, CR, LF) from which a file's first bytes are text: a
/// record of an `oracleGeneral` file holds the zero bytes of small numbers and the 0xff of
/// -1, so it is far below.
const TEXT_SHARE: f64 = 0.9;

/// Whether `head`, a file's first bytes, is text rather than binary records.
fn looks_like_text(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    let printable = head.iter().filter(|&&b| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r')).count();
    printable as f64 >= TEXT_SHARE * head.len() as f64
}

/// The error for a file read as `oracleGeneral` that is not: names the file and `why`.
fn not_oracle_general(path: &Path, why: &str) -> Error {
    Error::trace(
        path,
        1,
        format!(
            "not an oracleGeneral trace: {why}; read it with its own format, or with format auto, which tells the \
             block formats from their first lines"
        ),
    )
}


