//! The planner of a log-assisted RAID-5: reads as plain RAID-5 (data is updated in place,
//! §III-C), writes row by row through the scheme.
//!
//! For every parity row a write piece touches (blocks of [`super::layout::LogState::block_sectors`]
//! at the same offset in every data unit), the scheme decides from the index what to pre-read
//! and what to log, and the records' log space is reserved; the index takes the records when
//! the write is done (the commit step, while the piece still holds its stripe's lock, so the
//! next write of the row plans after it). The plan is then:
//! - phase 0: the pre-reads (whole blocks);
//! - phase 1: the data written home, the records appended to the log drive (consecutive
//!   blocks, so one sequential write), and, for a row whose records do not fit in the log,
//!   the row's parity.
//!
//! A block the write covers only in part is read too when its new value is logged, since a
//! record holds the whole block (raidlab's choice; Linux md likewise reads a page a write does
//! not wholly overwrite before it computes with it). These merge reads are counted apart from
//! the scheme's pre-reads.
//!
//! A row whose records do not fit in the log is written as plain RAID-5 by reconstruct-write:
//! every block the write does not wholly overwrite is read, the parity is computed from the
//! whole row and written, and the row's entry is dropped (its parity is current again).

use super::layout::LogState;
use super::{all_blocks, BlockMask, LogIndex, Method, RecordKind, RowPlan, RowState};
use crate::disk::OpKind;
use crate::layout::plan::{plan_parity_with, LogAppend, LogRecipe, LogValue, PieceSpec, Plan, PlanInputs, Planner, UnitStatus};
use super::{recovery, Recovery};

/// A finished write overwrote some lost blocks whole: each holds a value known again, unless
/// its drive failed after the write reached it and the row's parity was not rewritten with
/// it (`parity_rewritten`: every row's was, else those of its `resync_rows`). (Where it was
/// not, the parity agrees with the block all the same: it was updated from old values that
/// agreed with it, as a rebuild leaves a lost block.)
#[cold]
pub(super) fn forget_overwritten(state: &mut LogState, plan: &Plan, parity_rewritten: bool) {
    for &(row, index, drive) in &plan.log.overwritten {
        if state.failed_slots.contains(&drive) && !parity_rewritten && !plan.log.resync_rows.contains(&row) {
            continue;
        }
        let Some(mask) = state.lost_blocks.get_mut(&row) else { continue };
        *mask &= !(1 << index);
        if *mask == 0 {
            state.lost_blocks.remove(&row);
        }
    }
}

/// Note, for the commit step ([`forget_overwritten`]), the lost blocks of row `row_id` that a
/// write overwrites whole (`whole`, a mask of the row's data blocks).
#[inline]
pub(super) fn note_overwritten(
    lost_blocks: &std::collections::BTreeMap<u64, BlockMask>,
    map: &crate::layout::StripeMap,
    row_id: u64,
    whole: BlockMask,
    overwritten: &mut Vec<(u64, u32, u32)>,
) {
    let Some(&lost) = lost_blocks.get(&row_id) else { return };
    let mut bits = lost & whole;
    while bits != 0 {
        let i = bits.trailing_zeros();
        bits &= bits - 1;
        overwritten.push((row_id, i, map.data[i as usize].drive));
    }
}

/// The planner of every log-assisted array (the scheme lives in its state).
#[derive(Debug)]
pub struct LogPlanner;

pub static LOG_PLANNER: LogPlanner = LogPlanner;

