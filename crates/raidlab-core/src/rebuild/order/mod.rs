//! Rebuild orders: which unrebuilt unit a rebuild takes next. One file per order, one line in
//! [`ORDERS`]. (PRO's popularity order is one more file here.)

mod nearest;
mod sequential;

use super::DriveState;
use crate::array::state::{RebuildUnits, UnitStates};
use crate::disk::Geometry;

/// Picks the next unit to rebuild.
pub trait Order: Send {
    /// An unrebuilt unit (neither current nor in flight) of `states`, or `None` if there is
    /// none. `sources` are the slots read, `drives` where their arms are.
    fn next(
        &mut self,
        states: &UnitStates,
        units: &RebuildUnits,
        sources: &[u32],
        drives: &dyn DriveState,
        geometry: &Geometry,
    ) -> Option<u64>;
    /// A new rebuild starts.
    fn reset(&mut self);
}

/// One registered order.
pub struct OrderEntry {
    pub name: &'static str,
    pub make: fn() -> Box<dyn Order>,
    pub doc: &'static str,
}

/// Every order, in documentation order.
pub static ORDERS: &[OrderEntry] = &[
    OrderEntry { name: "sequential", make: sequential::Sequential::boxed, doc: sequential::DOC },
    OrderEntry { name: "nearest", make: nearest::Nearest::boxed, doc: nearest::DOC },
];

/// Names of the registered orders.
pub fn names() -> Vec<&'static str> {
    ORDERS.iter().map(|e| e.name).collect()
}

/// The entry of order `name`.
pub fn entry(name: &str) -> Option<&'static OrderEntry> {
    ORDERS.iter().find(|e| e.name == name)
}
