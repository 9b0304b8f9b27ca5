//! Parity declustering (Holland & Gibson, ASPLOS 1992): RAID-5 stripes of G units (G − 1
//! data and one parity) over C > G drives, placed by a balanced incomplete block design
//! (b tuples of k = G drives out of v = C, each drive in r tuples, each pair of drives in λ).
//!
//! **Placement** (the paper's block-design table). One *period* is the design's table written
//! k times: in copy `i` (0 ≤ i < k) tuple `j` is a stripe whose parity is the tuple's `i`-th
//! drive, so every drive holds r parity units a period (distributed parity), and the data
//! units follow the parity around the tuple. On each drive a period occupies r·k unit
//! offsets: copy `i`'s stripes come `i·r` units in, each drive's tuples in increasing order.
//! Stripe `s` is copy `(s mod k·b) / b`, tuple `s mod b`, of period `s / (k·b)`.
//!
//! **Rebuild.** A lost unit is the XOR of its stripe's G − 1 other units, so a survivor reads
//! λ of every r units of the lost drive it shares: the declustering ratio
//! α = (G − 1)/(C − 1) of what a RAID-5 rebuild reads from it.
//!
//! The design is the complete one (every k-subset of the drives) unless `design` gives one,
//! which must be balanced.

use super::keys::OwnKey;
use super::plan::Planner;
use super::{Layout, LayoutParams, LayoutShape, Reconstruction, StripeMap, UnitLocation, UnitRole};
use crate::error::{Error, Result};

/// Parity declustering's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[
    OwnKey {
        name: "stripe_width",
        doc: "units per stripe (G: G − 1 data units and one parity), at least 3 and at most `drives`; the \
              declustering ratio is (G − 1)/(drives − 1).",
        default: || toml::Value::Integer(4),
        check: OwnKey::check_as::<u32>,
        schema: OwnKey::schema_of::<u32>,
    },
    OwnKey {
        name: "design",
        doc: "the block design: a list of tuples of `stripe_width` distinct drives each, every drive in the \
              same number of tuples and every pair of drives in the same number; empty (the default) for the \
              complete design, every `stripe_width`-subset of the drives.",
        default: || toml::Value::Array(Vec::new()),
        check: OwnKey::check_as::<Vec<Vec<u32>>>,
        schema: OwnKey::schema_of::<Vec<Vec<u32>>>,
    },
];

/// The complete design's largest table built (tuples): beyond it, give a design.
const MAX_COMPLETE_TUPLES: u64 = 200_000;

/// A balanced block design: its tuples and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDesign {
    /// The tuples, each `k` distinct drives in increasing order.
    pub tuples: Vec<Vec<u32>>,
    /// Drives (v), tuple size (k), tuples per drive (r), tuples per pair of drives (λ).
    pub v: u32,
    pub k: u32,
    pub r: u32,
    pub lambda: u32,
}

impl BlockDesign {
    /// Every `k`-subset of `v` drives, in lexicographic order.
    pub fn complete(v: u32, k: u32) -> BlockDesign {
        let mut tuples = Vec::new();
        let mut t: Vec<u32> = (0..k).collect();
        loop {
            tuples.push(t.clone());
            // The next combination: bump the last element that can move, reset those after.
            let Some(i) = (0..k as usize).rev().find(|&i| t[i] < v - k + i as u32) else { break };
            t[i] += 1;
            for j in i + 1..k as usize {
                t[j] = t[j - 1] + 1;
            }
        }
        BlockDesign::check(tuples, v, "design").expect("a complete design is balanced")
    }

