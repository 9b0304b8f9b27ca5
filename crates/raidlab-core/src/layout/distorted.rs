//! Distorted mirrors (the thesis's DM; seed 004 §1.3.2, §2.1): mirror pairs (drives 2p and
//! 2p + 1) in which every drive holds a **master partition** (its own blocks, at fixed
//! addresses, in order) and a larger **slave partition** (copies of its partner's master
//! blocks, each written "anywhere" free). The disk-fill factor `dff` splits a drive: with
//! DFF 80 %, 40 % of it is master and 60 % slave, so a pair's logical disk is 80 % of a drive
//! and a third of each slave partition is free.
//!
//! **Where the partitions lie** is not given by the thesis: `dm_band_units` cuts each drive
//! into bands of that many stripe units, each band's master slots first and its slave slots
//! after. `0` (the default) is one band, master partition first (the notes' reading (a));
//! the units of one cylinder (84 for the `ibm0661`'s 4 KB units) is reading (b), master and
//! slave slots on every cylinder.
//!
//! **The distortion map** (which slave slot holds each master block's copy) is the layout's
//! placement state in the array's state ([`DistortionMap`]). It starts with the copies spread
//! evenly over the slave partition in block order. A write of a whole block puts the slave
//! copy in the free slave slot cheapest for the partner's head (its positioning estimate,
//! over the free slots nearest the arm on either side; the thesis leaves the choice open), and
//! its finished write frees the old slot. A write of part of a block updates the copy where it
//! is: moving it would need the rest of the block read first.
//!
//! **Reads** take either copy by the mirror rule (an idle drive first, else the smaller
//! positioning estimate; the thesis's TM rule, which it gives for DM's single-block reads).
//! With a drive failed, its partner serves every block of the pair (its slave copies of the
//! failed drive's blocks) and takes their writes anywhere in its slave partition.
//!
//! **Rebuild** (§2.2.2, block unit: "exactly identical to the traditional mirror
//! algorithm"): a lost drive is rebuilt a block at a time from its partner. A master slot
//! comes from where the partner keeps its copy now, a slave slot from the partner's master
//! block, a free slot from nothing. While a member is rebuilt its copies stay where they are
//! (writes update them in place), so the rebuild's view of it holds; the partner's copies
//! still move, and a job lists its reads again once it holds its stripes' locks.
//!
//! Track and cylinder units: the thesis's two phases (§2.2.2) are the layout's rebuild
//! phases (slave partition, then master) with `order = "replacement"`. When the rebuild
//! starts, the replacement's slave partition is laid out afresh in block order ("written
//! anywhere free" on an empty drive), so phase 1 reads the partner's master partition in
//! order; phase 2 fetches each master unit's blocks from wherever the partner keeps them.
//!
//! Reads may be redirected to the replacement (`rebuild.redirect_reads`): a copy is read
//! there once the rebuild unit of its current slot is current ([`Layout::placed_pba`]).
//!
//! **Not built yet:** piggybacking during a DM rebuild, and a controller crash (recovering
//! the map). Each is refused by name.
//!
//! Layout terms: stripe `s` is logical block `s` of every pair (pair `i` is data unit `i`);
//! block `s` of a pair is mastered on its drive `s mod 2`, in master slot `s / 2`.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::keys::OwnKey;
use super::plan::{plan_mirror_with, Plan, PlanInputs, Planner};
use super::{
    Layout, LayoutParams, LayoutShape, PlacementState, Reconstruction, SourceRead, StripeMap, UnitLocation, UnitRole,
};
use crate::disk::OpKind;
use crate::error::{Error, Result};

