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
