//! Sequential order: units in increasing address order from the start of the drive, skipping
//! those already current (made so by user writes or piggybacking) or in flight.

use super::{DriveState, Order};
use crate::array::state::{RebuildUnits, UnitStates};
use crate::disk::Geometry;

pub const DOC: &str = "increasing address from the start of the drive, skipping units already current";

/// A cursor over the units.
#[derive(Default)]
pub struct Sequential {
    cursor: u64,
}

impl Sequential {
    pub fn boxed(_: &crate::rebuild::RebuildConfig) -> Box<dyn Order> {
        Box::<Sequential>::default()
    }
}

impl Order for Sequential {
    fn next(&mut self, states: &UnitStates, _: &RebuildUnits, _: &[u32], _: &dyn DriveState, _: &Geometry) -> Option<u64> {
        let unit = states.next_unrebuilt(self.cursor)?;
        self.cursor = unit + 1;
        Some(unit)
    }
    fn reset(&mut self) {
        self.cursor = 0;
    }
}
