//! Built-in drives. CONTRACT STUB.

use super::DriveModelConfig;

/// Names of the built-in drives, for error messages and docs.
pub fn names() -> &'static [&'static str] {
    &["ibm0661", "hc550"]
}

/// The parameters of a built-in drive, if `name` is one.
pub fn preset(_name: &str) -> Option<DriveModelConfig> {
    todo!()
}