/// The layout's own `[array]` keys.
pub const OWN_KEYS: &[OwnKey] = &[
    OwnKey {
        name: "dff",
        doc: "disk-fill factor, a fraction in (0, 1): the share of each drive holding valid data; half of it is \
              the drive's master partition, the rest of the drive its slave partition (0.8: 40 % master, 60 % slave).",
        default: || toml::Value::Float(0.8),
        check: OwnKey::check_as::<f64>,
        schema: OwnKey::schema_of::<f64>,
    },
    OwnKey {
        name: "dm_band_units",
        doc: "stripe units per band: each band holds master slots first, then slave slots. 0 (the default): one \
              band, the master partition first; one cylinder's units: master and slave slots on every cylinder.",
        default: || toml::Value::Integer(0),
        check: OwnKey::check_as::<u64>,
        schema: OwnKey::schema_of::<u64>,
    },
];

/// Free slave slots tried on each side of the arm when a whole block's copy moves.
const CANDIDATES_PER_SIDE: usize = 8;

/// Where master and slave slots lie on a drive: `bands` bands of `band` units, each with
/// `master` master slots then `slave` slave slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotGeometry {
    /// Stripe unit, sectors.
    pub unit_sectors: u64,
    /// Units per band.
    pub band: u64,
    /// Master slots per band.
    pub master: u64,
    /// Slave slots per band.
    pub slave: u64,
    /// Bands per drive.
    pub bands: u64,
}

impl SlotGeometry {
    /// Master slots per drive.
    pub fn master_slots(&self) -> u64 {
        self.bands * self.master
    }
    /// Slave slots per drive.
    pub fn slave_slots(&self) -> u64 {
        self.bands * self.slave
    }
    /// First sector of master slot `k`.
    pub fn master_pba(&self, k: u64) -> u64 {
        ((k / self.master) * self.band + k % self.master) * self.unit_sectors
    }
    /// First sector of slave slot `t`.
    pub fn slave_pba(&self, t: u64) -> u64 {
        ((t / self.slave) * self.band + self.master + t % self.slave) * self.unit_sectors
    }
    /// The master slot (`Ok`) or slave slot (`Err`) holding sector `pba`; `None` past the
    /// last band.
    pub fn slot_of(&self, pba: u64) -> Option<std::result::Result<u64, u64>> {
        let unit = pba / self.unit_sectors;
        let (band, within) = (unit / self.band, unit % self.band);
        if band >= self.bands {
            return None;
        }
        Some(if within < self.master {
            Ok(band * self.master + within)
        } else {
            Err(band * self.slave + within - self.master)
        })
    }
    /// The slave slot the copy of master slot `k` starts in: spread evenly over the slave
    /// partition, in block order.
    pub fn initial_slave(&self, k: u64) -> u64 {
        // Slave slots outnumber master slots, so distinct blocks get distinct slots.
        (k as u128 * self.slave_slots() as u128 / self.master_slots() as u128) as u64
    }
    /// The master slot whose copy starts in slave slot `t`, if any.
    pub fn initially_holding(&self, t: u64) -> Option<u64> {
        let (m, s) = (self.master_slots() as u128, self.slave_slots() as u128);
        let k = (t as u128 * m).div_ceil(s) as u64;
        (k < self.master_slots() && self.initial_slave(k) == t).then_some(k)
    }
}

/// No master block's copy is in this slave slot.
const FREE: u32 = u32::MAX;

/// A slave slot a planned write has taken, recorded when its write finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Reserved {
    /// The member whose slave partition takes the copy (the map is kept by member).
    member: u32,
    /// Its drive slot now (what the plan's ops name).
    drive: u32,
    /// The partner's master slot whose copy moves.
    master: u32,
    /// The slave slot it moves to.
    slot: u32,
}

/// The distortion map of every drive: where each of its partner's master blocks has its copy
/// in its slave partition, which slave slots are free, and the slots writes in flight have
/// taken. It is kept on the drives and in memory alike (each slave slot is written with its
/// block), except the slots taken by writes in flight, which a crash would lose.
#[derive(Debug, Clone)]
pub struct DistortionMap {
    pub geometry: SlotGeometry,
    /// Per drive: the slave slot of each of its partner's master slots.
    slave_of: Vec<Vec<u32>>,
    /// Per drive: the partner's master slot whose copy each slave slot holds, or [`FREE`].
    holder: Vec<Vec<u32>>,
    /// Per drive: its free slave slots, in address order (found near the arm).
    free: Vec<BTreeSet<u32>>,
    /// Slave slots taken by the planned, unfinished write of each stripe.
    reserved: FxHashMap<u64, Vec<Reserved>>,
    /// The member being rebuilt, whose copies stay where they are meanwhile.
    rebuilding: Option<u32>,
}

