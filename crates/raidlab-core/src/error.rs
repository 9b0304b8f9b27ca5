//! The one error type of the core. Each variant maps to its own Python exception class
//! (`raidlab.exceptions`), so every variant carries what a user needs to find the mistake:
//! the config key path, or the file and line.

use std::path::PathBuf;

/// Everything that can go wrong before or during a simulation.
///
/// Data loss is *not* an error: it is an outcome recorded in the results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration value is missing, malformed or impossible.
    /// `key` is the dotted path of the offending key (`array.stripe_unit_kib`).
    #[error("{key}: {message}")]
    Config { key: String, message: String },

    /// A trace file line could not be understood. `line` is 1-based.
    #[error("{}:{line}: {message}", file.display())]
    Trace { file: PathBuf, line: u64, message: String },

    /// A drive specification file (DiskSim parameter file) is malformed. `line` is 1-based.
    #[error("{}:{line}: {message}", file.display())]
    Spec { file: PathBuf, line: u64, message: String },

    /// Reading a file failed at the operating-system level.
    #[error("{}: {source}", file.display())]
    Io { file: PathBuf, #[source] source: std::io::Error },

    /// The simulation reached a state the model forbids (a bug, reported instead of a panic).
    #[error("simulation invariant violated: {0}")]
    Invariant(String),
}

impl Error {
    /// Convenience constructor for configuration errors.
    pub fn config(key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config { key: key.into(), message: message.into() }
    }

    /// Convenience constructor for trace errors.
    pub fn trace(file: impl Into<PathBuf>, line: u64, message: impl Into<String>) -> Self {
        Error::Trace { file: file.into(), line, message: message.into() }
    }

    /// Convenience constructor for I/O errors on a named file.
    pub fn io(file: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { file: file.into(), source }
    }
}

/// Result alias used throughout the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `x` as messages echo it: Rust's shortest form that reads back as `x`, in scientific
/// notation beyond 1e16 or below 1e-6 in magnitude, where the plain form runs to hundreds of
/// digits (`1e300` is 301 of them, `1e-300` 302).
pub fn readable(x: f64) -> String {
    let magnitude = x.abs();
    if magnitude.is_finite() && magnitude != 0.0 && !(1e-6..1e16).contains(&magnitude) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A deserialization message with Rust's type names put in plain words: "invalid value:
/// integer `-5`, expected u32" says "invalid value: -5, expected a whole number from 0 to
/// 4294967295".
pub fn in_plain_words(message: &str) -> String {
    const TYPES: [(&str, &str); 10] = [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
        ("expected a character", "expected one character"),
    ];
    let mut out = message.to_string();
    for (rust, plain) in TYPES {
        // Whole words only: "expected u32" but not "expected u320".
        let mut searched = 0;
        while let Some(found) = out[searched..].find(rust) {
            let start = searched + found;
            let end = start + rust.len();
            if out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                searched = end;
                continue;
            }
            out.replace_range(start..end, plain);
            searched = start + plain.len();
        }
    }
    // serde's "expected struct RebuildUnitConfig": a table, and for the tables a user meets
    // in this form, what it holds.
    while let Some(start) = out.find("expected struct ") {
        let name_start = start + "expected struct ".len();
        let name_end = out[name_start..].find(|c: char| !c.is_ascii_alphanumeric() && c != '_').map_or(out.len(), |i| name_start + i);
        let plain = match &out[name_start..name_end] {
            "RebuildUnitConfig" => {
                "expected a table: `{ tracks = 1 }` (the default), `{ sectors = 2048 }` or `{ cylinders = 1 }`"
            }
            _ => "expected a table",
        };
        out.replace_range(start..name_end, plain);
    }
    // serde's names for what was found: "integer `-5`", "floating point `1.5`".
    for (rust, plain) in [("integer `", "`"), ("floating point `", "`")] {
        out = out.replace(rust, plain);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::readable;

    #[test]
    fn readable_numbers_switch_to_scientific_notation_only_when_long() {
        for (x, shown) in [
            (1e300, "1e300"),
            (-2.5e300, "-2.5e300"),
            (1e-300, "1e-300"),
            (1e16, "1e16"),
            (1e15, "1000000000000000"),
            (10025.0, "10025"),
            (0.48700, "0.487"),
            (-0.01, "-0.01"),
            (0.000001, "0.000001"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(readable(x), shown);
        }
    }
}
