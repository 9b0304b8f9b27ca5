//! Opening a trace file (with transparent gzip/bzip2) and reading it record by record.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{LineParser, RawRecord};
use crate::error::{Error, Result};

/// Read buffer of the line reader.
const READ_BUFFER_BYTES: usize = 256 * 1024;

/// Longest line read, newline included. Trace lines are tens of bytes; without a limit a
/// binary file with no newline in it would be read into memory whole.
const MAX_LINE_BYTES: u64 = 1 << 20;

/// Magic bytes at the start of a gzip member.
const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
/// Magic bytes at the start of a bzip2 stream.
const BZIP2_MAGIC: &[u8] = b"BZh";

/// A file whose bytes read are added to a shared count (a replay's progress is the share
/// of its file read). One atomic add per read of the file, which the decoders and the line
/// reader make in blocks of tens of KiB.
struct CountingFile {
    file: File,
    bytes_read: Arc<AtomicU64>,
}

impl Read for CountingFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Open `path` for buffered reading, decompressing gzip or bzip2 content (recognised by its
/// magic bytes, not the file name). Concatenated members/streams are read through.
pub(crate) fn open_decompressed(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    open_decompressed_counting(path, None)
}

/// [`open_decompressed`], adding the bytes of the file read (before decompression) to
/// `bytes_read`.
pub(crate) fn open_decompressed_counting(path: &Path, bytes_read: Option<Arc<AtomicU64>>) -> Result<Box<dyn BufRead + Send>> {
    let file = File::open(path).map_err(|err| Error::io(path, err))?;
    match bytes_read {
        Some(bytes_read) => decompressed(path, CountingFile { file, bytes_read }),
        None => decompressed(path, file),
    }
}

fn decompressed(path: &Path, mut file: impl Read + Send + 'static) -> Result<Box<dyn BufRead + Send>> {
    let mut magic = [0u8; 3];
    let sniffed = read_full(&mut file, &mut magic).map_err(|err| Error::io(path, err))?;
    let head = &magic[..sniffed];
    let is_gzip = head.starts_with(GZIP_MAGIC);
    let is_bzip2 = head.starts_with(BZIP2_MAGIC);
    // Put the sniffed bytes back in front of the rest of the file.
    let raw = Cursor::new(magic).take(sniffed as u64).chain(file);
    let content: Box<dyn Read + Send> = if is_gzip {
        Box::new(flate2::read::MultiGzDecoder::new(raw))
    } else if is_bzip2 {
        Box::new(bzip2::read::MultiBzDecoder::new(raw))
    } else {
        Box::new(raw)
    };
    Ok(Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, content)))
}

/// Reads the text lines of a trace file: blank lines and the first `skip_lines` lines are
/// passed over, every other line is checked (length, UTF-8) and trimmed.
pub(crate) struct LineReader {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    /// The last line read, its storage reused from line to line.
    line: String,
    /// Bounds of the last line's text, trimmed.
    text: (usize, usize),
    /// 1-based number of the line in `line`.
    line_number: u64,
    skip_lines: u64,
}

impl LineReader {
    pub(crate) fn open(path: &Path, skip_lines: u64) -> Result<Self> {
        Self::open_counting(path, skip_lines, None)
    }

