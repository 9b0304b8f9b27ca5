//! Systor '17 enterprise VDI traces (SNIA IOTTA, Lee et al., SYSTOR '17).
//!
//! A header line `Timestamp,Response,IOType,LUN,Offset,Size`, then one request a line: the
//! time in epoch seconds with a fractional part (parsed exactly to the nanosecond), the
//! response time (not used), `R`/`W` (either case), the LUN (not used: every LUN shares one
//! address space), offset and size in bytes. The header is recognised by its first field
//! `Timestamp` and may be absent (a file split from a larger trace).

use super::fields::{parse_positive_u64, parse_seconds_ns, parse_u64, split_exact};
use super::{LineParser, RawRecord, TraceConfig};
use crate::error::Result;

const LAYOUT: &str = "Timestamp,Response,IOType,LUN,Offset,Size";

/// Parser of Systor '17 lines.
pub(crate) struct SystorParser {
    /// Whether a line has been seen (only the first may be the header).
    past_first_line: bool,
}

/// Registry constructor.
pub(crate) fn parser(_cfg: &TraceConfig, _key: &str) -> Result<Box<dyn LineParser>> {
    Ok(Box::new(SystorParser { past_first_line: false }))
}

impl LineParser for SystorParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let [timestamp, _response, kind, _lun, offset, size] = split_exact::<6>(line, ',', LAYOUT)?;
        if !std::mem::replace(&mut self.past_first_line, true)
            && timestamp.eq_ignore_ascii_case("timestamp")
        {
            return Ok(None);
        }
        let time_ns = parse_seconds_ns("timestamp", timestamp)?;
        let is_write = match kind {
            "W" | "w" => true,
            "R" | "r" => false,
            other => return Err(format!("unknown IOType \"{other}\" (expected R or W)")),
        };
        let offset_bytes = parse_u64("offset", offset)?;
        let size_bytes = parse_positive_u64("size", size)?;
        Ok(Some(RawRecord { time_ns, offset_bytes, size_bytes, is_write }))
    }

    /// The LUN.
    fn volume<'a>(&self, line: &'a str) -> Option<&'a str> {
        super::fields_between(line, ',', 3, 3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> SystorParser {
        SystorParser { past_first_line: false }
    }

    #[test]
    fn header_is_skipped_and_first_sample_line_decodes_by_hand() {
        let mut parser = fresh();
        assert_eq!(parser.parse_line("Timestamp,Response,IOType,LUN,Offset,Size"), Ok(None));
        let record =
            parser.parse_line("1456095145.133076000,0.000806000,R,0,899056122368,131072").unwrap();
        assert_eq!(
            record,
            Some(RawRecord {
                time_ns: 1_456_095_145_133_076_000,
                offset_bytes: 899_056_122_368,
                size_bytes: 131_072,
                is_write: false,
            })
        );
    }

    #[test]
    fn header_is_optional_but_only_allowed_first() {
        let mut parser = fresh();
        assert!(parser.parse_line("1.5,0.1,W,0,512,512").unwrap().unwrap().is_write);
        assert!(parser
            .parse_line("Timestamp,Response,IOType,LUN,Offset,Size")
            .unwrap_err()
            .contains("bad timestamp"));
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let mut parser = fresh();
        parser.past_first_line = true;
        assert!(parser.parse_line("1.5,0.1,X,0,512,512").unwrap_err().contains("unknown IOType"));
        assert!(parser.parse_line("1.5,0.1,R,0,512").unwrap_err().contains("expected 6 fields"));
        assert!(parser.parse_line("1.5,0.1,R,0,512,0").unwrap_err().contains("positive"));
        assert!(parser.parse_line("-1.5,0.1,R,0,512,512").unwrap_err().contains("negative"));
    }
}
