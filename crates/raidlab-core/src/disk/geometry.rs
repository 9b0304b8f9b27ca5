//! Zoned geometry: the mapping from a logical sector (LBA) to cylinder, surface and sector.
//! CONTRACT STUB — bodies are filled in by the drive-model work.

use super::ZoneConfig;
use crate::error::Result;

/// Physical location of one sector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicalAddress {
    /// Cylinder, 0 = outermost.
    pub cylinder: u32,
    /// Surface (head) within the cylinder.
    pub surface: u32,
    /// Sector index within the track, 0-based in logical order.
    pub sector: u32,
    /// Sectors on this track (the zone's sectors per track).
    pub sectors_per_track: u32,
}

/// Zoned drive geometry with the traditional mapping: LBAs fill a track, then the next surface
/// of the same cylinder, then the next cylinder inward.
#[derive(Debug, Clone)]
pub struct Geometry {
    _private: (),
}

impl Geometry {
    /// Build from zones (outermost first). `key` names the config key for errors.
    pub fn new(_surfaces: u32, _zones: &[ZoneConfig], _key: &str) -> Result<Self> {
        todo!()
    }
    /// Total addressable sectors.
    pub fn capacity_sectors(&self) -> u64 {
        todo!()
    }
    /// Number of cylinders.
    pub fn cylinders(&self) -> u32 {
        todo!()
    }
    /// Where sector `lba` lies. `lba` must be below the capacity.
    pub fn locate(&self, _lba: u64) -> PhysicalAddress {
        todo!()
    }
}
