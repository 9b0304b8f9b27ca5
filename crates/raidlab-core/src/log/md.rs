//! Linux md's journal and PPL in the simulator (`super::md_journal`, `super::md_ppl`): a write
//! is planned as plain RAID-5 ([`plan_parity_with`]), and its log write goes in a phase of
//! its own between the pre-reads and the home writes, so the log is complete before any home
//! sector changes. A crash that catches a write after its log was complete leaves a
//! recovery: the journal's entry replayed, or the parity recomputed from the partial parity.
//! A write the log had no room for (its ring's free space is taken by writes still in
//! flight) is written unprotected, and a crash that catches it re-synchronizes its rows
//! (parity from all the data), which is what md does without a log.
//!
//! The recoveries run as re-sync requests, all submitted at the crash: md recovers when the
//! array is assembled, before it serves I/O, and here each recovery takes its stripe's lock
//! before any user request can, so a user request to the stripe waits for it.

use std::collections::{BTreeMap, VecDeque};

use super::layout::LogState;
use super::Consistency;
use crate::disk::OpKind;
use crate::layout::plan::{plan_parity_with, LogAppend, LogRecipe, LogValue, PieceSpec, Plan, PlanOp, UnitStatus, PARITY_UNIT};
use crate::layout::StripeMap;

/// A record's header: md's 4 KiB metadata block (the journal's meta block, PPL's header),
/// sectors.
pub const HEADER_SECTORS: u64 = 8;

/// md's PPL space beside its header on every member, sectors: 128 KiB
/// (`../shared/anchors/layouts-and-logs.md` §3, "a 4 KiB header plus at least 128 KiB").
pub const PPL_SPACE_SECTORS: u64 = 256;

/// The PPL area raidlab reserves at the end of every member, sectors: a header and at least
/// md's 128 KiB, and room for one stripe unit's partial parity (a write of a whole unit of
/// rows writes that much; md splits it over its stripe_heads, raidlab writes it at once).
pub fn ppl_area_sectors(stripe_unit_sectors: u64) -> u64 {
    HEADER_SECTORS + PPL_SPACE_SECTORS.max(stripe_unit_sectors)
}

/// Log space handed out in order and given back in any order; a place still in use is never
/// handed out again (a log write that finds no room is not logged).
#[derive(Debug, Default, Clone)]
pub struct Ring {
    size: u64,
    next: u64,
    /// Places in use, `[start, end)`.
    live: Vec<(u64, u64)>,
}

impl Ring {
    /// A ring of `size` sectors.
    pub fn new(size: u64) -> Ring {
        Ring { size, next: 0, live: Vec::new() }
    }

    /// `len` sectors after the last place handed out, else from the start; `None` when
    /// neither is free.
    pub fn alloc(&mut self, len: u64) -> Option<u64> {
        for start in [self.next, 0] {
            if start + len <= self.size && !self.live.iter().any(|&(a, b)| a < start + len && start < b) {
                self.live.push((start, start + len));
                self.next = start + len;
                return Some(start);
            }
        }
        None
    }

    /// Give back the place that starts at `start`.
    pub fn free(&mut self, start: u64) {
        if let Some(i) = self.live.iter().position(|&(a, _)| a == start) {
            self.live.swap_remove(i);
        }
    }

    /// Keep only the places `keep` names (after a crash: those a recovery still reads).
    pub fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        self.live.retain(|&(a, _)| keep(a));
    }
}

/// How a write a crash caught is recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recover {
    /// Its journal entry is written home again (data and parity).
    Replay,
    /// Its rows' parity is the XOR of the modified blocks as the drives hold them and the
    /// partial parity (every data block, for a full-row write).
    PartialParity,
    /// Its rows' parity is recomputed from all the data (it was written unprotected).
    Resync,
}

/// A write a crash caught after its home writes could have started.
#[derive(Debug, Clone)]
pub struct Interrupted {
    pub how: Recover,
    /// Its log records (the journal's `Home` records, or the PPL's partial parity).
    pub appends: Vec<LogAppend>,
    /// Where its log write lies (slot, first sector of its ring), kept until recovered.
    pub ring: Option<(u32, u64)>,
    /// The data it modified: (data unit, first, end), offsets in the unit (a unit on a
    /// failed drive included, whose new value only the parity carries).
    pub modified: Vec<(u32, u64, u64)>,
    /// The content model's id of its values.
    pub write_id: u64,
}

