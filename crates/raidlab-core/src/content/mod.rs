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

pub mod rules;

use rustc_hash::FxHashMap;

use crate::layout::{Layout, PlacementState, StripeMap, UnitRole};

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
    /// Sectors of rebuild targets checked when their rebuild ended.
    pub rebuilt_sectors_checked: u64,
    /// Of those, sectors that did not hold what the lost member should have held.
    pub rebuilt_sectors_wrong: u64,
}

/// Sparse per-drive physical contents and the expected logical contents.
#[derive(Debug)]
pub struct ContentModel {
    physical: Vec<FxHashMap<u64, u64>>,
    failed: Vec<bool>,
    /// Drives whose unwritten sectors hold garbage (spares, rebuild targets).
    garbage: Vec<bool>,
    expected: FxHashMap<u64, u64>,
    stripe_data_sectors: u64,
    unit_sectors: u64,
    scratch: StripeMap,
    /// Running counters.
    pub stats: ContentStats,
    /// The first stale sector seen, for the report: (logical lba, expected, actual).
    pub first_stale: Option<(u64, u64, u64)>,
    /// The first rebuilt sector found wrong: (slot, sector, expected, actual).
    pub first_wrong_rebuilt: Option<(u32, u64, u64, u64)>,
    /// What failed drives held when they failed, for memory that kept a copy of it.
    memory_of_failed: FxHashMap<u32, FxHashMap<u64, u64>>,
}

