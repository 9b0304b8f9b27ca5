//! RAID-6 (P+Q): two parity units per stripe, rotated over the drives as Linux md's
//! default `left-symmetric` RAID-6 places them, and the planner family of its stripes.
//!
//! **Placement.** Stripe `s` of `n` drives has P on drive `n − 1 − s mod n`, Q on the next
//! drive (wrapping), and data unit `i` on the `(i + 2)`-th drive after P (wrapping): data
//! starts after Q, as md's left-symmetric RAID-6 lays it out.
//!
//! **Code.** Each sector value is 8 symbols of GF(2⁸) (polynomial 0x11d, generator g = 2, as
//! md computes its syndrome): P = Σ Dᵢ and Q = Σ gⁱ·Dᵢ over the data units in stripe order.
//! Any two lost units of a stripe are recovered from the others
//! ([`recovery_coefficients`]); three lose its data. The field arithmetic is the `gf256`
//! crate's.
//!
//! **Planner** ([`PQ`]): a read of working units reads them; a degraded read reads every
//! readable unit of the stripe at the rows (md reads all the others to recover one). A
//! write chooses, per row segment, read-modify-write (pre-read the updated units and the
//! working parities) or reconstruct-write (pre-read the units not updated) by counting
//! pre-reads, as RAID-5's planner does; with a data unit of the segment lost, it pre-reads
//! every readable unit (the lost ones are recovered from them) and writes every working
//! parity. With three units of a stripe lost, only data is written.

use gf256::gf256;

use super::plan::{Plan, PlanInputs, Planner, UnitStatus};
use super::{Layout, LayoutParams, LayoutShape, RebuildAsked, StripeMap, UnitLocation, UnitRole};
use crate::disk::OpKind;
use crate::error::{Error, Result};

/// Rotated P and Q parity; stripe `s` occupies unit offset `s` on every drive.
#[derive(Debug, Clone)]
pub struct Raid6Layout {
    shape: LayoutShape,
}

impl Raid6Layout {
    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        if params.drives < 4 {
            return Err(Error::config(
                format!("{key}.drives"),
                format!("RAID-6 needs at least 4 drives (two data and two parity), not {}", params.drives),
            ));
        }
        if params.drives > 257 {
            // Q's coefficients gⁱ are distinct for at most 255 data units.
            return Err(Error::config(format!("{key}.drives"), format!("RAID-6 over GF(2^8) takes at most 257 drives, not {}", params.drives)));
        }
        Ok(Box::new(Raid6Layout { shape: LayoutShape::fit(params, key)? }))
    }

    /// Drive holding P of `stripe` (Q is on the next one).
    pub fn p_drive(&self, stripe: u64) -> u32 {
        let n = self.shape.drives as u64;
        (n - 1 - stripe % n) as u32
    }
}

impl Layout for Raid6Layout {
    fn name(&self) -> &'static str {
        "raid6"
    }
    fn planner(&self) -> &'static dyn Planner {
        &PQ
    }
    fn fault_tolerance(&self) -> u32 {
        2
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.shape.drives - 2
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed); a write caught in flight may leave P and Q inconsistent with the data"
    }
    fn rebuild_refusal(&self, rebuild: &RebuildAsked) -> Option<String> {
        rebuild.piggyback.then(|| {
            "piggybacking writes a degraded read's XOR reconstruction to the target; RAID-6's units are not an XOR \
             of the others (set rebuild.piggyback = false)"
                .to_string()
        })
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.reset(stripe, 1);
        let pba = stripe * self.shape.stripe_unit_sectors;
        let n = self.shape.drives;
        let p = self.p_drive(stripe);
        let q = (p + 1) % n;
        for i in 0..n - 2 {
            out.data.push(UnitLocation { drive: (p + 2 + i) % n, pba });
        }
        out.parity.push(UnitLocation { drive: p, pba });
        out.parity.push(UnitLocation { drive: q, pba });
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        let n = self.shape.drives;
        Some(UnitLocation { drive: (self.p_drive(stripe) + 2 + index) % n, pba: stripe * self.shape.stripe_unit_sectors })
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let stripe = pba / self.shape.stripe_unit_sectors;
        if drive >= self.shape.drives || stripe >= self.shape.stripes {
            return None;
        }
        let n = self.shape.drives;
        // Position after P, wrapping: 0 is P, 1 is Q, 2.. the data units.
        let after = (drive + n - self.p_drive(stripe)) % n;
        let role = match after {
            0 => UnitRole::Parity { index: 0 },
            1 => UnitRole::Parity { index: 1 },
            k => UnitRole::Data { index: k - 2, copy: 0 },
        };
        Some((stripe, role))
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        failed.len() >= 3
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        (0..self.shape.drives).filter(|&d| d != member).collect()
    }
    fn rebuilds_units_in_place(&self) -> bool {
        true
    }
    fn reconstruction(&self, member: u32) -> Option<super::Reconstruction> {
        // Every unit is recovered from the stripe's other units at the same sectors, any
        // one of which may be lost too.
        Some(super::Reconstruction { sources: self.redundancy_set(member), xor: true, erasures: 1 })
    }
}

