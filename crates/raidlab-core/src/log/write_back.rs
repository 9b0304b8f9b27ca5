//! The planner's side of md's write-back journal (`super::md_journal_wb`): a block whose
//! newest value is only in the journal (and in memory) is *cached*; the index holds it as
//! the block's `Log_new` record, and its home and its row's parity are stale until the
//! stripe is flushed.
//!
//! - A write appends its blocks' new values to the journal and completes; a block it covers
//!   only in part is merged first with its current value (from memory if cached, else read
//!   from home). A row whose records do not fit in the journal is written home at once with
//!   its parity, by reconstruct-write, its cached blocks from memory, and its entry dropped.
//! - A read takes cached blocks from memory (no op) and the others from home.
//! - A flush (a re-sync request of the stripe) computes each cached row's parity by
//!   reconstruct-write (the blocks not cached read from home, the cached from memory),
//!   appends the parities to the journal, then writes the cached blocks and the parities
//!   home; its commit drops the rows. md chooses read-modify-write where cheaper; raidlab
//!   always reconstructs, so a flush a crash caught is simply run again (its home writes
//!   change only blocks whose newest value memory holds).

use super::layout::LogState;
use super::{all_blocks, RecordKind};
use crate::disk::OpKind;
use crate::layout::plan::{plan_parity_with, LogAppend, LogRecipe, LogValue, PieceSpec, Plan, UnitStatus, PARITY_UNIT};
use crate::layout::StripeMap;

/// The planner of md's write-back journal: its own reads, writes and flushes; its commit
/// and abandon steps are the paper's schemes' (the index takes the records, a flush drops its
/// rows), with the journal's parities and full rows beside them.
#[derive(Debug)]
pub struct WriteBackPlanner;

pub static WRITE_BACK_PLANNER: WriteBackPlanner = WriteBackPlanner;

impl crate::layout::plan::Planner for WriteBackPlanner {
    fn name(&self) -> &'static str {
        "log"
    }
    fn plan(&self, i: crate::layout::plan::PlanInputs<'_>, plan: &mut Plan) {
        let state = super::planner::log_state(i.placement.expect("a log-assisted layout has its state"));
        if i.spec.resync {
            plan_flush(state, i.map, i.unit_sectors, i.spec, i.status, plan)
        } else if i.spec.is_write {
            plan_write(state, i.map, i.unit_sectors, i.spec, i.status, plan)
        } else {
            plan_read(state, i.map, i.unit_sectors, i.spec, i.status, plan)
        }
    }
    fn commit(&self, placement: &mut dyn crate::layout::PlacementState, stripe: u64, plan: &Plan) {
        let state = super::planner::log_state(placement);
        if plan.logged && plan.log.resync {
            // A flush's parities in the journal are no longer needed; a row it flushed is
            // whole again.
            state.index.release(plan.log.appends.len() as u32);
            for row in &plan.log.resync_rows {
                state.wb_torn.remove(row);
                state.crash_suspects.remove(row);
            }
        } else if plan.logged {
            if !state.wb_cut_short.is_empty() {
                state.wb_cut_short.remove(&stripe);
            }
            // A write that fills a row of the cache flushes its stripe.
            let all = all_blocks(state.data_units);
            let logs = |row: u64| plan.log.rows.iter().filter(|r| r.0 == row).fold(0, |m, r| m | r.2[1]);
            if plan.log.rows.iter().any(|&(row, _, _)| state.index.row(row).map_or(0, |e| e.logged()) | logs(row) == all) {
                state.wb_full.push_back(stripe);
            }
        }
        super::planner::LOG_PLANNER.commit(state, stripe, plan);
        if state.log_failed && state.index.rows() > 0 {
            // A write whose journal record was written before the journal failed, done
            // since: its blocks went with the journal too.
            state.lose_cache();
        }
    }
    fn abandon(&self, placement: &mut dyn crate::layout::PlacementState, stripe: u64, plan: &Plan, wrote: bool) {
        if plan.logged && plan.log.resync {
            // A flush planned again reserves its parities' space again.
            return super::planner::log_state(placement).index.release(plan.log.appends.len() as u32);
        }
        // A write cut short by the journal's loss never reached the journal (it is planned
        // again, home); one cut short by a member's reached it if it wrote at all.
        let state = super::planner::log_state(placement);
        let journal_lost = state.log_failed && !plan.log.appends.is_empty();
        if wrote && plan.logged && !plan.log.resync_rows.is_empty() {
            state.wb_cut_short.insert(stripe, plan.log.resync_rows.clone());
        }
        super::planner::LOG_PLANNER.abandon(placement, stripe, plan, wrote && !journal_lost);
    }
    fn write_ops(&self, units: f64, data_units: f64, copies: f64) -> f64 {
        super::planner::LOG_PLANNER.write_ops(units, data_units, copies)
    }
}