impl Planner for LogPlanner {
    fn name(&self) -> &'static str {
        "log"
    }
    fn plan(&self, i: PlanInputs<'_>, plan: &mut Plan) {
        let degraded = i.map.data.iter().chain(i.map.parity.iter()).any(|u| i.status.is_failed(u));
        let state = log_state(i.placement.expect("a log-assisted layout has its state"));
        if !i.spec.is_write && !degraded {
            if !state.lost_blocks.is_empty() {
                return plan_read_around_lost(state, i.map, i.unit_sectors, i.spec, plan);
            }
            // Reads find the data in place (§III-C).
            return plan_parity_with(i.map, i.unit_sectors, i.spec, i.status, plan);
        }
        if degraded {
            plan_degraded(state, i.map, i.unit_sectors, i.spec, i.status, plan);
        } else if i.spec.resync {
            plan_resync(state, i.map, i.unit_sectors, i.spec, plan);
        } else {
            plan_write(state, i.map, i.unit_sectors, i.spec, plan);
        }
    }
    fn commit(&self, placement: &mut dyn crate::layout::PlacementState, stripe: u64, plan: &Plan) {
        commit(log_state(placement), stripe, plan, true);
    }
    fn abandon(&self, placement: &mut dyn crate::layout::PlacementState, _stripe: u64, plan: &Plan, wrote: bool) {
        // (A re-sync holds no reservation, and is simply planned again.)
        if wrote && !(plan.logged && plan.log.resync) {
            // Its data and its records are written (only the failed drive's writes are not,
            // the log's among them if the log failed): the index must say so before the
            // piece is planned again. Its rows' parity is stale against the data it wrote
            // home, so they must stay logged: with the log lost, the re-sync the loss started
            // rewrites them (or, beside a lost data drive, reports their lost blocks).
            return commit(log_state(placement), 0, plan, false);
        }
        // Nothing written: the reserved space is given back.
        let state = placement.as_any_mut().downcast_mut::<LogState>().expect("a log-assisted layout's state is a LogState");
        if plan.logged {
            for &(_, _, masks) in &plan.log.rows {
                state.index.release(masks.iter().map(|m| m.count_ones()).sum());
            }
        }
    }
    fn write_ops(&self, units: f64, data_units: f64, copies: f64) -> f64 {
        // The log append is one more write; the schemes pre-read at most what RAID-5 does
        // without its parity (notes A.8), so RAID-5's estimate bounds them.
        crate::layout::plan::PARITY.write_ops(units, data_units, copies) + 1.0
    }
}

/// The commit step of a write or re-sync plan of `stripe`: its records enter the index, the
/// rows it rewrote with their parity leave it. `finished`: every write of the plan was
/// done (not a plan a drive failure cut short, whose writes to the failed drive were not):
/// only then are rows it made whole known to be so.
pub(super) fn commit(state: &mut LogState, stripe: u64, plan: &Plan, finished: bool) {
    {
        if plan.logged && plan.log.resync {
            // The walk over every stripe after a crash hands them out in order, one at a time.
            if let Some((next, done)) = state.resync.every_stripe.as_mut() {
                if stripe == *done {
                    *done += 1;
                    if *done >= state.stripes && *next >= state.stripes {
                        state.resync.every_stripe = None;
                    }
                }
            }
        }
        if plan.logged {
            // The index changes only once the write is done (a plan abandoned after a drive
            // failed under it leaves it as it was), while the piece still holds its lock.
            for &(row, first, [log_old, log_new, log_delta]) in &plan.log.rows {
                let row_plan = RowPlan { log_old, log_new, log_delta, ..RowPlan::default() };
                state.index.record(row, &row_plan, first, &mut state.records);
                state.index.release(row_plan.records());
            }
            for &row in &plan.log.resync_rows {
                state.index.drop_row(row);
            }
            if finished && !plan.degraded && !state.crash_suspects.is_empty() {
                // A re-sync, or a write that fell back to plain RAID-5, wrote these rows'
                // parity from their whole row: whatever a crash left, they are whole again.
                for row in &plan.log.resync_rows {
                    state.crash_suspects.remove(row);
                }
            }
            if finished && !plan.log.resync && !state.lost_blocks.is_empty() {
                // (A write-back journal holds a block a write overwrote whole in memory, or
                // writes it home with its row's parity.)
                let write_back = state.write_back;
                forget_overwritten(state, plan, write_back);
            }
        }
        state.after_write();
    }
}

