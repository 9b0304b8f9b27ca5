//! MSR Cambridge traces (SNIA IOTTA, Narayanan et al., FAST '08).
//!
//! No header; `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`: the time in
//! Windows filetime (100 ns ticks since 1601-01-01), `Read`/`Write` (any case), offset and
//! size in bytes. Hostname, disk number and response time are not used (nor checked).

use super::fields::{parse_positive_u64, parse_u64, split_exact};
use super::{LineParser, RawRecord, TraceConfig};
use crate::error::Result;

const LAYOUT: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

/// Nanoseconds in one Windows filetime tick.
const NS_PER_FILETIME_TICK: u64 = 100;

/// Parser of MSR Cambridge lines.
pub(crate) struct MsrParser;

/// Registry constructor.
pub(crate) fn parser(_cfg: &TraceConfig, _key: &str) -> Result<Box<dyn LineParser>> {
    Ok(Box::new(MsrParser))
}

impl LineParser for MsrParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let [timestamp, _host, _disk, kind, offset, size, _response] =
            split_exact::<7>(line, ',', LAYOUT)?;
        let ticks = parse_u64("timestamp", timestamp)?;
        // Nanoseconds since 1601 fit in u64 until the year 2185.
        let time_ns = ticks
            .checked_mul(NS_PER_FILETIME_TICK)
            .ok_or_else(|| format!("timestamp \"{timestamp}\" is out of range"))?;
        let is_write = if kind.eq_ignore_ascii_case("write") {
            true
        } else if kind.eq_ignore_ascii_case("read") {
            false
        } else {
            return Err(format!("unknown type \"{kind}\" (expected Read or Write)"));
        };
        let offset_bytes = parse_u64("offset", offset)?;
        let size_bytes = parse_positive_u64("size", size)?;
        Ok(Some(RawRecord { time_ns, offset_bytes, size_bytes, is_write }))
    }

    /// Host name and disk number together.
    fn volume<'a>(&self, line: &'a str) -> Option<&'a str> {
        super::fields_between(line, ',', 1, 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Option<RawRecord>, String> {
        MsrParser.parse_line(line)
    }

    #[test]
    fn first_sample_line_decodes_by_hand() {
        let record = parse("128166385295514663,hm,0,Write,9056014336,2048,2833").unwrap().unwrap();
        assert_eq!(
            record,
            RawRecord {
                time_ns: 12_816_638_529_551_466_300,
                offset_bytes: 9_056_014_336,
                size_bytes: 2048,
                is_write: true,
            }
        );
        assert!(!parse("1,hm,0,Read,0,512,1").unwrap().unwrap().is_write);
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        assert!(parse("1,hm,0,Trim,0,512,1").unwrap_err().contains("unknown type \"Trim\""));
        assert!(parse("1,hm,0,Read,0,512").unwrap_err().contains("expected 7 fields"));
        assert!(parse("1,hm,0,Read,0,512,1,9").unwrap_err().contains("found 8"));
        assert!(parse("1,hm,0,Read,0,0,1").unwrap_err().contains("size must be positive"));
        assert!(parse("1,hm,0,Read,x0,512,1").unwrap_err().contains("bad offset"));
        assert!(parse("999999999999999999,hm,0,Read,0,512,1")
            .unwrap_err()
            .contains("out of range"));
    }
}