impl DistortionMap {
    fn new(drives: u32, geometry: SlotGeometry) -> DistortionMap {
        let (masters, slaves) = (
            geometry.master_slots() as usize,
            geometry.slave_slots() as usize,
        );
        let slave_of: Vec<u32> = (0..masters as u64)
            .map(|k| geometry.initial_slave(k) as u32)
            .collect();
        let mut holder = vec![FREE; slaves];
        for (k, &t) in slave_of.iter().enumerate() {
            holder[t as usize] = k as u32;
        }
        let free: BTreeSet<u32> = (0..slaves as u32)
            .filter(|&t| holder[t as usize] == FREE)
            .collect();
        DistortionMap {
            geometry,
            slave_of: vec![slave_of; drives as usize],
            holder: vec![holder; drives as usize],
            free: vec![free; drives as usize],
            reserved: FxHashMap::default(),
            rebuilding: None,
        }
    }

    /// The slave slot on `drive` holding the copy of its partner's master slot `k`.
    pub fn slave_slot(&self, drive: u32, k: u64) -> u64 {
        self.slave_of[drive as usize][k as usize] as u64
    }

    /// The partner's master slot whose copy slave slot `t` of `drive` holds, if any.
    pub fn held_by(&self, drive: u32, t: u64) -> Option<u64> {
        let k = self.holder[drive as usize][t as usize];
        (k != FREE).then_some(k as u64)
    }

    /// Free slave slots of `drive`.
    pub fn free_slots(&self, drive: u32) -> usize {
        self.free[drive as usize].len()
    }

    /// Give back the slots the unfinished write of `stripe` took (it is being planned again).
    fn release(&mut self, stripe: u64) {
        if let Some(taken) = self.reserved.remove(&stripe) {
            for r in taken {
                self.give_back(r.member, r.slot);
            }
        }
    }

    /// Slot `slot` of `member`, taken by a write that will not record it, is free again
    /// (unless the member's map was laid out afresh since, and holds a copy there).
    fn give_back(&mut self, member: u32, slot: u32) {
        if self.holder[member as usize][slot as usize] == FREE {
            self.free[member as usize].insert(slot);
        }
    }

    /// Lay `member`'s slave partition out afresh, packed: the copy of the partner's master
    /// slot `k` in slave slot `k`, the free slots after them. What a rebuild writes onto an
    /// empty replacement, where "enough contiguous free blocks can be located to allow many
    /// sequential transfers" (§2.2.2): the copies are read from the partner's master
    /// partition, and written, in order.
    fn lay_out_afresh(&mut self, member: u32) {
        let m = member as usize;
        let (masters, slaves) = (self.geometry.master_slots() as u32, self.geometry.slave_slots() as u32);
        self.slave_of[m] = (0..masters).collect();
        self.holder[m] = (0..slaves).map(|t| if t < masters { t } else { FREE }).collect();
        self.free[m] = (masters..slaves).collect();
    }
}