/// Mark `plan` as a log plan filled by the log rule, with nothing of the log in it yet.
fn clear(plan: &mut Plan, log_slot: u32, resync: bool) {
    plan.logged = true;
    let log = &mut plan.log;
    log.log_slot = log_slot;
    log.home_rule = false;
    log.replay = false;
    log.resync = resync;
    log.appends.clear();
    log.recipes.clear();
    log.rows.clear();
    log.resync_rows.clear();
    log.overwritten.clear();
    log.lost.clear();
    log.md_phase = u8::MAX;
    log.md_ring = None;
}

/// The memory recipe of cached block `block` of data unit `unit`, at `start` (an offset in the
/// unit): the journal's newest record of it.
fn memory_recipe(state: &LogState, row_id: u64, unit: u32, start: u64) -> Option<LogRecipe> {
    let address = state.index.row(row_id)?.block(unit)?.new?;
    let block = state.block_sectors;
    Some(LogRecipe { unit, row: start, sectors: block as u32, reads: vec![(state.log_slot, address * block)], memory: true })
}

/// The recipe of block `start` (an offset in the unit) of data unit `lost`, on a failed
/// drive and not cached: what its home held, from the parity and the other units' homes
/// (the homes and the parity always agree: the parity is written only with a whole row);
/// its reads are added to `plan`.
fn home_recipe(map: &StripeMap, lost: usize, start: u64, block: u64, plan: &mut Plan) -> LogRecipe {
    let parity = map.parity[0];
    let mut reads = vec![(parity.drive, parity.pba + start)];
    reads.extend(map.data.iter().enumerate().filter(|&(i, _)| i != lost).map(|(_, u)| (u.drive, u.pba + start)));
    for &(drive, pba) in &reads {
        plan.add_range(drive, OpKind::Read, pba, pba + block);
    }
    LogRecipe { unit: lost as u32, row: start, sectors: block as u32, reads, memory: false }
}

/// Whether block `row` of data unit `unit` was lost with the journal.
fn lost_block(state: &LogState, row_id: u64, unit: usize) -> bool {
    state.lost_blocks.get(&row_id).is_some_and(|m| m >> unit & 1 == 1)
}

/// A read: cached blocks from memory, the rest from home.
fn plan_read(state: &LogState, map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    let block = state.block_sectors;
    let row_base = map.stripe * state.rows_per_unit;
    let (lo, hi) = (spec.first, spec.first + spec.sectors);
    let (first_row, last_row) = ((lo % unit) / block, ((hi - 1) % unit) / block);
    let spans_units = lo / unit != (hi - 1) / unit;
    let cached = state.index.rows() > 0
        && if spans_units {
            state.logged_rows_of(map.stripe).next().is_some()
        } else {
            (first_row..=last_row).any(|r| state.index.row(row_base + r).is_some())
        };
    let degraded = map.data.iter().chain(map.parity.iter()).any(|u| status.is_failed(u));
    if !cached && !degraded && state.lost_blocks.is_empty() {
        return plan_parity_with(map, unit, spec, status, plan);
    }
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    clear(plan, state.log_slot, false);
    let touched = std::mem::take(&mut plan.touched);
    for (i, row, sector, end) in super::touched_blocks(&touched, block) {
        // Lost (with the journal, or beside a torn row's lost member): reported, never read
        // from its stale home, nor from memory, where a write that covered it in part merged
        // its new sectors with what the parity made of the rest.
        if lost_block(state, row_base + row, i) {
            plan.lost_sectors += end - sector;
            plan.log.lost.push((i as u32, sector, end));
            continue;
        }
        match memory_recipe(state, row_base + row, i as u32, row * block) {
            Some(recipe) => plan.log.recipes.push(recipe),
            None if status.is_failed(&map.data[i]) => {
                if map.parity.iter().chain(map.data.iter()).filter(|u| status.is_failed(u)).count() > 1 {
                    plan.lost_sectors += end - sector;
                } else {
                    plan.degraded = true;
                    let recipe = home_recipe(map, i, row * block, block, plan);
                    plan.log.recipes.push(recipe);
                }
            }
            None => plan.add_range(map.data[i].drive, OpKind::Read, map.data[i].pba + sector, map.data[i].pba + end),
        }
    }
    plan.touched = touched;
    plan.finish_ranges();
}

