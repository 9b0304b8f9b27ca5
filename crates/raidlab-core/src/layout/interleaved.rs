//! Interleaved declustering (ID; Teradata's scheme as the thesis describes it: seed 004,
//! Abdalla, §1.3.3, Table 1). The drives form clusters of `cluster_drives` (C). Each drive's
//! first half holds its own data (its *primary*); the second half holds backups. A drive's
//! primary is cut into C − 1 equal *fragments*, and fragment `k` of cluster drive `i` is
//! backed up on cluster drive `(i + 1 + k) mod C`. Inside a drive's backup half the fragments
//! are stacked in order of the drive they back up, skipping the drive itself (Table 1).
//!
//! So a lost drive's primary comes back from all C − 1 other drives of its cluster (one
//! fragment each), and its backup half from the primaries of the same drives: a rebuild reads
//! every survivor of the cluster, and a second failure loses data only inside the cluster.
//!
//! Choices where the thesis is silent (`../shared/papers/notes/thesis.md` §1.3): the primary
//! half is the first half of the drive, each fragment is stored contiguously in primary
//! order; a drive's sectors beyond `2 · (C − 1) · fragment` units are unused. Reads take
//! either copy by the mirror rule (`id_reads = "either"`, the default: the thesis's numbers
//! fit it) or the primary while it works (`"primary"`, what its text says).

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::keys::OwnKey;
use super::plan::{FixedCopyPlanner, Planner, MIRROR};
use super::{Layout, LayoutParams, LayoutShape, Reconstruction, SourceRead, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// Which copy a read of interleaved declustering may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IdReads {
    /// Either copy, by the mirror rule (an idle drive first, else the smaller positioning
    /// estimate, ties at random): what the thesis's numbers fit.
    Either,
    /// The primary copy while its drive works (the thesis's text, §1.3.3), else the backup.
    Primary,
}

/// Interleaved declustering's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[
    OwnKey {
        name: "cluster_drives",
        doc: "drives per cluster (C, at least 2, dividing `drives`): each drive's data is backed up in C − 1 \
              fragments, one on each other drive of its cluster.",
        default: || toml::Value::Integer(8),
        check: OwnKey::check_as::<u32>,
        schema: OwnKey::schema_of::<u32>,
    },
    OwnKey {
        name: "id_reads",
        doc: "which copy a read takes: `either` (the mirror rule; the thesis's numbers fit it) or `primary` \
              (the primary while its drive works, as the thesis's text says).",
        default: || toml::Value::String("either".into()),
        check: OwnKey::check_as::<IdReads>,
        schema: OwnKey::schema_of::<IdReads>,
    },
];

/// Interleaved declustering over `drives` drives in clusters of `cluster` drives.
#[derive(Debug, Clone)]
pub struct InterleavedLayout {
    shape: LayoutShape,
    cluster: u32,
    /// Units per fragment.
    fragment: u64,
    reads: IdReads,
}

