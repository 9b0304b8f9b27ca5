//! Telling a trace's format from its first lines (`format = "auto"`, the default).
//!
//! The first [`SNIFF_LINES`] non-blank lines are read through the same line reader as a replay
//! (decompression, line-length limit, UTF-8 check), then offered to the parser of every
//! format that needs no further configuration. A format fits when it accepts every one of
//! those lines and finds at least one request in them. The formats' layouts are disjoint on
//! real traces (field counts, and the words or digits that say read or write), so exactly one
//! fits; none or several is an error that names the file, shows its first line and asks for
//! `format`.

use super::input::LineReader;
use super::{LineParser, TraceConfig, TRACE_FORMATS};
use crate::error::{Error, Result};

/// The `format` value that asks for detection.
pub const AUTO: &str = "auto";

/// Non-blank lines offered to each format.
const SNIFF_LINES: usize = 32;

/// How a format's parser took the first lines: how many it accepted before the first it
/// refused (all of them when it refused none), and that refusal (the line's index among the
/// lines offered, and what was wrong).
struct Attempt {
    accepted: usize,
    requests: usize,
    refused: Option<(usize, String)>,
}

impl Attempt {
    /// The parser accepts every line and finds a request in at least one.
    fn fits(&self) -> bool {
        self.refused.is_none() && self.requests > 0
    }
}

/// Offer `lines` to `parser`, up to the first it refuses.
fn attempt(mut parser: Box<dyn LineParser>, lines: &[String]) -> Attempt {
    let mut requests = 0;
    for (index, line) in lines.iter().enumerate() {
        match parser.parse_line(line) {
            Ok(Some(_)) => requests += 1,
            Ok(None) => {}
            Err(message) => return Attempt { accepted: index, requests, refused: Some((index, message)) },
        }
    }
    Attempt { accepted: lines.len(), requests, refused: None }
}

