//! Seek curves. CONTRACT STUB.

use super::SeekConfig;
use crate::error::Result;
use crate::sim::Nanos;

/// A seek curve precomputed for every distance of one drive.
#[derive(Debug, Clone)]
pub struct SeekCurve {
    _private: (),
}

impl SeekCurve {
    /// Build for a drive of `cylinders` cylinders. `key` names the config key for errors.
    pub fn new(_cfg: &SeekConfig, _cylinders: u32, _key: &str) -> Result<Self> {
        todo!()
    }
    /// Seek time for a distance in cylinders (0 for distance 0).
    pub fn time(&self, _distance: u32) -> Nanos {
        todo!()
    }
}
