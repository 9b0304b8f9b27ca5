//! The content model: every sector holds a 64-bit value, so the simulator can prove that a
//! policy never returns stale data.
//!
//! * A logical sector's initial value is a hash of its address; a write assigns fresh values
//!   (a hash of the write's id and the address).
//! * Physical sectors hold what the plans actually wrote: data copies, and parity computed by
//!   XOR from the values the plan really read. Untouched physical sectors hold their initial
//!   value: the data hash, or the XOR of the stripe's initial data hashes for parity.
//! * A failed drive's contents are gone; reading them is a bug the model reports.
//! * Every user read is checked, when its stripe lock is still held, against the value last
//!   written to each logical sector.
//!
//! Memory is sparse: only written sectors are stored.

use rustc_hash::FxHashMap;

use crate::layout::{Layout, StripeMap, UnitRole};

/// SplitMix64 finaliser: a cheap, well-mixed 64-bit hash.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Initial value of logical sector `lba`.
#[inline]
pub fn initial_value(lba: u64) -> u64 {
    mix(lba.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// Value written to logical sector `lba` by the write with id `write_id` (ids start at 1).
#[inline]
pub fn written_value(write_id: u64, lba: u64) -> u64 {
    mix(initial_value(lba) ^ write_id.wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// Counters of the content check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ContentStats {
    /// Logical sectors whose value was checked on a user read.
    pub sectors_checked: u64,
    /// Of those, sectors whose value differed from the value last written.
    pub stale_sectors: u64,
    /// User reads (stripe pieces) that returned at least one stale sector.
    pub stale_reads: u64,
}

/// Sparse per-drive physical contents and the expected logical contents.
#[derive(Debug)]
pub struct ContentModel {
    physical: Vec<FxHashMap<u64, u64>>,
    failed: Vec<bool>,
    expected: FxHashMap<u64, u64>,
    stripe_data_sectors: u64,
    unit_sectors: u64,
    scratch: StripeMap,
    /// Running counters.
    pub stats: ContentStats,
    /// The first stale sector seen, for the report: (logical lba, expected, actual).
    pub first_stale: Option<(u64, u64, u64)>,
}

impl ContentModel {
    /// Empty model for `drives` drives laid out by `layout`.
    pub fn new(drives: usize, layout: &dyn Layout) -> Self {
        ContentModel {
            physical: vec![FxHashMap::default(); drives],
            failed: vec![false; drives],
            expected: FxHashMap::default(),
            stripe_data_sectors: layout.stripe_data_sectors(),
            unit_sectors: layout.stripe_unit_sectors(),
            scratch: StripeMap::default(),
            stats: ContentStats::default(),
            first_stale: None,
        }
    }

    /// Logical address of row `row` of data unit `index` of `stripe`.
    #[inline]
    pub fn logical(&self, stripe: u64, index: u32, row: u64) -> u64 {
        stripe * self.stripe_data_sectors + index as u64 * self.unit_sectors + row
    }

    /// Value currently on physical sector `pba` of `drive`. `None` if the drive has failed.
    pub fn read_physical(&mut self, layout: &dyn Layout, drive: u32, pba: u64) -> Option<u64> {
        if self.failed[drive as usize] {
            return None;
        }
        if let Some(v) = self.physical[drive as usize].get(&pba) {
            return Some(*v);
        }
        Some(match layout.locate(drive, pba) {
            Some((stripe, UnitRole::Data { index, .. })) => {
                let row = pba % self.unit_sectors;
                initial_value(self.logical(stripe, index, row))
            }
            Some((stripe, UnitRole::Parity { .. })) => {
                let row = pba % self.unit_sectors;
                layout.map_stripe(stripe, &mut self.scratch);
                let units = self.scratch.data_units() as u32;
                (0..units).fold(0, |acc, i| acc ^ initial_value(self.logical(stripe, i, row)))
            }
            None => 0,
        })
    }

    /// Store `value` on physical sector `pba` of `drive` (ignored on a failed drive).
    pub fn write_physical(&mut self, drive: u32, pba: u64, value: u64) {
        if !self.failed[drive as usize] {
            self.physical[drive as usize].insert(pba, value);
        }
    }

    /// The drive failed: its contents are lost.
    pub fn fail_drive(&mut self, drive: u32) {
        self.failed[drive as usize] = true;
        self.physical[drive as usize] = FxHashMap::default();
    }

    /// The value last written to logical sector `lba` (its initial value if never written).
    pub fn expected(&self, lba: u64) -> u64 {
        self.expected.get(&lba).copied().unwrap_or_else(|| initial_value(lba))
    }

    /// A write of logical sector `lba` completed with `value`.
    pub fn commit(&mut self, lba: u64, value: u64) {
        self.expected.insert(lba, value);
    }

    /// Check a value returned by a user read. Returns whether it was current.
    pub fn check(&mut self, lba: u64, actual: u64) -> bool {
        self.stats.sectors_checked += 1;
        let expected = self.expected(lba);
        if expected != actual {
            self.stats.stale_sectors += 1;
            self.first_stale.get_or_insert((lba, expected, actual));
            false
        } else {
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{self, LayoutParams, ParityRotation};

    #[test]
    fn initial_parity_is_the_xor_of_the_initial_data() {
        let params = LayoutParams {
            drives: 4,
            stripe_unit_sectors: 4,
            drive_capacity_sectors: 64,
            copies: 1,
            parity_rotation: ParityRotation::LeftSymmetric,
        };
        let l = layout::build("raid5", &params, "array").unwrap();
        let mut c = ContentModel::new(4, l.as_ref());
        let mut map = StripeMap::default();
        for stripe in 0..l.stripes() {
            l.map_stripe(stripe, &mut map);
            for row in 0..4 {
                let mut x = 0;
                for u in map.data.iter().chain(map.parity.iter()) {
                    x ^= c.read_physical(l.as_ref(), u.drive, u.pba + row).unwrap();
                }
                assert_eq!(x, 0, "stripe {stripe} row {row} does not XOR to zero");
            }
        }
    }

    #[test]
    fn written_values_differ_from_initial_and_between_writes() {
        assert_ne!(written_value(1, 10), initial_value(10));
        assert_ne!(written_value(1, 10), written_value(2, 10));
        assert_ne!(written_value(1, 10), written_value(1, 11));
    }
}