/// The log-assisted layout's state, as the controller hands it to the log's planners.
pub(super) fn log_state(placement: &mut dyn crate::layout::PlacementState) -> &mut LogState {
    placement.as_any_mut().downcast_mut::<LogState>().expect("a log-assisted layout's state is a LogState")
}

/// Mark `plan` as a log-assisted plan (the content model's log rule carries it out), with
/// nothing of the log in it yet; `resync`: it is a re-sync's.
fn clear_log(plan: &mut Plan, log_slot: u32, resync: bool) {
    plan.logged = true;
    plan.log.log_slot = log_slot;
    plan.log.appends.clear();
    plan.log.recipes.clear();
    plan.log.rows.clear();
    plan.log.resync_rows.clear();
    plan.log.overwritten.clear();
    plan.log.lost.clear();
    plan.log.resync = resync;
}

/// The rows `[first, end)` of a piece, and each data unit's touched sectors.
fn piece_rows(unit: u64, block: u64, n: usize, spec: PieceSpec) -> ((u64, u64), Vec<(u64, u64)>) {
    let (lo, hi) = (spec.first, spec.first + spec.sectors);
    let touched: Vec<(u64, u64)> = (0..n as u64)
        .map(|i| {
            let (a, b) = (lo.max(i * unit), hi.min((i + 1) * unit));
            if a < b {
                (a - i * unit, b - i * unit)
            } else {
                (0, 0)
            }
        })
        .collect();
    let first = touched.iter().filter(|t| t.0 < t.1).map(|t| t.0 / block).min().unwrap_or(0);
    let end = touched.iter().filter(|t| t.0 < t.1).map(|t| t.1.div_ceil(block)).max().unwrap_or(0);
    ((first, end), touched)
}

