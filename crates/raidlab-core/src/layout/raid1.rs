//! RAID-1: mirror sets of `copies` drives; data striped across the sets (RAID-10 when there is
//! more than one set). The thesis's traditional mirroring is 8 sets of 2 (seed 004 §2.1).

use super::keys::OwnKey;
use super::{LayoutShape, Layout, LayoutParams, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// RAID-1's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[OwnKey {
    name: "copies",
    doc: "drives per mirror set.",
    default: || toml::Value::Integer(2),
    check: OwnKey::check_as::<u32>,
    schema: OwnKey::schema_of::<u32>,
}];

/// Mirror sets: set `k` is drives `k·copies .. (k+1)·copies`; stripe `s`, unit `k` is on every
/// drive of set `k` at unit offset `s`.
#[derive(Debug, Clone)]
pub struct Raid1Layout {
    shape: LayoutShape,
    copies: u32,
}

impl Raid1Layout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        let copies: u32 = params.own("copies", key)?;
        if copies < 2 {
            return Err(Error::config(format!("{key}.copies"), "RAID-1 needs at least 2 copies"));
        }
        if params.drives < copies || !params.drives.is_multiple_of(copies) {
            return Err(Error::config(
                format!("{key}.drives"),
                format!("RAID-1 with {copies} copies needs a positive multiple of {copies} drives, not {}", params.drives),
            ));
        }
        Ok(Box::new(Raid1Layout { shape: LayoutShape::fit(params, key)?, copies }))
    }

    fn sets(&self) -> u32 {
        self.shape.drives / self.copies
    }
}

impl Layout for Raid1Layout {
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        let first = member / self.copies * self.copies;
        (first..first + self.copies).filter(|&d| d != member).collect()
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave the copies of its sectors \
         different, until a resynchronization of the mirror copies one over the others"
    }
    fn name(&self) -> &'static str {
        "raid1"
    }
    fn planner(&self) -> &'static dyn crate::layout::plan::Planner {
        &crate::layout::plan::MIRROR
    }
    fn fault_tolerance(&self) -> u32 {
        self.copies - 1
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.sets()
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.stripe = stripe;
        out.copies = self.copies;
        out.data.clear();
        out.parity.clear();
        let pba = stripe * self.shape.stripe_unit_sectors;
        out.data.extend((0..self.shape.drives).map(|drive| UnitLocation { drive, pba }));
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let stripe = pba / self.shape.stripe_unit_sectors;
        (drive < self.shape.drives && stripe < self.shape.stripes).then_some((
            stripe,
            UnitRole::Data { index: drive / self.copies, copy: drive % self.copies },
        ))
    }
    fn rebuilds_units_in_place(&self) -> bool {
        // Its copies of a set lie at the same sectors.
        true
    }
    fn reconstruction(&self, member: u32) -> Option<super::Reconstruction> {
        // A copy of the member's own mirror set, at the same sectors.
        let set = member / self.copies;
        let sources = (set * self.copies..(set + 1) * self.copies).filter(|&d| d != member).collect();
        Some(super::Reconstruction { sources, xor: false, erasures: 0 })
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        // The sets of the failed drives only: an array of 65,536 drives has 32,768 sets.
        failed.iter().any(|&d| {
            let set = d / self.copies;
            failed.iter().filter(|&&e| e / self.copies == set).count() >= self.copies as usize
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::{check_bijective, params};

    #[test]
    fn raid1_is_a_bijection_and_survives_one_loss_per_set() {
        let layout = Raid1Layout::build(&params(4).with("copies", 2), "array").unwrap();
        check_bijective(layout.as_ref());
        assert_eq!(layout.capacity_sectors(), 2 * 12 * 8);
        assert!(!layout.data_lost(&[0, 2]));
        assert!(layout.data_lost(&[2, 3]));
    }

    #[test]
    fn raid1_rejects_drive_counts_that_do_not_form_sets() {
        let err = Raid1Layout::build(&params(5).with("copies", 2), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.drives:"), "{err}");
    }
}