impl InterleavedLayout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        let cluster: u32 = params.own("cluster_drives", key)?;
        if cluster < 2 {
            return Err(Error::config(
                format!("{key}.cluster_drives"),
                format!("a cluster needs at least 2 drives, not {cluster}"),
            ));
        }
        if params.drives < cluster || !params.drives.is_multiple_of(cluster) {
            return Err(Error::config(
                format!("{key}.cluster_drives"),
                format!("clusters of {cluster} drives do not divide the array's {} drives", params.drives),
            ));
        }
        let reads = params.own("id_reads", key)?;
        let units = LayoutShape::fit(params, key)?.stripes;
        // Half the drive, cut into C − 1 whole fragments.
        let fragment = units / 2 / u64::from(cluster - 1);
        if fragment == 0 {
            return Err(Error::config(
                format!("{key}.stripe_unit_kib"),
                format!(
                    "a drive of {units} stripe units cannot hold a primary half of {} fragments and its backups",
                    cluster - 1
                ),
            ));
        }
        let stripes = fragment * u64::from(cluster - 1);
        let shape = LayoutShape { drives: params.drives, stripe_unit_sectors: params.stripe_unit_sectors, stripes };
        Ok(Box::new(InterleavedLayout { shape, cluster, fragment, reads }))
    }

    /// Units in each half of a drive: the primary, then the backups.
    fn half(&self) -> u64 {
        self.shape.stripes
    }

    /// The first drive of `drive`'s cluster, and its index there.
    fn cluster_of(&self, drive: u32) -> (u32, u32) {
        (drive / self.cluster * self.cluster, drive % self.cluster)
    }

    /// Where primary unit `unit` of `drive` is backed up: drive and unit.
    fn backup_of(&self, drive: u32, unit: u64) -> (u32, u64) {
        let (first, i) = self.cluster_of(drive);
        let (fragment, offset) = (unit / self.fragment, unit % self.fragment);
        let j = (i + 1 + fragment as u32) % self.cluster;
        // Drive j stacks the fragments it backs up in order of their drive, skipping itself.
        let slot = if i < j { i } else { i - 1 };
        (first + j, self.half() + u64::from(slot) * self.fragment + offset)
    }

    /// Whose primary backup unit `unit` of `drive` (`unit ≥ half`) copies: drive and unit.
    fn primary_of(&self, drive: u32, unit: u64) -> (u32, u64) {
        let (first, j) = self.cluster_of(drive);
        let b = unit - self.half();
        let (slot, offset) = ((b / self.fragment) as u32, b % self.fragment);
        let i = if slot < j { slot } else { slot + 1 };
        let fragment = (j + self.cluster - i - 1) % self.cluster;
        (first + i, u64::from(fragment) * self.fragment + offset)
    }
}

impl Layout for InterleavedLayout {
    fn name(&self) -> &'static str {
        "interleaved"
    }
    fn planner(&self) -> &'static dyn Planner {
        match self.reads {
            IdReads::Either => &MIRROR,
            IdReads::Primary => &PRIMARY_FIRST,
        }
    }
    fn fault_tolerance(&self) -> u32 {
        1
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        let (first, _) = self.cluster_of(member);
        (first..first + self.cluster).filter(|&d| d != member).collect()
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave a primary and its backup \
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
            let (backup, backup_unit) = self.backup_of(drive, stripe);
            out.data.push(UnitLocation { drive, pba: stripe * unit });
            out.data.push(UnitLocation { drive: backup, pba: backup_unit * unit });
        }
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let unit = pba / self.shape.stripe_unit_sectors;
        if drive >= self.shape.drives || unit >= 2 * self.half() {
            return None;
        }
        if unit < self.half() {
            return Some((unit, UnitRole::Data { index: drive, copy: 0 }));
        }
        let (owner, stripe) = self.primary_of(drive, unit);
        Some((stripe, UnitRole::Data { index: owner, copy: 1 }))
    }
    fn member_sectors(&self) -> u64 {
        2 * self.half() * self.shape.stripe_unit_sectors
    }
    fn stripes_in(&self, member: u32, start: u64, end: u64, _placement: Option<&dyn super::PlacementState>) -> (u64, u64) {
        let unit = self.shape.stripe_unit_sectors;
        let (first, last) = (start / unit, (end - 1) / unit);
        if last < self.half() {
            return (first, last);
        }
        // Backup units name stripes by fragment: a range across fragments (or halves) holds
        // stripes far apart; name every stripe between (more locks than needed, none missed).
        let stripe = |u: u64| if u < self.half() { u } else { self.primary_of(member, u).1 };
        let (mut lo, mut hi) = (u64::MAX, 0);
        let mut u = first;
        while u <= last {
            // Each fragment slot (and the primary half) is contiguous in stripes: its ends suffice.
            let run_end = if u < self.half() {
                self.half() - 1
            } else {
                self.half() + ((u - self.half()) / self.fragment + 1) * self.fragment - 1
            }
            .min(last);
            lo = lo.min(stripe(u));
            hi = hi.max(stripe(run_end));
            u = run_end + 1;
        }
        (lo, hi)
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        failed.iter().any(|&d| failed.iter().any(|&e| e != d && e / self.cluster == d / self.cluster))
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: self.redundancy_set(member), xor: false, erasures: 0 })
    }
    fn rebuild_reads(&self, member: u32, _reconstruction: &Reconstruction, start: u64, end: u64, _placement: Option<&dyn super::PlacementState>, out: &mut Vec<SourceRead>) {
        let unit = self.shape.stripe_unit_sectors;
        let mut at = start;
        while at < end {
            let u = at / unit;
            // The run of units that one other drive holds, contiguously: a fragment of the
            // primary half (backed up on one drive), or a fragment slot of the backup half
            // (the primary of one drive).
            let (source, source_unit, run_end_unit) = if u < self.half() {
                let (drive, backup_unit) = self.backup_of(member, u);
                (drive, backup_unit, (u / self.fragment + 1) * self.fragment)
            } else {
                let (drive, primary_unit) = self.primary_of(member, u);
                (drive, primary_unit, self.half() + ((u - self.half()) / self.fragment + 1) * self.fragment)
            };
            let run_end = (run_end_unit * unit).min(end);
            out.push(SourceRead { source, pba: source_unit * unit + at % unit, offset: at - start, sectors: run_end - at, outside: None });
            at = run_end;
        }
    }
}