    /// `tuples` as a design over `v` drives, checked: equal sizes of at least 3, distinct
    /// drives below `v`, every drive in the same number of tuples and every pair in the same
    /// number. Errors name `key`.
    pub fn check(mut tuples: Vec<Vec<u32>>, v: u32, key: &str) -> Result<BlockDesign> {
        let bad = |why: String| Error::config(key, why);
        let k = tuples.first().map(|t| t.len()).ok_or_else(|| bad("the design has no tuple".into()))? as u32;
        for (j, t) in tuples.iter_mut().enumerate() {
            if t.len() as u32 != k {
                return Err(bad(format!("tuple {j} has {} drives, tuple 0 has {k}: every tuple has the stripe's width", t.len())));
            }
            t.sort_unstable();
            if let Some(&d) = t.iter().find(|&&d| d >= v) {
                return Err(bad(format!("tuple {j} names drive {d}, and the array has drives 0 to {}", v - 1)));
            }
            if t.windows(2).any(|w| w[0] == w[1]) {
                return Err(bad(format!("tuple {j} names a drive twice: {t:?}")));
            }
        }
        if k < 3 || k > v {
            return Err(bad(format!("tuples of {k} drives: a stripe needs at least 3 units (2 data and parity), and at most {v}")));
        }
        let mut per_drive = vec![0u32; v as usize];
        let mut per_pair = vec![0u32; (v * v) as usize];
        for t in &tuples {
            for (a, &x) in t.iter().enumerate() {
                per_drive[x as usize] += 1;
                for &y in &t[a + 1..] {
                    per_pair[(x * v + y) as usize] += 1;
                }
            }
        }
        let r = per_drive[0];
        if let Some(d) = per_drive.iter().position(|&n| n != r) {
            return Err(bad(format!("not balanced: drive 0 is in {r} tuples and drive {d} in {}", per_drive[d])));
        }
        let lambda = per_pair[1];
        for x in 0..v {
            for y in x + 1..v {
                let n = per_pair[(x * v + y) as usize];
                if n != lambda {
                    return Err(bad(format!(
                        "not balanced: drives 0 and 1 share {lambda} tuples and drives {x} and {y} share {n} \
                         (every pair must share the same number)"
                    )));
                }
            }
        }
        Ok(BlockDesign { tuples, v, k, r, lambda })
    }
}

/// RAID-5 stripes declustered over the drives by a block design.
#[derive(Debug, Clone)]
pub struct DeclusteredLayout {
    shape: LayoutShape,
    design: BlockDesign,
    /// Per drive, the tuples holding it, in increasing order.
    tuples_of: Vec<Vec<u32>>,
    /// Per tuple, per position: the tuple's rank among its drive's tuples.
    rank: Vec<Vec<u32>>,
}

impl DeclusteredLayout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        let v = params.drives;
        let k: u32 = params.own("stripe_width", key)?;
        if k < 3 || k > v {
            return Err(Error::config(
                format!("{key}.stripe_width"),
                format!("{k} units a stripe: at least 3 (two data and the parity) and at most the {v} drives"),
            ));
        }
        let given: Vec<Vec<u32>> = params.own("design", key)?;
        let design = if given.is_empty() {
            let tuples = binomial(v as u64, k as u64);
            if tuples > MAX_COMPLETE_TUPLES {
                return Err(Error::config(
                    format!("{key}.design"),
                    format!("the complete design of {v} drives in stripes of {k} has {tuples} tuples (at most {MAX_COMPLETE_TUPLES}): give a smaller balanced design"),
                ));
            }
            BlockDesign::complete(v, k)
        } else {
            let design = BlockDesign::check(given, v, &format!("{key}.design"))?;
            if design.k != k {
                return Err(Error::config(
                    format!("{key}.design"),
                    format!("its tuples have {} drives, and stripe_width is {k}", design.k),
                ));
            }
            design
        };
        let mut tuples_of = vec![Vec::new(); v as usize];
        for (j, t) in design.tuples.iter().enumerate() {
            for &d in t {
                tuples_of[d as usize].push(j as u32);
            }
        }
        let rank = design
            .tuples
            .iter()
            .enumerate()
            .map(|(j, t)| t.iter().map(|&d| tuples_of[d as usize].binary_search(&(j as u32)).expect("listed") as u32).collect())
            .collect();
        let units_per_drive = params.drive_capacity_sectors / params.stripe_unit_sectors;
        let period_units = (design.r * design.k) as u64;
        let periods = units_per_drive / period_units;
        if periods == 0 {
            return Err(Error::config(
                format!("{key}.stripe_unit_kib"),
                format!(
                    "a drive holds {units_per_drive} stripe units, and one period of the design takes {period_units} on \
                     each (r·k = {}·{}): use a smaller stripe unit or design",
                    design.r, design.k
                ),
            ));
        }
        let stripes = periods * (design.k as u64) * design.tuples.len() as u64;
        let shape = LayoutShape { drives: v, stripe_unit_sectors: params.stripe_unit_sectors, stripes };
        Ok(Box::new(DeclusteredLayout { shape, design, tuples_of, rank }))
    }

    /// The design.
    pub fn design(&self) -> &BlockDesign {
        &self.design
    }

    /// The declustering ratio α = (G − 1)/(C − 1): the share of a survivor read to rebuild a
    /// lost drive, against RAID-5's whole survivor.
    pub fn declustering_ratio(&self) -> f64 {
        (self.design.k - 1) as f64 / (self.design.v - 1) as f64
    }

    /// Stripes a period, and unit offsets a period on each drive.
    fn period(&self) -> (u64, u64) {
        let (b, k, r) = (self.design.tuples.len() as u64, self.design.k as u64, self.design.r as u64);
        (k * b, r * k)
    }

    /// Stripe `stripe`'s period, copy and tuple.
    fn split(&self, stripe: u64) -> (u64, u32, usize) {
        let (per_period, _) = self.period();
        let b = self.design.tuples.len() as u64;
        let rest = stripe % per_period;
        (stripe / per_period, (rest / b) as u32, (rest % b) as usize)
    }

    /// Where position `position` of tuple `tuple` lies in copy `copy` of period `period`.
    fn unit_at(&self, period: u64, copy: u32, tuple: usize, position: usize) -> UnitLocation {
        let (_, offsets) = self.period();
        let drive = self.design.tuples[tuple][position];
        let offset = period * offsets + (copy * self.design.r + self.rank[tuple][position]) as u64;
        UnitLocation { drive, pba: offset * self.shape.stripe_unit_sectors }
    }
}