/// Plan a piece of a stripe with a unit on a failed drive. A stripe whose lost unit is its
/// parity, or whose touched rows have no entry, is plain degraded RAID-5 (its parity, where
/// it has one, is current). Otherwise, per row:
/// - a read of the lost data block recovers it by Fig. 5 from the index's entry (its newest
///   record; or the stale parity, the logged survivors' old values and the other survivors;
///   the deltas for Parity Logging), or plainly when the row has no entry;
/// - a write rewrites the row with its parity (raidlab's choice; notes A.12): the lost
///   block's value, where the write does not cover it, is recovered as for a read, every
///   surviving block the write does not wholly cover is read, the parity is computed from
///   the whole new row and written, the surviving blocks are written, and the commit step
///   drops the row's entry. Nothing is logged while a data drive is lost.
fn plan_degraded(state: &mut LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    let block = state.block_sectors;
    let n = map.data.len();
    let failed_units: Vec<usize> = (0..n).filter(|&i| status.is_failed(&map.data[i])).collect();
    let parity_failed = status.is_failed(&map.parity[0]);
    let row_base = map.stripe * state.rows_per_unit;
    // A re-sync rewrites the stripe's logged rows as a write that writes no data.
    let ((first_row, end_row), touched) = if spec.resync {
        let rows: Vec<u64> = state.logged_rows_of(map.stripe).map(|r| r - row_base).collect();
        ((rows.first().copied().unwrap_or(0), rows.last().map_or(0, |r| r + 1)), vec![(0, 0); n])
    } else {
        piece_rows(unit, block, n, spec)
    };
    // (A row whose lost block went with the log is planned here too: never reconstructed
    // from its stale parity.)
    let logged = (first_row..end_row).any(|r| state.index.row(row_base + r).is_some() || state.lost_blocks.contains_key(&(row_base + r)));
    if spec.resync && (parity_failed || failed_units.len() != 1) {
        // The parity is lost (its rebuild recomputes it from the data), or so is data: the
        // entries are of no more use, and nothing is read or written.
        plan.start_ranges(map, unit, spec);
        plan.fill_touched();
        plan.touched.iter_mut().for_each(|t| *t = (0, 0));
        clear_log(plan, state.log_slot, spec.resync);
        plan.log.resync_rows.extend((first_row..end_row).map(|r| row_base + r).filter(|&r| state.index.row(r).is_some()));
        return plan.finish_ranges();
    }
    if !spec.resync && (!logged || parity_failed || failed_units.len() != 1) {
        // Plain degraded RAID-5: no touched row has an entry (its parity is current), or the
        // parity is lost, or a second unit is (the parity planner reports the loss).
        plan_parity_with(map, unit, spec, status, plan);
        if spec.is_write && parity_failed && logged {
            // A lost parity is recomputed from the data (by its rebuild, or by this write on
            // a rebuild's target): the touched rows' entries are of no more use, and would be
            // wrong beside a current parity. The plan is carried out by the log's rule.
            clear_log(plan, state.log_slot, spec.resync);
            plan.log.resync_rows.extend((first_row..end_row).map(|r| row_base + r).filter(|&r| state.index.row(r).is_some()));
        }
        return;
    }
    let lost = failed_units[0];
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    if spec.resync {
        plan.touched.iter_mut().for_each(|t| *t = (0, 0));
    }
    plan.degraded = true;
    clear_log(plan, state.log_slot, spec.resync);
    let rule = state.scheme.recovery_rule();
    let parity = map.parity[0];
    for row in first_row..end_row {
        let (start, end) = (row * block, row * block + block);
        let covers = |i: usize| touched[i].0 <= start && touched[i].1 >= end;
        let meets = |i: usize| touched[i].0 < end && touched[i].1 > start;
        let row_id = row_base + row;
        if spec.resync {
            if state.index.row(row_id).is_none() {
                continue;
            }
        } else if !(0..n).any(meets) {
            continue;
        }
        // The lost block's value is needed when a read asks for it, or a write does not
        // wholly overwrite it (the new parity is the XOR of the whole new row).
        let needs_lost = if spec.is_write { !covers(lost) } else { meets(lost) };
        if needs_lost {
            let gone = state.lost_blocks.get(&row_id).is_some_and(|m| m >> lost & 1 == 1);
            let how = if gone {
                Recovery::Plain
            } else {
                recovery(rule, state.index.row(row_id), lost as u32).expect("the schemes keep Fig. 5's invariant")
            };
            let mut reads: Vec<(u32, u64)> = Vec::new();
            let from_members = |skip: &dyn Fn(usize) -> bool, reads: &mut Vec<(u32, u64)>| {
                reads.push((parity.drive, parity.pba + start));
                for i in (0..n).filter(|&i| i != lost && !skip(i)) {
                    reads.push((map.data[i].drive, map.data[i].pba + start));
                }
            };
            let log_pba = |address: u64| address * block;
            match &how {
                Recovery::Plain => from_members(&|_| false, &mut reads),
                Recovery::Record(address) => reads.push((state.log_slot, log_pba(*address))),
                Recovery::OldValues { from_log } => {
                    from_members(&|i| from_log.iter().any(|&(b, _)| b as usize == i), &mut reads);
                    reads.extend(from_log.iter().map(|&(_, address)| (state.log_slot, log_pba(address))));
                }
                Recovery::ParityAndDeltas { deltas } => {
                    from_members(&|_| false, &mut reads);
                    reads.extend(deltas.iter().map(|&address| (state.log_slot, log_pba(address))));
                }
            }
            if gone || (state.log_failed && reads.iter().any(|&(drive, _)| drive == state.log_slot)) {
                // The row's lost block is gone for good (with the log, or beside a parity a
                // crash left of unknown state): its entry, once dropped, must not make it
                // look reconstructible.
                if !gone {
                    state.mark_lost(row_id, lost as u32);
                }
                if spec.resync {
                    // Its entry is of no more use: the re-sync is done with the row.
                    plan.log.resync_rows.push(row_id);
                    continue;
                }
                if !spec.is_write {
                    plan.lost_sectors += block;
                    continue;
                }
                if meets(lost) {
                    plan.lost_sectors += block;
                }
                // A write rewrites the row with its parity as if the lost block held what
                // the parity and the survivors make of it: the block stays lost, and the
                // parity goes on agreeing with whatever the block holds (a rebuild may have
                // written it already, from the same parity).
                reads.clear();
                from_members(&|_| false, &mut reads);
            }
            for &(drive, pba) in &reads {
                plan.add_range(drive, OpKind::Read, pba, pba + block);
            }
            plan.log.recipes.push(LogRecipe { unit: lost as u32, row: start, sectors: block as u32, reads, memory: false });
        }
        if spec.is_write {
            let whole = (0..n).filter(|&i| covers(i)).fold(0, |mask: BlockMask, i| mask | 1 << i);
            note_overwritten(&state.lost_blocks, map, row_id, whole, &mut plan.log.overwritten);
        }
        for i in (0..n).filter(|&i| i != lost) {
            let u = map.data[i];
            if spec.is_write {
                if !covers(i) {
                    plan.add_range(u.drive, OpKind::Read, u.pba + start, u.pba + end);
                    plan.pre_read_sectors += block;
                }
                let (a, b) = (touched[i].0.max(start), touched[i].1.min(end));
                if a < b {
                    plan.add_range(u.drive, OpKind::Write, u.pba + a, u.pba + b);
                }
            } else {
                let (a, b) = (touched[i].0.max(start), touched[i].1.min(end));
                if a < b && state.lost_blocks.get(&row_id).is_some_and(|m| m >> i & 1 == 1) {
                    // Lost on a readable unit (rebuilt without it): reported, never answered.
                    plan.lost_sectors += b - a;
                    plan.log.lost.push((i as u32, a, b));
                } else if a < b {
                    plan.add_range(u.drive, OpKind::Read, u.pba + a, u.pba + b);
                }
            }
        }
        if spec.is_write {
            plan.add_range(parity.drive, OpKind::Write, parity.pba + start, parity.pba + end);
            if status.is_write_only(&map.data[lost]) {
                // A rebuild's target takes the lost block's whole new value.
                let u = map.data[lost];
                plan.add_range(u.drive, OpKind::Write, u.pba + start, u.pba + end);
            }
            plan.log.resync_rows.push(row_id);
            plan.rcw_segments += 1;
        }
    }
    if spec.resync {
        state.stats.resync_stripes += 1;
        state.stats.resync_rows += plan.log.resync_rows.len() as u64;
    }
    plan.finish_ranges();
}

