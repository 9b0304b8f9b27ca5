//! RAID-0: units striped round-robin over all drives, no redundancy.

use super::{LayoutShape, Layout, LayoutParams, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// Striping without redundancy: stripe `s`, unit `i` is on drive `i` at unit offset `s`.
#[derive(Debug, Clone)]
pub struct Raid0Layout {
    shape: LayoutShape,
}

impl Raid0Layout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        if params.drives == 0 {
            return Err(Error::config(format!("{key}.drives"), "RAID-0 needs at least 1 drive"));
        }
        Ok(Box::new(Raid0Layout { shape: LayoutShape::fit(params, key)? }))
    }
}

impl Layout for Raid0Layout {
    fn redundancy_set(&self, _member: u32) -> Vec<u32> {
        Vec::new()
    }
    fn volatile_state(&self) -> &'static str {
        "nothing: its map is fixed, and a write caught in flight leaves only its own sectors half written (no \
         redundancy depends on them)"
    }
    fn name(&self) -> &'static str {
        "raid0"
    }
    fn planner(&self) -> &'static dyn crate::layout::plan::Planner {
        &crate::layout::plan::STRIPED
    }
    fn fault_tolerance(&self) -> u32 {
        0
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.shape.drives
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.stripe = stripe;
        out.copies = 1;
        out.data.clear();
        out.parity.clear();
        let pba = stripe * self.shape.stripe_unit_sectors;
        out.data.extend((0..self.shape.drives).map(|drive| UnitLocation { drive, pba }));
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        Some(UnitLocation { drive: index, pba: stripe * self.shape.stripe_unit_sectors })
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let stripe = pba / self.shape.stripe_unit_sectors;
        (drive < self.shape.drives && stripe < self.shape.stripes)
            .then_some((stripe, UnitRole::Data { index: drive, copy: 0 }))
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        !failed.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::{check_bijective, params};

    #[test]
    fn raid0_is_a_bijection_and_loses_data_on_any_failure() {
        let layout = Raid0Layout::build(&params(3), "array").unwrap();
        check_bijective(layout.as_ref());
        assert_eq!(layout.capacity_sectors(), 3 * 12 * 8);
        assert!(layout.data_lost(&[1]));
        assert!(!layout.data_lost(&[]));
    }
}