impl Interrupted {
    /// How it is recovered now: a replay needs its journal, and with the journal lost its
    /// rows' parity is recomputed from all the data instead.
    pub fn recovery(&self, journal_lost: bool) -> Recover {
        if self.how == Recover::Replay && journal_lost {
            Recover::Resync
        } else {
            self.how
        }
    }
}

/// md's state beside the log index: the log's rings and the recoveries a crash left.
#[derive(Debug, Default)]
pub struct MdState {
    /// The journal drive's ring (write-through journal), sectors.
    pub journal: Ring,
    /// Every slot's PPL ring, by slot (grown on demand), and the PPL area's first sector.
    pub ppl: Vec<Ring>,
    pub ppl_start: u64,
    pub ppl_size: u64,
    /// Stripes a crash caught, by stripe, and those still to hand out.
    pub pending: BTreeMap<u64, Interrupted>,
    /// Writes a drive's failure cut short after they wrote home, by stripe, until their new
    /// plan is done (`write_id` unset: a crash sets it).
    pub cut_short: BTreeMap<u64, Interrupted>,
    pub queue: VecDeque<u64>,
}

impl MdState {
    fn ring(&mut self, consistency: Consistency, slot: u32) -> &mut Ring {
        match consistency {
            Consistency::PartialParity => {
                let size = self.ppl_size;
                if self.ppl.len() <= slot as usize {
                    self.ppl.resize(slot as usize + 1, Ring::new(size));
                }
                &mut self.ppl[slot as usize]
            }
            _ => &mut self.journal,
        }
    }

    /// Give back a log write's place.
    pub fn free(&mut self, consistency: Consistency, place: Option<(u32, u64)>) {
        if let Some((slot, start)) = place {
            self.ring(consistency, slot).free(start);
        }
    }
}

/// The planner of md's write-through journal and PPL.
#[derive(Debug)]
pub struct MdPlanner;

pub static MD_PLANNER: MdPlanner = MdPlanner;

impl crate::layout::plan::Planner for MdPlanner {
    fn name(&self) -> &'static str {
        "log"
    }
    fn plan(&self, i: crate::layout::plan::PlanInputs<'_>, plan: &mut Plan) {
        let state = super::planner::log_state(i.placement.expect("a log-assisted layout has its state"));
        if !i.spec.is_write {
            if !state.lost_blocks.is_empty() {
                // Blocks a crash's recovery could not bring back are reported lost, never
                // reconstructed from a parity that does not hold them.
                clear_md(plan);
                return super::planner::plan_read_with_lost(state, i.map, i.unit_sectors, i.spec, i.status, plan);
            }
            // Reads (degraded ones too) are plain RAID-5's: the parity is current.
            return plan_parity_with(i.map, i.unit_sectors, i.spec, i.status, plan);
        }
        self::plan(state, i.map, i.unit_sectors, i.spec, i.status, plan);
    }
    fn commit(&self, placement: &mut dyn crate::layout::PlacementState, stripe: u64, plan: &Plan) {
        if plan.logged {
            let state = super::planner::log_state(placement);
            commit(state, stripe, plan);
            if !plan.log.overwritten.is_empty() {
                // Every write rewrites its rows' parity with its data.
                super::planner::forget_overwritten(state, plan, true);
            }
        }
    }
    fn abandon(&self, placement: &mut dyn crate::layout::PlacementState, stripe: u64, plan: &Plan, wrote: bool) {
        // The piece is planned again, with a log place of its own. One that wrote home
        // leaves its stripe as a crash would (the new plan rewrites the same values): until
        // the new plan is done, a crash recovers the stripe from this plan's log.
        let state = super::planner::log_state(placement);
        let consistency = state.scheme.consistency();
        if plan.logged && plan.log.resync {
            return;
        }
        match caught(state, plan, u8::MAX).filter(|_| wrote) {
            Some(entry) => {
                if let Some(earlier) = state.md.cut_short.insert(stripe, entry) {
                    state.md.free(consistency, earlier.ring);
                }
            }
            None if plan.logged => state.md.free(consistency, plan.log.md_ring),
            None => {}
        }
    }
    fn write_ops(&self, units: f64, data_units: f64, copies: f64) -> f64 {
        // Plain RAID-5's, and the log write.
        crate::layout::plan::PARITY.write_ops(units, data_units, copies) + 1.0
    }
}