/// C(n, k), saturating.
fn binomial(n: u64, k: u64) -> u64 {
    (0..k).fold(1u64, |x, i| x.saturating_mul(n - i) / (i + 1))
}

impl Layout for DeclusteredLayout {
    fn name(&self) -> &'static str {
        "declustered"
    }
    fn planner(&self) -> &'static dyn Planner {
        &super::plan::PARITY
    }
    fn fault_tolerance(&self) -> u32 {
        1
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.design.k - 1
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave its stripe's parity inconsistent with the data"
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.reset(stripe, 1);
        let (period, copy, tuple) = self.split(stripe);
        let k = self.design.k as usize;
        for index in 0..k - 1 {
            out.data.push(self.unit_at(period, copy, tuple, (copy as usize + 1 + index) % k));
        }
        out.parity.push(self.unit_at(period, copy, tuple, copy as usize));
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        let (period, copy, tuple) = self.split(stripe);
        Some(self.unit_at(period, copy, tuple, (copy + 1 + index) as usize % self.design.k as usize))
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        if drive >= self.shape.drives || pba >= self.member_sectors() {
            return None;
        }
        let (per_period, offsets) = self.period();
        let offset = pba / self.shape.stripe_unit_sectors;
        let (period, rest) = (offset / offsets, offset % offsets);
        let (copy, rank) = ((rest / self.design.r as u64) as u32, (rest % self.design.r as u64) as usize);
        let tuple = self.tuples_of[drive as usize][rank] as usize;
        let stripe = period * per_period + copy as u64 * self.design.tuples.len() as u64 + tuple as u64;
        let position = self.design.tuples[tuple].iter().position(|&d| d == drive).expect("the drive is in its tuple") as u32;
        let k = self.design.k;
        let role = if position == copy {
            UnitRole::Parity { index: 0 }
        } else {
            UnitRole::Data { index: (position + k - copy - 1) % k, copy: 0 }
        };
        Some((stripe, role))
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        self.design.tuples.iter().any(|t| t.iter().filter(|d| failed.contains(d)).count() >= 2)
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        let mut set: Vec<u32> = self.tuples_of[member as usize]
            .iter()
            .flat_map(|&j| self.design.tuples[j as usize].iter().copied())
            .filter(|&d| d != member)
            .collect();
        set.sort_unstable();
        set.dedup();
        set
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: self.redundancy_set(member), xor: true, erasures: 0 })
    }
    fn member_sectors(&self) -> u64 {
        let (_, offsets) = self.period();
        self.shape.stripes / self.period().0 * offsets * self.shape.stripe_unit_sectors
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

    fn layout(drives: u32, width: u32, design: Option<Vec<Vec<u32>>>, units_per_drive: u64) -> Result<Box<dyn Layout>> {
        let mut params = LayoutParams::new(drives, 8, 8 * units_per_drive + 3).with("stripe_width", width);
        params = params.with("design", design.unwrap_or_default());
        DeclusteredLayout::build(&params, "array")
    }

    /// The (7, 3, 1) Fano plane: b = 7, r = 3, λ = 1.
    fn fano() -> Vec<Vec<u32>> {
        vec![vec![0, 1, 2], vec![0, 3, 4], vec![0, 5, 6], vec![1, 3, 5], vec![1, 4, 6], vec![2, 3, 6], vec![2, 4, 5]]
    }

    #[test]
    fn complete_designs_have_the_binomial_parameters() {
        let d = BlockDesign::complete(6, 4);
        assert_eq!((d.tuples.len(), d.r, d.lambda), (15, 10, 6)); // C(6,4), C(5,3), C(4,2)
        let d = BlockDesign::check(fano(), 7, "design").unwrap();
        assert_eq!((d.tuples.len(), d.r, d.lambda), (7, 3, 1));
    }

    #[test]
    fn the_layout_criteria_hold() {
        for (drives, width, design) in [(5, 3, None), (6, 4, None), (7, 3, Some(fano())), (8, 8, None)] {
            let l = layout(drives, width, design, 3 * 10 * 4 + 5).unwrap();
            // Single-failure correcting: every stripe's units on distinct drives, and a map
            // `locate` inverts (checked with the redundancy sets).
            check_bijective(l.as_ref());
            let mut m = StripeMap::default();
            let mut parity = vec![0u64; drives as usize];
            let mut units = vec![0u64; drives as usize];
            for s in 0..l.stripes() {
                l.map_stripe(s, &mut m);
                let mut drives_of: Vec<u32> = m.data.iter().chain(m.parity.iter()).map(|u| u.drive).collect();
                drives_of.sort_unstable();
                drives_of.dedup();
                assert_eq!(drives_of.len(), width as usize, "stripe {s}");
                parity[m.parity[0].drive as usize] += 1;
                for u in m.data.iter().chain(m.parity.iter()) {
                    units[u.drive as usize] += 1;
                }
            }
            // Distributed parity: every drive holds as many parity units.
            assert!(parity.iter().all(|&p| p == parity[0]), "{parity:?}");
            // Every unit offset of a member is used (the member's sectors are all stripes').
            let per_drive = l.member_sectors() / 8;
            assert!(units.iter().all(|&u| u == per_drive), "{units:?} vs {per_drive}");
        }
    }

    #[test]
    fn a_rebuild_reads_alpha_of_each_survivor_and_the_xor_of_each_stripe() {
        // Distributed reconstruction: after any failure, every survivor reads the same
        // number of units, α = (G − 1)/(C − 1) of the lost member's.
        for (drives, width, design) in [(6, 4, None), (7, 3, Some(fano())), (9, 3, None)] {
            let l = layout(drives, width, design, 200).unwrap();
            let alpha = (width - 1) as f64 / (drives - 1) as f64;
            for member in 0..drives {
                let reconstruction = l.reconstruction(member).unwrap();
                let mut reads = Vec::new();
                let mut per_source = vec![0u64; drives as usize];
                // Rebuild units of 12 sectors: some straddle two stripe units.
                let mut start = 0;
                while start < l.member_sectors() {
                    let end = (start + 12).min(l.member_sectors());
                    reads.clear();
                    l.rebuild_reads(member, &reconstruction, start, end, None, &mut reads);
                    for r in &reads {
                        assert!(reconstruction.sources.contains(&r.source));
                        // Each read is of the lost sector's stripe, at the same row; width − 1
                        // reads cover each lost sector.
                        for k in 0..r.sectors {
                            let (stripe, _) = l.locate(member, start + r.offset + k).unwrap();
                            let (other, _) = l.locate(r.source, r.pba + k).unwrap();
                            assert_eq!(stripe, other);
                            assert_eq!((start + r.offset + k) % 8, (r.pba + k) % 8);
                        }
                        per_source[r.source as usize] += r.sectors;
                    }
                    let covering = |sector: u64| reads.iter().filter(|r| r.offset <= sector - start && sector - start < r.offset + r.sectors).count();
                    assert!((start..end).all(|sector| covering(sector) == width as usize - 1));
                    start = end;
                }
                let lost = l.member_sectors() as f64;
                for (d, &n) in per_source.iter().enumerate() {
                    if d as u32 == member {
                        assert_eq!(n, 0);
                    } else {
                        assert!((n as f64 / lost - alpha).abs() < 1e-12, "drive {d}: {n} of {lost}, α = {alpha}");
                    }
                }
            }
        }
    }

    #[test]
    fn an_unbalanced_design_is_refused_by_name() {
        let mut design = fano();
        design[6] = vec![2, 4, 6];
        let err = layout(7, 3, Some(design), 100).unwrap_err().to_string();
        assert!(err.starts_with("array.design: not balanced"), "{err}");
        let err = layout(7, 3, Some(vec![vec![0, 1, 1]]), 100).unwrap_err().to_string();
        assert!(err.starts_with("array.design: tuple 0 names a drive twice"), "{err}");
        let err = layout(7, 4, Some(fano()), 100).unwrap_err().to_string();
        assert!(err.starts_with("array.design: its tuples have 3 drives, and stripe_width is 4"), "{err}");
        let err = layout(5, 6, None, 100).unwrap_err().to_string();
        assert!(err.starts_with("array.stripe_width"), "{err}");
        let err = layout(60, 20, None, 100).unwrap_err().to_string();
        assert!(err.starts_with("array.design: the complete design of 60 drives"), "{err}");
    }
}