/// The coefficient of data unit `index` in parity `parity` (0: P, 1: Q): 1 or gⁱ.
pub fn parity_coefficient(parity: u32, index: u32) -> gf256 {
    if parity == 0 {
        gf256(1)
    } else {
        gf256::GENERATOR.pow(index as u8)
    }
}

/// `value` (a sector: 8 symbols of GF(2⁸)) multiplied by `coefficient`, symbol by symbol.
#[inline]
pub fn scale(coefficient: gf256, value: u64) -> u64 {
    if coefficient == gf256(1) {
        return value;
    }
    let mut bytes = value.to_le_bytes();
    for b in bytes.iter_mut() {
        *b = (gf256(*b) * coefficient).get();
    }
    u64::from_le_bytes(bytes)
}

/// Parity `parity` (0: P, 1: Q) of one row whose data units hold `data`.
pub fn parity_of(parity: u32, data: impl Iterator<Item = u64>) -> u64 {
    data.enumerate().fold(0, |x, (i, v)| x ^ scale(parity_coefficient(parity, i as u32), v))
}

/// How unit `target` of a row of `data_units` data units is computed from the units not in
/// `erased`: the coefficient of each of them (the others' are zero), so that `target` =
/// Σ coefficient · unit. `None` when the erased units cannot be recovered (more data units
/// erased than parities left). A target not erased is itself.
pub fn recovery_coefficients(data_units: u32, erased: &[UnitRole], target: UnitRole) -> Option<Vec<(UnitRole, gf256)>> {
    let is_erased = |r: UnitRole| erased.iter().any(|&e| same_unit(e, r));
    if !is_erased(target) {
        // A unit kept is itself (a parity could be recomputed from the data, equally right,
        // reading more).
        return Some(vec![(target, gf256(1))]);
    }
    let lost_data: Vec<u32> = (0..data_units).filter(|&i| is_erased(UnitRole::Data { index: i, copy: 0 })).collect();
    let parities: Vec<u32> = (0..2).filter(|&p| !is_erased(UnitRole::Parity { index: p })).take(lost_data.len()).collect();
    if parities.len() < lost_data.len() {
        return None;
    }
    // The target as a combination of the data units.
    let wants = |i: u32| match target {
        UnitRole::Data { index, .. } => gf256((index == i) as u8),
        UnitRole::Parity { index } => parity_coefficient(index, i),
    };
    // Each chosen parity r: Σ_{u lost} m[r][u]·D_u = parity_r + Σ_{i kept} c(r, i)·D_i. Solve
    // the 1×1 or 2×2 system: D_u = Σ_r inverse[u][r]·(right-hand side of r).
    let m = |r: usize, u: usize| parity_coefficient(parities[r], lost_data[u]);
    let inverse: Vec<Vec<gf256>> = match lost_data.len() {
        0 => Vec::new(),
        1 => vec![vec![m(0, 0).recip()]],
        _ => {
            // (In characteristic 2, subtraction is addition.)
            let det = m(0, 0) * m(1, 1) + m(0, 1) * m(1, 0);
            let inv = det.checked_recip()?;
            vec![vec![m(1, 1) * inv, m(0, 1) * inv], vec![m(1, 0) * inv, m(0, 0) * inv]]
        }
    };
    let mut out = Vec::new();
    // The weight of the right-hand side of parity r in the target.
    let weight = |r: usize| (0..lost_data.len()).fold(gf256(0), |x, u| x + wants(lost_data[u]) * inverse[u][r]);
    for i in (0..data_units).filter(|i| !lost_data.contains(i)) {
        let c = (0..parities.len()).fold(wants(i), |x, r| x + weight(r) * parity_coefficient(parities[r], i));
        if c != gf256(0) {
            out.push((UnitRole::Data { index: i, copy: 0 }, c));
        }
    }
    for (r, &p) in parities.iter().enumerate() {
        if weight(r) != gf256(0) {
            out.push((UnitRole::Parity { index: p }, weight(r)));
        }
    }
    Some(out)
}

