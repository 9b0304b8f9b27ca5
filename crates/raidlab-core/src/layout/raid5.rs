//! RAID-5: one parity unit per stripe, rotated over the drives (four rotations, Linux md
//! naming; left-symmetric by default).

use super::{LayoutShape, Layout, LayoutParams, ParityRotation, StripeMap, UnitLocation, UnitRole,
};
use super::keys::OwnKey;
use crate::error::{Error, Result};

/// RAID-5's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[OwnKey {
    name: "parity_rotation",
    doc: "parity rotation, `left-symmetric` (default), `left-asymmetric`, `right-symmetric` or `right-asymmetric`.",
    default: || toml::Value::String("left-symmetric".into()),
    check: OwnKey::check_as::<ParityRotation>,
    schema: OwnKey::schema_of::<ParityRotation>,
}];

/// Rotated single parity over `drives` drives; stripe `s` occupies unit offset `s` on every
/// drive.
#[derive(Debug, Clone)]
pub struct Raid5Layout {
    shape: LayoutShape,
    rotation: ParityRotation,
}

impl Raid5Layout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        if params.drives < 3 {
            return Err(Error::config(
                format!("{key}.drives"),
                format!("RAID-5 needs at least 3 drives, not {}", params.drives),
            ));
        }
        let rotation = params.own("parity_rotation", key)?;
        Ok(Box::new(Raid5Layout { shape: LayoutShape::fit(params, key)?, rotation }))
    }

    /// Drive holding the parity of `stripe`.
    pub fn parity_drive(&self, stripe: u64) -> u32 {
        let n = self.shape.drives as u64;
        match self.rotation {
            ParityRotation::LeftSymmetric | ParityRotation::LeftAsymmetric => {
                (n - 1 - stripe % n) as u32
            }
            ParityRotation::RightSymmetric | ParityRotation::RightAsymmetric => (stripe % n) as u32,
        }
    }

    /// Drive holding data unit `index` of a stripe whose parity is on `parity`.
    fn data_drive(&self, parity: u32, index: u32) -> u32 {
        match self.rotation {
            ParityRotation::LeftSymmetric | ParityRotation::RightSymmetric => {
                // parity < drives and index < drives − 1: below 2·drives, so one conditional
                // subtraction reduces it (a hardware division per unit costs more).
                let d = parity + 1 + index;
                if d >= self.shape.drives {
                    d - self.shape.drives
                } else {
                    d
                }
            }
            ParityRotation::LeftAsymmetric | ParityRotation::RightAsymmetric => {
                if index < parity {
                    index
                } else {
                    index + 1
                }
            }
        }
    }

    /// Inverse of `data_drive`.
    fn data_index(&self, parity: u32, drive: u32) -> u32 {
        match self.rotation {
            ParityRotation::LeftSymmetric | ParityRotation::RightSymmetric => {
                let d = drive + self.shape.drives - parity - 1;
                if d >= self.shape.drives {
                    d - self.shape.drives
                } else {
                    d
                }
            }
            ParityRotation::LeftAsymmetric | ParityRotation::RightAsymmetric => {
                if drive < parity {
                    drive
                } else {
                    drive - 1
                }
            }
        }
    }
}

