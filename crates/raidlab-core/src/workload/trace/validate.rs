//! DiskSim `validate` traces: a real drive's requests with the service time it measured.
//!
//! One request a line, six whitespace-separated fields (DiskSim 4.0,
//! `iotrace_validate_get_ioreq_event` in `disksim_iotrace.c`):
//!
//! ```text
//! R|W  Hit|Miss|Doub|Trip  LBN  block_count  measured_service_time_us  next_interarrival_us
//! R Hit   17317516   4  13661.00000  26658.00000
//! ```
//!
//! * the operation, `R` or `W` (upper case, as DiskSim requires);
//! * a buffer label that DiskSim only counts (`Hit`, `Miss`, `Doub`, `Trip`; any other is an
//!   error there and here) — the newer traces label every line `Hit`;
//! * the first 512-byte block and the number of blocks;
//! * the time the real drive took, µs (decimal);
//! * the gap DiskSim leaves before issuing the **next** line's request, µs (decimal).
//!
//! **Timing.** As a `workload.trace` this format gives request k the time
//! `t[0] = 0`, `t[k+1] = t[k] + next_interarrival_us[k]`, the gaps laid end to end. That is
//! *not* how DiskSim replays it: DiskSim fetches line k+1 when request k completes and issues
//! it `next_interarrival_us[k]` later — a closed loop with one request outstanding and the
//! gaps as think times. `[workload.arrival] process = "closed"`, `outstanding = 1`,
//! `think_from_trace = true` reproduces that exactly from these times (the think time before
//! request k+1 is `t[k+1] − t[k]`), and it is what `api::validate_toml` uses. The two differ
//! whenever a gap is shorter than the request before it: in the HP and DEC traces that is
//! about half of the lines, and laid end to end their gaps would load the drive beyond 100 %.
//!
//! [`read_validate_trace`] returns every line with its measured time and buffer label, for
//! the validator to compare with the simulation.

use std::io::BufRead;
use std::path::Path;

use super::fields::{parse_decimal_e9, parse_positive_u64, parse_u64, split_whitespace_exact};
use super::input::open_decompressed;
use super::{LineParser, RawRecord, TraceConfig};
use crate::disk::SECTOR_BYTES;
use crate::error::{Error, Result};
use crate::sim::Nanos;

const LAYOUT: &str = "R|W Hit|Miss LBN block_count measured_service_time_us next_interarrival_us";

/// The buffer label of a validate line. DiskSim counts these and nothing else; they do not
/// change how a request is simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferAction {
    /// `Hit`.
    Hit,
    /// `Miss`.
    Miss,
    /// `Doub` (HP C2247A writes).
    Double,
    /// `Trip` (HP C2247A writes).
    Triple,
}

impl BufferAction {
    /// The label as written in the trace.
    pub fn label(self) -> &'static str {
        match self {
            BufferAction::Hit => "Hit",
            BufferAction::Miss => "Miss",
            BufferAction::Double => "Doub",
            BufferAction::Triple => "Trip",
        }
    }
}

/// One line of a validate trace, in raidlab's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidateRequest {
    /// 1-based line number in the file.
    pub line: u64,
    /// Write (true) or read (false).
    pub is_write: bool,
    /// The buffer label.
    pub buffer: BufferAction,
    /// First 512-byte block.
    pub lbn: u64,
    /// Number of 512-byte blocks (at least 1).
    pub blocks: u64,
    /// The time the real drive took, ns (truncated below 1 ns).
    pub measured_ns: Nanos,
    /// The gap before the next line's request, ns (truncated below 1 ns).
    pub next_interarrival_ns: Nanos,
}

/// The fields of one line.
struct Fields {
    is_write: bool,
    buffer: BufferAction,
    lbn: u64,
    blocks: u64,
    measured_ns: Nanos,
    next_interarrival_ns: Nanos,
    /// The gap exactly as written, in femtoseconds (10⁻⁹ µs), so that sums of gaps are exact.
    next_interarrival_fs: u128,
}

/// Femtoseconds (10⁻⁹ µs) per nanosecond.
const FS_PER_NS: u128 = 1_000_000;

/// Microseconds with up to nine decimals, as femtoseconds and as whole nanoseconds (truncated).
fn parse_microseconds(name: &str, text: &str) -> Result<(u128, Nanos), String> {
    let fs = parse_decimal_e9(name, text)?;
    let ns = Nanos::try_from(fs / FS_PER_NS)
        .map_err(|_| format!("{name} \"{text}\" is out of range"))?;
    Ok((fs, ns))
}