/// A write: every updated block's new value to the journal (merged first where the write
/// covers part of it); a row that does not fit written home with its parity.
fn plan_write(state: &mut LogState, map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    clear(plan, state.log_slot, false);
    let block = state.block_sectors;
    let n = map.data.len() as u32;
    let touched: Vec<(u64, u64)> = plan.touched.clone();
    let (first_row, end_row) = touched
        .iter()
        .filter(|t| t.0 < t.1)
        .fold((u64::MAX, 0), |(f, e), t| (f.min(t.0 / block), e.max(t.1.div_ceil(block))));
    state.stats.write_pieces += 1;
    let parity = map.parity[0];
    for row in first_row..end_row {
        let (start, end) = (row * block, row * block + block);
        let (updated, partial) = super::row_masks(touched.iter().copied().enumerate(), start, end);
        if updated == 0 {
            continue;
        }
        let row_id = map.stripe * state.rows_per_unit + row;
        let logged = state.index.row(row_id).map_or(0, |e| e.logged());
        let row_plan = state.scheme.plan_row(&super::RowState { data_blocks: n, updated, logged, has_old: 0 });
        state.stats.row_writes += 1;
        state.stats.lookups += row_plan.lookups as u64;
        plan.cpu_ns += row_plan.lookups as u64 * state.lookup_ns;
        super::planner::note_overwritten(&state.lost_blocks, map, row_id, updated & !partial, &mut plan.log.overwritten);
        // The value of block i before the write where it is needed: memory if cached, else
        // home (recovered from the parity and the other homes when its drive is lost).
        let current = |plan: &mut Plan, i: usize, state: &LogState| match memory_recipe(state, row_id, i as u32, start) {
            Some(recipe) => plan.log.recipes.push(recipe),
            None if status.is_failed(&map.data[i]) => {
                plan.degraded = true;
                let recipe = home_recipe(map, i, start, block, plan);
                plan.log.recipes.push(recipe);
            }
            None => {
                plan.add_range(map.data[i].drive, OpKind::Read, map.data[i].pba + start, map.data[i].pba + end);
                plan.pre_read_sectors += block;
            }
        };
        // A home write of a unit: none to a failed drive (the parity covers it), but to a
        // rebuild's target.
        let home_write = |plan: &mut Plan, u: &crate::layout::UnitLocation| {
            if !status.is_failed(u) || status.is_write_only(u) {
                plan.add_range(u.drive, OpKind::Write, u.pba + start, u.pba + end);
            }
        };
        let reserved = if state.log_failed { None } else { state.index.reserve(row_plan.records()) };
        match reserved {
            Some(first_address) => {
                for i in (0..n as usize).filter(|&i| partial >> i & 1 == 1) {
                    state.stats.merge_read_blocks += (logged >> i & 1 == 0) as u64;
                    current(plan, i, state);
                }
                state.stats.records += row_plan.records() as u64;
                super::LogIndex::record_layout(&row_plan, &mut state.layout_scratch);
                for (k, &(data_block, kind)) in state.layout_scratch.iter().enumerate() {
                    debug_assert_eq!(kind, RecordKind::New);
                    let log_pba = (first_address + k as u64) * block;
                    plan.add_range(state.log_slot, OpKind::Write, log_pba, log_pba + block);
                    plan.log.appends.push(LogAppend { log_pba, unit: data_block, row: start, sectors: block as u32, value: LogValue::New });
                }
                plan.log.rows.push((row_id, first_address, [0, row_plan.log_new, 0]));
            }
            None => {
                // No room: the row goes home now, with its parity (reconstruct-write), and its
                // cached blocks with it.
                state.stats.log_full_rows += 1;
                state.stats.rcw_rows += 1;
                let whole = updated & !partial;
                for i in (0..n as usize).filter(|&i| whole >> i & 1 == 0) {
                    current(plan, i, state);
                }
                for i in (0..n as usize).filter(|&i| logged >> i & 1 == 1 && updated >> i & 1 == 0) {
                    home_write(plan, &map.data[i]);
                }
                // Whole blocks: a cached block's home is stale beyond what the write covers.
                for i in (0..n as usize).filter(|&i| updated >> i & 1 == 1) {
                    home_write(plan, &map.data[i]);
                }
                home_write(plan, &parity);
                plan.log.resync_rows.push(row_id);
            }
        }
    }
    state.stats.peak_used_blocks = state.stats.peak_used_blocks.max(state.index.used_blocks());
    state.stats.peak_logged_blocks = state.stats.peak_logged_blocks.max(state.index.logged_blocks());
    state.stats.peak_logged_rows = state.stats.peak_logged_rows.max(state.index.rows() as u64);
    plan.finish_ranges();
}