/// Plan a piece of a log-assisted array under md's schemes.
fn plan(state: &mut LogState, map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    if spec.resync {
        plan_recovery(state, map, unit, spec, status, plan);
    } else {
        plan_write(state, map, unit, spec, status, plan);
    }
}

/// Mark `plan` as one of md's plans, with nothing of the log in it yet.
fn clear_md(plan: &mut Plan) {
    plan.logged = true;
    let log = &mut plan.log;
    log.home_rule = true;
    log.replay = false;
    log.resync = false;
    log.appends.clear();
    log.recipes.clear();
    log.rows.clear();
    log.resync_rows.clear();
    log.overwritten.clear();
    log.lost.clear();
    log.log_slot = u32::MAX;
    log.md_phase = u8::MAX;
    log.md_ring = None;
}

/// Which unit of `map` lies on `drive` ([`PARITY_UNIT`]: the parity), and its first sector.
fn unit_on(map: &StripeMap, drive: u32) -> Option<(u32, u64)> {
    if let Some(i) = map.data.iter().position(|u| u.drive == drive) {
        return Some((i as u32, map.data[i].pba));
    }
    (map.parity[0].drive == drive).then_some((PARITY_UNIT, map.parity[0].pba))
}

/// A write: plain RAID-5's plan, then the log write in a phase before the home writes.
fn plan_write(state: &mut LogState, map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan_parity_with(map, unit, spec, status, plan);
    plan.fill_touched();
    let noted = !state.lost_blocks.is_empty();
    if noted {
        // A lost block the write overwrites whole is whole again once it is done: the parity
        // written with it agrees with it. (A plan that logs nothing is still md's, for the
        // commit step to see the note.)
        clear_md(plan);
        let block = state.block_sectors;
        let row_base = map.stripe * state.rows_per_unit;
        for (i, row, from, to) in super::touched_blocks(&plan.touched, block) {
            if to - from == block {
                super::planner::note_overwritten(&state.lost_blocks, map, row_base + row, 1 << i, &mut plan.log.overwritten);
            }
        }
    }
    let Some(first_write_phase) = plan.ops.iter().filter(|o| o.kind == OpKind::Write).map(|o| o.phase).min() else { return };
    if plan.lost_sectors > 0 {
        // Data is lost: nothing a log could protect.
        return;
    }
    if !noted {
        clear_md(plan);
    }
    let consistency = state.scheme.consistency();
    let block = state.block_sectors;
    state.stats.md_writes += 1;
    let mut appends = vec![LogAppend { log_pba: 0, unit: PARITY_UNIT, row: 0, sectors: HEADER_SECTORS as u32, value: LogValue::Header }];
    let mut len = HEADER_SECTORS;
    let slot = match consistency {
        Consistency::Journal => {
            if state.log_failed {
                // md fails a write-through journal's array over to writing without it
                // (raidlab's choice; the write hole is open again).
                state.stats.unprotected_writes += 1;
                return;
            }
            for op in plan.ops.iter().filter(|o| o.kind == OpKind::Write) {
                let Some((index, base)) = unit_on(map, op.drive) else { continue };
                appends.push(LogAppend { log_pba: len, unit: index, row: op.pba - base, sectors: op.sectors, value: LogValue::Home });
                len += (op.sectors as u64).div_ceil(block) * block;
            }
            state.log_slot
        }
        _ => {
            let parity = map.parity[0];
            if plan.degraded || !plan.ops.iter().any(|o| o.kind == OpKind::Write && o.drive == parity.drive) {
                // A degraded stripe (or one whose parity is not written) logs no partial
                // parity (raidlab's choice: its recovery needs every modified drive).
                state.stats.unprotected_writes += 1;
                return;
            }
            // The partial parity of every parity range the write updates; a full-row write
            // (nothing pre-read) logs the header alone.
            if plan.ops.iter().any(|o| o.kind == OpKind::Read) {
                for op in plan.ops.iter().filter(|o| o.kind == OpKind::Write && o.drive == parity.drive) {
                    appends.push(LogAppend {
                        log_pba: len,
                        unit: PARITY_UNIT,
                        row: op.pba - parity.pba,
                        sectors: op.sectors,
                        value: LogValue::PartialParity,
                    });
                    len += op.sectors as u64;
                }
            }
            parity.drive
        }
    };
    let ppl_start = state.md.ppl_start;
    let Some(start) = state.md.ring(consistency, slot).alloc(len) else {
        state.stats.unprotected_writes += 1;
        return;
    };
    let base = if consistency == Consistency::PartialParity { ppl_start + start } else { start };
    for a in &mut appends {
        a.log_pba += base;
    }
    for op in &mut plan.ops {
        if op.phase >= first_write_phase {
            op.phase += 1;
        }
    }
    let value_offset = plan.value_sectors() as u32;
    plan.ops.push(PlanOp { drive: slot, pba: base, sectors: len as u32, kind: OpKind::Write, phase: first_write_phase, value_offset });
    plan.phases += 1;
    if let Some(answer) = plan.answer_after.as_mut().filter(|a| **a > first_write_phase) {
        *answer += 1;
    }
    state.stats.md_log_sectors += len;
    let log = &mut plan.log;
    log.log_slot = slot;
    log.appends = appends;
    log.md_phase = first_write_phase;
    log.md_ring = Some((slot, start));
}

