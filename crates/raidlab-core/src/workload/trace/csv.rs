//! Generic delimited text traces described by a [`CsvColumns`] mapping.
//!
//! The mapping names the 0-based columns of time, offset, size and operation, the unit of
//! each number and the operation values. Fields are split at the delimiter and trimmed;
//! quoting is not supported. Lines may carry more columns than the mapping uses.

use super::fields::{parse_decimal_e9, parse_positive_u64, parse_u64, scale_u64};
use super::{CsvColumns, LineParser, RawRecord, TraceConfig};
use crate::error::{Error, Result};

/// Parser of one generic CSV layout.
pub(crate) struct CsvParser {
    columns: CsvColumns,
    /// Highest column index used: a line needs more fields than this.
    last_column: usize,
    /// Nanoseconds per unit of the time column when that is a whole number (exact
    /// arithmetic); `None` falls back to `f64`.
    whole_ns_per_time_unit: Option<u128>,
}

/// Registry constructor: validates the mapping in `cfg.csv`.
pub(crate) fn parser(cfg: &TraceConfig, key: &str) -> Result<Box<dyn LineParser>> {
    let columns = cfg.csv.clone().ok_or_else(|| {
        Error::config(format!("{key}.csv"), "a column mapping is required when format = \"csv\"")
    })?;
    let key = format!("{key}.csv");
    let indices = [
        ("time_column", columns.time_column),
        ("offset_column", columns.offset_column),
        ("size_column", columns.size_column),
        ("op_column", columns.op_column),
    ];
    for (i, (name, index)) in indices.iter().enumerate() {
        if let Some((other, _)) = indices[..i].iter().find(|(_, earlier)| earlier == index) {
            return Err(Error::config(
                format!("{key}.{name}"),
                format!("column {index} is already the {other}"),
            ));
        }
    }
    if !(columns.time_unit_s.is_finite() && columns.time_unit_s > 0.0) {
        return Err(Error::config(
            format!("{key}.time_unit_s"),
            format!("expected a positive number of seconds, got {}", columns.time_unit_s),
        ));
    }
    for (name, unit) in [
        ("offset_unit_bytes", columns.offset_unit_bytes),
        ("size_unit_bytes", columns.size_unit_bytes),
    ] {
        if unit == 0 {
            return Err(Error::config(format!("{key}.{name}"), "expected at least 1 byte"));
        }
    }
    if let Some(value) = columns
        .write_values
        .iter()
        .find(|w| columns.read_values.iter().any(|r| r.eq_ignore_ascii_case(w)))
    {
        return Err(Error::config(
            format!("{key}.write_values"),
            format!("\"{value}\" is also in read_values"),
        ));
    }
    if columns.write_values.is_empty() && columns.read_values.is_empty() {
        return Err(Error::config(format!("{key}.write_values"), "no operation values given"));
    }
    let ns_per_unit = columns.time_unit_s * 1e9;
    let whole_ns_per_time_unit = (ns_per_unit >= 1.0
        && (ns_per_unit - ns_per_unit.round()).abs() <= 1e-12 * ns_per_unit)
        .then(|| ns_per_unit.round() as u128);
    let last_column = indices.iter().map(|&(_, index)| index).max().unwrap_or(0);
    Ok(Box::new(CsvParser { columns, last_column, whole_ns_per_time_unit }))
}

impl CsvParser {
    /// The time column (`value × time_unit_s` seconds) in nanoseconds.
    fn time_ns(&self, text: &str) -> Result<u64, String> {
        let value_e9 = parse_decimal_e9("time", text)?;
        let nanos = match self.whole_ns_per_time_unit {
            Some(ns_per_unit) => value_e9.checked_mul(ns_per_unit).map(|v| v / 1_000_000_000),
            None => Some((value_e9 as f64 * self.columns.time_unit_s).round() as u128),
        };
        nanos
            .and_then(|ns| u64::try_from(ns).ok())
            .ok_or_else(|| format!("time \"{text}\" is out of range"))
    }

    fn is_write(&self, text: &str) -> Result<bool, String> {
        let matches = |values: &[String]| values.iter().any(|v| v.eq_ignore_ascii_case(text));
        if matches(&self.columns.write_values) {
            Ok(true)
        } else if matches(&self.columns.read_values) {
            Ok(false)
        } else {
            Err(format!(
                "unknown operation \"{text}\" (writes: {}; reads: {})",
                self.columns.write_values.join(", "),
                self.columns.read_values.join(", ")
            ))
        }
    }
}