/// A read in an array with lost blocks (md's schemes, whose log keeps no entry a read
/// needs): a lost block is reported lost, never read or reconstructed; the rest is read as
/// plain RAID-5 reads it.
pub(super) fn plan_read_with_lost(state: &mut LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, status: UnitStatus<'_>, plan: &mut Plan) {
    if map.data.iter().chain(map.parity.iter()).any(|u| status.is_failed(u)) {
        plan_degraded(state, map, unit, spec, status, plan)
    } else {
        plan_read_around_lost(state, map, unit, spec, plan)
    }
}

/// A read of a stripe with no unit on a failed drive, in an array with lost blocks: every
/// touched sector read in place, but those of lost blocks, which are reported lost (a rebuild
/// wrote them from a row that no longer held their value).
#[cold]
fn plan_read_around_lost(state: &LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    let block = state.block_sectors;
    let row_base = map.stripe * state.rows_per_unit;
    let touched = std::mem::take(&mut plan.touched);
    for (i, row, from, to) in super::touched_blocks(&touched, block) {
        if state.lost_blocks.get(&(row_base + row)).is_some_and(|m| m >> i & 1 == 1) {
            plan.lost_sectors += to - from;
        } else {
            plan.add_range(map.data[i].drive, OpKind::Read, map.data[i].pba + from, map.data[i].pba + to);
        }
    }
    plan.touched = touched;
    plan.finish_ranges();
}