impl ContentModel {
    /// Empty model for `drives` drives laid out by `layout`.
    pub fn new(drives: usize, layout: &dyn Layout) -> Self {
        ContentModel {
            physical: vec![FxHashMap::default(); drives],
            failed: vec![false; drives],
            garbage: vec![false; drives],
            expected: FxHashMap::default(),
            stripe_data_sectors: layout.stripe_data_sectors(),
            unit_sectors: layout.stripe_unit_sectors(),
            scratch: StripeMap::default(),
            stats: ContentStats::default(),
            first_stale: None,
            first_wrong_rebuilt: None,
            memory_of_failed: FxHashMap::default(),
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
        if self.garbage[drive as usize] {
            // What a spare held before it was written: no value any read may return.
            return Some(mix(0xDEAD_5EC7_0000_0000 ^ ((drive as u64) << 40) ^ pba));
        }
        Some(match layout.locate(drive, pba) {
            Some((stripe, UnitRole::Data { index, .. })) => {
                let row = pba % self.unit_sectors;
                initial_value(self.logical(stripe, index, row))
            }
            Some((stripe, UnitRole::Parity { index })) => {
                let row = pba % self.unit_sectors;
                layout.map_stripe(stripe, &mut self.scratch);
                let units = self.scratch.data_units() as u32;
                if index == 0 {
                    (0..units).fold(0, |acc, i| acc ^ initial_value(self.logical(stripe, i, row)))
                } else {
                    crate::layout::raid6::parity_of(index, (0..units).map(|i| initial_value(self.logical(stripe, i, row))))
                }
            }
            None => 0,
        })
    }

    /// The value sector `pba` of `drive` holds if it was ever written (what a log holds, and
    /// the memory beside it keeps, which a read planned before the log failed may still
    /// take).
    pub fn held(&self, drive: u32, pba: u64) -> Option<u64> {
        if self.failed[drive as usize] {
            return self.memory_of_failed.get(&drive).and_then(|m| m.get(&pba)).copied();
        }
        self.physical[drive as usize].get(&pba).copied()
    }

    /// Store `value` on physical sector `pba` of `drive` (ignored on a failed drive).
    pub fn write_physical(&mut self, drive: u32, pba: u64, value: u64) {
        if !self.failed[drive as usize] {
            self.physical[drive as usize].insert(pba, value);
        }
    }

    /// Whether `drive` has failed (its contents are gone).
    pub fn is_failed(&self, drive: u32) -> bool {
        self.failed[drive as usize]
    }

    /// The sectors of `drive` written since the run began (or since it became a target), in
    /// increasing order.
    pub fn written_sectors(&self, drive: u32) -> Vec<u64> {
        let mut sectors: Vec<u64> = self.physical[drive as usize].keys().copied().collect();
        sectors.sort_unstable();
        sectors
    }

    /// Grow to `slots` drive slots; the new ones are spares, holding garbage until written.
    pub fn add_spare_slots(&mut self, slots: usize) {
        self.physical.resize(slots, FxHashMap::default());
        self.failed.resize(slots, false);
        self.garbage.resize(slots, true);
    }

    /// Grow to `slots` drive slots; the new ones are outside the layout (a log drive), and
    /// hold garbage where they were never written.
    pub fn add_outside_slots(&mut self, slots: usize) {
        self.add_spare_slots(slots);
    }

    /// A rebuild starts writing slot `target`: whatever it held is garbage.
    pub fn start_target(&mut self, target: u32) {
        self.physical[target as usize] = FxHashMap::default();
        self.garbage[target as usize] = true;
    }

    /// What physical sector `pba` of `drive` should hold now under `layout`: the value last
    /// written to its logical sector, or the XOR of those of its stripe's data for parity.
    /// `placement`: the layout's placement state, where its copies are now.
    pub fn expected_physical(&mut self, layout: &dyn Layout, drive: u32, pba: u64, placement: Option<&dyn PlacementState>) -> Option<u64> {
        let row = pba % self.unit_sectors;
        match layout.locate_placed(drive, pba, placement)? {
            (stripe, UnitRole::Data { index, .. }) => Some(self.expected(self.logical(stripe, index, row))),
            (stripe, UnitRole::Parity { index }) => {
                layout.map_stripe(stripe, &mut self.scratch);
                let units = self.scratch.data_units() as u32;
                if index == 0 {
                    Some((0..units).fold(0, |acc, i| acc ^ self.expected(self.logical(stripe, i, row))))
                } else {
                    Some(crate::layout::raid6::parity_of(index, (0..units).map(|i| self.expected(self.logical(stripe, i, row)))))
                }
            }
        }
    }

    /// Sectors `[start, end)` of rebuild target `target` just became current: check each
    /// against what the lost member, slot `member_slot` of `layout`, should hold. Call while
    /// the stripes are locked (no write of them in progress). Counts into
    /// `rebuilt_sectors_checked` and `rebuilt_sectors_wrong`; the first wrong one is kept in
    /// `first_wrong_rebuilt` as (slot, sector, expected, actual).
    #[allow(clippy::too_many_arguments)]
    pub fn verify_rebuilt(
        &mut self,
        layout: &dyn Layout,
        member_slot: u32,
        target: u32,
        start: u64,
        end: u64,
        placement: Option<&dyn PlacementState>,
    ) {
        for pba in start..end {
            if let Some(state) = placement {
                let row = pba % self.unit_sectors;
                // (A block whose value is kept elsewhere, in a write-back cache, holds its
                // stale home until its flush writes it; a lost block holds what no one knows;
                // either way its row's parity agrees with what the homes hold, not with the
                // values last written.)
                match layout.locate_placed(member_slot, pba, placement) {
                    Some((stripe, UnitRole::Data { index, .. })) => {
                        if state.data_lost_at(stripe, index, row) || state.keeps_value(self.logical(stripe, index, row)) {
                            continue;
                        }
                    }
                    Some((stripe, UnitRole::Parity { .. })) => {
                        layout.map_stripe(stripe, &mut self.scratch);
                        let units = self.scratch.data_units() as u32;
                        if (0..units).any(|i| state.data_lost_at(stripe, i, row) || state.keeps_value(self.logical(stripe, i, row))) {
                            continue;
                        }
                    }
                    None => {}
                }
            }
            let Some(expected) = self.expected_physical(layout, member_slot, pba, placement) else { continue };
            let actual = self.read_physical(layout, target, pba).unwrap_or(!expected);
            self.stats.rebuilt_sectors_checked += 1;
            if actual != expected {
                self.stats.rebuilt_sectors_wrong += 1;
                self.first_wrong_rebuilt.get_or_insert((target, pba, expected, actual));
            }
        }
    }

    /// A scrub (what Linux md's `check` action does): every sector of every unit on a
    /// working member that holds a written value (not a rebuild target's garbage), read and
    /// compared with what it should hold under `layout`, data with its last written value and
    /// each parity (P and Q) with the one computed from the data's. Returns (sectors
    /// compared, sectors that differ). `member_slots`: the slot of each member.
    pub fn scrub(&mut self, layout: &dyn Layout, member_slots: &[u32], placement: Option<&dyn PlacementState>) -> (u64, u64) {
        let (mut compared, mut differ) = (0, 0);
        let mut map = StripeMap::default();
        for stripe in 0..layout.stripes() {
            layout.map_stripe(stripe, &mut map);
            for u in map.data.clone().iter().chain(map.parity.clone().iter()) {
                let slot = u.drive as usize;
                if self.failed[slot] || self.garbage[slot] || !member_slots.contains(&u.drive) {
                    continue;
                }
                for pba in u.pba..u.pba + self.unit_sectors {
                    let (Some(actual), Some(expected)) =
                        (self.read_physical(layout, u.drive, pba), self.expected_physical(layout, u.drive, pba, placement))
                    else {
                        continue;
                    };
                    compared += 1;
                    differ += (actual != expected) as u64;
                }
            }
        }
        (compared, differ)
    }

    /// The rebuild onto `target` ended: every sector of it is written.
    pub fn target_done(&mut self, target: u32) {
        self.garbage[target as usize] = false;
    }

    /// The drive failed: its contents are lost (but to [`ContentModel::held`]).
    pub fn fail_drive(&mut self, drive: u32) {
        self.failed[drive as usize] = true;
        let contents = std::mem::take(&mut self.physical[drive as usize]);
        self.memory_of_failed.insert(drive, contents);
    }

    /// A crash caught a write of logical sectors `[lba, lba + sectors)` in flight: each now
    /// holds what its data unit's first readable copy holds, as far as the write got (the
    /// user was never answered, so old, new or a mix are all it may find). Parity or other
    /// copies the write did not reach are left as they are, for later reads to find out.
    /// `at(slot, sector)`: the slot that holds a unit's sector now (a rebuild's target, for
    /// what it has made current).
    pub fn adopt_interrupted_write(&mut self, layout: &dyn Layout, lba: u64, sectors: u64, kept: &dyn Fn(u64) -> bool, at: &dyn Fn(u32, u64) -> u32) {
        for lba in lba..lba + sectors {
            if kept(lba) {
                // Its last value lives elsewhere (a write-back cache), not on the drives.
                continue;
            }
            let (stripe, offset) = (lba / self.stripe_data_sectors, lba % self.stripe_data_sectors);
            let (index, row) = ((offset / self.unit_sectors) as usize, offset % self.unit_sectors);
            layout.map_stripe(stripe, &mut self.scratch);
            let copies: Vec<_> = self.scratch.copies_of(index).to_vec();
            if let Some(value) = copies.iter().find_map(|u| self.read_physical(layout, at(u.drive, u.pba + row), u.pba + row)) {
                self.commit(lba, value);
            }
        }
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
    use crate::layout::{self, LayoutParams};

    #[test]
    fn initial_parity_is_the_xor_of_the_initial_data() {
        let params = LayoutParams::new(4, 4, 64);
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