fn parse_fields(line: &str) -> Result<Fields, String> {
    let [operation, buffer, lbn, blocks, measured, next_interarrival] = split_whitespace_exact::<6>(line, LAYOUT)?;
    let is_write = match operation {
        "R" => false,
        "W" => true,
        other => return Err(format!("unknown operation \"{other}\" (expected R or W)")),
    };
    let buffer = match buffer {
        "Hit" => BufferAction::Hit,
        "Miss" => BufferAction::Miss,
        "Doub" => BufferAction::Double,
        "Trip" => BufferAction::Triple,
        other => {
            return Err(format!(
                "unknown buffer label \"{other}\" (expected Hit, Miss, Doub or Trip)"
            ))
        }
    };
    let lbn = parse_u64("LBN", lbn)?;
    let blocks_count = parse_positive_u64("block count", blocks)?;
    lbn.checked_mul(SECTOR_BYTES)
        .and_then(|offset| {
            blocks_count
                .checked_mul(SECTOR_BYTES)
                .map(|size| (offset, size))
        })
        .ok_or_else(|| format!("request at LBN {lbn} of {blocks} blocks is out of range"))?;
    let (_, measured_ns) = parse_microseconds("measured service time", measured)?;
    let (next_interarrival_fs, next_interarrival_ns) =
        parse_microseconds("next inter-arrival time", next_interarrival)?;
    Ok(Fields {
        is_write,
        buffer,
        lbn,
        blocks: blocks_count,
        measured_ns,
        next_interarrival_ns,
        next_interarrival_fs,
    })
}

/// Parser of validate lines: times are the inter-arrival gaps laid end to end (module docs).
pub(crate) struct ValidateParser {
    /// Time of the next line's request since the first, femtoseconds (exact sum of the gaps).
    next_time_fs: u128,
}

/// Registry constructor.
pub(crate) fn parser(_cfg: &TraceConfig, _key: &str) -> Result<Box<dyn LineParser>> {
    Ok(Box::new(ValidateParser { next_time_fs: 0 }))
}

impl LineParser for ValidateParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let fields = parse_fields(line)?;
        let time_ns = Nanos::try_from(self.next_time_fs / FS_PER_NS)
            .map_err(|_| "the sum of the inter-arrival times is out of range".to_string())?;
        self.next_time_fs += fields.next_interarrival_fs;
        Ok(Some(RawRecord {
            time_ns,
            offset_bytes: fields.lbn * SECTOR_BYTES,
            size_bytes: fields.blocks * SECTOR_BYTES,
            is_write: fields.is_write,
        }))
    }
}

