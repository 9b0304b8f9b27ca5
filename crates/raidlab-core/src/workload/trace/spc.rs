//! SPC ASCII traces (UMass trace repository: Financial1/2, WebSearch1/2/3).
//!
//! One request a line, `ASU,LBA,Size,Opcode,Timestamp[,…]`: the application storage unit
//! (ignored: every ASU shares one address space), the address in 512-byte sectors, the size
//! in bytes, the opcode `r`/`w` (either case) and the time in seconds from the trace start.
//! Fields after the fifth are ignored. Example: `0,303567,3584,w,0.000000`.

use super::fields::{parse_positive_u64, parse_seconds_ns, parse_u64, scale_u64, split_at_least};
use super::{LineParser, RawRecord, TraceConfig};
use crate::disk::SECTOR_BYTES;
use crate::error::Result;

const LAYOUT: &str = "ASU,LBA,Size,Opcode,Timestamp";

/// Parser of SPC ASCII lines.
pub(crate) struct SpcParser;

/// Registry constructor.
pub(crate) fn parser(_cfg: &TraceConfig, _key: &str) -> Result<Box<dyn LineParser>> {
    Ok(Box::new(SpcParser))
}

impl LineParser for SpcParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let [_asu, lba, size, opcode, timestamp] = split_at_least::<5>(line, ',', LAYOUT)?;
        let lba_sectors = parse_u64("LBA", lba)?;
        let offset_bytes = scale_u64("LBA", lba, lba_sectors, SECTOR_BYTES)?;
        let size_bytes = parse_positive_u64("size", size)?;
        let is_write = match opcode {
            "w" | "W" => true,
            "r" | "R" => false,
            other => return Err(format!("unknown opcode \"{other}\" (expected r or w)")),
        };
        let time_ns = parse_seconds_ns("timestamp", timestamp)?;
        Ok(Some(RawRecord { time_ns, offset_bytes, size_bytes, is_write }))
    }

    fn volume<'a>(&self, line: &'a str) -> Option<&'a str> {
        super::fields_between(line, ',', 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Option<RawRecord>, String> {
        SpcParser.parse_line(line)
    }

    #[test]
    fn financial1_first_line_decodes_by_hand() {
        // LBA 303567 sectors = 155426304 bytes; 3584 bytes; write; t = 0.
        let record = parse("0,303567,3584,w,0.000000").unwrap().unwrap();
        assert_eq!(
            record,
            RawRecord { time_ns: 0, offset_bytes: 155_426_304, size_bytes: 3584, is_write: true }
        );
    }

    #[test]
    fn opcode_is_case_insensitive_and_extra_fields_are_ignored() {
        let record = parse("1,8,512,R,1.25,extra,fields").unwrap().unwrap();
        assert!(!record.is_write);
        assert_eq!(record.time_ns, 1_250_000_000);
        assert!(parse("1,8,512,W,0").unwrap().unwrap().is_write);
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        assert!(parse("0,1,512,x,0").unwrap_err().contains("unknown opcode \"x\""));
        assert!(parse("0,1,512,r").unwrap_err().contains("expected at least 5 fields"));
        assert!(parse("0,1,0,r,0").unwrap_err().contains("size must be positive"));
        assert!(parse("0,1,-512,r,0").unwrap_err().contains("negative"));
        assert!(parse("0,abc,512,r,0").unwrap_err().contains("bad LBA"));
        assert!(parse("0,1,512,r,soon").unwrap_err().contains("bad timestamp"));
    }
}