/// The recovery of a stripe a crash caught (a re-sync request's piece), as far as the drives
/// that work allow: a replay writes no home on a failed drive (the parity it writes carries
/// that home's value), and a parity is recomputed only where every block it needs can be read
/// (PPL's rule, `../shared/anchors/layouts-and-logs.md` §3: every modified drive readable); a
/// row left so has its failed member's block marked lost ([`lose_unrecoverable`]).
fn plan_recovery(state: &mut LogState, map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    plan.touched.iter_mut().for_each(|t| *t = (0, 0));
    clear_md(plan);
    plan.log.resync = true;
    let Some(entry) = state.md.pending.get(&map.stripe) else { return plan.finish_ranges() };
    let parity = map.parity[0];
    let home = |index: u32| if index == PARITY_UNIT { parity } else { map.data[index as usize] };
    let writable = |u: &crate::layout::UnitLocation| !status.is_failed(u) || status.is_write_only(u);
    match entry.recovery(state.log_failed) {
        Recover::Replay => {
            plan.log.replay = true;
            plan.log.replay_write_id = entry.write_id;
            plan.log.log_slot = state.log_slot;
            let mut written = 0u64;
            for a in entry.appends.iter().filter(|a| a.value == LogValue::Home) {
                let u = home(a.unit);
                if !writable(&u) {
                    continue;
                }
                if a.unit != PARITY_UNIT {
                    written |= 1 << a.unit;
                }
                plan.add_range(state.log_slot, OpKind::Read, a.log_pba, a.log_pba + a.sectors as u64);
                plan.add_range(u.drive, OpKind::Write, u.pba + a.row, u.pba + a.row + a.sectors as u64);
                plan.log.recipes.push(LogRecipe { unit: a.unit, row: a.row, sectors: a.sectors, reads: vec![(state.log_slot, a.log_pba)], memory: false });
            }
            // What the write modified on a home the replay does not write (its drive failed,
            // before the write or since) is current all the same: the parity written beside
            // it carries it. These are the replay's touched ranges, whose values are the
            // caught write's.
            for &(i, a, b) in &entry.modified {
                if written >> i & 1 == 0 {
                    plan.touched[i as usize] = (a, b);
                }
            }
        }
        how @ (Recover::PartialParity | Recover::Resync) => {
            if !writable(&parity) {
                // A lost parity, and its PPL with it: the rebuild recomputes it from the data.
                return plan.finish_ranges();
            }
            // PPL lives on the parity drive it was written to: a rebuild's target holds none
            // of it, and the parity is then recomputed from all the data.
            let ppl_readable = entry.ring.is_some_and(|(slot, _)| slot == parity.drive) && !status.is_failed(&parity);
            let how = if how == Recover::PartialParity && !ppl_readable { Recover::Resync } else { how };
            let (lo, hi) = entry.modified.iter().fold((u64::MAX, 0), |(lo, hi), &(_, a, b)| (lo.min(a), hi.max(b)));
            let modified = |i: usize, offset: u64| {
                how == Recover::Resync || entry.modified.iter().any(|&(u, a, b)| u as usize == i && a <= offset && offset < b)
            };
            let partial = |offset: u64| {
                let appends = if how == Recover::PartialParity { &entry.appends[..] } else { &[] };
                appends.iter().find(|a| a.value == LogValue::PartialParity && offset >= a.row && offset < a.row + a.sectors as u64)
            };
            // Runs of offsets with the same modified blocks and partial parity, each one recipe.
            let key = |offset: u64| {
                let mask = (0..map.data.len()).filter(|&i| modified(i, offset)).fold(0u64, |m, i| m | 1 << i);
                (mask, partial(offset).map(|a| a.log_pba + offset - a.row))
            };
            // Only the rows the write touched: the others' parity is as it was.
            let touched = |offset: u64| entry.modified.iter().any(|&(_, a, b)| a <= offset && offset < b);
            let mut offset = lo;
            while offset < hi {
                if !touched(offset) {
                    offset += 1;
                    continue;
                }
                let (mask, pp) = key(offset);
                let mut end = offset + 1;
                while end < hi && touched(end) && key(end) == (mask, pp.map(|p| p + end - offset)) {
                    end += 1;
                }
                let needed = (0..map.data.len()).filter(|&i| mask >> i & 1 == 1);
                if needed.clone().any(|i| status.is_failed(&map.data[i])) {
                    // A block the parity needs cannot be read: md leaves the parity as it is.
                    offset = end;
                    continue;
                }
                let mut reads: Vec<(u32, u64)> = needed.map(|i| (map.data[i].drive, map.data[i].pba + offset)).collect();
                reads.extend(pp.map(|p| (parity.drive, p)));
                for &(drive, pba) in &reads {
                    plan.add_range(drive, OpKind::Read, pba, pba + end - offset);
                }
                plan.add_range(parity.drive, OpKind::Write, parity.pba + offset, parity.pba + end);
                plan.log.recipes.push(LogRecipe { unit: PARITY_UNIT, row: offset, sectors: (end - offset) as u32, reads, memory: false });
                offset = end;
            }
        }
    }
    plan.finish_ranges();
}

