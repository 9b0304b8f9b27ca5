//! Replacement order: the unrebuilt unit nearest the replacement's head, phase by phase. A
//! layout with rebuild phases ([`crate::layout::Layout::rebuild_phases`]) has each phase
//! done before the next starts. For distorted mirrors that is the thesis's two phases for
//! track and cylinder units (seed 004 §2.2.2): the slave partition first (read in order from
//! the partner's master partition onto an empty replacement), then the master partition,
//! each unit "that minimizes the write cost on the replacement disk" next. For a layout
//! without phases it is the thesis's option 2 for interleaved declustering (§2.2.3): the
//! unit whose write on the replacement seeks least.

use super::fetch::Fetch;
use super::{DriveState, Order, SourcePiece};
use crate::array::state::{RebuildUnits, UnitStates};
use crate::disk::Geometry;

pub const DOC: &str = "the unrebuilt unit nearest the replacement's head, the layout's rebuild phases in turn (distorted \
                       mirrors: slave partition, then master; the thesis's two phases)";

/// Nearest the replacement's head, phase by phase.
#[derive(Default)]
pub struct Replacement {
    phases: Vec<Vec<(u64, u64)>>,
    target: u32,
}

impl Replacement {
    pub fn boxed(_: &crate::rebuild::RebuildConfig) -> Box<dyn Order> {
        Box::<Replacement>::default()
    }
}

impl Order for Replacement {
    fn next(
        &mut self,
        states: &UnitStates,
        units: &RebuildUnits,
        _sources: &[u32],
        drives: &dyn DriveState,
        geometry: &Geometry,
    ) -> Option<u64> {
        let head = drives.cylinder(self.target);
        // The replacement holds each unit at its own address.
        let at_home = |&(start, end): &(u64, u64)| SourcePiece { slot: self.target, member_start: start, member_end: end.min(units.capacity()), source_start: start };
        let whole = [vec![(0, units.capacity())]];
        let phases = if self.phases.is_empty() { &whole[..] } else { &self.phases[..] };
        phases.iter().find_map(|ranges| {
            ranges
                .iter()
                .filter(|&&(start, end)| start < end.min(units.capacity()))
                .filter_map(|range| Fetch::nearest_in(&at_home(range), head, states, units, geometry))
                .min()
                .map(|(_, unit)| unit)
        })
    }
    fn reset(&mut self) {
        self.phases.clear();
    }
    fn phases(&mut self, phases: &[Vec<(u64, u64)>], target: u32) {
        self.phases = phases.to_vec();
        self.target = target;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::state::UnitMeasure;
    use crate::disk::presets;

    use super::super::tests::At;

    /// Phase 1 (cylinders 40..100) is done before phase 2 (0..40), each unit nearest the
    /// replacement's head (slot 3) within the phase; without phases, nearest over all.
    #[test]
    fn each_phase_is_done_before_the_next_nearest_the_replacements_head_first() {
        let geometry = Geometry::new(&presets::preset("ibm0661").unwrap(), "drive").unwrap();
        let c = geometry.first_lba_of_cylinder(1).unwrap();
        let units = RebuildUnits::new(&geometry, 100 * c, UnitMeasure::Cylinders(1));
        let mut states = UnitStates::new(units.count());
        let mut order = Replacement::default();
        order.phases(&[vec![(40 * c, 100 * c)], vec![(0, 40 * c)]], 3);
        let drives = At(vec![0, 0, 0, 10]);
        assert_eq!(order.next(&states, &units, &[1], &drives, &geometry), Some(40), "phase 1's nearest to cylinder 10");
        for unit in 40..100 {
            states.mark_rebuilt(unit);
        }
        assert_eq!(order.next(&states, &units, &[1], &drives, &geometry), Some(10), "then phase 2's");
        let mut plain = Replacement::default();
        plain.phases(&[], 3);
        let states = UnitStates::new(units.count());
        assert_eq!(plain.next(&states, &units, &[1], &drives, &geometry), Some(10));
    }
}
