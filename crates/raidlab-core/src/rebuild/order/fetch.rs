//! Fetch order (the thesis's option 1 for interleaved declustering, seed 004 §2.2.3: "the
//! survivor disk in the cluster that minimizes the fetch time for a unit of unrebuilt data is
//! selected"): on every source, the unrebuilt unit whose data lies nearest that source's head
//! (by cylinder distance on the source), and of those the nearest of all. Where `nearest`
//! measures every unit at its address on the lost drive against the median of the sources'
//! heads, this measures it where it is read, which differs when the layout keeps a copy
//! elsewhere (a declustered or chained copy). For a mirror whose copies lie at the same
//! addresses it picks what `nearest` to the closest head would.
//!
//! Each source's share of the lost member is a list of runs (the layout's reads of the whole
//! member). A layout whose copies lie anywhere (a distorted mirror: a run per block) gives
//! more runs than a decision should search: past [`MAX_PIECES`] runs the order measures every
//! unit at its own address, on the nearest head.

use super::{DriveState, Order, SourcePiece};
use crate::array::state::{RebuildUnits, UnitStates};
use crate::disk::Geometry;

pub const DOC: &str = "the unrebuilt unit the sources can fetch soonest: nearest a source's head where that source holds it \
                       (the thesis's option 1 for interleaved declustering)";

/// Runs past which a decision measures units at their own address instead.
const MAX_PIECES: usize = 256;

/// Soonest fetched.
#[derive(Default)]
pub struct Fetch {
    pieces: Vec<SourcePiece>,
}

impl Fetch {
    pub fn boxed(_: &crate::rebuild::RebuildConfig) -> Box<dyn Order> {
        Box::<Fetch>::default()
    }

    /// The unrebuilt unit of `piece` whose data lies nearest cylinder `head` of its source,
    /// with that distance.
    pub(super) fn nearest_in(piece: &SourcePiece, head: u32, states: &UnitStates, units: &RebuildUnits, geometry: &Geometry) -> Option<(u32, u64)> {
        let source_cylinder = |member_pba: u64| {
            let pba = piece.source_start + (member_pba - piece.member_start);
            geometry.locate(pba.min(geometry.capacity_sectors() - 1)).cylinder
        };
        // A unit belongs to the run its first sector is in.
        let first = units.unit_of(piece.member_start);
        let first = if units.range(first).0 < piece.member_start { first + 1 } else { first };
        let end = units.unit_of(piece.member_end - 1) + 1;
        if first >= end {
            return None;
        }
        // The first unit whose source cylinder is at or past the head (source cylinders
        // do not decrease along a run).
        let (mut lo, mut hi) = (first, end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if source_cylinder(units.range(mid).0) < head {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let after = states.next_unrebuilt_in(lo, end);
        let before = states.prev_unrebuilt_in(first, lo);
        let distance = |unit: u64| head.abs_diff(source_cylinder(units.range(unit).0));
        match (before, after) {
            (Some(b), Some(a)) => {
                let (db, da) = (distance(b), distance(a));
                Some(if db < da { (db, b) } else { (da, a) })
            }
            (b, a) => a.or(b).map(|u| (distance(u), u)),
        }
    }
}

impl Order for Fetch {
    fn next(
        &mut self,
        states: &UnitStates,
        units: &RebuildUnits,
        sources: &[u32],
        drives: &dyn DriveState,
        geometry: &Geometry,
    ) -> Option<u64> {
        if self.pieces.is_empty() || self.pieces.len() > MAX_PIECES {
            // Every unit at its own address, on each source's head in turn.
            let whole = |slot: u32| SourcePiece { slot, member_start: 0, member_end: units.capacity(), source_start: 0 };
            return sources
                .iter()
                .filter_map(|&slot| Self::nearest_in(&whole(slot), drives.cylinder(slot), states, units, geometry))
                .min()
                .map(|(_, unit)| unit);
        }
        // Ties: the smaller distance, then the lower unit. Units with nothing on any source
        // (a distorted mirror's free slots) come last, in address order.
        self.pieces
            .iter()
            .filter(|piece| sources.contains(&piece.slot))
            .filter_map(|piece| Self::nearest_in(piece, drives.cylinder(piece.slot), states, units, geometry))
            .min()
            .map(|(_, unit)| unit)
            .or_else(|| states.next_unrebuilt(0))
    }
    fn reset(&mut self) {
        self.pieces.clear();
    }
    fn sources(&mut self, pieces: &[SourcePiece]) {
        self.pieces.clear();
        self.pieces.extend_from_slice(pieces);
    }
    fn wants_sources(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::state::UnitMeasure;
    use crate::disk::presets;

    use super::super::tests::At;

    /// Two sources, each holding half the lost member a quarter of a drive away from where
    /// the member had it: the unit picked is the one under the head that is nearest its data
    /// where the source holds it, not where the member did.
    #[test]
    fn the_unit_picked_is_nearest_a_head_where_its_source_holds_it() {
        let geometry = Geometry::new(&presets::preset("ibm0661").unwrap(), "drive").unwrap();
        let per_cylinder = geometry.first_lba_of_cylinder(1).unwrap();
        let units = RebuildUnits::new(&geometry, 400 * per_cylinder, UnitMeasure::Cylinders(1));
        let mut states = UnitStates::new(units.count());
        let mut order = Fetch::default();
        // Member cylinders 0..200 lie on slot 1 from its cylinder 500; 200..400 on slot 2
        // from its cylinder 100.
        order.sources(&[
            SourcePiece { slot: 1, member_start: 0, member_end: 200 * per_cylinder, source_start: 500 * per_cylinder },
            SourcePiece { slot: 2, member_start: 200 * per_cylinder, member_end: 400 * per_cylinder, source_start: 100 * per_cylinder },
        ]);
        // Slot 1's head at cylinder 560 (member cylinder 60), slot 2's at 900 (far past its run).
        let drives = At(vec![0, 560, 900]);
        assert_eq!(order.next(&states, &units, &[1, 2], &drives, &geometry), Some(60));
        // With member cylinders 55..=64 rebuilt, 54 and 65 are 6 and 5 cylinders away.
        for unit in 55..=64 {
            states.mark_rebuilt(unit);
        }
        assert_eq!(order.next(&states, &units, &[1, 2], &drives, &geometry), Some(65));
        // Slot 2's head at its cylinder 250 (member cylinder 350): 0 cylinders away wins.
        let drives = At(vec![0, 560, 250]);
        assert_eq!(order.next(&states, &units, &[1, 2], &drives, &geometry), Some(350));
        // Only the sources still read count.
        assert_eq!(order.next(&states, &units, &[1], &drives, &geometry), Some(65));
    }
}