impl PlacementState for DistortionMap {
    fn volatile(&self) -> Option<&'static str> {
        Some("the slave slots taken by writes in flight")
    }
    fn lose_volatile(&mut self) {
        let stripes: Vec<u64> = self.reserved.keys().copied().collect();
        for stripe in stripes {
            self.release(stripe);
        }
    }
    fn rebuilding(&mut self, member: Option<u32>) {
        if let Some(member) = member {
            // The lost drive's copies are gone: the replacement's are laid out afresh.
            self.lay_out_afresh(member);
        }
        self.rebuilding = member;
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

/// Distorted mirrors over `drives` (even) drives.
#[derive(Debug, Clone)]
pub struct DistortedLayout {
    shape: LayoutShape,
    geometry: SlotGeometry,
}

impl DistortedLayout {
    /// The distortion map in `placement`, or the map as the array starts when there is none.
    fn map_or_initial<'a>(&self, placement: Option<&'a dyn PlacementState>) -> std::borrow::Cow<'a, DistortionMap> {
        match placement.and_then(|p| p.as_any().downcast_ref::<DistortionMap>()) {
            Some(map) => std::borrow::Cow::Borrowed(map),
            None => std::borrow::Cow::Owned(DistortionMap::new(self.shape.drives, self.geometry)),
        }
    }

    pub fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        if params.drives < 2 || params.drives % 2 != 0 {
            return Err(Error::config(
                format!("{key}.drives"),
                format!(
                    "distorted mirrors pair the drives: an even number of at least 2, not {}",
                    params.drives
                ),
            ));
        }
        let dff: f64 = params.own("dff", key)?;
        if !(dff > 0.0 && dff < 1.0) {
            return Err(Error::config(
                format!("{key}.dff"),
                format!("the disk-fill factor is a fraction strictly between 0 and 1, not {dff}"),
            ));
        }
        let units = LayoutShape::fit(params, key)?.stripes;
        let band_units: u64 = params.own("dm_band_units", key)?;
        let band = if band_units == 0 { units } else { band_units };
        if band > units {
            return Err(Error::config(
                format!("{key}.dm_band_units"),
                format!("a band of {band} units is larger than a drive ({units} units)"),
            ));
        }
        // Half the fill factor is master; the rest of the band is slave, more than the
        // partner's master slots (so a copy always has a free slot to move to).
        let master = (band as f64 * dff / 2.0).floor() as u64;
        if master == 0 {
            return Err(Error::config(
                format!("{key}.dm_band_units"),
                format!(
                    "a band of {band} units at a disk-fill factor of {dff} holds no master slot"
                ),
            ));
        }
        let geometry = SlotGeometry {
            unit_sectors: params.stripe_unit_sectors,
            band,
            master,
            slave: band - master,
            bands: units / band,
        };
        if geometry.slave_slots() >= u32::MAX as u64 {
            return Err(Error::config(
                format!("{key}.stripe_unit_kib"),
                "more than 2³² slave slots per drive: use larger stripe units",
            ));
        }
        let stripes = 2 * geometry.master_slots();
        Ok(Box::new(DistortedLayout {
            shape: LayoutShape {
                drives: params.drives,
                stripe_unit_sectors: params.stripe_unit_sectors,
                stripes,
            },
            geometry,
        }))
    }
}

