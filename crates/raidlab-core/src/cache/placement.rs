//! Where a cached block lives in the array: its data drive and its stripe's parity drives.
//!
//! The cache sees 4 KiB blocks (`BLOCK_BYTES`). A block's *chunk* (stripe unit) is
//! `block / chunk_blocks`; chunks fill the stripes in order, `data units per stripe` at a
//! time, as the array's layout places them. Parity layouts repeat every `drives` stripes, so
//! one table of `drives × data units` entries, filled from the layout itself, gives every
//! block's drives with two divisions by fixed divisors. Both come from raidlab's own layouts:
//! RAID-5 (`layout::raid5`, any of its four rotations) and RAID-6 (`layout::raid6`: P on
//! drive `n − 1 − (s mod n)`, Q on the drive after it and the data after Q, wrapping).

use crate::error::{Error, Result};
use crate::layout::{self, Layout, LayoutParams, ParityRotation, StripeMap};
use crate::sim::Divisor;

/// Bytes per cache block.
pub const BLOCK_BYTES: u64 = 4096;

/// Sectors (512 bytes) per cache block.
pub const BLOCK_SECTORS: u64 = BLOCK_BYTES / 512;

/// The most drives a placement table describes (drive numbers are stored in a byte).
pub const MAX_DRIVES: u32 = 254;

/// Marks "no such parity unit" (the Q of a single-parity layout).
const NO_DRIVE: u8 = u8::MAX;

/// The drives holding one block's stripe: its data unit, P and, with dual parity, Q.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDrives {
    /// The drive holding the block.
    pub data: u32,
    /// The drive holding its stripe's P parity.
    pub p: u32,
    /// The drive holding its stripe's Q parity (`None` with single parity).
    pub q: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    data: u8,
    p: u8,
    q: u8,
}

/// Block → drives of a parity array (see the module docs).
#[derive(Debug, Clone)]
pub struct Placement {
    drives: u32,
    chunk_blocks: Divisor,
    /// Chunks per repeat of the layout (`drives` stripes).
    period: Divisor,
    table: Vec<Entry>,
}

impl Placement {
    /// RAID-5 of `drives` drives, `chunk_blocks` blocks per stripe unit, parity rotated as
    /// `rotation` says. `key` names the configuration table for errors.
    pub fn raid5(drives: u32, chunk_blocks: u64, rotation: ParityRotation, key: &str) -> Result<Self> {
        check(drives, 3, chunk_blocks, "RAID-5", key)?;
        let params = LayoutParams::new(drives, chunk_blocks * BLOCK_SECTORS, u64::from(drives) * chunk_blocks * BLOCK_SECTORS)
            .with("parity_rotation", rotation);
        let raid5 = layout::build("raid5", &params, key)?;
        Self::of_parity_layout(raid5.as_ref(), key)
    }

    /// The placement of a built single-parity layout (an array's RAID-5, whatever its
    /// rotation), whose stripe unit is `chunk_blocks` blocks.
    pub fn of_parity_layout(layout: &dyn Layout, key: &str) -> Result<Self> {
        let drives = layout.drives();
        let chunk_blocks = layout.stripe_unit_sectors() / BLOCK_SECTORS;
        let (least, name) = if layout.fault_tolerance() >= 2 { (4, "RAID-6") } else { (3, "RAID-5") };
        check(drives, least, chunk_blocks, name, key)?;
        let mut map = StripeMap::default();
        let mut table = Vec::with_capacity((drives * (drives - 1)) as usize);
        for stripe in 0..u64::from(drives) {
            layout.map_stripe(stripe, &mut map);
            let p = map.parity[0].drive as u8;
            let q = map.parity.get(1).map_or(NO_DRIVE, |u| u.drive as u8);
            table.extend(map.data.iter().map(|unit| Entry { data: unit.drive as u8, p, q }));
        }
        Ok(Self::from_table(drives, chunk_blocks, table))
    }

    /// RAID-6 of `drives` drives: raidlab's RAID-6 layout (P and Q rotated
    /// left-symmetrically, Q after P).
    pub fn raid6(drives: u32, chunk_blocks: u64, key: &str) -> Result<Self> {
        check(drives, 4, chunk_blocks, "RAID-6", key)?;
        let params = LayoutParams::new(drives, chunk_blocks * BLOCK_SECTORS, u64::from(drives) * chunk_blocks * BLOCK_SECTORS);
        let raid6 = layout::build("raid6", &params, key)?;
        Self::of_parity_layout(raid6.as_ref(), key)
    }

