//! OpenZFS dRAID (`draid[P][:Dd][:Cc][:Ss]`), as `vdev_draid.c`'s header comment describes
//! it: groups of D data and P parity columns of fixed width, spread over C children with S
//! children's worth of distributed spare space.
//!
//! **Rows and slices.** A *row* is `row_kib` (16 MiB in ZFS) of every child at the same
//! offset. The C − S data columns of consecutive rows are filled by groups of D + P columns
//! in order, a group spanning two rows where it does not fit; lcm(D + P, C − S) columns make
//! a whole number of groups, and the rows holding them are a *slice*. Each slice applies one
//! permutation of the children: its logical column `j` is child `perm[j]`, and its last S
//! columns are the distributed spare space.
//!
//! **Permutations.** A table of 256 rows (512 from 32 children up), each a Fisher–Yates
//! shuffle of the previous one; slice `i` uses row `i mod rows`, rotated by
//! `⌊i / rows⌋ mod C` (`(base[j] + rotation) mod C`). ZFS hard-codes a seed per child count;
//! raidlab draws its own from a fixed seed per child count, so the structure is ZFS's and the
//! maps are not bit-identical. The imbalance of a rebuild's reads (most busy / least busy
//! survivor over a whole cycle of the maps) is [`DraidLayout::rebuild_imbalance`].
//!
//! **Stripes.** Within a group, a stripe is one stripe unit (`stripe_unit_kib`) at the same
//! offset in each of its columns' rows: parity columns first (P, then Q), then data, as
//! RAIDZ orders them. Stripes of a slice go group by group, each group's down its rows, so
//! consecutive stripes are sequential on each child. P = 1 plans as RAID-5, P = 2 as RAID-6
//! (P+Q); triple parity is refused.
//!
//! **Distributed spares.** Each of the S spares is a drive slot of its own to the controller
//! (after every real slot), offered first as a rebuild target; the engine sends its
//! operations to the member whose free column holds the sector
//! ([`Layout::distributed_spare_member`]), so a rebuild onto it writes across every child.
//! Where the free column is the lost member's own, the member held nothing and no drive is
//! involved. A distributed spare is offered only while no other member is failed (their
//! columns of it are gone), and when a child fails under a spare that holds (or is being
//! rebuilt into) another member, raidlab fails the spare whole and rebuilds that member again:
//! conservative (ZFS repairs only the blocks that lay on the lost child).
//!
//! **Healing.** Once a member lives in a distributed spare and a spare drive is ready, the
//! controller copies it onto the drive (`Controller::start_healing`, `rebuild.healing`),
//! which frees the distributed spare, as ZFS's healing resilver after `zpool replace` does.
//!
//! **Not modelled here** (said where a run would meet it): ZFS writes whole, variable-width
//! stripes padded with skip sectors (copy-on-write), not read-modify-write; raidlab's dRAID
//! updates stripes in place as md would.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::keys::OwnKey;
use super::plan::Planner;
use super::{Layout, LayoutParams, LayoutShape, Reconstruction, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// dRAID's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[
    OwnKey {
        name: "draid",
        doc: "the vdev in ZFS's syntax, `draid[P][:Dd][:Cc][:Ss]`: parity P (1 or 2; default 1), data D per group \
              (default 8), children C (default and only value: `drives`), distributed spares S (default 0).",
        default: || toml::Value::String("draid1".into()),
        check: OwnKey::check_as::<String>,
        schema: OwnKey::schema_of::<String>,
    },
    OwnKey {
        name: "row_kib",
        doc: "KiB of each child in one row (ZFS: 16 MiB, 16384); a multiple of the stripe unit.",
        default: || toml::Value::Integer(16384),
        check: OwnKey::check_as::<u64>,
        schema: OwnKey::schema_of::<u64>,
    },
];

/// A parsed `draid[P][:Dd][:Cc][:Ss]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DraidSpec {
    pub parity: u32,
    pub data: u32,
    pub children: u32,
    pub spares: u32,
}