/// A flush of `map`'s stripe: each cached row's parity by reconstruct-write, appended to the
/// journal, then the cached blocks and the parities home.
fn plan_flush(state: &mut LogState, map: &StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    plan.touched.iter_mut().for_each(|t| *t = (0, 0));
    clear(plan, state.log_slot, true);
    let block = state.block_sectors;
    let n = map.data.len();
    let parity = map.parity[0];
    let rows: Vec<u64> = state.flush_rows_of(map.stripe).collect();
    // The parities go to the journal (md writes them there before the home writes), in space
    // reserved like a write's and given back at the commit; nothing reads them but a replay,
    // which raidlab does not need (a caught flush is run again). A full journal skips them.
    let journal_at = state.index.reserve(rows.len() as u32).map(|first| first * block);
    for (k, &row_id) in rows.iter().enumerate() {
        let start = (row_id % state.rows_per_unit) * block;
        let cached = state.index.row(row_id).map_or(0, |e| e.logged());
        let writable = |u: &crate::layout::UnitLocation| !status.is_failed(u) || status.is_write_only(u);
        for i in 0..n {
            let u = map.data[i];
            if cached >> i & 1 == 1 {
                plan.log.recipes.push(memory_recipe(state, row_id, i as u32, start).expect("a cached block has its record"));
                if writable(&u) {
                    plan.add_range(u.drive, OpKind::Write, u.pba + start, u.pba + start + block);
                }
            } else if status.is_failed(&u) {
                // Its home value, from the parity and the other homes (read before any write).
                plan.degraded = true;
                let recipe = home_recipe(map, i, start, block, plan);
                plan.log.recipes.push(recipe);
            } else {
                plan.add_range(u.drive, OpKind::Read, u.pba + start, u.pba + start + block);
            }
        }
        if writable(&parity) {
            plan.add_range(parity.drive, OpKind::Write, parity.pba + start, parity.pba + start + block);
        }
        if let Some(journal_at) = journal_at {
            let log_pba = journal_at + k as u64 * block;
            plan.log.appends.push(LogAppend { log_pba, unit: PARITY_UNIT, row: start, sectors: block as u32, value: LogValue::New });
        }
        state.stats.resync_lookups += 1;
        plan.cpu_ns += state.lookup_ns;
        debug_assert!(cached & !all_blocks(n as u32) == 0);
    }
    if let Some(journal_at) = journal_at {
        plan.add_range(state.log_slot, OpKind::Write, journal_at, journal_at + rows.len() as u64 * block);
    }
    state.stats.resync_stripes += 1;
    state.stats.resync_rows += rows.len() as u64;
    plan.log.resync_rows.extend(rows);
    plan.finish_ranges();
    // Up to three phases: the reads, the parities to the journal, then the home writes (a
    // phase with no op is left out: a full journal takes no parity).
    let has_reads = plan.ops.iter().any(|o| o.kind == OpKind::Read);
    let has_journal = plan.ops.iter().any(|o| o.kind == OpKind::Write && o.drive == state.log_slot);
    let journal_phase = has_reads as u8;
    for op in &mut plan.ops {
        if op.kind == OpKind::Write && op.drive != state.log_slot {
            op.phase = journal_phase + has_journal as u8;
        }
    }
    plan.phases = plan.ops.iter().map(|o| o.phase + 1).max().unwrap_or(0);
}

/// A member's sectors that cannot be read now (`unreadable(slot, first, end)`) lose their
/// block of every row a crash may have torn (written home, data and parity, by a write or a
/// flush it caught) unless memory holds the block: its home value would be reconstructed
/// from a parity of unknown state. (raidlab's choice, conservative: md would replay a caught
/// flush's parities from the journal, which raidlab does not model.) A lost parity loses no
/// data.
pub(super) fn lose_unrecoverable(state: &mut LogState, layout: &dyn crate::layout::Layout, unreadable: &dyn Fn(u32, u64, u64) -> bool) {
    let block = state.block_sectors;
    let mut map = StripeMap::default();
    let rows: Vec<u64> = state.crash_suspects.iter().copied().collect();
    for row_id in rows {
        let stripe = row_id / state.rows_per_unit;
        let start = (row_id % state.rows_per_unit) * block;
        layout.map_stripe(stripe, &mut map);
        let parity = map.parity[0];
        if unreadable(parity.drive, parity.pba + start, parity.pba + start + block) {
            continue;
        }
        let cached = state.index.row(row_id).map_or(0, |e| e.logged());
        let Some(lost) = map.data.iter().enumerate().position(|(i, u)| cached >> i & 1 == 0 && unreadable(u.drive, u.pba + start, u.pba + start + block)) else {
            continue;
        };
        state.mark_lost(row_id, lost as u32);
        state.crash_suspects.remove(&row_id);
    }
}