/// Interleaved declustering's planner with `id_reads = "primary"`: a read takes a unit's
/// primary while its drive can be read, else the backup; writes are the mirror's.
pub static PRIMARY_FIRST: FixedCopyPlanner = FixedCopyPlanner {
    name: "mirror (primary first)",
    // The first working copy is the primary while its drive works.
    choose: |copies, status| copies.iter().find(|c| !status.is_failed(c)).copied(),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::check_bijective;

    fn layout(drives: u32, cluster: u32, units_per_drive: u64) -> Box<dyn Layout> {
        let params = LayoutParams::new(drives, 8, units_per_drive * 8 + 3)
            .with("cluster_drives", cluster)
            .with("id_reads", "either");
        InterleavedLayout::build(&params, "array").unwrap()
    }

    /// The thesis's Table 1, cluster 0 of 8 drives: row `r` of the backup area of disk `j`
    /// names the fragment `d_i.k` stored there (`None` for the diagonal, which Table 1 skips).
    #[test]
    fn backups_sit_where_table_1_puts_them() {
        // Disk j's backup rows, top to bottom, from Table 1 (i, k) per disk column.
        let table: [[Option<(u32, u32)>; 8]; 8] = [
            [None, Some((0, 0)), Some((0, 1)), Some((0, 2)), Some((0, 3)), Some((0, 4)), Some((0, 5)), Some((0, 6))],
            [Some((1, 6)), None, Some((1, 0)), Some((1, 1)), Some((1, 2)), Some((1, 3)), Some((1, 4)), Some((1, 5))],
            [Some((2, 5)), Some((2, 6)), None, Some((2, 0)), Some((2, 1)), Some((2, 2)), Some((2, 3)), Some((2, 4))],
            [Some((3, 4)), Some((3, 5)), Some((3, 6)), None, Some((3, 0)), Some((3, 1)), Some((3, 2)), Some((3, 3))],
            [Some((4, 3)), Some((4, 4)), Some((4, 5)), Some((4, 6)), None, Some((4, 0)), Some((4, 1)), Some((4, 2))],
            [Some((5, 2)), Some((5, 3)), Some((5, 4)), Some((5, 5)), Some((5, 6)), None, Some((5, 0)), Some((5, 1))],
            [Some((6, 1)), Some((6, 2)), Some((6, 3)), Some((6, 4)), Some((6, 5)), Some((6, 6)), None, Some((6, 0))],
            [Some((7, 0)), Some((7, 1)), Some((7, 2)), Some((7, 3)), Some((7, 4)), Some((7, 5)), Some((7, 6)), None],
        ];
        let fragment = 3u64;
        let l = layout(16, 8, 2 * 7 * fragment + 1);
        let unit = 8;
        for j in 0..8u32 {
            // Disk j's backup rows are Table 1's rows without its own (the diagonal).
            let rows: Vec<(u32, u32)> = table.iter().filter_map(|row| row[j as usize]).collect();
            assert_eq!(rows.len(), 7);
            for (slot, &(i, k)) in rows.iter().enumerate() {
                for offset in 0..fragment {
                    let backup_unit = 7 * fragment + slot as u64 * fragment + offset;
                    let stripe = u64::from(k) * fragment + offset;
                    assert_eq!(l.locate(j, backup_unit * unit), Some((stripe, UnitRole::Data { index: i, copy: 1 })));
                    // The same rule on the second cluster, drives 8–15.
                    assert_eq!(
                        l.locate(8 + j, backup_unit * unit),
                        Some((stripe, UnitRole::Data { index: 8 + i, copy: 1 }))
                    );
                }
            }
        }
    }

    #[test]
    fn every_size_is_a_bijection_with_losses_only_inside_a_cluster() {
        for (drives, cluster, units) in [(2, 2, 5), (4, 2, 9), (8, 4, 20), (16, 8, 31), (6, 3, 13), (8, 8, 15)] {
            let l = layout(drives, cluster, units);
            check_bijective(l.as_ref());
            assert!(!l.data_lost(&[0]));
            assert!(l.data_lost(&[0, 1]));
            if drives > cluster {
                assert!(!l.data_lost(&[0, cluster]), "{drives}/{cluster}");
            }
        }
    }

    /// The thesis's numbers: 8-drive clusters of the IBM 0661 (79,716 blocks of 4 KB per drive,
    /// §2.1): half a disk is 39,858 blocks and a fragment 5,694 blocks.
    #[test]
    fn an_ibm0661_cluster_of_8_has_fragments_of_5694_blocks() {
        let blocks = 79_716u64;
        let params = LayoutParams::new(16, 8, blocks * 8).with("cluster_drives", 8);
        let l = InterleavedLayout::build(&params.with("id_reads", "either"), "array").unwrap();
        assert_eq!(l.stripes(), 7 * 5_694);
        assert_eq!(l.stripes(), 39_858);
    }

    /// Every sector of a lost member is rebuilt from the one survivor holding its other copy,
    /// at the sector that copy lies at, whatever the unit's size and position.
    #[test]
    fn rebuild_reads_find_the_other_copy_of_every_sector() {
        let l = layout(8, 4, 2 * 3 * 4 + 2);
        let reconstruction = l.reconstruction(1).unwrap();
        let mut reads = Vec::new();
        for size in [1u64, 5, 8, 24, 40] {
            let mut start = 0;
            while start < l.member_sectors() {
                let end = (start + size).min(l.member_sectors());
                reads.clear();
                l.rebuild_reads(1, &reconstruction, start, end, None, &mut reads);
                let mut covered = 0;
                for r in &reads {
                    assert_eq!(r.offset, covered, "reads in order, no gap");
                    assert!(reconstruction.sources.contains(&r.source));
                    for s in 0..r.sectors {
                        let (stripe, role) = l.locate(1, start + r.offset + s).unwrap();
                        let (other_stripe, other_role) = l.locate(r.source, r.pba + s).unwrap();
                        assert_eq!(stripe, other_stripe);
                        let (UnitRole::Data { index: a, copy: ca }, UnitRole::Data { index: b, copy: cb }) = (role, other_role) else {
                            panic!("data only")
                        };
                        assert_eq!((a, ca + cb), (b, 1), "the other copy of the same unit");
                    }
                    covered += r.sectors;
                }
                assert_eq!(covered, end - start);
                start = end;
            }
        }
    }

    #[test]
    fn bad_clusters_name_their_key() {
        let params = |drives: u32, cluster: u32| LayoutParams::new(drives, 8, 800).with("cluster_drives", cluster).with("id_reads", "either");
        let err = InterleavedLayout::build(&params(8, 1), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.cluster_drives: a cluster needs at least 2"), "{err}");
        let err = InterleavedLayout::build(&params(12, 8), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.cluster_drives: clusters of 8 drives do not divide"), "{err}");
    }
}