/// Whether two roles name the same unit of a stripe (ignoring a data unit's copy).
fn same_unit(a: UnitRole, b: UnitRole) -> bool {
    match (a, b) {
        (UnitRole::Data { index: x, .. }, UnitRole::Data { index: y, .. }) => x == y,
        (UnitRole::Parity { index: x }, UnitRole::Parity { index: y }) => x == y,
        _ => false,
    }
}

/// How a P+Q write segment gets its parities' new values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PqMethod {
    /// Pre-read the updated units and the working parities.
    ReadModifyWrite,
    /// Pre-read the units not updated.
    ReconstructWrite,
    /// Pre-read every readable unit (a unit not updated is lost, and recovered from them).
    ReadAll,
}

/// RAID-6's planner: data units, P and Q.
#[derive(Debug)]
pub struct PqPlanner;

/// The P+Q planner.
pub static PQ: PqPlanner = PqPlanner;

impl Planner for PqPlanner {
    fn name(&self) -> &'static str {
        "p+q"
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        plan_pq(i.map, i.unit_sectors, i.spec, i.status, plan)
    }
    fn write_ops(&self, units: f64, data_units: f64, _copies: f64) -> f64 {
        // Read-modify-write (pre-read and write each unit, P and Q) or reconstruct-write
        // (pre-read the others, write the units, P and Q).
        (2.0 * (units + 2.0)).min(data_units + 2.0)
    }
}