/// Plan the re-synchronization of `map`'s stripe (§III-D): for each logged row, read every
/// data block from the drives (not the log) and write the parity computed from them. The
/// commit step drops the rows' entries once the parity is written.
fn plan_resync(state: &mut LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    // A re-sync writes no user data.
    plan.touched.iter_mut().for_each(|t| *t = (0, 0));
    clear_log(plan, state.log_slot, true);
    let block = state.block_sectors;
    let rows: Vec<u64> = if state.unsynced(map.stripe) {
        // After a crash: every row of the stripe.
        let first = map.stripe * state.rows_per_unit;
        (first..first + state.rows_per_unit).collect()
    } else {
        state.logged_rows_of(map.stripe).collect()
    };
    for &row_id in &rows {
        let start = (row_id % state.rows_per_unit) * block;
        for u in &map.data {
            plan.add_range(u.drive, OpKind::Read, u.pba + start, u.pba + start + block);
        }
        let parity = map.parity[0];
        plan.add_range(parity.drive, OpKind::Write, parity.pba + start, parity.pba + start + block);
        state.stats.resync_lookups += state.scheme.resync_lookups(state.data_units) as u64;
    }
    state.stats.resync_stripes += 1;
    state.stats.resync_rows += rows.len() as u64;
    plan.cpu_ns = rows.len() as u64 * state.scheme.resync_lookups(state.data_units) as u64 * state.lookup_ns;
    plan.log.resync_rows.extend(rows);
    plan.finish_ranges();
}

/// Extend `run` (`[start, end)` of `drive`, empty when start = end) by `[start, end)` if it
/// follows on, else add the run to `plan` and start a new one.
#[inline]
fn extend_run(plan: &mut Plan, run: &mut (u64, u64), drive: u32, kind: OpKind, start: u64, end: u64) {
    if run.0 < run.1 && run.1 == start {
        run.1 = end;
        return;
    }
    plan.add_range(drive, kind, run.0, run.1);
    *run = (start, end);
}

