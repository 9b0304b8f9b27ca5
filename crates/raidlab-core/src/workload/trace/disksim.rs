//! DiskSim's default trace format (`ascii`; DiskSim 4.0 manual §4.1.1).
//!
//! One request a line, five whitespace-separated fields:
//!
//! ```text
//! arrival_ms  device  block  blocks  flags
//! 12.250000   0       303567 8       1
//! ```
//!
//! * the arrival time, in milliseconds (decimal) from the start of the simulation;
//! * the device number: not used, every device shares one address space (as SPC's ASU);
//! * the first block and the size in blocks, 512-byte blocks (the access unit of a drive);
//! * the flags, hexadecimal (with or without `0x`): bit 0 set is a read, clear a write; the
//!   other bits (priority and the like, in DiskSim's `disksim_global.h`) are not used.
//!
//! DiskSim requires ascending arrival times; raidlab, as for every format, puts a trace that
//! steps back in order through its reorder window.

use super::fields::{parse_decimal_e9, parse_positive_u64, parse_u64, scale_u64, split_whitespace_exact};
use super::{LineParser, RawRecord, TraceConfig};
use crate::disk::SECTOR_BYTES;
use crate::error::Result;

const LAYOUT: &str = "arrival_ms device block blocks flags";

/// `parse_decimal_e9` of a millisecond value gives picoseconds.
const PS_PER_NS: u128 = 1_000;

/// Parser of DiskSim ASCII lines.
pub(crate) struct DisksimParser;

/// Registry constructor.
pub(crate) fn parser(_cfg: &TraceConfig, _key: &str) -> Result<Box<dyn LineParser>> {
    Ok(Box::new(DisksimParser))
}

impl LineParser for DisksimParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let [time, device, block, blocks, flags] = split_whitespace_exact::<5>(line, LAYOUT)?;
        let time_ps = parse_decimal_e9("arrival time", time)?;
        // In 64 bits when it fits (a multiply, where a 128-bit division is a library call).
        let time_ns = match u64::try_from(time_ps) {
            Ok(ps) => ps / PS_PER_NS as u64,
            Err(_) => u64::try_from(time_ps / PS_PER_NS).map_err(|_| format!("arrival time \"{time}\" is out of range"))?,
        };
        parse_u64("device number", device)?;
        let offset_bytes = scale_u64("block", block, parse_u64("block", block)?, SECTOR_BYTES)?;
        let size_bytes = scale_u64("size", blocks, parse_positive_u64("size", blocks)?, SECTOR_BYTES)?;
        let hex = flags.strip_prefix("0x").or_else(|| flags.strip_prefix("0X")).unwrap_or(flags);
        let flags = u32::from_str_radix(hex, 16)
            .ok()
            .filter(|_| !hex.starts_with('+'))
            .ok_or_else(|| format!("bad flags \"{flags}\": expected a hexadecimal number (bit 0: 1 read, 0 write)"))?;
        Ok(Some(RawRecord { time_ns, offset_bytes, size_bytes, is_write: flags & 1 == 0 }))
    }

    /// The device number.
    fn volume<'a>(&self, line: &'a str) -> Option<&'a str> {
        line.split_ascii_whitespace().nth(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Option<RawRecord>, String> {
        DisksimParser.parse_line(line)
    }

    #[test]
    fn a_line_decodes_by_hand() {
        // 12.25 ms = 12,250,000 ns; block 303567 × 512 = 155,426,304 bytes; 8 blocks; read.
        let record = parse("12.250000 0 303567 8 1").unwrap().unwrap();
        assert_eq!(
            record,
            RawRecord { time_ns: 12_250_000, offset_bytes: 155_426_304, size_bytes: 4096, is_write: false }
        );
        // Bit 0 clear is a write, whatever the other bits; tabs separate as well as spaces.
        assert!(parse("0\t3\t0\t1\t0").unwrap().unwrap().is_write);
        assert!(parse("0 0 0 1 0x10").unwrap().unwrap().is_write);
        assert!(!parse("0 0 0 1 1f").unwrap().unwrap().is_write);
        // Sub-nanosecond digits are truncated.
        assert_eq!(parse("0.0000019 0 0 1 1").unwrap().unwrap().time_ns, 1);
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        assert!(parse("0 0 0 1").unwrap_err().contains("expected 5 fields (arrival_ms device block blocks flags)"));
        assert!(parse("0 0 0 1 1 7").unwrap_err().contains("found 6"));
        assert!(parse("0,0,0,1,1").unwrap_err().contains("found 1"));
        assert!(parse("0 0 0 0 1").unwrap_err().contains("size must be positive"));
        assert!(parse("0 0 -8 1 1").unwrap_err().contains("block must not be negative"));
        assert!(parse("soon 0 0 1 1").unwrap_err().contains("bad arrival time"));
        assert!(parse("0 a 0 1 1").unwrap_err().contains("bad device number"));
        assert!(parse("0 0 0 1 R").unwrap_err().contains("bad flags \"R\""));
        assert!(parse("0 0 0 1 +1").unwrap_err().contains("bad flags"));
        assert!(parse("0 0 36028797018963968 1 1").unwrap_err().contains("out of range"));
    }
}