/// A write or a recovery is done: its log place is given back; a recovery's stripe is
/// recovered.
fn commit(state: &mut LogState, stripe: u64, plan: &Plan) {
    let consistency = state.scheme.consistency();
    state.md.free(consistency, plan.log.md_ring);
    if !plan.log.resync && !state.md.cut_short.is_empty() {
        if let Some(earlier) = state.md.cut_short.remove(&stripe) {
            state.md.free(consistency, earlier.ring);
        }
    }
    if plan.log.resync {
        if let Some(entry) = state.md.pending.remove(&stripe) {
            state.md.free(consistency, entry.ring);
            state.stats.recovered_stripes += 1;
        }
    }
}

/// What a crash that caught write `plan` in phase `phase` (the phases before it done;
/// `u8::MAX`: every phase issued) leaves to recover, if anything (its `write_id` unset).
fn caught(state: &LogState, plan: &Plan, phase: u8) -> Option<Interrupted> {
    let modified: Vec<(u32, u64, u64)> = plan.touched.iter().enumerate().filter(|(_, t)| t.0 < t.1).map(|(i, t)| (i as u32, t.0, t.1)).collect();
    if plan.logged && plan.log.md_ring.is_some() {
        if phase <= plan.log.md_phase {
            // Its log was not complete, and no home sector had changed: md discards it.
            return None;
        }
        let how = if state.scheme.consistency() == Consistency::Journal { Recover::Replay } else { Recover::PartialParity };
        return Some(Interrupted { how, appends: plan.log.appends.clone(), ring: plan.log.md_ring, modified, write_id: 0 });
    }
    if !plan.ops.iter().any(|o| o.kind == OpKind::Write && o.phase <= phase) {
        return None;
    }
    Some(Interrupted { how: Recover::Resync, appends: Vec::new(), ring: None, modified, write_id: 0 })
}