/// Plan a write of `sectors` sectors from `first` into `map`'s stripe data.
fn plan_write(state: &mut LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    let (first, sectors) = (spec.first, spec.sectors);
    clear_log(plan, state.log_slot, false);
    let block = state.block_sectors;
    let n = map.data.len() as u32;
    let rows_per_unit = unit / block;
    let (lo, hi) = (first, first + sectors);
    let (first_unit, last_unit) = (lo / unit, (hi - 1) / unit);
    // The touched sectors [a, b) of data unit i, as offsets in the unit.
    let touched = |i: u64| -> (u64, u64) {
        if i < first_unit || i > last_unit {
            return (0, 0);
        }
        let a = if i == first_unit { lo - i * unit } else { 0 };
        let b = if i == last_unit { hi - i * unit } else { unit };
        (a, b)
    };
    let row_range = if first_unit == last_unit {
        let (a, b) = touched(first_unit);
        (a / block, b.div_ceil(block))
    } else {
        (0, rows_per_unit)
    };
    let stats = &mut state.stats;
    stats.write_pieces += 1;
    // Rows come in increasing order, so each unit's pre-reads, the log's records and the
    // parity's blocks run on from one row to the next: extended in place, they reach the
    // plan as a few ranges instead of one per block (which the plan would sort and merge).
    let mut read_runs = [(0u64, 0u64); super::MAX_ROW_DATA_BLOCKS as usize];
    let mut lookups = 0u64;
    let (mut log_run, mut parity_run) = ((0u64, 0u64), (0u64, 0u64));
    for row in row_range.0..row_range.1 {
        let (start, end) = (row * block, row * block + block);
        let (updated, partial) = super::row_masks((first_unit..=last_unit).map(|i| (i as usize, touched(i))), start, end);
        if updated == 0 {
            continue;
        }
        let row_id = map.stripe * rows_per_unit + row;
        note_overwritten(&state.lost_blocks, map, row_id, updated & !partial, &mut plan.log.overwritten);
        let entry = state.index.row(row_id);
        let row_state = RowState {
            data_blocks: n,
            updated,
            logged: entry.map_or(0, |e| e.logged()),
            has_old: entry.map_or(0, |e| e.has_old()),
        };
        let row_plan = state.scheme.plan_row(&row_state);
        stats.row_writes += 1;
        stats.lookups += row_plan.lookups as u64;
        lookups += row_plan.lookups as u64;
        let reads: BlockMask;
        let reserved = if state.log_failed { None } else { state.index.reserve(row_plan.records()) };
        if let Some(first_address) = reserved {
            match row_plan.method {
                Method::ReadModifyWrite => stats.rmw_rows += 1,
                Method::ReconstructWrite => stats.rcw_rows += 1,
            }
            let merge = partial & (row_plan.log_new | row_plan.log_delta) & !row_plan.pre_read;
            stats.pre_read_blocks += row_plan.pre_read.count_ones() as u64;
            stats.merge_read_blocks += merge.count_ones() as u64;
            stats.records += row_plan.records() as u64;
            reads = row_plan.pre_read | merge;
            LogIndex::record_layout(&row_plan, &mut state.layout_scratch);
            for (k, &(data_block, kind)) in state.layout_scratch.iter().enumerate() {
                let log_pba = (first_address + k as u64) * block;
                extend_run(plan, &mut log_run, state.log_slot, OpKind::Write, log_pba, log_pba + block);
                let value = match kind {
                    RecordKind::Old => LogValue::Old,
                    RecordKind::New => LogValue::New,
                    RecordKind::Delta => LogValue::Delta,
                };
                plan.log.appends.push(LogAppend { log_pba, unit: data_block, row: start, sectors: block as u32, value });
            }
            plan.log.rows.push((row_id, first_address, [row_plan.log_old, row_plan.log_new, row_plan.log_delta]));
        } else {
            // The log is full or lost: plain RAID-5 reconstruct-write of the whole row, whose
            // entry the commit step drops.
            stats.log_full_rows += 1;
            stats.rcw_rows += 1;
            reads = all_blocks(n) & !(updated & !partial);
            stats.pre_read_blocks += reads.count_ones() as u64;
            plan.log.resync_rows.push(row_id);
            let parity = map.parity[0];
            extend_run(plan, &mut parity_run, parity.drive, OpKind::Write, parity.pba + start, parity.pba + end);
        }
        let mut bits = reads;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let u = map.data[i];
            extend_run(plan, &mut read_runs[i], u.drive, OpKind::Read, u.pba + start, u.pba + end);
        }
        plan.pre_read_sectors += reads.count_ones() as u64 * block;
    }
    for (i, run) in read_runs.iter().enumerate().take(n as usize) {
        plan.add_range(map.data[i].drive, OpKind::Read, run.0, run.1);
    }
    plan.add_range(state.log_slot, OpKind::Write, log_run.0, log_run.1);
    plan.add_range(map.parity[0].drive, OpKind::Write, parity_run.0, parity_run.1);
    for i in first_unit..=last_unit {
        let (a, b) = touched(i);
        let u = map.data[i as usize];
        plan.add_range(u.drive, OpKind::Write, u.pba + a, u.pba + b);
    }
    stats.peak_used_blocks = stats.peak_used_blocks.max(state.index.used_blocks());
    stats.peak_logged_blocks = stats.peak_logged_blocks.max(state.index.logged_blocks());
    stats.peak_logged_rows = stats.peak_logged_rows.max(state.index.rows() as u64);
    plan.finish_ranges();
    plan.cpu_ns = lookups * state.lookup_ns;
}
