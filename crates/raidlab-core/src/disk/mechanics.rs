//! The drive mechanism: one access = overhead + seek + rotational latency + transfer.
//! CONTRACT STUB.

use std::sync::Arc;

use super::{DriveModelConfig, Geometry, OpKind, RotationModel, SeekCurve};
use crate::error::Result;
use crate::sim::{Nanos, RngStream};

/// The immutable description of a drive type, shared by all drives of that type.
#[derive(Debug, Clone)]
pub struct DriveModel {
    pub geometry: Geometry,
    pub seek: SeekCurve,
    pub config: DriveModelConfig,
}

impl DriveModel {
    /// Validate and precompute. `key` names the config key for errors (`drive.model`).
    pub fn new(_cfg: &DriveModelConfig, _key: &str) -> Result<Self> {
        todo!()
    }
    /// Capacity in sectors.
    pub fn capacity_sectors(&self) -> u64 {
        todo!()
    }
    /// One revolution, in ns (fractional).
    pub fn revolution_ns(&self) -> f64 {
        todo!()
    }
}

/// Breakdown of one access's service time, all in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceTime {
    pub overhead: Nanos,
    pub seek: Nanos,
    pub rotation: Nanos,
    pub transfer: Nanos,
}

impl ServiceTime {
    /// Total service time, ns.
    pub fn total(&self) -> Nanos {
        self.overhead + self.seek + self.rotation + self.transfer
    }
}

/// One drive mechanism: its arm position and its own random stream.
#[derive(Debug, Clone)]
pub struct Drive {
    pub model: Arc<DriveModel>,
    _private: (),
}

impl Drive {
    /// A drive with the arm at cylinder 0, surface 0.
    pub fn new(_model: Arc<DriveModel>, _rotation: RotationModel, _rng: RngStream) -> Self {
        todo!()
    }
    /// Serve an access starting at `now`; moves the arm and returns the time taken.
    pub fn service(&mut self, _now: Nanos, _lba: u64, _sectors: u32, _kind: OpKind) -> ServiceTime {
        todo!()
    }
    /// Estimated time from `now` until the first sector of `lba` is under the head
    /// (overhead + seek + rotational wait), without moving the arm. Used by SPTF and by
    /// mirror-copy selection.
    pub fn positioning_estimate(&self, _now: Nanos, _lba: u64) -> Nanos {
        todo!()
    }
    /// Current cylinder of the arm.
    pub fn cylinder(&self) -> u32 {
        todo!()
    }
}