/// The name of the format of the trace at `cfg.path` (`key`: the config key path of the
/// trace table, for errors).
pub(crate) fn detect(cfg: &TraceConfig, key: &str) -> Result<&'static str> {
    let mut reader = LineReader::open(&cfg.path, 0)?;
    let mut lines = Vec::with_capacity(SNIFF_LINES);
    // The file's line number of each line offered (blank lines are skipped).
    let mut numbers = Vec::with_capacity(SNIFF_LINES);
    while lines.len() < SNIFF_LINES {
        match reader.next_text()? {
            Some(text) => lines.push(text.to_string()),
            None => break,
        }
        numbers.push(reader.lines_read());
    }
    let Some(first) = lines.first() else {
        return Err(Error::trace(
            &cfg.path,
            reader.lines_read().max(1),
            format!(
                "the trace holds no requests ({} lines, all blank), so its format cannot be told",
                reader.lines_read()
            ),
        ));
    };
    let mut fitting = Vec::new();
    // The format that read furthest before refusing a line (the first such on a tie).
    let mut closest: Option<(&str, Attempt)> = None;
    for format in TRACE_FORMATS.iter().filter(|format| !format.needs_configuration) {
        let candidate = TraceConfig { format: format.name.to_string(), ..cfg.clone() };
        let tried = attempt((format.parser)(&candidate, key)?, &lines);
        if tried.fits() {
            fitting.push(format.name);
        } else if closest.as_ref().is_none_or(|(_, best)| tried.accepted > best.accepted) {
            closest = Some((format.name, tried));
        }
    }
    let tried: Vec<&str> =
        TRACE_FORMATS.iter().filter(|format| !format.needs_configuration).map(|format| format.name).collect();
    let shown: String = first.chars().take(120).collect();
    match fitting.as_slice() {
        [name] => Ok(name),
        [] => {
            // Say why the closest format refused: often a near miss (a header, a stray
            // value) that a user can fix, rather than another layout.
            let why = match &closest {
                Some((name, Attempt { refused: Some((index, message)), .. })) => format!(
                    "; closest: {name}, which read {index} line{} and then refused {}:{}: {message}",
                    if *index == 1 { "" } else { "s" },
                    cfg.path.display(),
                    numbers[*index],
                ),
                _ => String::new(),
            };
            Err(Error::config(
                format!("{key}.format"),
                format!(
                    "{}: the first {} lines fit none of the formats {} (first line: \"{shown}\"){why}; \
                     set `format`, with \"csv\" and a column mapping for other layouts",
                    cfg.path.display(),
                    lines.len(),
                    tried.join(", ")
                ),
            ))
        }
        several => Err(Error::config(
            format!("{key}.format"),
            format!(
                "{}: the first {} lines fit several formats ({}); set `format` to the right one",
                cfg.path.display(),
                lines.len(),
                several.join(", ")
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{config, TempFile, MSR_SAMPLE, SYSTOR_SAMPLE, TENCENT_SAMPLE};
    use super::super::{stats, CsvColumns};
    use super::*;

    const KEY: &str = "workload.trace";
    const VALIDATE_SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/diskspecs/atlas10k.trace");

    #[test]
    fn every_sample_is_told_by_its_first_lines() {
        let spc = TempFile::new("financial.txt", b"0,303567,3584,w,0.000000\n1,55590,3072,r,0.000000\n");
        let disksim = TempFile::new("t.ascii", b"0.000000 0 303567 8 1\n12.5 0 55590 6 0\n");
        for (path, format) in [
            (MSR_SAMPLE, "msr"),
            (SYSTOR_SAMPLE, "systor"),
            (TENCENT_SAMPLE, "tencent"),
            (VALIDATE_SAMPLE, "validate"),
            (spc.0.to_str().unwrap(), "spc"),
            (disksim.0.to_str().unwrap(), "disksim"),
        ] {
            assert_eq!(detect(&config(path, AUTO), KEY).unwrap(), format, "{path}");
            // Detection is what a replay with the format named would read.
            let auto = stats(&config(path, AUTO)).unwrap();
            let named = stats(&config(path, format)).unwrap();
            assert_eq!(auto, named, "{path}");
            assert_eq!(auto.format, format);
        }
    }

    /// A file saved with a UTF-8 byte-order mark reads as the same file without it: the mark
    /// is not the first line's text (it was read as part of its first field).
    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        let plain = std::fs::read(MSR_SAMPLE).unwrap();
        let marked = TempFile::new("bom.csv", &[b"\xef\xbb\xbf".as_slice(), &plain].concat());
        assert_eq!(detect(&config(&marked.0, AUTO), KEY).unwrap(), "msr");
        let with_mark = stats(&config(&marked.0, AUTO)).unwrap();
        let without = stats(&config(MSR_SAMPLE, AUTO)).unwrap();
        assert_eq!(with_mark, without);
    }

    #[test]
    fn a_layout_no_format_fits_asks_for_the_format_and_shows_the_first_line() {
        let file = TempFile::new("odd.csv", b"\n\n12.5;read;4096;8\n13.0;write;0;8\n");
        let err = detect(&config(&file.0, AUTO), KEY).unwrap_err().to_string();
        assert!(err.starts_with("workload.trace.format: "), "{err}");
        assert!(err.contains("the first 2 lines fit none of the formats spc, msr, systor, tencent, disksim, validate"), "{err}");
        assert!(err.contains("(first line: \"12.5;read;4096;8\")"), "{err}");
        // One line of another format among good ones is enough to rule a format out; the
        // error names the closest format and the line, with file and number, it refused.
        let mixed = TempFile::new("mixed.spc", b"0,303567,3584,w,0.000000\n\n1538323200,4247200,128,1,1058\n");
        let err = detect(&config(&mixed.0, AUTO), KEY).unwrap_err().to_string();
        assert!(err.contains("fit none of the formats"), "{err}");
        let refused = format!("closest: spc, which read 1 line and then refused {}:3: unknown opcode \"1\"", mixed.0.display());
        assert!(err.contains(&refused), "{err}");
    }

    #[test]
    fn an_empty_trace_has_no_format_to_tell() {
        let file = TempFile::new("empty.spc", b"\n  \n");
        let err = detect(&config(&file.0, AUTO), KEY).unwrap_err();
        assert!(err.to_string().contains("the trace holds no requests (2 lines, all blank)"), "{err}");
    }

    #[test]
    fn a_column_mapping_means_csv_without_reading_the_file() {
        let file = TempFile::new("mapped.csv", b"0.5,4096,8192,W\n");
        let mut cfg = config(&file.0, AUTO);
        cfg.csv = Some(CsvColumns::new(0, 1, 2, 3));
        let summary = stats(&cfg).unwrap();
        assert_eq!((summary.format, summary.requests), ("csv", 1));
    }

    #[test]
    fn the_format_defaults_to_auto() {
        let cfg: TraceConfig = toml::from_str(&format!("path = \"{MSR_SAMPLE}\"")).unwrap();
        assert_eq!(cfg.format, AUTO);
        assert_eq!(stats(&cfg).unwrap().format, "msr");
    }
}
