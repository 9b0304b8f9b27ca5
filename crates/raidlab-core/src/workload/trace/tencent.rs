//! Tencent CBS cloud block storage traces (SNIA IOTTA, Zhang et al., ATC '20).
//!
//! No header; `Timestamp,Offset,Size,IOType,VolumeID`: the time in whole epoch seconds,
//! offset and size in 512-byte sectors, IOType `0` = read and `1` = write. The volume is not
//! used: requests of every volume in the file share one address space.

use super::fields::{parse_positive_u64, parse_seconds_ns, parse_u64, scale_u64, split_exact};
use super::{LineParser, RawRecord, TraceConfig};
use crate::disk::SECTOR_BYTES;
use crate::error::Result;

const LAYOUT: &str = "Timestamp,Offset,Size,IOType,VolumeID";

/// Parser of Tencent CBS lines.
pub(crate) struct TencentParser;

/// Registry constructor.
pub(crate) fn parser(_cfg: &TraceConfig, _key: &str) -> Result<Box<dyn LineParser>> {
    Ok(Box::new(TencentParser))
}

impl LineParser for TencentParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let [timestamp, offset, size, kind, _volume] = split_exact::<5>(line, ',', LAYOUT)?;
        let time_ns = parse_seconds_ns("timestamp", timestamp)?;
        let offset_sectors = parse_u64("offset", offset)?;
        let offset_bytes = scale_u64("offset", offset, offset_sectors, SECTOR_BYTES)?;
        let size_sectors = parse_positive_u64("size", size)?;
        let size_bytes = scale_u64("size", size, size_sectors, SECTOR_BYTES)?;
        let is_write = match kind {
            "1" => true,
            "0" => false,
            other => return Err(format!("unknown IOType \"{other}\" (expected 0 or 1)")),
        };
        Ok(Some(RawRecord { time_ns, offset_bytes, size_bytes, is_write }))
    }

    fn volume<'a>(&self, line: &'a str) -> Option<&'a str> {
        super::fields_between(line, ',', 4, 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Option<RawRecord>, String> {
        TencentParser.parse_line(line)
    }

    #[test]
    fn first_sample_line_decodes_by_hand() {
        // Offset 4247200 sectors, 128 sectors (64 KiB), write, volume 1058.
        let record = parse("1538323200,4247200,128,1,1058").unwrap().unwrap();
        assert_eq!(
            record,
            RawRecord {
                time_ns: 1_538_323_200_000_000_000,
                offset_bytes: 4_247_200 * 512,
                size_bytes: 65_536,
                is_write: true,
            }
        );
        assert!(!parse("1538323199,13896880,128,0,1063").unwrap().unwrap().is_write);
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        assert!(parse("1,0,8,2,7").unwrap_err().contains("unknown IOType \"2\""));
        assert!(parse("1,0,8,1").unwrap_err().contains("expected 5 fields"));
        assert!(parse("1,0,0,1,7").unwrap_err().contains("size must be positive"));
        assert!(parse("1,0,8.5,1,7").unwrap_err().contains("bad size"));
    }
}