/// A crash caught write `plan` of `stripe` in phase `phase` (the phases before it done). A
/// write a failure cut short after it wrote home, whose new plan has changed no home sector
/// yet, is recovered from its first plan's log.
pub(super) fn interrupted(state: &mut LogState, stripe: u64, plan: &Plan, phase: u8, write_id: u64) {
    if plan.logged && plan.log.resync {
        // A recovery caught by a second crash: its stripe's entry is still there.
        return;
    }
    let earlier = state.md.cut_short.remove(&stripe);
    let Some(mut entry) = caught(state, plan, phase).or(earlier) else { return };
    entry.write_id = write_id;
    state.stats.interrupted_writes += 1;
    state.md.pending.insert(stripe, entry);
}

/// The crash lost every write in flight: the rings keep only the places a recovery reads,
/// and every pending recovery is handed out again.
pub(super) fn lose_volatile(state: &mut LogState) {
    state.stats.crashes += 1;
    // (Every write cut short was caught with its new plan: the controller reports both.)
    state.md.cut_short.clear();
    let kept: Vec<(u32, u64)> = state.md.pending.values().filter_map(|e| e.ring).collect();
    let log_slot = state.log_slot;
    state.md.journal.retain(|a| kept.iter().any(|&(slot, s)| slot == log_slot && s == a));
    for (slot, ring) in state.md.ppl.iter_mut().enumerate() {
        ring.retain(|a| kept.iter().any(|&(s, start)| s == slot as u32 && start == a));
    }
    state.md.queue = state.md.pending.keys().copied().collect();
}

/// The next stripe to recover.
pub(super) fn next_recovery(state: &mut LogState) -> Option<u64> {
    while let Some(stripe) = state.md.queue.pop_front() {
        if state.md.pending.contains_key(&stripe) {
            return Some(stripe);
        }
    }
    None
}

/// A member's sectors that cannot be read now (`unreadable(slot, first, end)`) lose their
/// block of every row a pending recovery cannot bring back: a parity recomputed from the
/// modified blocks and the partial parity needs every modified drive (md does not recover
/// the stripe otherwise, `../shared/anchors/layouts-and-logs.md` §3), and one recomputed from
/// all the data (an unprotected write, or a journal lost) needs every data drive. A replay
/// from the journal needs no member, and a lost parity loses no data. (raidlab's choice: the
/// array goes on with the block reported lost, as the paper's schemes do.)
pub(super) fn lose_unrecoverable(state: &mut LogState, layout: &dyn crate::layout::Layout, unreadable: &dyn Fn(u32, u64, u64) -> bool) {
    let block = state.block_sectors;
    let mut map = StripeMap::default();
    let mut lost: Vec<(u64, u32)> = Vec::new();
    for (&stripe, entry) in &state.md.pending {
        let how = entry.recovery(state.log_failed);
        if how == Recover::Replay {
            continue;
        }
        layout.map_stripe(stripe, &mut map);
        let parity = map.parity[0];
        let (lo, hi) = entry.modified.iter().fold((u64::MAX, 0), |(lo, hi), &(_, a, b)| (lo.min(a), hi.max(b)));
        if lo >= hi {
            continue;
        }
        for row in lo / block..hi.div_ceil(block) {
            let (start, end) = (row * block, row * block + block);
            if !entry.modified.iter().any(|&(_, a, b)| a < end && start < b) || unreadable(parity.drive, parity.pba + start, parity.pba + end) {
                continue;
            }
            for (i, u) in map.data.iter().enumerate() {
                let needed = how == Recover::Resync || entry.modified.iter().any(|&(m, a, b)| m as usize == i && a < end && start < b);
                if needed && unreadable(u.drive, u.pba + start, u.pba + end) {
                    lost.push((stripe * state.rows_per_unit + row, i as u32));
                }
            }
        }
    }
    for (row_id, i) in lost {
        state.mark_lost(row_id, i);
    }
}