impl Layout for DistortedLayout {
    fn name(&self) -> &'static str {
        "distorted"
    }
    fn planner(&self) -> &'static dyn Planner {
        &DISTORTED
    }
    fn fault_tolerance(&self) -> u32 {
        1
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        vec![member ^ 1]
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.shape.drives / 2
    }
    /// The map as the array starts: a block's slave copy where [`SlotGeometry::initial_slave`]
    /// puts it. The planner reads where it is now from the [`DistortionMap`].
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        let g = &self.geometry;
        let (k, side) = (stripe / 2, (stripe % 2) as u32);
        out.reset(stripe, 2);
        for pair in 0..self.shape.drives / 2 {
            let master = 2 * pair + side;
            out.data.push(UnitLocation {
                drive: master,
                pba: g.master_pba(k),
            });
            out.data.push(UnitLocation {
                drive: master ^ 1,
                pba: g.slave_pba(g.initial_slave(k)),
            });
        }
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        if drive >= self.shape.drives {
            return None;
        }
        let pair = drive / 2;
        match self.geometry.slot_of(pba)? {
            Ok(k) => Some((
                2 * k + (drive % 2) as u64,
                UnitRole::Data {
                    index: pair,
                    copy: 0,
                },
            )),
            Err(t) => {
                let k = self.geometry.initially_holding(t)?;
                Some((
                    2 * k + ((drive ^ 1) % 2) as u64,
                    UnitRole::Data {
                        index: pair,
                        copy: 1,
                    },
                ))
            }
        }
    }
    fn member_sectors(&self) -> u64 {
        self.geometry.bands * self.geometry.band * self.geometry.unit_sectors
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        failed
            .iter()
            .any(|&d| d < self.shape.drives && failed.contains(&(d ^ 1)))
    }
    fn placement_state(&self) -> Option<Box<dyn PlacementState>> {
        Some(Box::new(DistortionMap::new(
            self.shape.drives,
            self.geometry,
        )))
    }
    fn volatile_state(&self) -> &'static str {
        "the slave slots its writes in flight have taken; its distortion map is written with the blocks"
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: vec![member ^ 1], xor: false, erasures: 0 })
    }
    fn rebuild_refusal(&self, rebuild: &super::RebuildAsked) -> Option<String> {
        if rebuild.piggyback {
            return Some(
                "a distorted mirror's rebuild runs without piggybacking (set `rebuild.piggyback = false`): a \
                 degraded read's unit is not the lost drive's unit of the same address"
                    .into(),
            );
        }
        None
    }
    /// The thesis's two phases (§2.2.2): the slave partition first, then the master one.
    fn rebuild_phases(&self, _member: u32) -> Vec<Vec<(u64, u64)>> {
        let g = &self.geometry;
        let sectors = |units: u64| units * g.unit_sectors;
        let slave = (0..g.bands).map(|b| (sectors(b * g.band + g.master), sectors((b + 1) * g.band))).collect();
        let master = (0..g.bands).map(|b| (sectors(b * g.band), sectors(b * g.band + g.master))).collect();
        vec![slave, master]
    }
    /// Each slot of the unit from its partner: a master block from where the partner keeps
    /// its copy now, a copy from the partner's master block; a free slot from nothing.
    fn rebuild_reads(
        &self,
        member: u32,
        _reconstruction: &Reconstruction,
        start: u64,
        end: u64,
        placement: Option<&dyn PlacementState>,
        out: &mut Vec<SourceRead>,
    ) {
        let map = self.map_or_initial(placement);
        let (g, partner) = (&self.geometry, member ^ 1);
        let mut pba = start - start % g.unit_sectors;
        while pba < end {
            let (from, to) = (pba.max(start), (pba + g.unit_sectors).min(end));
            let source = match g.slot_of(pba) {
                Some(Ok(k)) => Some(g.slave_pba(map.slave_slot(partner, k))),
                Some(Err(t)) => map.held_by(member, t).map(|k| g.master_pba(k)),
                None => None,
            };
            if let Some(source) = source {
                let read = SourceRead { source: partner, pba: source + (from - pba), offset: from - start, sectors: to - from, outside: None };
                // Runs of slots whose sources follow one another are one read (a slave
                // partition laid out in block order reads the master partition in order).
                match out.last_mut() {
                    Some(last) if last.source == partner && last.pba + last.sectors == read.pba && last.offset + last.sectors == read.offset => {
                        last.sectors += read.sectors;
                    }
                    _ => out.push(read),
                }
            }
            pba += g.unit_sectors;
        }
    }
    /// A slave copy (odd positions) is where the distortion map has it.
    fn placed_pba(&self, stripe: u64, position: usize, pba: u64, placement: Option<&dyn PlacementState>) -> u64 {
        let Some(map) = placement.and_then(|p| p.as_any().downcast_ref::<DistortionMap>()) else { return pba };
        if position % 2 == 0 {
            return pba;
        }
        let slave_member = (position as u64 - 1 + stripe % 2) as u32 ^ 1;
        self.geometry.slave_pba(map.slave_slot(slave_member, stripe / 2))
    }
    fn stripes_in(&self, member: u32, start: u64, end: u64, placement: Option<&dyn PlacementState>) -> (u64, u64) {
        let map = self.map_or_initial(placement);
        let g = &self.geometry;
        let (mut first, mut last) = (u64::MAX, 0);
        let mut pba = start - start % g.unit_sectors;
        while pba < end {
            let stripe = match g.slot_of(pba) {
                Some(Ok(k)) => Some(2 * k + (member % 2) as u64),
                Some(Err(t)) => map.held_by(member, t).map(|k| 2 * k + ((member ^ 1) % 2) as u64),
                None => None,
            };
            if let Some(stripe) = stripe {
                (first, last) = (first.min(stripe), last.max(stripe));
            }
            pba += g.unit_sectors;
        }
        // A unit of free slots holds no stripe: it locks the first, which costs nothing.
        if first == u64::MAX {
            (0, 0)
        } else {
            (first, last)
        }
    }
    fn locate_placed(&self, drive: u32, pba: u64, placement: Option<&dyn PlacementState>) -> Option<(u64, UnitRole)> {
        let Some(map) = placement.and_then(|p| p.as_any().downcast_ref::<DistortionMap>()) else { return self.locate(drive, pba) };
        if drive >= self.shape.drives {
            return None;
        }
        match self.geometry.slot_of(pba)? {
            Ok(_) => self.locate(drive, pba),
            Err(t) => {
                let k = map.held_by(drive, t)?;
                Some((2 * k + ((drive ^ 1) % 2) as u64, UnitRole::Data { index: drive / 2, copy: 1 }))
            }
        }
    }
    fn crash_refusal(&self) -> Option<&'static str> {
        Some("a crash of a distorted mirror (recovering its distortion map from the drives) is not modelled yet")
    }
}