/// The plan of piece `spec` of `map`'s stripe (stripe unit `unit` sectors) under `status`.
pub fn plan_pq(map: &StripeMap, unit: u64, spec: super::plan::PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    let n = map.data_units();
    // Units of the stripe that cannot be read, data and parity.
    let unreadable = map.data.iter().chain(map.parity.iter()).filter(|u| status.is_failed(u)).count();
    if !spec.is_write {
        for i in 0..n {
            let (a, b) = plan.touched[i];
            if a == b {
                continue;
            }
            let u = map.data[i];
            if !status.is_failed(&u) {
                plan.add_range(u.drive, OpKind::Read, u.pba + a, u.pba + b);
                continue;
            }
            plan.degraded = true;
            if unreadable > 2 {
                plan.lost_sectors += b - a;
                continue;
            }
            for o in map.data.iter().chain(map.parity.iter()).filter(|o| !status.is_failed(o)) {
                plan.add_range(o.drive, OpKind::Read, o.pba + a, o.pba + b);
            }
        }
        plan.finish_ranges();
        return;
    }
    // Writes: segments of rows where the set of updated units is constant, as RAID-5's
    // planner splits them. (The scratch is taken out while ranges are added, and put back.)
    plan.fill_row_boundaries();
    let (touched, boundaries) = (std::mem::take(&mut plan.touched), std::mem::take(&mut plan.boundaries));
    let parities_failed = map.parity.iter().filter(|u| status.is_failed(u)).count();
    let working_parities = map.parity.len() - parities_failed;
    let parity_write_only = map.parity.iter().any(|u| status.is_write_only(u));
    plan.degraded |= parities_failed > 0;
    for k in 1..boundaries.len() {
        let (r0, r1) = (boundaries[k - 1], boundaries[k]);
        let rows = r1 - r0;
        let in_segment = |i: usize| touched[i].0 <= r0 && r1 <= touched[i].1;
        let updated = (0..n).filter(|&i| in_segment(i)).count();
        if updated == 0 {
            continue;
        }
        let failed_other = (0..n).filter(|&i| !in_segment(i) && status.is_failed(&map.data[i])).count();
        let failed_updated = (0..n).filter(|&i| in_segment(i) && status.is_failed(&map.data[i])).count();
        plan.degraded |= failed_updated > 0;
        let data_only = unreadable > 2;
        let method = if data_only {
            // The stripe's data is already lost: its parities cannot be kept; data only.
            None
        } else if failed_other > 0 {
            // A unit not updated is lost: recover it from everything readable.
            Some(PqMethod::ReadAll)
        } else if failed_updated > 0 || parity_write_only || n - updated <= updated + working_parities {
            // The lost updated unit's (or the write-only parity's) old value cannot be read,
            // or rcw pre-reads no more than rmw: reconstruct-write, from the units not updated.
            Some(PqMethod::ReconstructWrite)
        } else {
            // rmw pre-reads the updated units and the working parities.
            Some(PqMethod::ReadModifyWrite)
        };
        let pre_read = |plan: &mut Plan, u: &UnitLocation| {
            plan.add_range(u.drive, OpKind::Read, u.pba + r0, u.pba + r1);
            plan.pre_read_sectors += rows;
        };
        match method {
            Some(PqMethod::ReadAll) => {
                map.data.iter().chain(map.parity.iter()).filter(|u| !status.is_failed(u)).for_each(|u| pre_read(plan, u))
            }
            Some(PqMethod::ReconstructWrite) => (0..n).filter(|&i| !in_segment(i)).for_each(|i| pre_read(plan, &map.data[i])),
            Some(PqMethod::ReadModifyWrite) => {
                (0..n).filter(|&i| in_segment(i)).for_each(|i| pre_read(plan, &map.data[i]));
                map.parity.iter().filter(|u| !status.is_failed(u)).for_each(|u| pre_read(plan, u));
            }
            None => {}
        }
        match method {
            // (With both parities lost nothing is pre-read for them: counted as rcw.)
            Some(PqMethod::ReadModifyWrite) if working_parities > 0 => plan.rmw_segments += 1,
            Some(_) => plan.rcw_segments += 1,
            None => {}
        }
        for i in (0..n).filter(|&i| in_segment(i)) {
            let u = map.data[i];
            if !status.is_failed(&u) || status.is_write_only(&u) {
                plan.add_range(u.drive, OpKind::Write, u.pba + r0, u.pba + r1);
            } else if data_only {
                plan.lost_sectors += rows;
            }
        }
        if !data_only {
            for p in map.parity.iter().filter(|p| !status.is_failed(p) || status.is_write_only(p)) {
                plan.add_range(p.drive, OpKind::Write, p.pba + r0, p.pba + r1);
            }
        }
    }
    (plan.touched, plan.boundaries) = (touched, boundaries);
    plan.finish_ranges();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::plan::PieceSpec;
    use crate::layout::tests::{check_bijective, params};

    fn layout(drives: u32) -> Box<dyn Layout> {
        Raid6Layout::build(&params(drives), "array").unwrap()
    }

    #[test]
    fn map_is_a_bijection_with_p_and_q_rotating() {
        for drives in [4, 5, 7] {
            let l = layout(drives);
            check_bijective(l.as_ref());
            let mut m = StripeMap::default();
            // P and Q each visit every drive once in `drives` consecutive stripes, and Q
            // follows P.
            let (mut p, mut q) = (Vec::new(), Vec::new());
            for s in 0..drives as u64 {
                l.map_stripe(s, &mut m);
                assert_eq!(m.parity[1].drive, (m.parity[0].drive + 1) % drives);
                p.push(m.parity[0].drive);
                q.push(m.parity[1].drive);
            }
            p.sort();
            q.sort();
            assert_eq!(p, (0..drives).collect::<Vec<_>>());
            assert_eq!(q, (0..drives).collect::<Vec<_>>());
        }
        // md's left-symmetric RAID-6 over 5 drives: stripe 0 has P on 4, Q on 0, data on
        // 1, 2, 3; stripe 1 has P on 3, Q on 4, data on 0, 1, 2.
        let l = layout(5);
        let mut m = StripeMap::default();
        l.map_stripe(0, &mut m);
        assert_eq!((m.parity[0].drive, m.parity[1].drive), (4, 0));
        assert_eq!(m.data.iter().map(|u| u.drive).collect::<Vec<_>>(), vec![1, 2, 3]);
        l.map_stripe(1, &mut m);
        assert_eq!((m.parity[0].drive, m.parity[1].drive), (3, 4));
        assert_eq!(m.data.iter().map(|u| u.drive).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn fewer_than_four_drives_is_not_raid6() {
        let err = Raid6Layout::build(&params(3), "array").unwrap_err().to_string();
        assert!(err.starts_with("array.drives: RAID-6 needs at least 4 drives"), "{err}");
    }

    /// A sector value's 8 symbols, as the oracle's 8 blocks of one byte... laid out as one
    /// block of 8 bytes per unit.
    fn bytes(v: u64) -> [u8; 8] {
        v.to_le_bytes()
    }

    #[test]
    fn p_and_q_are_what_the_gf256_crates_raid6_computes() {
        let mut rng = crate::sim::RngStream::new(7, crate::sim::StreamId::Policy(0));
        for data_units in [2usize, 3, 6, 14] {
            let data: Vec<u64> = (0..data_units).map(|_| rng.below(u64::MAX)).collect();
            let blocks: Vec<[u8; 8]> = data.iter().map(|&v| bytes(v)).collect();
            let (mut p, mut q) = ([0u8; 8], [0u8; 8]);
            ::gf256::raid::raid6::format(&blocks, &mut p, &mut q);
            assert_eq!(parity_of(0, data.iter().copied()), u64::from_le_bytes(p));
            assert_eq!(parity_of(1, data.iter().copied()), u64::from_le_bytes(q));
        }
    }

    #[test]
    fn any_two_lost_units_are_recovered_from_the_others() {
        let mut rng = crate::sim::RngStream::new(8, crate::sim::StreamId::Policy(0));
        for data_units in [2u32, 3, 5, 8] {
            let data: Vec<u64> = (0..data_units).map(|_| rng.below(u64::MAX)).collect();
            let mut roles: Vec<UnitRole> = (0..data_units).map(|i| UnitRole::Data { index: i, copy: 0 }).collect();
            roles.push(UnitRole::Parity { index: 0 });
            roles.push(UnitRole::Parity { index: 1 });
            let value = |r: UnitRole| match r {
                UnitRole::Data { index, .. } => data[index as usize],
                UnitRole::Parity { index } => parity_of(index, data.iter().copied()),
            };
            for a in 0..roles.len() {
                for b in a..roles.len() {
                    let erased = [roles[a], roles[b]];
                    for &target in &roles {
                        let coefficients = recovery_coefficients(data_units, &erased, target).expect("two erasures are recoverable");
                        assert!(coefficients.iter().all(|&(r, _)| !erased.iter().any(|&e| same_unit(e, r))), "reads an erased unit");
                        let x = coefficients.iter().fold(0, |x, &(r, c)| x ^ scale(c, value(r)));
                        assert_eq!(x, value(target), "{data_units} data units, erased {erased:?}, target {target:?}");
                    }
                }
            }
            // Three data units lost with both parities' help is not enough when three are data.
            if data_units >= 3 {
                let three: Vec<UnitRole> = roles[..3].to_vec();
                assert!(recovery_coefficients(data_units, &three, roles[0]).is_none());
            }
        }
    }

    fn count(plan: &Plan, kind: OpKind) -> usize {
        plan.ops.iter().filter(|o| o.kind == kind).count()
    }

    #[test]
    fn small_write_reads_and_writes_the_unit_p_and_q() {
        let l = layout(8);
        let mut m = StripeMap::default();
        l.map_stripe(0, &mut m);
        let mut p = Plan::default();
        let failed = [false; 8];
        let spec = PieceSpec { first: 0, sectors: 8, is_write: true, resync: false };
        plan_pq(&m, 8, spec, UnitStatus::new(&failed, &[]), &mut p);
        // rmw: 3 pre-reads (unit, P, Q) < rcw: 5.
        assert_eq!((count(&p, OpKind::Read), count(&p, OpKind::Write)), (3, 3));
        assert_eq!(p.rmw_segments, 1);
        // A full stripe: no pre-read, every unit written.
        let spec = PieceSpec { first: 0, sectors: 48, is_write: true, resync: false };
        plan_pq(&m, 8, spec, UnitStatus::new(&failed, &[]), &mut p);
        assert_eq!((count(&p, OpKind::Read), count(&p, OpKind::Write)), (0, 8));
    }

    #[test]
    fn degraded_read_cost_is_the_reconstructions_read_count() {
        // One read of a lost unit reads every other working unit of the stripe: n − 1 with
        // one drive lost, n − 2 with two, what a rebuild of the unit reads.
        let l = layout(6);
        let mut m = StripeMap::default();
        l.map_stripe(0, &mut m);
        let lost = m.data[1].drive;
        let spec = PieceSpec { first: 8, sectors: 8, is_write: false, resync: false };
        let mut p = Plan::default();
        let mut failed = [false; 6];
        failed[lost as usize] = true;
        plan_pq(&m, 8, spec, UnitStatus::new(&failed, &[]), &mut p);
        let sources = l.reconstruction(lost).unwrap().sources.len();
        assert_eq!(count(&p, OpKind::Read), sources);
        failed[m.parity[1].drive as usize] = true;
        plan_pq(&m, 8, spec, UnitStatus::new(&failed, &[]), &mut p);
        assert_eq!(count(&p, OpKind::Read), sources - 1);
        assert_eq!(p.lost_sectors, 0);
        // A third: lost.
        failed[m.data[0].drive as usize] = true;
        plan_pq(&m, 8, spec, UnitStatus::new(&failed, &[]), &mut p);
        assert_eq!(p.lost_sectors, 8);
    }
}
