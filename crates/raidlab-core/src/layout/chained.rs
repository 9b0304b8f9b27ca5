//! Chained declustering (Hsiao and DeWitt; RAIDframe's layout 'C'): the primary copy of data
//! unit `k` of a row is on drive `k`, its mirror on the next drive of the chain, `(k + 1) mod
//! N`, in the second half of that drive ("one half disk down"). Every drive holds its own
//! primaries in its first half and its predecessor's mirrors in its second half.
//!
//! A lost drive is rebuilt from its two neighbours: its primaries from its successor's
//! second half, its mirrors from its predecessor's first half. Data is lost only when two
//! neighbours fail. (The `../shared/anchors/layouts-and-logs.md` §2 facts; RAIDframe's
//! sparing regions are not modelled: raidlab rebuilds onto hot spares.)
//!
//! Reads take either copy by the mirror rule (an idle drive first, else the smaller
//! positioning estimate), which spreads a failed drive's reads over its neighbours and, as
//! they fill, along the chain. Hsiao and DeWitt's static load shifting (each survivor serving
//! a set share of its primaries and its mirrors) is not modelled.

use super::plan::{Planner, MIRROR};
use super::{Layout, LayoutParams, LayoutShape, Reconstruction, SourceRead, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// Chained declustering over `drives` drives.
#[derive(Debug, Clone)]
pub struct ChainedLayout {
    shape: LayoutShape,
}

impl ChainedLayout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        if params.drives < 2 {
            return Err(Error::config(
                format!("{key}.drives"),
                format!("chained declustering needs at least 2 drives, not {}", params.drives),
            ));
        }
        let units = LayoutShape::fit(params, key)?.stripes;
        let stripes = units / 2;
        if stripes == 0 {
            return Err(Error::config(
                format!("{key}.stripe_unit_kib"),
                "a drive must hold two stripe units: one of its own, one of its neighbour's",
            ));
        }
        Ok(Box::new(ChainedLayout {
            shape: LayoutShape { drives: params.drives, stripe_unit_sectors: params.stripe_unit_sectors, stripes },
        }))
    }

    fn next(&self, drive: u32) -> u32 {
        (drive + 1) % self.shape.drives
    }

    fn previous(&self, drive: u32) -> u32 {
        (drive + self.shape.drives - 1) % self.shape.drives
    }

    /// Sectors in each half of a drive.
    fn half_sectors(&self) -> u64 {
        self.shape.stripes * self.shape.stripe_unit_sectors
    }
}