    fn from_table(drives: u32, chunk_blocks: u64, table: Vec<Entry>) -> Self {
        Placement {
            drives,
            chunk_blocks: Divisor::new(chunk_blocks),
            period: Divisor::new(table.len() as u64),
            table,
        }
    }

    /// Drives in the array.
    pub fn drives(&self) -> u32 {
        self.drives
    }

    /// The first block on `drive` in the layout's period (`None` for a drive holding parity only).
    pub fn first_block_on(&self, drive: u32) -> Option<u64> {
        let chunk = self.table.iter().position(|entry| u32::from(entry.data) == drive)?;
        Some(chunk as u64 * self.chunk_blocks.get())
    }

    #[inline]
    fn entry(&self, block: u64) -> Entry {
        let chunk = self.chunk_blocks.div(block);
        self.table[self.period.rem(chunk) as usize]
    }

    /// The drive holding `block`.
    #[inline]
    pub fn drive(&self, block: u64) -> u32 {
        u32::from(self.entry(block).data)
    }

    /// The drives of `block`'s stripe.
    #[inline]
    pub fn locate(&self, block: u64) -> BlockDrives {
        let entry = self.entry(block);
        BlockDrives {
            data: u32::from(entry.data),
            p: u32::from(entry.p),
            q: (entry.q != NO_DRIVE).then_some(u32::from(entry.q)),
        }
    }
}

fn check(drives: u32, least: u32, chunk_blocks: u64, name: &str, key: &str) -> Result<()> {
    if !(least..=MAX_DRIVES).contains(&drives) {
        return Err(Error::config(
            format!("{key}.drives"),
            format!("{name} needs {least} to {MAX_DRIVES} drives, not {drives}"),
        ));
    }
    if chunk_blocks == 0 {
        return Err(Error::config(format!("{key}.chunk_kib"), "a stripe unit holds at least one 4 KiB block"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raid5_blocks_follow_the_left_symmetric_table() {
        // 5 drives, 2 blocks per chunk: stripe 0 holds chunks 0-3 on drives 0-3 (P on 4);
        // stripe 1 holds chunks 4-7 on drives 4, 0, 1, 2 (P on 3).
        let placement = Placement::raid5(5, 2, ParityRotation::LeftSymmetric, "cache").unwrap();
        let drives: Vec<u32> = (0..16).map(|block| placement.drive(block)).collect();
        assert_eq!(drives, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0, 1, 1, 2, 2]);
        assert_eq!(placement.locate(9), BlockDrives { data: 4, p: 3, q: None });
        // The pattern repeats every 5 stripes = 20 chunks = 40 blocks.
        for block in 0..40 {
            assert_eq!(placement.locate(block), placement.locate(block + 40 * 1_000_003));
        }
    }

    #[test]
    fn every_drive_holds_an_equal_share_of_a_period() {
        for drives in 3..=9 {
            let placement = Placement::raid5(drives, 1, ParityRotation::RightAsymmetric, "cache").unwrap();
            let mut per_drive = vec![0; drives as usize];
            for block in 0..u64::from(drives * (drives - 1)) {
                let place = placement.locate(block);
                assert_ne!(place.data, place.p);
                per_drive[place.data as usize] += 1;
            }
            assert!(per_drive.iter().all(|&count| count == drives - 1), "{per_drive:?}");
        }
    }

    #[test]
    fn raid6_keeps_data_p_and_q_apart() {
        let placement = Placement::raid6(6, 1, "cache").unwrap();
        // Stripe 0: P on 5, Q on 0, data on 1..=4.
        assert_eq!(placement.locate(0), BlockDrives { data: 1, p: 5, q: Some(0) });
        assert_eq!(placement.locate(3), BlockDrives { data: 4, p: 5, q: Some(0) });
        for block in 0..24 {
            let place = placement.locate(block);
            let q = place.q.unwrap();
            assert!(place.data != place.p && place.data != q && place.p != q, "{place:?}");
        }
    }

    #[test]
    fn too_few_drives_or_an_empty_chunk_name_their_key() {
        let err = Placement::raid5(2, 16, ParityRotation::LeftSymmetric, "cache").unwrap_err().to_string();
        assert!(err.starts_with("cache.drives: RAID-5 needs 3 to"), "{err}");
        let err = Placement::raid6(3, 16, "cache").unwrap_err().to_string();
        assert!(err.starts_with("cache.drives: RAID-6 needs 4 to"), "{err}");
        let err = Placement::raid5(5, 0, ParityRotation::LeftSymmetric, "cache").unwrap_err().to_string();
        assert!(err.starts_with("cache.chunk_kib:"), "{err}");
    }
}