    /// [`LineReader::open`], adding the bytes of the file read to `bytes_read`.
    pub(crate) fn open_counting(path: &Path, skip_lines: u64, bytes_read: Option<Arc<AtomicU64>>) -> Result<Self> {
        Ok(LineReader {
            path: path.to_path_buf(),
            input: open_decompressed_counting(path, bytes_read)?,
            line: String::with_capacity(256),
            text: (0, 0),
            line_number: 0,
            skip_lines,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Lines read so far (the 1-based number of the last one).
    pub(crate) fn lines_read(&self) -> u64 {
        self.line_number
    }

    /// The text of the last line [`LineReader::next_text`] returned.
    pub(crate) fn last_text(&self) -> &str {
        self.line.get(self.text.0..self.text.1).unwrap_or("")
    }

    /// A failed read of the next line. Corrupt or truncated gzip/bzip2 data (the decoders
    /// report it as invalid data or an early end of file) is a trace error at that line;
    /// anything else is the operating system's.
    fn read_error(&self, err: std::io::Error) -> Error {
        use std::io::ErrorKind::{InvalidData, InvalidInput, UnexpectedEof};
        match err.kind() {
            InvalidData | InvalidInput | UnexpectedEof => Error::trace(
                &self.path,
                self.line_number + 1,
                format!("cannot decompress the trace here (truncated or corrupt?): {err}"),
            ),
            _ => Error::io(&self.path, err),
        }
    }

    /// The next line with text, trimmed (its number is [`LineReader::lines_read`]); `None` at
    /// the end of the file.
    pub(crate) fn next_text(&mut self) -> Result<Option<&str>> {
        loop {
            // Read as bytes into the line's own storage, then take it back as text: one UTF-8
            // check, no copy.
            let mut bytes = std::mem::take(&mut self.line).into_bytes();
            bytes.clear();
            let read = (&mut self.input)
                .take(MAX_LINE_BYTES + 1)
                .read_until(b'\n', &mut bytes)
                .map_err(|err| self.read_error(err))?;
            if read == 0 {
                return Ok(None);
            }
            self.line_number += 1;
            if read as u64 > MAX_LINE_BYTES {
                return Err(Error::trace(
                    &self.path,
                    self.line_number,
                    format!("line longer than {MAX_LINE_BYTES} bytes: not a text trace?"),
                ));
            }
            if self.line_number <= self.skip_lines {
                self.line = String::from_utf8(bytes).unwrap_or_default();
                continue;
            }
            self.line = String::from_utf8(bytes).map_err(|err| {
                Error::trace(&self.path, self.line_number, format!("not UTF-8 text: {}", err.utf8_error()))
            })?;
            // The trimmed line's bounds, then the line borrowed once to return it (returning a
            // borrow taken before the test would hold it over the loop).
            let mut start = self.line.len() - self.line.trim_start().len();
            // A byte-order mark (files saved as "UTF-8 with BOM" on Windows) is not part of
            // the first line's text; Rust's trimming does not count it as space.
            if self.line_number == 1 && self.line[start..].starts_with('\u{feff}') {
                start += '\u{feff}'.len_utf8();
                start += self.line[start..].len() - self.line[start..].trim_start().len();
            }
            let end = self.line.trim_end().len().max(start);
            if start < end {
                self.text = (start, end);
                return Ok(Some(&self.line[start..end]));
            }
        }
    }
}

/// Streams the records of one trace file: each text line goes to the format's parser.
pub(crate) struct RecordReader {
    lines: LineReader,
    parser: Box<dyn LineParser>,
    max_records: Option<u64>,
    records: u64,
}

impl RecordReader {
    pub(crate) fn open(
        path: &Path,
        parser: Box<dyn LineParser>,
        skip_lines: u64,
        max_records: Option<u64>,
        bytes_read: Option<Arc<AtomicU64>>,
    ) -> Result<Self> {
        Ok(RecordReader { lines: LineReader::open_counting(path, skip_lines, bytes_read)?, parser, max_records, records: 0 })
    }

    pub(crate) fn path(&self) -> &Path {
        self.lines.path()
    }

    /// Lines read so far (the 1-based number of the last one).
    pub(crate) fn lines_read(&self) -> u64 {
        self.lines.lines_read()
    }

    /// The volume field of the last record's line, where the format has one.
    pub(crate) fn last_volume(&self) -> Option<&str> {
        self.parser.volume(self.lines.last_text())
    }

    /// The next record with its 1-based line number; `None` at the end of the file or after
    /// `max_records` records.
    pub(crate) fn next_record(&mut self) -> Result<Option<(u64, RawRecord)>> {
        if self.max_records.is_some_and(|max| self.records >= max) {
            return Ok(None);
        }
        while let Some(text) = self.lines.next_text()? {
            match self.parser.parse_line(text) {
                Ok(Some(record)) => {
                    self.records += 1;
                    return Ok(Some((self.lines.lines_read(), record)));
                }
                Ok(None) => continue,
                Err(message) => return Err(Error::trace(self.lines.path(), self.lines.lines_read(), message)),
            }
        }
        Ok(None)
    }
}

/// Fill `buf` as far as the input goes (an interrupted read is tried again); the bytes read.
pub(super) fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}