impl DraidSpec {
    /// Parse `spec` for an array of `drives` drives; errors name `key`.
    pub fn parse(spec: &str, drives: u32, key: &str) -> Result<DraidSpec> {
        let bad = |why: String| Error::config(key, format!("{spec:?}: {why}"));
        let mut parts = spec.split(':');
        let head = parts.next().unwrap_or("");
        let parity = match head.strip_prefix("draid") {
            Some("") => 1,
            Some(p) => p.parse::<u32>().map_err(|_| bad(format!("parity {p:?} is not a number (draid1, draid2)")))?,
            None => return Err(bad("starts with `draid`, as `draid2:8d:106c:2s`".into())),
        };
        let mut out = DraidSpec { parity, data: 8, children: drives, spares: 0 };
        for part in parts {
            let (number, unit) = part.split_at(part.len().saturating_sub(1));
            let n = number.parse::<u32>().map_err(|_| bad(format!("{part:?} is not a count with d, c or s after it")))?;
            match unit {
                "d" => out.data = n,
                "c" => out.children = n,
                "s" => out.spares = n,
                _ => return Err(bad(format!("{part:?}: the suffix is d (data), c (children) or s (spares)"))),
            }
        }
        if !(1..=2).contains(&out.parity) {
            return Err(bad(format!(
                "parity {}: raidlab models draid1 and draid2 (P and P+Q); draid3 needs a third parity",
                out.parity
            )));
        }
        if out.children != drives {
            return Err(bad(format!("{} children, and the array has {drives} drives", out.children)));
        }
        if out.data == 0 {
            return Err(bad("a group needs at least one data column".into()));
        }
        if out.data + out.parity > out.children.saturating_sub(out.spares) {
            return Err(bad(format!(
                "D + P = {} exceeds C − S = {}: a group must fit in the children that are not spare space",
                out.data + out.parity,
                out.children.saturating_sub(out.spares)
            )));
        }
        if out.children > 255 {
            return Err(bad(format!("{} children: ZFS's dRAID takes at most 255", out.children)));
        }
        Ok(out)
    }
}