impl Layout for Raid5Layout {
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        (0..self.shape.drives).filter(|&d| d != member).collect()
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave its stripe's parity \
         inconsistent with the data (the write hole), until a re-synchronization of the parity repairs it"
    }
    fn name(&self) -> &'static str {
        "raid5"
    }
    fn planner(&self) -> &'static dyn crate::layout::plan::Planner {
        &crate::layout::plan::PARITY
    }
    fn fault_tolerance(&self) -> u32 {
        1
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.shape.drives - 1
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.stripe = stripe;
        out.copies = 1;
        let pba = stripe * self.shape.stripe_unit_sectors;
        let parity = self.parity_drive(stripe);
        let drives = self.shape.drives;
        // One walk around the drives (what `data_drive` computes unit by unit): symmetric
        // rotations start after the parity drive and wrap, asymmetric ones start at drive 0;
        // both step over the parity drive. The vectors keep their length from stripe to
        // stripe, so the units are overwritten in place.
        let mut drive = match self.rotation {
            ParityRotation::LeftSymmetric | ParityRotation::RightSymmetric => parity + 1,
            ParityRotation::LeftAsymmetric | ParityRotation::RightAsymmetric => 0,
        };
        out.data.resize(drives as usize - 1, UnitLocation { drive: 0, pba: 0 });
        for unit in out.data.iter_mut() {
            if drive == drives {
                drive = 0;
            }
            if drive == parity {
                drive += 1;
            }
            *unit = UnitLocation { drive, pba };
            drive += 1;
        }
        debug_assert!(out.data.iter().enumerate().all(|(i, u)| u.drive == self.data_drive(parity, i as u32)));
        out.parity.resize(1, UnitLocation { drive: 0, pba: 0 });
        out.parity[0] = UnitLocation { drive: parity, pba };
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        let drive = self.data_drive(self.parity_drive(stripe), index);
        Some(UnitLocation { drive, pba: stripe * self.shape.stripe_unit_sectors })
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let stripe = pba / self.shape.stripe_unit_sectors;
        if drive >= self.shape.drives || stripe >= self.shape.stripes {
            return None;
        }
        let parity = self.parity_drive(stripe);
        let role = if drive == parity {
            UnitRole::Parity { index: 0 }
        } else {
            UnitRole::Data { index: self.data_index(parity, drive), copy: 0 }
        };
        Some((stripe, role))
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        failed.len() >= 2
    }
    fn rebuilds_units_in_place(&self) -> bool {
        // Its a stripe lies at the same sectors of every member.
        true
    }
    fn reconstruction(&self, member: u32) -> Option<super::Reconstruction> {
        // Every unit of a member, data or parity, is the XOR of the stripe's other units,
        // which lie at the same sectors of every other member.
        Some(super::Reconstruction { sources: (0..self.shape.drives).filter(|&d| d != member).collect(), xor: true, erasures: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::{check_bijective, params};

    fn layout(drives: u32, rotation: ParityRotation) -> Box<dyn Layout> {
        Raid5Layout::build(&params(drives).with("parity_rotation", rotation), "array").unwrap()
    }

    #[test]
    fn every_rotation_is_a_bijection() {
        for rotation in [
            ParityRotation::LeftSymmetric,
            ParityRotation::LeftAsymmetric,
            ParityRotation::RightSymmetric,
            ParityRotation::RightAsymmetric,
        ] {
            check_bijective(layout(5, rotation).as_ref());
        }
    }

    #[test]
    fn left_symmetric_matches_the_textbook_table() {
        // 5 drives: stripe 0 parity on drive 4 and data D0..D3 on drives 0..3;
        // stripe 1 parity on drive 3, data starts on drive 4 and wraps.
        let l = layout(5, ParityRotation::LeftSymmetric);
        let mut m = StripeMap::default();
        l.map_stripe(0, &mut m);
        assert_eq!(m.parity[0].drive, 4);
        assert_eq!(m.data.iter().map(|u| u.drive).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        l.map_stripe(1, &mut m);
        assert_eq!(m.parity[0].drive, 3);
        assert_eq!(m.data.iter().map(|u| u.drive).collect::<Vec<_>>(), vec![4, 0, 1, 2]);
        // Parity visits every drive once in `drives` consecutive stripes.
        let mut parity: Vec<u32> = (0..5)
            .map(|s| {
                l.map_stripe(s, &mut m);
                m.parity[0].drive
            })
            .collect();
        parity.sort();
        assert_eq!(parity, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn right_asymmetric_keeps_data_in_drive_order() {
        let l = layout(4, ParityRotation::RightAsymmetric);
        let mut m = StripeMap::default();
        l.map_stripe(1, &mut m);
        assert_eq!(m.parity[0].drive, 1);
        assert_eq!(m.data.iter().map(|u| u.drive).collect::<Vec<_>>(), vec![0, 2, 3]);
    }

    #[test]
    fn two_drives_is_not_raid5() {
        let err = Raid5Layout::build(&params(2), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.drives: RAID-5 needs at least 3 drives"), "{err}");
    }
}