/// Every request of a validate trace with its measured time, in file order. Blank lines are
/// skipped (but counted); gzip and bzip2 are read transparently. A malformed line is an
/// [`Error::Trace`] naming the file and the line.
pub fn read_validate_trace(path: &Path) -> Result<Vec<ValidateRequest>> {
    let mut input = open_decompressed(path)?;
    let mut requests = Vec::new();
    let mut text = String::new();
    let mut line = 0u64;
    loop {
        text.clear();
        let read = input.read_line(&mut text).map_err(|err| match err.kind() {
            std::io::ErrorKind::InvalidData => {
                Error::trace(path, line + 1, format!("not UTF-8 text: {err}"))
            }
            _ => Error::io(path, err),
        })?;
        if read == 0 {
            return Ok(requests);
        }
        line += 1;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            continue;
        }
        let fields = parse_fields(trimmed).map_err(|message| Error::trace(path, line, message))?;
        requests.push(ValidateRequest {
            line,
            is_write: fields.is_write,
            buffer: fields.buffer,
            lbn: fields.lbn,
            blocks: fields.blocks,
            measured_ns: fields.measured_ns,
            next_interarrival_ns: fields.next_interarrival_ns,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{config, TempFile};
    use super::super::{TraceRecord, TraceSource};
    use super::*;

    const IBM18ES_TRACE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/diskspecs/ibm18es.trace"
    );

    fn parse_all(lines: &[&str]) -> Result<Vec<RawRecord>, String> {
        let mut parser = ValidateParser { next_time_fs: 0 };
        lines
            .iter()
            .map(|line| parser.parse_line(line).map(Option::unwrap))
            .collect()
    }

    #[test]
    fn ibm18es_trace_has_ten_thousand_requests_and_decodes_line_one() {
        let requests = read_validate_trace(Path::new(IBM18ES_TRACE)).unwrap();
        assert_eq!(requests.len(), 10_000);
        // Line 1: "R Hit   17317516   4  13661.00000  26658.00000".
        assert_eq!(
            requests[0],
            ValidateRequest {
                line: 1,
                is_write: false,
                buffer: BufferAction::Hit,
                lbn: 17_317_516,
                blocks: 4,
                measured_ns: 13_661_000,
                next_interarrival_ns: 26_658_000,
            }
        );
        // The published measured mean is 5.26 ms (README of the drive specs).
        let mean_ms = requests.iter().map(|r| r.measured_ns as f64).sum::<f64>()
            / requests.len() as f64
            / 1e6;
        assert!((mean_ms - 5.26).abs() < 0.005, "{mean_ms}");
        assert_eq!(requests.iter().filter(|r| r.is_write).count(), 3418);
        assert!(requests.iter().all(|r| r.buffer == BufferAction::Hit));
        assert_eq!(requests.last().unwrap().line, 10_000);
    }

    #[test]
    fn as_a_workload_trace_the_gaps_are_laid_end_to_end() {
        let mut source = TraceSource::open(
            &config(IBM18ES_TRACE, "validate"),
            1 << 40,
            "workload.trace",
        )
        .unwrap();
        let first = source.next_record().unwrap().unwrap();
        let second = source.next_record().unwrap().unwrap();
        let third = source.next_record().unwrap().unwrap();
        assert_eq!(
            first,
            TraceRecord {
                arrival: 0,
                lba: 17_317_516,
                sectors: 4,
                is_write: false
            }
        );
        // Line 2: "R Hit   12475148   4  13225.00000  48203.00000", 26.658 ms after line 1.
        assert_eq!(
            second,
            TraceRecord {
                arrival: 26_658_000,
                lba: 12_475_148,
                sectors: 4,
                is_write: false
            }
        );
        assert_eq!(third.arrival, 26_658_000 + 48_203_000);
        let mut count = 3;
        while source.next_record().unwrap().is_some() {
            count += 1;
        }
        assert_eq!((count, source.clamped_records()), (10_000, 0));
    }

    #[test]
    fn fractional_microseconds_add_up_exactly() {
        // dec_rz26 style: six decimals of a microsecond. 0.4 + 0.6 µs = exactly 1000 ns.
        let records = parse_all(&[
            "R Hit 547163 12 18228.000000 20935.440364",
            "W Hit 25805 43 28803.000000 0.000400",
            "W Hit 25848 43 23134.000000 0.000600",
            "R Miss 1 1 1.0 1.0",
        ])
        .unwrap();
        let times: Vec<u64> = records.iter().map(|r| r.time_ns).collect();
        assert_eq!(times, [0, 20_935_440, 20_935_440, 20_935_441]);
        assert_eq!(
            (records[1].offset_bytes, records[1].size_bytes),
            (25_805 * 512, 43 * 512)
        );
        assert!(records[1].is_write);
    }

    #[test]
    fn every_buffer_label_of_disksim_is_accepted() {
        for (label, action) in [
            ("Hit", BufferAction::Hit),
            ("Miss", BufferAction::Miss),
            ("Doub", BufferAction::Double),
            ("Trip", BufferAction::Triple),
        ] {
            let fields = parse_fields(&format!("W {label} 1 2 3.5 4")).unwrap();
            assert_eq!(fields.buffer, action);
            assert_eq!(action.label(), label);
        }
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let error = |line: &str| parse_fields(line).err().unwrap();
        assert_eq!(
            error("R Hit 1 4 100.0"),
            format!("expected 6 fields ({LAYOUT}), found 5")
        );
        assert!(error("R Hit 1 4 100.0 5 7").contains("found 7"));
        assert!(error("r Hit 1 4 100.0 5").contains("unknown operation \"r\""));
        assert!(error("R Hot 1 4 100.0 5").contains("unknown buffer label \"Hot\""));
        assert!(error("R Hit -1 4 100.0 5").contains("LBN must not be negative"));
        assert!(error("R Hit 1 0 100.0 5").contains("block count must be positive"));
        assert!(error("R Hit 1 4 fast 5").contains("bad measured service time \"fast\""));
        assert!(
            error("R Hit 1 4 100.0 -5").contains("next inter-arrival time must not be negative")
        );
        assert!(error("R Hit 36028797018963968 4 1 1").contains("out of range"));
    }

    #[test]
    fn a_malformed_line_is_a_trace_error_naming_file_and_line() {
        let file = TempFile::new(
            "bad.trace",
            b"R Hit 1 4 100.0 5\n\nW Hit 2 4 100.0\nR Hit 3 4 100.0 5\n",
        );
        for error in [read_validate_trace(&file.0).unwrap_err(), {
            let mut source =
                TraceSource::open(&config(&file.0, "validate"), 1 << 40, "workload.trace").unwrap();
            std::iter::from_fn(|| source.next_record().transpose())
                .find_map(Result::err)
                .unwrap()
        }] {
            match &error {
                Error::Trace { line, message, .. } => {
                    assert_eq!(*line, 3);
                    assert!(message.contains("expected 6 fields"), "{message}");
                }
                other => panic!("expected a trace error, got {other}"),
            }
            assert!(error
                .to_string()
                .starts_with(&format!("{}:3: ", file.0.display())));
        }
    }

    #[test]
    fn a_missing_file_is_an_io_error() {
        let error = read_validate_trace(Path::new("/nonexistent/raidlab/x.trace")).unwrap_err();
        assert!(matches!(error, Error::Io { .. }), "{error}");
    }
}