/// dRAID's layout (module docs).
#[derive(Debug, Clone)]
pub struct DraidLayout {
    shape: LayoutShape,
    spec: DraidSpec,
    /// The permutation table: `rows` rows of C children, and each row's inverse.
    perms: Vec<Vec<u16>>,
    inverse: Vec<Vec<u16>>,
    /// Sectors of a child in one row.
    row_sectors: u64,
    /// Rows per slice, groups per slice, slices.
    rows_per_slice: u64,
    groups_per_slice: u64,
    slices: u64,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl DraidLayout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        Ok(Box::new(DraidLayout::new(params, key)?))
    }

    /// The layout for `params` (own keys filled in); errors name keys under `key`.
    pub fn new(params: &LayoutParams, key: &str) -> Result<DraidLayout> {
        let spec_text: String = params.own("draid", key)?;
        let spec = DraidSpec::parse(&spec_text, params.drives, &format!("{key}.draid"))?;
        let row_kib: u64 = params.own("row_kib", key)?;
        let row_sectors = row_kib * 2;
        let unit = params.stripe_unit_sectors;
        if row_sectors == 0 || row_sectors % unit != 0 {
            return Err(Error::config(
                format!("{key}.row_kib"),
                format!("{row_kib} KiB is not a whole number of stripe units ({} KiB)", unit as f64 / 2.0),
            ));
        }
        let width = (spec.data + spec.parity) as u64;
        let columns = (spec.children - spec.spares) as u64;
        let lcm = width / gcd(width, columns) * columns;
        let (rows_per_slice, groups_per_slice) = (lcm / columns, lcm / width);
        let rows = params.drive_capacity_sectors / row_sectors;
        let slices = rows / rows_per_slice;
        if slices == 0 {
            return Err(Error::config(
                format!("{key}.row_kib"),
                format!(
                    "a slice takes {rows_per_slice} rows of {row_kib} KiB on each drive, and a drive holds {rows}: use smaller rows"
                ),
            ));
        }
        let (perms, inverse) = permutations(spec.children);
        let stripes = slices * groups_per_slice * (row_sectors / unit);
        let shape = LayoutShape { drives: spec.children, stripe_unit_sectors: unit, stripes };
        Ok(DraidLayout { shape, spec, perms, inverse, row_sectors, rows_per_slice, groups_per_slice, slices })
    }

    /// The vdev's parameters.
    pub fn spec(&self) -> DraidSpec {
        self.spec
    }

    /// Slice `slice`'s child at logical column `column`.
    #[inline]
    fn child(&self, slice: u64, column: u64) -> u32 {
        let rows = self.perms.len() as u64;
        let rotation = (slice / rows) % self.spec.children as u64;
        let base = self.perms[(slice % rows) as usize][column as usize] as u64;
        ((base + rotation) % self.spec.children as u64) as u32
    }

    /// Slice `slice`'s logical column of child `child`.
    #[inline]
    fn column(&self, slice: u64, child: u32) -> u64 {
        let rows = self.perms.len() as u64;
        let c = self.spec.children as u64;
        let rotation = (slice / rows) % c;
        self.inverse[(slice % rows) as usize][((child as u64 + c - rotation) % c) as usize] as u64
    }

    fn units_per_row(&self) -> u64 {
        self.row_sectors / self.shape.stripe_unit_sectors
    }

    /// The child and first sector of column `column` (0..D+P) of `stripe`.
    fn unit_at(&self, stripe: u64, column: u64) -> UnitLocation {
        let upr = self.units_per_row();
        let per_slice = self.groups_per_slice * upr;
        let (slice, rest) = (stripe / per_slice, stripe % per_slice);
        let (group, unit_row) = (rest / upr, rest % upr);
        let width = (self.spec.data + self.spec.parity) as u64;
        let columns = (self.spec.children - self.spec.spares) as u64;
        let logical = group * width + column;
        let (row, col) = (logical / columns, logical % columns);
        let pba = (slice * self.rows_per_slice + row) * self.row_sectors + unit_row * self.shape.stripe_unit_sectors;
        UnitLocation { drive: self.child(slice, col), pba }
    }

    /// Over a whole cycle of the maps (rows × C slices), the units each survivor reads to
    /// rebuild child `failed`: most busy / least busy, the imbalance ratio `vdev_draid.c`
    /// tabulates for its maps.
    pub fn rebuild_imbalance(&self, failed: u32) -> f64 {
        self.rebuild_imbalance_over(failed, self.perms.len() as u64 * self.spec.children as u64)
    }

    /// [`DraidLayout::rebuild_imbalance`] over the first `slices` slices (the table's rows
    /// once, unrotated, for `slices` = rows).
    pub fn rebuild_imbalance_over(&self, failed: u32, slices: u64) -> f64 {
        let c = self.spec.children as u64;
        let width = (self.spec.data + self.spec.parity) as u64;
        let columns = c - self.spec.spares as u64;
        let mut reads = vec![0u64; c as usize];
        for slice in 0..slices {
            for group in 0..self.groups_per_slice {
                let drives: Vec<u32> = (0..width).map(|k| self.child(slice, (group * width + k) % columns)).collect();
                if drives.contains(&failed) {
                    for &d in drives.iter().filter(|&&d| d != failed) {
                        reads[d as usize] += 1;
                    }
                }
            }
        }
        let survivors = reads.iter().enumerate().filter(|&(d, _)| d as u32 != failed).map(|(_, &n)| n);
        let (least, most) = survivors.fold((u64::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        most as f64 / least.max(1) as f64
    }
}

/// The permutation table of `children` children and each row's inverse: 256 rows below 32
/// children, 512 from 32 up, each a Fisher–Yates shuffle of the one before, from a seed fixed
/// per child count.
fn permutations(children: u32) -> (Vec<Vec<u16>>, Vec<Vec<u16>>) {
    let rows = if children < 32 { 256 } else { 512 };
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0xD7A1_D000_0000_0000 ^ children as u64);
    let mut row: Vec<u16> = (0..children as u16).collect();
    let mut perms = Vec::with_capacity(rows);
    for _ in 0..rows {
        row.shuffle(&mut rng);
        perms.push(row.clone());
    }
    let inverse = perms
        .iter()
        .map(|p| {
            let mut inv = vec![0u16; p.len()];
            for (column, &child) in p.iter().enumerate() {
                inv[child as usize] = column as u16;
            }
            inv
        })
        .collect();
    (perms, inverse)
}