impl LineParser for CsvParser {
    fn parse_line(&mut self, line: &str) -> Result<Option<RawRecord>, String> {
        let c = &self.columns;
        let (mut time, mut offset, mut size, mut op) = ("", "", "", "");
        let mut count = 0;
        for (index, field) in line.split(c.delimiter).enumerate() {
            let field = field.trim();
            if index == c.time_column {
                time = field;
            } else if index == c.offset_column {
                offset = field;
            } else if index == c.size_column {
                size = field;
            } else if index == c.op_column {
                op = field;
            }
            count += 1;
        }
        if count <= self.last_column {
            return Err(format!(
                "expected at least {} fields (the mapping uses column {}), found {count}",
                self.last_column + 1,
                self.last_column
            ));
        }
        let time_ns = self.time_ns(time)?;
        let offset_units = parse_u64("offset", offset)?;
        let offset_bytes = scale_u64("offset", offset, offset_units, c.offset_unit_bytes)?;
        let size_units = parse_positive_u64("size", size)?;
        let size_bytes = scale_u64("size", size, size_units, c.size_unit_bytes)?;
        let is_write = self.is_write(op)?;
        Ok(Some(RawRecord { time_ns, offset_bytes, size_bytes, is_write }))
    }
    fn skip_lines(&self) -> u64 {
        self.columns.skip_lines
    }
}

#[cfg(test)]
mod tests {
    use super::super::FoldMode;
    use super::*;

    fn columns() -> CsvColumns {
        CsvColumns::new(0, 1, 2, 3)
    }

    fn config(columns: Option<CsvColumns>) -> TraceConfig {
        TraceConfig {
            path: "t.csv".into(),
            format: "csv".into(),
            csv: columns,
            time_scale: 1.0,
            fold: FoldMode::Modulo,
            max_requests: None,
            strict_order: false,
        }
    }

    fn build(columns: CsvColumns) -> Box<dyn LineParser> {
        parser(&config(Some(columns)), "workload.trace").unwrap()
    }

    fn config_error_key(columns: Option<CsvColumns>) -> String {
        match parser(&config(columns), "workload.trace") {
            Err(Error::Config { key, .. }) => key,
            Err(other) => panic!("expected a config error, got {other}"),
            Ok(_) => panic!("expected a config error"),
        }
    }

    #[test]
    fn mapped_columns_and_units_are_applied() {
        // Microsecond times, sector offsets and sizes, op in the last of five columns.
        let mut c = columns();
        c.time_column = 4;
        c.offset_column = 0;
        c.size_column = 1;
        c.op_column = 2;
        c.time_unit_s = 1e-6;
        c.offset_unit_bytes = 512;
        c.size_unit_bytes = 512;
        c.delimiter = ';';
        let record = build(c).parse_line("100; 8 ;WRITE;host;1456095145133076").unwrap().unwrap();
        assert_eq!(
            record,
            RawRecord {
                time_ns: 1_456_095_145_133_076_000,
                offset_bytes: 51_200,
                size_bytes: 4096,
                is_write: true,
            }
        );
    }

    #[test]
    fn fractional_units_fall_back_to_floating_point() {
        let mut c = columns();
        c.time_unit_s = 1.0 / 3.0;
        let record = build(c).parse_line("3,0,512,r").unwrap().unwrap();
        assert_eq!(record.time_ns, 1_000_000_000);
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let mut parser = build(columns());
        assert!(parser.parse_line("1,0,512").unwrap_err().contains("expected at least 4 fields"));
        assert!(parser.parse_line("1,0,512,trim").unwrap_err().contains("unknown operation"));
        assert!(parser.parse_line("1,0,0,r").unwrap_err().contains("positive"));
        assert!(parser.parse_line("x,0,512,r").unwrap_err().contains("bad time"));
    }

    #[test]
    fn mapping_mistakes_are_config_errors_naming_the_key() {
        assert_eq!(config_error_key(None), "workload.trace.csv");
        let mut c = columns();
        c.size_column = 0;
        assert_eq!(config_error_key(Some(c)), "workload.trace.csv.size_column");
        let mut c = columns();
        c.time_unit_s = 0.0;
        assert_eq!(config_error_key(Some(c)), "workload.trace.csv.time_unit_s");
        let mut c = columns();
        c.time_unit_s = f64::NAN;
        assert_eq!(config_error_key(Some(c)), "workload.trace.csv.time_unit_s");
        let mut c = columns();
        c.offset_unit_bytes = 0;
        assert_eq!(config_error_key(Some(c)), "workload.trace.csv.offset_unit_bytes");
        let mut c = columns();
        c.read_values.push("W".into());
        assert_eq!(config_error_key(Some(c)), "workload.trace.csv.write_values");
    }
}
