//! Rebuild orders: which unrebuilt unit a rebuild takes next. One file per order, one line in
//! [`ORDERS`]. An order may also watch the user reads of the lost member's units (PRO's
//! Access Monitor): the controller then records each read's span of units, and the order
//! sees them before each decision.

mod fetch;
mod nearest;
pub mod pro;
mod replacement;
mod sequential;

use super::{DriveState, RebuildConfig};
use crate::array::state::{RebuildUnits, UnitStates};
use crate::disk::Geometry;

pub use crate::array::rebuild_io::ReadSpan;

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
    /// Where the lost member's data lies on its sources (the layout's reads of the whole
    /// member, [`crate::layout::Layout::rebuild_reads`]), each as `(slot, first sector of the
    /// member, end sector, first sector on the source)`: given when a rebuild starts or
    /// starts afresh on fewer sources, only to an order that [`Order::wants_sources`]. By
    /// default unused.
    fn sources(&mut self, _pieces: &[SourcePiece]) {}
    /// Whether the order wants [`Order::sources`]: the pieces are one per stripe and source
    /// of the whole member (tens of bytes each, so gigabytes for a 20 TB member of a layout
    /// with small stripe units), worked out only for an order that reads them. By default no.
    fn wants_sources(&self) -> bool {
        false
    }
    /// The layout's rebuild phases ([`crate::layout::Layout::rebuild_phases`]: member
    /// sector ranges per phase, first phase first) and the target's slot: given when a
    /// rebuild starts or starts afresh. By default unused.
    fn phases(&mut self, _phases: &[Vec<(u64, u64)>], _target: u32) {}
    /// Whether the order wants the user reads of the lost member's units (by default no: the
    /// controller then records nothing).
    fn watches_reads(&self) -> bool {
        false
    }
    /// User reads of the lost member since the last call, oldest first. `copies` is true when
    /// the lost member is rebuilt by copying a mirror (every read of its data touches it).
    fn observe_reads(&mut self, _reads: &[ReadSpan], _states: &UnitStates, _copies: bool) {}
    /// What the order counted during the rebuild, for the summary (by default nothing).
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A run of the lost member's sectors `[member_start, member_end)` whose data lies on slot
/// `slot` from its sector `source_start` on, in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePiece {
    pub slot: u32,
    pub member_start: u64,
    pub member_end: u64,
    pub source_start: u64,
}

/// One registered order.
pub struct OrderEntry {
    pub name: &'static str,
    /// Build it for a run (an order with settings reads its table of `rebuild`).
    pub make: fn(&RebuildConfig) -> Box<dyn Order>,
    pub doc: &'static str,
}

/// Every order, in documentation order.
pub static ORDERS: &[OrderEntry] = &[
    OrderEntry { name: "sequential", make: sequential::Sequential::boxed, doc: sequential::DOC },
    OrderEntry { name: "nearest", make: nearest::Nearest::boxed, doc: nearest::DOC },
    OrderEntry { name: "fetch", make: fetch::Fetch::boxed, doc: fetch::DOC },
    OrderEntry { name: "replacement", make: replacement::Replacement::boxed, doc: replacement::DOC },
    OrderEntry { name: "pro", make: pro::Pro::boxed, doc: pro::DOC },
];

/// Names of the registered orders.
pub fn names() -> Vec<&'static str> {
    ORDERS.iter().map(|e| e.name).collect()
}

/// The entry of order `name`.
pub fn entry(name: &str) -> Option<&'static OrderEntry> {
    ORDERS.iter().find(|e| e.name == name)
}

#[cfg(test)]
pub(super) mod tests {
    use super::DriveState;

    /// Drives whose arms are over the given cylinders, all idle: what the orders' tests see.
    pub struct At(pub Vec<u32>);
    impl DriveState for At {
        fn cylinder(&self, drive: u32) -> u32 {
            self.0[drive as usize]
        }
        fn is_idle(&self, _drive: u32) -> bool {
            true
        }
    }
}