impl Layout for DraidLayout {
    fn name(&self) -> &'static str {
        "draid"
    }
    fn planner(&self) -> &'static dyn Planner {
        if self.spec.parity == 2 {
            &super::raid6::PQ
        } else {
            &super::plan::PARITY
        }
    }
    fn fault_tolerance(&self) -> u32 {
        self.spec.parity
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.spec.data
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave its stripe's parity inconsistent with the data"
    }
    fn rebuild_refusal(&self, rebuild: &super::RebuildAsked) -> Option<String> {
        (self.spec.parity == 2 && rebuild.piggyback).then(|| {
            "piggybacking writes a degraded read's XOR reconstruction to the target; dRAID2's units are not an XOR of the \
             others (set rebuild.piggyback = false)"
                .to_string()
        })
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.reset(stripe, 1);
        let p = self.spec.parity as u64;
        for column in p..p + self.spec.data as u64 {
            out.data.push(self.unit_at(stripe, column));
        }
        for column in 0..p {
            out.parity.push(self.unit_at(stripe, column));
        }
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        Some(self.unit_at(stripe, self.spec.parity as u64 + index as u64))
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        if drive >= self.spec.children || pba >= self.member_sectors() {
            return None;
        }
        let row = pba / self.row_sectors;
        let (slice, row_in_slice) = (row / self.rows_per_slice, row % self.rows_per_slice);
        let columns = (self.spec.children - self.spec.spares) as u64;
        let col = self.column(slice, drive);
        if col >= columns {
            return None; // distributed spare space
        }
        let width = (self.spec.data + self.spec.parity) as u64;
        let logical = row_in_slice * columns + col;
        let (group, column) = (logical / width, logical % width);
        let unit_row = (pba % self.row_sectors) / self.shape.stripe_unit_sectors;
        let stripe = (slice * self.groups_per_slice + group) * self.units_per_row() + unit_row;
        let p = self.spec.parity as u64;
        let role =
            if column < p { UnitRole::Parity { index: column as u32 } } else { UnitRole::Data { index: (column - p) as u32, copy: 0 } };
        Some((stripe, role))
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        if failed.len() as u32 <= self.spec.parity {
            return false;
        }
        // Some group of some slice holds more failed children than it has parities.
        let width = (self.spec.data + self.spec.parity) as u64;
        let columns = (self.spec.children - self.spec.spares) as u64;
        let cycle = (self.perms.len() as u64 * self.spec.children as u64).min(self.slices);
        (0..cycle).any(|slice| {
            (0..self.groups_per_slice).any(|group| {
                let hit = (0..width).filter(|&k| failed.contains(&self.child(slice, (group * width + k) % columns))).count();
                hit as u32 > self.spec.parity
            })
        })
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        // Every child shares some group with every other over the maps' cycle (the spare
        // columns rotate too).
        (0..self.spec.children).filter(|&d| d != member).collect()
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: self.redundancy_set(member), xor: true, erasures: self.spec.parity - 1 })
    }
    fn member_sectors(&self) -> u64 {
        self.slices * self.rows_per_slice * self.row_sectors
    }
    fn distributed_spares(&self) -> u32 {
        self.spec.spares
    }
    fn distributed_spare_member(&self, spare: u32, pba: u64) -> u32 {
        // Spare `k` of a slice is its logical column C − S + k.
        let slice = (pba / self.row_sectors).min(self.slices * self.rows_per_slice - 1) / self.rows_per_slice;
        self.child(slice, (self.spec.children - self.spec.spares + spare) as u64)
    }
    fn sequential_rebuild(&self) -> bool {
        // Fixed-width groups: what makes ZFS's sequential rebuild possible on dRAID.
        true
    }
    fn stripe_units_apart(&self) -> bool {
        // Each stripe unit is rebuilt from its own stripe's other units, at the same offset
        // in theirs.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::check_bijective;

    /// dRAID `spec` over `drives` drives of rows of 8 sectors (4 units of 2), `slices` slices.
    fn layout(spec: &str, drives: u32, slices: u64) -> Result<Box<dyn Layout>> {
        let parsed = DraidSpec::parse(spec, drives, "array.draid")?;
        let (w, c) = ((parsed.data + parsed.parity) as u64, (drives - parsed.spares) as u64);
        let rows_per_slice = w / gcd(w, c);
        let params = LayoutParams::new(drives, 2, rows_per_slice * slices * 8 + 5).with("draid", spec).with("row_kib", 4);
        DraidLayout::build(&params, "array")
    }

    #[test]
    fn specs_parse_as_zfs_writes_them_and_bad_ones_name_the_key() {
        assert_eq!(DraidSpec::parse("draid2:8d:106c:2s", 106, "k").unwrap(), DraidSpec { parity: 2, data: 8, children: 106, spares: 2 });
        assert_eq!(DraidSpec::parse("draid", 12, "k").unwrap(), DraidSpec { parity: 1, data: 8, children: 12, spares: 0 });
        let err = |s: &str, d: u32| DraidSpec::parse(s, d, "array.draid").unwrap_err().to_string();
        assert!(err("draid2:8d:10c:1s", 10).contains("D + P = 10 exceeds C − S = 9"), "{}", err("draid2:8d:10c:1s", 10));
        assert!(err("draid2:4d:10c", 12).contains("10 children, and the array has 12 drives"));
        assert!(err("draid3:4d", 12).contains("draid3 needs a third parity"));
        assert!(err("raidz2", 12).starts_with("array.draid: \"raidz2\": starts with `draid`"));
        assert!(err("draid1:4x", 12).contains("the suffix is d (data), c (children) or s (spares)"));
    }

    #[test]
    fn the_map_is_a_bijection_of_distinct_children_with_spare_columns_left_free() {
        for (spec, drives) in [("draid1:2d", 4), ("draid2:3d:1s", 7), ("draid1:4d:2s", 9), ("draid2:4d", 6)] {
            let l = layout(spec, drives, 6).unwrap();
            check_bijective(l.as_ref());
            let s = DraidSpec::parse(spec, drives, "k").unwrap();
            // Sectors outside every stripe: exactly the spare columns, S of C children's
            // worth of each row.
            let unit = l.stripe_unit_sectors();
            let free: u64 = (0..drives)
                .map(|d| (0..l.member_sectors() / unit).filter(|&u| l.locate(d, u * unit).is_none()).count() as u64)
                .sum();
            assert_eq!(free, s.spares as u64 * l.member_sectors() / unit, "{spec}");
        }
    }

    #[test]
    fn parity_is_balanced_over_a_cycle_of_the_maps() {
        // Over rows × C slices every child is every column equally often.
        let l = layout("draid2:3d:1s", 7, 256 * 7).unwrap();
        let mut parity = vec![0u64; 7];
        let mut m = StripeMap::default();
        for stripe in 0..l.stripes() {
            l.map_stripe(stripe, &mut m);
            for u in &m.parity {
                parity[u.drive as usize] += 1;
            }
        }
        assert!(parity.iter().all(|&p| p == parity[0]), "{parity:?}");
    }

    #[test]
    fn rebuild_imbalance_is_one_when_every_group_is_every_child_and_above_one_otherwise() {
        let draid = |spec: &str, drives: u32| {
            let params = LayoutParams::new(drives, 2, 1 << 20).with("draid", spec).with("row_kib", 4);
            DraidLayout::new(&params, "array").unwrap()
        };
        // 4 children, groups of 4: every group holds every child (vdev_draid.c: 1.000).
        assert_eq!(draid("draid1:3d", 4).rebuild_imbalance(0), 1.0);
        // Wider pools: every survivor reads, some more than others (vdev_draid.c's table: about
        // 1.68 at 100 children, for its own maps).
        for (spec, drives) in [("draid2:8d:2s", 24), ("draid2:8d:2s", 100), ("draid2:11d:2s", 106)] {
            let l = draid(spec, drives);
            let ratio = l.rebuild_imbalance(0);
            // (The table's rows once, without the rotations, for comparison.)
            let rows = if drives < 32 { 256 } else { 512 };
            let once: Vec<f64> = (0..drives).map(|f| l.rebuild_imbalance_over(f, rows)).collect();
            let (mean, worst) = (once.iter().sum::<f64>() / once.len() as f64, once.iter().cloned().fold(0.0, f64::max));
            eprintln!("{spec}, {drives} children: rebuild imbalance {ratio:.3} over the cycle; the rows once: mean {mean:.3}, worst {worst:.3}");
            assert!(ratio > 1.0 && ratio < 4.0, "{spec}, {drives} children: {ratio}");
        }
    }
}