/// DM's planner: the mirror's, over the stripe's copies where the distortion map has them,
/// with each whole-block write's slave copy moved to a free slot near the partner's head.
#[derive(Debug)]
pub struct DistortedPlanner;

/// The planner of [`DistortedLayout`].
pub static DISTORTED: DistortedPlanner = DistortedPlanner;

impl Planner for DistortedPlanner {
    fn name(&self) -> &'static str {
        "distorted"
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        let PlanInputs {
            map,
            unit_sectors,
            spec,
            status,
            placement,
            view,
            now,
            rng,
        } = i;
        let map_state = placement
            .and_then(|p| p.as_any_mut().downcast_mut::<DistortionMap>())
            .expect("a distorted mirror's array keeps its distortion map");
        let g = map_state.geometry;
        let stripe = map.stripe;
        if spec.is_write {
            map_state.release(stripe);
        }
        let (first, end) = (spec.first, spec.first + spec.sectors);
        // The map with each copy where it is now (or where this write moves it), kept in the
        // plan for the content model.
        let mut resolved = std::mem::take(&mut plan.placed_map);
        {
            resolved.reset(stripe, 2);
            for unit in 0..map.data_units() {
                let [master, slave] = [map.copies_of(unit)[0], map.copies_of(unit)[1]];
                let k = stripe / 2;
                // The map is kept by member (a drive's slot changes when it is replaced):
                // the pair's member of the stripe's side masters the block.
                let slave_member = (2 * unit as u64 + stripe % 2) as u32 ^ 1;
                let mut slot = map_state.slave_slot(slave_member, k);
                let (lo, hi) = (
                    unit as u64 * g.unit_sectors,
                    (unit as u64 + 1) * g.unit_sectors,
                );
                let whole = first <= lo && hi <= end;
                // Not onto a member being rebuilt: the rebuild reads its copies where they are.
                let still = map_state.rebuilding == Some(slave_member);
                if spec.is_write && whole && !status.is_failed(&slave) && !still {
                    let arm = view.arm_sector(slave.drive).unwrap_or(g.slave_pba(slot));
                    if let Some(moved) =
                        cheapest_free_slot(map_state, &g, slave_member, slave.drive, arm, view, now)
                    {
                        map_state.free[slave_member as usize].remove(&(moved as u32));
                        map_state
                            .reserved
                            .entry(stripe)
                            .or_default()
                            .push(Reserved {
                                member: slave_member,
                                drive: slave.drive,
                                master: k as u32,
                                slot: moved as u32,
                            });
                        slot = moved;
                    }
                }
                resolved.data.push(master);
                resolved.data.push(UnitLocation {
                    drive: slave.drive,
                    pba: g.slave_pba(slot),
                });
            }
        }
        plan_mirror_with(&resolved, unit_sectors, spec, status, view, now, rng, plan);
        plan.placed_map = resolved;
        plan.placed = true;
    }
    fn write_ops(&self, units: f64, _data_units: f64, copies: f64) -> f64 {
        copies * units
    }
    fn commit(&self, placement: &mut dyn PlacementState, stripe: u64, plan: &Plan) {
        let map_state = placement
            .as_any_mut()
            .downcast_mut::<DistortionMap>()
            .expect("its distortion map");
        let Some(taken) = map_state.reserved.remove(&stripe) else {
            return;
        };
        for r in taken {
            let pba = map_state.geometry.slave_pba(r.slot as u64);
            let written = plan.ops.iter().any(|o| {
                o.kind == OpKind::Write
                    && o.drive == r.drive
                    && o.pba <= pba
                    && pba < o.pba + o.sectors as u64
            });
            let (drive, k) = (r.member as usize, r.master as usize);
            // Its drive failed after the plan was made (the write did not reach it), or the
            // write reached it just before it failed and its rebuild has begun since (the
            // rebuild has listed the member's copies where the map had them): the copy stays
            // where it was, and the rebuild writes the block's value there.
            if !written || map_state.rebuilding == Some(r.member) {
                map_state.give_back(r.member, r.slot);
                continue;
            }
            let old = map_state.slave_of[drive][k];
            map_state.holder[drive][old as usize] = FREE;
            map_state.free[drive].insert(old);
            map_state.slave_of[drive][k] = r.slot;
            map_state.holder[drive][r.slot as usize] = r.master;
        }
    }
}