impl Layout for ChainedLayout {
    fn name(&self) -> &'static str {
        "chained"
    }
    fn planner(&self) -> &'static dyn Planner {
        &MIRROR
    }
    fn fault_tolerance(&self) -> u32 {
        1
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        let mut set = vec![self.previous(member), self.next(member)];
        set.sort_unstable();
        set.dedup();
        set
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave a primary and its mirror \
         different, until a resynchronization copies one over the other"
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.shape.drives
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        let unit = self.shape.stripe_unit_sectors;
        out.reset(stripe, 2);
        for drive in 0..self.shape.drives {
            out.data.push(UnitLocation { drive, pba: stripe * unit });
            out.data.push(UnitLocation { drive: self.next(drive), pba: self.half_sectors() + stripe * unit });
        }
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let unit = pba / self.shape.stripe_unit_sectors;
        if drive >= self.shape.drives || unit >= 2 * self.shape.stripes {
            return None;
        }
        Some(if unit < self.shape.stripes {
            (unit, UnitRole::Data { index: drive, copy: 0 })
        } else {
            (unit - self.shape.stripes, UnitRole::Data { index: self.previous(drive), copy: 1 })
        })
    }
    fn member_sectors(&self) -> u64 {
        2 * self.half_sectors()
    }
    fn stripes_in(&self, _member: u32, start: u64, end: u64, _placement: Option<&dyn super::PlacementState>) -> (u64, u64) {
        let unit = self.shape.stripe_unit_sectors;
        let (first, last) = (start / unit, (end - 1) / unit);
        let half = self.shape.stripes;
        match (first < half, last < half) {
            (true, true) => (first, last),
            (false, false) => (first - half, last - half),
            // Across the middle: the first half's last stripes and the second's first ones.
            _ => (0, half - 1),
        }
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        failed.iter().any(|&d| d < self.shape.drives && failed.contains(&self.next(d)) && self.next(d) != d)
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: self.redundancy_set(member), xor: false, erasures: 0 })
    }
    fn rebuild_reads(&self, member: u32, _reconstruction: &Reconstruction, start: u64, end: u64, _placement: Option<&dyn super::PlacementState>, out: &mut Vec<SourceRead>) {
        let half = self.half_sectors();
        // The first half (its primaries) is mirrored in the successor's second half…
        if start < half {
            let to = end.min(half);
            out.push(SourceRead { source: self.next(member), pba: half + start, offset: 0, sectors: to - start, outside: None });
        }
        // …and the second half (its predecessor's mirrors) copies the predecessor's first.
        if end > half {
            let from = start.max(half);
            out.push(SourceRead { source: self.previous(member), pba: from - half, offset: from - start, sectors: end - from, outside: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::check_bijective;

    fn layout(drives: u32, units_per_drive: u64) -> Box<dyn Layout> {
        ChainedLayout::build(&LayoutParams::new(drives, 8, units_per_drive * 8 + 5), "array").unwrap()
    }

    /// Four drives, two rows: RAIDframe's picture, worked by hand (primary `k` on drive `k`,
    /// its mirror one drive on, one half down).
    #[test]
    fn four_drives_place_each_mirror_on_the_next_drive_half_a_drive_down() {
        let l = layout(4, 4);
        let unit = 8;
        // (drive, unit row) → (stripe, data index, copy)
        let table = [
            ((0, 0), (0, 0, 0)),
            ((1, 0), (0, 1, 0)),
            ((3, 1), (1, 3, 0)),
            ((1, 2), (0, 0, 1)),
            ((2, 2), (0, 1, 1)),
            ((0, 2), (0, 3, 1)),
            ((0, 3), (1, 3, 1)),
            ((3, 3), (1, 2, 1)),
        ];
        for ((drive, row), (stripe, index, copy)) in table {
            assert_eq!(l.locate(drive, row * unit + 3), Some((stripe, UnitRole::Data { index, copy })), "drive {drive} row {row}");
        }
        assert_eq!(l.locate(0, 4 * unit), None, "past the two halves");
    }

    #[test]
    fn every_size_is_a_bijection_and_only_neighbours_lose_data() {
        for (drives, units) in [(2, 2), (2, 7), (3, 6), (4, 9), (5, 10), (8, 16)] {
            let l = layout(drives, units);
            check_bijective(l.as_ref());
        }
        let l = layout(6, 8);
        assert!(l.data_lost(&[2, 3]) && l.data_lost(&[5, 0]));
        assert!(!l.data_lost(&[0, 2]) && !l.data_lost(&[1, 3, 5]));
        assert_eq!(l.redundancy_set(0), vec![1, 5]);
        assert!(layout(2, 4).data_lost(&[1, 0]));
    }

    /// Every sector of a lost member is rebuilt from a neighbour's other copy of it.
    #[test]
    fn rebuild_reads_find_the_other_copy_of_every_sector() {
        let l = layout(5, 9);
        for member in 0..5 {
            let reconstruction = l.reconstruction(member).unwrap();
            for size in [1u64, 7, 8, 24] {
                let mut start = 0;
                while start < l.member_sectors() {
                    let end = (start + size).min(l.member_sectors());
                    let mut reads = Vec::new();
                    l.rebuild_reads(member, &reconstruction, start, end, None, &mut reads);
                    let mut covered = 0;
                    for r in &reads {
                        assert_eq!(r.offset, covered);
                        assert!(reconstruction.sources.contains(&r.source));
                        for s in 0..r.sectors {
                            let (stripe, role) = l.locate(member, start + r.offset + s).unwrap();
                            let (other_stripe, other_role) = l.locate(r.source, r.pba + s).unwrap();
                            let (UnitRole::Data { index: a, copy: ca }, UnitRole::Data { index: b, copy: cb }) = (role, other_role) else {
                                panic!("data only")
                            };
                            assert_eq!((stripe, a, ca + cb), (other_stripe, b, 1));
                        }
                        covered += r.sectors;
                    }
                    assert_eq!(covered, end - start);
                    start = end;
                }
            }
        }
    }

    #[test]
    fn one_drive_is_refused_by_name() {
        let err = ChainedLayout::build(&LayoutParams::new(1, 8, 800), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.drives: chained declustering needs at least 2 drives"), "{err}");
    }
}
