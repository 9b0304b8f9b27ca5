//! Nearest order (seed 004 §2.2.1): the unrebuilt unit nearest the surviving drives' heads,
//! by cylinder distance from the median of their cylinders. Units are in address order, so
//! their cylinders do not decrease: the unit under the median is found by a binary search,
//! then the nearest unrebuilt unit on either side of it.

use super::{DriveState, Order};
use crate::array::state::{RebuildUnits, UnitStates};
use crate::disk::Geometry;

pub const DOC: &str = "the unrebuilt unit nearest the surviving drives' heads (median cylinder)";

/// Nearest to the heads.
#[derive(Default)]
pub struct Nearest {
    cylinders: Vec<u32>,
}

impl Nearest {
    pub fn boxed(_: &crate::rebuild::RebuildConfig) -> Box<dyn Order> {
        Box::<Nearest>::default()
    }
}

fn cylinder_of(units: &RebuildUnits, geometry: &Geometry, unit: u64) -> u32 {
    geometry.locate(units.range(unit).0.min(geometry.capacity_sectors() - 1)).cylinder
}

impl Order for Nearest {
    fn next(
        &mut self,
        states: &UnitStates,
        units: &RebuildUnits,
        sources: &[u32],
        drives: &dyn DriveState,
        geometry: &Geometry,
    ) -> Option<u64> {
        self.cylinders.clear();
        self.cylinders.extend(sources.iter().map(|&d| drives.cylinder(d)));
        self.cylinders.sort_unstable();
        let median = *self.cylinders.get(self.cylinders.len() / 2)?;
        // The first unit whose cylinder is at or past the median.
        let (mut lo, mut hi) = (0u64, units.count());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cylinder_of(units, geometry, mid) < median {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let at = lo.min(units.count() - 1);
        let after = states.next_unrebuilt(at).filter(|&u| u >= at);
        let before = states.prev_unrebuilt(at);
        match (before, after) {
            (Some(b), Some(a)) => {
                let db = median.abs_diff(cylinder_of(units, geometry, b));
                let da = median.abs_diff(cylinder_of(units, geometry, a));
                Some(if db < da { b } else { a })
            }
            (b, a) => a.or(b),
        }
    }
    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::presets;

    use super::super::tests::At;

    /// The unit picked lies at the median head's cylinder when it is unrebuilt, and is the
    /// nearest unrebuilt one on either side when it is not.
    #[test]
    fn nearest_picks_the_unrebuilt_unit_under_the_median_head() {
        let geometry = Geometry::new(&presets::preset("ibm0661").unwrap(), "drive").unwrap();
        let units = RebuildUnits::new(&geometry, geometry.capacity_sectors(), crate::array::state::UnitMeasure::Cylinders(1));
        let mut states = UnitStates::new(units.count());
        let mut order = Nearest::default();
        let drives = At(vec![10, 500, 700]);
        let unit = order.next(&states, &units, &[0, 1, 2], &drives, &geometry).unwrap();
        assert_eq!(cylinder_of(&units, &geometry, unit), 500);
        // Units 495..=503 rebuilt: 504 is 4 cylinders away, 494 is 6.
        for u in (unit - 5)..=(unit + 3) {
            states.mark_rebuilt(u);
        }
        let next = order.next(&states, &units, &[0, 1, 2], &drives, &geometry).unwrap();
        assert_eq!(next, unit + 4);
    }
}