/// The free slave slot of `drive` with the smallest positioning estimate, among the
/// [`CANDIDATES_PER_SIDE`] nearest the arm (at sector `arm`) on either side; ties go to the
/// lower address.
fn cheapest_free_slot(
    map: &DistortionMap,
    g: &SlotGeometry,
    member: u32,
    drive: u32,
    arm: u64,
    view: &dyn super::plan::DriveView,
    now: crate::sim::Nanos,
) -> Option<u64> {
    let free = &map.free[member as usize];
    // The first slave slot at or past the arm, by binary search over the slots' addresses.
    let (mut lo, mut hi) = (0u64, g.slave_slots());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if g.slave_pba(mid) < arm {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let at = lo.min(u32::MAX as u64) as u32;
    let above = free.range(at..).take(CANDIDATES_PER_SIDE);
    let below = free.range(..at).rev().take(CANDIDATES_PER_SIDE);
    let mut best: Option<(crate::sim::Nanos, u64)> = None;
    for t in above.chain(below) {
        let t = *t as u64;
        let estimate = view.positioning_estimate(drive, now, g.slave_pba(t));
        if best.is_none_or(|(e, slot)| estimate < e || (estimate == e && t < slot)) {
            best = Some((estimate, t));
        }
    }
    best.map(|(_, t)| t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tests::check_bijective;

    fn layout(drives: u32, units: u64, dff: f64, band: u64) -> Box<dyn Layout> {
        let params = LayoutParams::new(drives, 8, units * 8 + 3)
            .with("dff", dff)
            .with("dm_band_units", band);
        crate::layout::build("distorted", &params, "array").unwrap()
    }

    /// Ten units at DFF 80 %: 4 master slots (40 %), 6 slave slots; the partner's 4 copies
    /// spread over the 6 slave slots (slots 0, 1, 3, 4), worked by hand.
    #[test]
    fn dff_80_puts_40_percent_master_first_and_spreads_the_copies_over_the_slave_partition() {
        let l = layout(2, 10, 0.8, 0);
        assert_eq!(l.stripes(), 8, "4 master slots per drive, 2 drives");
        let unit = 8;
        // Drive 0's masters (stripes 0, 2, 4, 6) in units 0-3; drive 1's copies of stripes 1,
        // 3, 5, 7 in slave slots 0, 1, 3, 4 = units 4, 5, 7, 8; units 6 and 9 free.
        let table = [
            (0, (0, 0)),
            (3, (6, 0)),
            (4, (1, 1)),
            (5, (3, 1)),
            (7, (5, 1)),
            (8, (7, 1)),
        ];
        for (unit_index, (stripe, copy)) in table {
            assert_eq!(
                l.locate(0, unit_index * unit + 2),
                Some((stripe, UnitRole::Data { index: 0, copy })),
                "unit {unit_index}"
            );
        }
        assert_eq!(l.locate(0, 6 * unit), None, "free slave slot");
        assert_eq!(l.locate(0, 9 * unit), None, "free slave slot");
        assert_eq!(
            l.locate(1, 0),
            Some((1, UnitRole::Data { index: 0, copy: 0 }))
        );
    }

    #[test]
    fn every_size_and_band_is_a_bijection_and_only_pairs_lose_data() {
        for (drives, units, dff, band) in [
            (2, 10, 0.8, 0),
            (4, 37, 0.8, 0),
            (4, 84, 0.8, 12),
            (6, 50, 0.5, 7),
            (2, 9, 0.95, 3),
            (8, 100, 0.1, 0),
        ] {
            let l = layout(drives, units, dff, band);
            check_bijective(l.as_ref());
        }
        let l = layout(6, 30, 0.8, 0);
        assert!(l.data_lost(&[2, 3]) && !l.data_lost(&[1, 2]) && !l.data_lost(&[0, 3, 5]));
        assert_eq!(l.redundancy_set(3), vec![2]);
    }

    #[test]
    fn a_band_splits_every_band_into_master_then_slave_slots() {
        let g = SlotGeometry {
            unit_sectors: 8,
            band: 10,
            master: 4,
            slave: 6,
            bands: 3,
        };
        assert_eq!(g.master_pba(5), (10 + 1) * 8);
        assert_eq!(g.slave_pba(7), (10 + 4 + 1) * 8);
        assert_eq!(g.slot_of(g.master_pba(9)), Some(Ok(9)));
        assert_eq!(g.slot_of(g.slave_pba(17)), Some(Err(17)));
        assert_eq!(g.slot_of(30 * 8), None);
        for t in 0..g.slave_slots() {
            if let Some(k) = g.initially_holding(t) {
                assert_eq!(g.initial_slave(k), t);
            }
        }
        assert_eq!(
            (0..g.slave_slots())
                .filter_map(|t| g.initially_holding(t))
                .count() as u64,
            g.master_slots()
        );
    }

    #[test]
    fn bad_keys_are_refused_by_name() {
        for (dff, what) in [
            (0.0, "array.dff"),
            (1.0, "array.dff"),
            (-0.5, "array.dff"),
            (f64::NAN, "array.dff"),
        ] {
            let params = LayoutParams::new(4, 8, 800).with("dff", dff);
            let err = crate::layout::build("distorted", &params, "array")
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("{what}: the disk-fill factor")),
                "{err}"
            );
        }
        let err = crate::layout::build("distorted", &LayoutParams::new(3, 8, 800), "array")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("array.drives: distorted mirrors pair the drives"),
            "{err}"
        );
        let err = crate::layout::build(
            "distorted",
            &LayoutParams::new(2, 8, 800).with("dm_band_units", 1000),
            "array",
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("array.dm_band_units:"), "{err}");
        let err = crate::layout::build(
            "distorted",
            &LayoutParams::new(2, 8, 800).with("dm_band_units", 2),
            "array",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("holds no master slot"), "{err}");
    }
}
