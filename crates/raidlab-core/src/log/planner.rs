//! The planner of a log-assisted RAID-5: reads as plain RAID-5 (data is updated in place,
//! §III-C), writes row by row through the scheme.
//!
//! For every parity row a write piece touches (blocks of [`super::layout::LogState::block_sectors`]
//! at the same offset in every data unit), the scheme decides from the index what to pre-read
//! and what to log; the index is updated at once (the piece holds its stripe's lock, so the
//! next write of the row plans after this one). The plan is then:
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
use super::{all_blocks, BlockMask, Method, RecordKind, RowState};
use crate::disk::OpKind;
use crate::layout::plan::{plan_parity_with, LogAppend, LogValue, PieceSpec, Plan, PlanInputs, Planner};

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
        if !i.spec.is_write || degraded {
            // Reads find the data in place. A degraded piece cannot arise: failures of a
            // log-assisted array are refused until recovery through the log is built.
            debug_assert!(!degraded, "a log-assisted array met a failed drive");
            return plan_parity_with(i.map, i.unit_sectors, i.spec, i.status, plan);
        }
        let state = i
            .placement
            .expect("a log-assisted layout has its state")
            .as_any_mut()
            .downcast_mut::<LogState>()
            .expect("a log-assisted layout's state is a LogState");
        if i.spec.resync {
            plan_resync(state, i.map, i.unit_sectors, i.spec, plan);
        } else {
            plan_write(state, i.map, i.unit_sectors, i.spec, plan);
        }
    }
    fn commit(&self, placement: &mut dyn crate::layout::PlacementState, _stripe: u64, plan: &Plan) {
        let state = placement.as_any_mut().downcast_mut::<LogState>().expect("a log-assisted layout's state is a LogState");
        if plan.logged {
            for &row in &plan.log.resync_rows {
                state.index.drop_row(row);
            }
        }
        state.after_write();
    }
    fn write_ops(&self, units: f64, data_units: f64, copies: f64) -> f64 {
        // The log append is one more write; the schemes pre-read at most what RAID-5 does
        // without its parity (notes A.8), so RAID-5's estimate bounds them.
        crate::layout::plan::PARITY.write_ops(units, data_units, copies) + 1.0
    }
}

/// Plan the re-synchronization of `map`'s stripe (§III-D): for each logged row, read every
/// data block from the drives (not the log) and write the parity computed from them. The
/// commit step drops the rows' entries once the parity is written.
fn plan_resync(state: &mut LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    // A re-sync writes no user data.
    plan.touched.iter_mut().for_each(|t| *t = (0, 0));
    plan.logged = true;
    plan.log.log_slot = state.log_slot;
    plan.log.appends.clear();
    plan.log.resync_rows.clear();
    let block = state.block_sectors;
    let rows: Vec<u64> = state.logged_rows_of(map.stripe).collect();
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
    plan.log.resync_rows.extend(rows);
    plan.finish_ranges();
}

/// Plan a write of `sectors` sectors from `first` into `map`'s stripe data.
fn plan_write(state: &mut LogState, map: &crate::layout::StripeMap, unit: u64, spec: PieceSpec, plan: &mut Plan) {
    plan.start_ranges(map, unit, spec);
    plan.fill_touched();
    let (first, sectors) = (spec.first, spec.sectors);
    plan.logged = true;
    plan.log.log_slot = state.log_slot;
    plan.log.appends.clear();
    plan.log.resync_rows.clear();
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
    for row in row_range.0..row_range.1 {
        let (start, end) = (row * block, row * block + block);
        let (mut updated, mut partial): (BlockMask, BlockMask) = (0, 0);
        for i in first_unit..=last_unit {
            let (a, b) = touched(i);
            if a < end && b > start {
                updated |= 1 << i;
                if a > start || b < end {
                    partial |= 1 << i;
                }
            }
        }
        if updated == 0 {
            continue;
        }
        let row_id = map.stripe * rows_per_unit + row;
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
        let reads: BlockMask;
        if !state.log_failed && state.index.append_into(row_id, &row_plan, &mut state.records) {
            match row_plan.method {
                Method::ReadModifyWrite => stats.rmw_rows += 1,
                Method::ReconstructWrite => stats.rcw_rows += 1,
            }
            let merge = partial & (row_plan.log_new | row_plan.log_delta) & !row_plan.pre_read;
            stats.pre_read_blocks += row_plan.pre_read.count_ones() as u64;
            stats.merge_read_blocks += merge.count_ones() as u64;
            stats.records += state.records.len() as u64;
            reads = row_plan.pre_read | merge;
            for record in &state.records {
                let log_pba = record.address * block;
                plan.add_range(state.log_slot, OpKind::Write, log_pba, log_pba + block);
                let value = match record.kind {
                    RecordKind::Old => LogValue::Old,
                    RecordKind::New => LogValue::New,
                    RecordKind::Delta => LogValue::Delta,
                };
                plan.log.appends.push(LogAppend { log_pba, unit: record.block, row: start, sectors: block as u32, value });
            }
        } else {
            // The log is full or lost: plain RAID-5 reconstruct-write of the whole row.
            stats.log_full_rows += 1;
            stats.rcw_rows += 1;
            reads = all_blocks(n) & !(updated & !partial);
            stats.pre_read_blocks += reads.count_ones() as u64;
            state.index.drop_row(row_id);
            let parity = map.parity[0];
            plan.add_range(parity.drive, OpKind::Write, parity.pba + start, parity.pba + end);
        }
        let mut bits = reads;
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let u = map.data[i];
            plan.add_range(u.drive, OpKind::Read, u.pba + start, u.pba + end);
        }
        plan.pre_read_sectors += reads.count_ones() as u64 * block;
    }
    for i in first_unit..=last_unit {
        let (a, b) = touched(i);
        let u = map.data[i as usize];
        plan.add_range(u.drive, OpKind::Write, u.pba + a, u.pba + b);
    }
    stats.peak_used_blocks = stats.peak_used_blocks.max(state.index.used_blocks());
    stats.peak_logged_blocks = stats.peak_logged_blocks.max(state.index.logged_blocks());
    stats.peak_logged_rows = stats.peak_logged_rows.max(state.index.rows() as u64);
    plan.finish_ranges();
}
