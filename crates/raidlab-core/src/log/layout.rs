//! A log-assisted RAID-5 as the controller sees it: the RAID-5 layout, with a log drive in a
//! slot outside it, the scheme's planner for writes, and the log index as the layout's
//! placement state (what the controller keeps in memory and hands its planner mutably).

use std::any::Any;

use super::config::LogConfig;
use super::{Consistency, LogIndex, LogRecord, LogScheme};
use crate::error::{Error, Result};
use crate::layout::{
    Layout, LayoutShape, PlacementState, RebuildAsked, Reconstruction, SourceRead, StripeMap, UnitLocation, UnitRole,
};

/// What the log scheme counted over a run (the summary's `log` table).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogStats {
    /// Write pieces planned by the scheme.
    pub write_pieces: u64,
    /// Parity rows those writes touched.
    pub row_writes: u64,
    /// Rows written by read-modify-write / reconstruct-write.
    pub rmw_rows: u64,
    pub rcw_rows: u64,
    /// Data blocks pre-read by the scheme's rule (Table II's count).
    pub pre_read_blocks: u64,
    /// Further blocks read because the write covers only part of a block whose new value is
    /// logged (the record is a whole block).
    pub merge_read_blocks: u64,
    /// Records appended to the log.
    pub records: u64,
    /// Index look-ups by the paper's counting rules.
    pub lookups: u64,
    /// Rows written as plain RAID-5 (reconstruct-write with the parity, entry dropped)
    /// because their records did not fit in the log, or the log drive had failed.
    pub log_full_rows: u64,
    /// Crashes, each followed by a re-sync of every stripe (§III-D, trigger 3).
    pub crashes: u64,
    /// Re-syncs started because the array was idle (§III-D, trigger 1).
    pub idle_resyncs: u64,
    /// The most log blocks in use at once.
    pub peak_used_blocks: u64,
    /// The most logged blocks (index entries) at once.
    pub peak_logged_blocks: u64,
    /// The most logged rows at once.
    pub peak_logged_rows: u64,
    /// With `content.check`: sectors recovered through the log at the end of the run (every
    /// block of every row written, as if its drive were lost), and of those, sectors that did
    /// not recover the value last written.
    pub recovery_sectors_checked: u64,
    pub recovery_sectors_wrong: u64,
    /// Re-synchronizations run to the end (the index emptied), the stripes and rows they
    /// re-synchronized, the look-ups they made (§III-D's rule), and their time, ns.
    pub resyncs: u64,
    pub resync_stripes: u64,
    pub resync_rows: u64,
    pub resync_lookups: u64,
    pub resync_ns: u64,
    /// md's schemes: writes planned, sectors their log writes wrote (headers included),
    /// writes written without a log (no room in its ring, a lost journal, a degraded stripe
    /// under PPL), writes a crash caught after their home writes could have started, and
    /// stripes recovered after a crash.
    pub md_writes: u64,
    pub md_log_sectors: u64,
    pub unprotected_writes: u64,
    pub interrupted_writes: u64,
    pub recovered_stripes: u64,
    /// Blocks lost with the log (the log and their drive both failed while their row was
    /// logged).
    pub lost_blocks: u64,
}

/// A re-synchronization in progress (§III-D): it walks the logged stripes in increasing
/// order, one at a time, until the index is empty; after a crash it first walks every
/// stripe of the array.
#[derive(Debug, Default)]
pub struct Resync {
    /// After a crash: the next stripe to hand out of the walk over every stripe, and the
    /// stripes below `done` whose re-sync is done (`None`: no such walk runs).
    pub every_stripe: Option<(u64, u64)>,
    /// Running.
    pub active: bool,
    /// When it started, ns.
    pub started_at: Option<crate::sim::Nanos>,
    /// Logged stripes still to re-synchronize in this pass, in increasing order.
    pub queue: std::collections::VecDeque<u64>,
}

/// The log index and what the planner needs beside it: the controller keeps it as the
/// layout's placement state.
#[derive(Debug)]
pub struct LogState {
    pub scheme: &'static dyn LogScheme,
    pub index: LogIndex,
    /// The log drive's slot.
    pub log_slot: u32,
    /// A block, sectors.
    pub block_sectors: u64,
    /// Log blocks in use at which re-synchronization starts.
    pub threshold_blocks: u64,
    pub stats: LogStats,
    /// The first sector found wrong at the end: (row, data block, sector in the block).
    pub first_wrong_recovery: Option<(u64, u32, u64)>,
    /// Scratch: a row's records, and where they go.
    pub(super) records: Vec<LogRecord>,
    pub(super) layout_scratch: Vec<(u32, super::RecordKind)>,
    /// Data units per stripe and parity rows per stripe unit.
    pub(super) data_units: u32,
    pub(super) rows_per_unit: u64,
    pub resync: Resync,
    /// The log drive failed: every row is written as plain RAID-5 from then on.
    pub log_failed: bool,
    /// Stripes in the array.
    pub(super) stripes: u64,
    /// md's schemes: the log's rings and the recoveries a crash left.
    pub md: super::md::MdState,
    /// md's write-back journal: the index holds the cached blocks, and stripes with a row
    /// wholly cached wait here for their flush.
    pub write_back: bool,
    pub wb_full: std::collections::VecDeque<u64>,
    /// Rows a crash may have torn (written home by a write the journal had no room for).
    pub wb_torn: std::collections::BTreeSet<u64>,
    /// Rows written home (with their parity) by a write-back write a drive's failure cut
    /// short, by stripe, until the write's new plan is done: a crash before then leaves them
    /// as the first plan wrote them, which no record of the journal describes.
    pub wb_cut_short: std::collections::BTreeMap<u64, Vec<u64>>,
    /// The controller's CPU time per index look-up, ns (`log.lookup_us`).
    pub lookup_ns: u64,
    /// Rows whose data blocks (a mask) went with the log: the log and the block's drive
    /// both failed while the row was logged. Reads of them are data loss, until a write
    /// overwrites the block whole and rewrites the row's parity.
    pub lost_blocks: std::collections::BTreeMap<u64, super::BlockMask>,
    /// Rows whose parity a crash may have left stale: logged when the index was lost, or
    /// written by a write the crash caught. Each stays until a re-sync rewrites its parity
    /// from the whole row; a member lost meanwhile loses its block of them (the paper's
    /// recovery needs the index, §III-D).
    pub crash_suspects: std::collections::BTreeSet<u64>,
    /// The drive slots that have failed (a slot never works again: a replacement takes
    /// another).
    pub failed_slots: std::collections::BTreeSet<u32>,
}

impl LogState {
    /// Whether `stripe`'s parity is of unknown state: a crash lost the index, and the re-sync
    /// of every stripe has not done it yet.
    pub fn unsynced(&self, stripe: u64) -> bool {
        self.resync.every_stripe.is_some_and(|(_, done)| stripe >= done)
    }

    /// Whether block `index` of row `row_id` is lost: marked so, or logged in a way only the
    /// lost log could recover (a write whose records reached the log before it failed may
    /// enter them after the failure's marking; the first plan that holds the row's lock
    /// marks it).
    pub fn block_lost(&self, row_id: u64, index: u32) -> bool {
        self.lost_blocks.get(&row_id).is_some_and(|m| m >> index & 1 == 1)
            || (self.log_failed
                && self.scheme.consistency() == Consistency::Deferred
                && self.index.row(row_id).is_some_and(|entry| {
                    super::recovery(self.scheme.recovery_rule(), Some(entry), index).map_or(true, |how| how != super::Recovery::Plain)
                }))
    }

    /// Mark block `index` of row `row_id` lost (counted once).
    pub(super) fn mark_lost(&mut self, row_id: u64, index: u32) {
        let mask = self.lost_blocks.entry(row_id).or_default();
        if *mask >> index & 1 == 0 {
            *mask |= 1 << index;
            self.stats.lost_blocks += 1;
        }
    }

    /// md's write-back journal is lost: every cached block is lost with it, its home stale.
    pub(super) fn lose_cache(&mut self) {
        for row in self.index.logged_rows() {
            let cached = self.index.row(row).map_or(0, |e| e.logged());
            let mask = self.lost_blocks.entry(row).or_default();
            self.stats.lost_blocks += (cached & !*mask).count_ones() as u64;
            *mask |= cached;
            self.index.drop_row(row);
        }
        self.wb_full.clear();
    }

    /// The logged rows of `stripe`.
    pub fn logged_rows_of(&self, stripe: u64) -> impl Iterator<Item = u64> + '_ {
        let first = stripe * self.rows_per_unit;
        (first..first + self.rows_per_unit).filter(|&row| self.index.row(row).is_some())
    }

    /// The rows a write-back flush of `stripe` writes: its cached rows and those a crash may
    /// have torn.
    pub fn flush_rows_of(&self, stripe: u64) -> impl Iterator<Item = u64> + '_ {
        let first = stripe * self.rows_per_unit;
        (first..first + self.rows_per_unit).filter(|&row| self.index.row(row).is_some() || self.wb_torn.contains(&row))
    }

    /// Start re-synchronizing (the threshold was reached), unless it runs already.
    pub fn start_resync(&mut self) {
        self.resync.active = true;
    }

    /// After a write: start re-synchronizing when the log reaches its threshold, or when the
    /// log is lost and a write planned before (done since) left rows logged after the re-sync
    /// the loss started had emptied the index.
    pub(super) fn after_write(&mut self) {
        if !self.resync.active && (self.index.used_blocks() >= self.threshold_blocks || (self.log_failed && self.index.rows() > 0)) {
            self.start_resync();
        }
    }
}

impl PlacementState for LogState {
    fn volatile(&self) -> Option<&'static str> {
        Some("the log index (which rows and blocks are logged, and where)")
    }
    fn lose_volatile(&mut self) {
        if self.write_back {
            // md rebuilds its cache from the journal: the index survives; the writes in
            // flight (never acknowledged) and their reservations do not, and a flush in
            // flight is run again.
            self.stats.crashes += 1;
            self.index.forget_pending();
            self.resync.queue.clear();
            // (Every write cut short was caught with its new plan: the controller reports
            // both.)
            self.wb_cut_short.clear();
            let all = super::all_blocks(self.data_units);
            let mut flush: Vec<u64> = self.index.logged_rows().into_iter().filter(|&r| self.index.row(r).is_some_and(|e| e.logged() == all)).collect();
            flush.extend(self.wb_torn.iter().copied());
            let mut stripes: Vec<u64> = flush.iter().map(|r| r / self.rows_per_unit).collect();
            stripes.sort_unstable();
            stripes.dedup();
            self.wb_full = stripes.into();
            return;
        }
        if self.scheme.consistency() != Consistency::Deferred {
            return super::md::lose_volatile(self);
        }
        // §III-D trigger (3): without the index every stripe is re-synchronized. Until the
        // walk rewrites them, the rows logged now have a stale parity.
        self.crash_suspects.extend(self.index.logged_rows());
        self.index.clear();
        self.stats.crashes += 1;
        self.resync.queue.clear();
        self.resync.every_stripe = Some((0, 0));
        self.start_resync();
    }
    fn rebuilt(&mut self, layout: &dyn Layout, member_slot: u32, start: u64, end: u64) {
        // A rebuilt parity is computed from the current data (Fig. 5 line 4): its rows'
        // entries, which describe a stale parity, must go (raidlab's choice: the literal
        // reading keeps them, and a later recovery through them would then be wrong).
        // (md's schemes keep no entry that describes a parity: a write-back journal's are
        // its cache.)
        if self.scheme.consistency() != Consistency::Deferred {
            return;
        }
        let unit = layout.stripe_unit_sectors();
        let mut map = StripeMap::default();
        let end = end.min(layout.stripes() * unit);
        let mut sector = start;
        while sector < end {
            let stripe = sector / unit;
            let stripe_end = ((stripe + 1) * unit).min(end);
            layout.map_stripe(stripe, &mut map);
            let (first, last) = ((sector % unit) / self.block_sectors, (stripe_end - 1 - stripe * unit) / self.block_sectors);
            if map.parity[0].drive == member_slot {
                for row in first..=last {
                    self.index.drop_row(stripe * self.rows_per_unit + row);
                    self.crash_suspects.remove(&(stripe * self.rows_per_unit + row));
                }
            } else if !self.lost_blocks.is_empty() || self.log_failed {
                // A lost block was rebuilt plainly (what the row's parity and survivors
                // make of it): the row agrees with its parity again, and its entry, which
                // describes the parity before, must go.
                let index = map.data.iter().position(|u| u.drive == member_slot);
                let first_row = stripe * self.rows_per_unit;
                for row in (first..=last).map(|row| first_row + row) {
                    let Some(i) = index.filter(|&i| self.block_lost(row, i as u32)) else { continue };
                    self.mark_lost(row, i as u32);
                    self.index.drop_row(row);
                    self.crash_suspects.remove(&row);
                }
            }
            sector = stripe_end;
        }
    }
    fn idle(&mut self) {
        // §III-D, trigger (1): the array is idle.
        if self.index.rows() > 0 && !self.resync.active {
            self.stats.idle_resyncs += 1;
            self.start_resync();
        }
    }
    fn drive_failed(&mut self, slot: u32) {
        self.failed_slots.insert(slot);
        if slot == self.log_slot && !self.log_failed && self.write_back {
            // "Losing the journal device in write-back mode loses data" (the kernel's
            // raid5-cache documentation): every cached block is lost, its home stale. From
            // now on every write goes home with its parity.
            self.log_failed = true;
            self.lose_cache();
            return;
        }
        if slot == self.log_slot && !self.log_failed && self.scheme.consistency() == Consistency::Journal {
            // md's journal holds nothing the parity needs once its writes are done.
            self.log_failed = true;
            return;
        }
        if slot == self.log_slot && !self.log_failed {
            // §III-D, trigger (2): the parity of every logged row is recomputed from the data.
            self.log_failed = true;
            self.start_resync();
        }
    }
    fn keeps_value(&self, lba: u64) -> bool {
        // A cached block's value is in memory (and the journal), whatever its home holds.
        if !self.write_back {
            return false;
        }
        let unit = self.rows_per_unit * self.block_sectors;
        let stripe_sectors = unit * self.data_units as u64;
        let (stripe, offset) = (lba / stripe_sectors, lba % stripe_sectors);
        let (index, row) = ((offset / unit) as u32, (offset % unit) / self.block_sectors);
        self.index.row(stripe * self.rows_per_unit + row).and_then(|e| e.block(index)).is_some_and(|b| b.new.is_some())
    }
    fn interrupted(&mut self, stripe: u64, plan: &crate::layout::plan::Plan, phase: u8, write_id: u64) {
        if self.write_back {
            let home_written = plan.logged && plan.ops.iter().any(|o| o.kind == crate::disk::OpKind::Write && o.phase <= phase && o.drive != self.log_slot);
            if home_written && !plan.log.resync {
                // A row a full journal sent home (data and parity) may be torn: its stripe is
                // flushed after the crash, the row's parity recomputed.
                self.wb_torn.extend(plan.log.resync_rows.iter().copied());
            }
            if home_written {
                // Until its rows' parity is recomputed, a block of them neither cached nor
                // readable is of unknown value (a flush's too: raidlab runs a caught flush
                // again rather than replay its parities from the journal).
                self.crash_suspects.extend(plan.log.resync_rows.iter().copied());
            }
            if let Some(rows) = self.wb_cut_short.remove(&stripe) {
                self.crash_suspects.extend(rows);
            }
            return;
        }
        if self.scheme.consistency() != Consistency::Deferred {
            return super::md::interrupted(self, stripe, plan, phase, write_id);
        }
        // A write caught in flight may have left any row it touches torn (data written,
        // parity not, or the other way round).
        let rows: Vec<u64> = plan.touched.iter().filter(|t| t.0 < t.1).flat_map(|t| t.0 / self.block_sectors..t.1.div_ceil(self.block_sectors)).collect();
        self.crash_suspects.extend(rows.into_iter().map(|row| stripe * self.rows_per_unit + row));
        if plan.logged {
            // (A plan that is not the log's carries no log part of its own.)
            self.crash_suspects.extend(plan.log.resync_rows.iter().copied());
        }
    }
    fn lose_unrecoverable(&mut self, layout: &dyn Layout, unreadable: &dyn Fn(u32, u64, u64) -> bool) {
        match self.scheme.consistency() {
            Consistency::Deferred => {}
            Consistency::Journal | Consistency::PartialParity => return super::md::lose_unrecoverable(self, layout, unreadable),
            Consistency::WriteBack => return super::write_back::lose_unrecoverable(self, layout, unreadable),
        }
        // A lost member's block of a row is lost for good when its recovery needs the lost
        // log (its records), or when a crash may have left the row's parity stale (the
        // index that would say which rows it did is gone). The row's entry stays until a
        // plan that holds the stripe's lock drops it (a re-sync, the rebuild of the block, a
        // write that overwrites it whole): a write in flight may still add to it.
        let mut rows: Vec<u64> = if self.log_failed { self.index.logged_rows() } else { Vec::new() };
        rows.extend(self.crash_suspects.iter().copied());
        rows.sort_unstable();
        rows.dedup();
        let rule = self.scheme.recovery_rule();
        let mut map = StripeMap::default();
        let block = self.block_sectors;
        for row_id in rows {
            let stripe = row_id / self.rows_per_unit;
            let start = (row_id % self.rows_per_unit) * block;
            layout.map_stripe(stripe, &mut map);
            let Some(lost) = map.data.iter().position(|u| unreadable(u.drive, u.pba + start, u.pba + start + block)) else {
                continue;
            };
            let suspect = self.crash_suspects.contains(&row_id);
            let needs_log = self.log_failed
                && super::recovery(rule, self.index.row(row_id), lost as u32).map_or(true, |how| how != super::Recovery::Plain);
            if !(suspect || needs_log) {
                continue;
            }
            self.mark_lost(row_id, lost as u32);
            self.crash_suspects.remove(&row_id);
        }
    }
    fn plans_every_read(&self) -> bool {
        // A write-back journal serves its cached blocks from memory, never from their homes.
        self.write_back || !self.lost_blocks.is_empty()
    }
    fn data_lost_at(&self, stripe: u64, index: u32, sector: u64) -> bool {
        self.block_lost(stripe * self.rows_per_unit + sector / self.block_sectors, index)
    }
    fn concurrent_resyncs(&self) -> u32 {
        // md recovers every stripe a crash caught before it serves I/O: all at once.
        if self.md.pending.is_empty() {
            1
        } else {
            u32::MAX
        }
    }
    fn next_resync(&mut self, now: crate::sim::Nanos) -> Option<u64> {
        if self.write_back {
            while let Some(stripe) = self.wb_full.pop_front() {
                if self.flush_rows_of(stripe).next().is_some() {
                    return Some(stripe);
                }
            }
        } else if self.scheme.consistency() != Consistency::Deferred {
            return super::md::next_recovery(self);
        }
        if !self.resync.active {
            return None;
        }
        self.resync.started_at.get_or_insert(now);
        if let Some((next, _)) = self.resync.every_stripe.as_mut() {
            if *next < self.stripes {
                *next += 1;
                return Some(*next - 1);
            }
        }
        loop {
            if self.resync.queue.is_empty() {
                let mut stripes: Vec<u64> = self.index.logged_rows().iter().map(|row| row / self.rows_per_unit).collect();
                stripes.dedup();
                if stripes.is_empty() {
                    // The index is empty: this re-synchronization is over.
                    let started = self.resync.started_at.take().unwrap_or(now);
                    self.stats.resyncs += 1;
                    self.stats.resync_ns += now - started;
                    self.resync.active = false;
                    return None;
                }
                self.resync.queue.extend(stripes);
            }
            let stripe = self.resync.queue.pop_front().expect("not empty");
            // A stripe a user write's fallback emptied meanwhile needs nothing.
            if self.logged_rows_of(stripe).next().is_some() {
                return Some(stripe);
            }
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// A RAID-5 layout written through a log scheme.
#[derive(Debug)]
pub struct LogAssisted {
    inner: Box<dyn Layout>,
    config: LogConfig,
    scheme: &'static dyn LogScheme,
    log_slot: u32,
}

impl LogAssisted {
    /// `inner` (which must be RAID-5) written by `config`'s scheme, its log on slot
    /// `log_slot`, a drive of `drive_capacity_sectors`. Errors name the `log` key at fault.
    pub fn wrap(inner: Box<dyn Layout>, config: &LogConfig, log_slot: u32, drive_capacity_sectors: u64) -> Result<Box<dyn Layout>> {
        config.validate()?;
        if inner.name() != "raid5" {
            return Err(Error::config(
                "log.scheme",
                format!("a log scheme writes a RAID-5 array, and array.layout is {}", inner.name()),
            ));
        }
        let block = config.block_sectors();
        if inner.stripe_unit_sectors() % block != 0 {
            return Err(Error::config(
                "log.block_kib",
                format!(
                    "{} KiB does not divide the stripe unit of {} KiB",
                    config.block_kib,
                    inner.stripe_unit_sectors() as f64 / 2.0
                ),
            ));
        }
        if inner.data_units_per_stripe() > super::MAX_ROW_DATA_BLOCKS {
            return Err(Error::config(
                "log.scheme",
                format!("a parity row holds at most {} data blocks, and the array has {}", super::MAX_ROW_DATA_BLOCKS, inner.data_units_per_stripe()),
            ));
        }
        if config.has_log_drive() && config.capacity_blocks().saturating_mul(block) > drive_capacity_sectors {
            return Err(Error::config(
                "log.capacity_gb",
                format!(
                    "{} GB is more than the log drive holds ({:.6} GB)",
                    config.capacity_gb,
                    drive_capacity_sectors as f64 * crate::disk::SECTOR_BYTES as f64 / 1e9
                ),
            ));
        }
        let scheme = super::entry(&config.scheme).expect("validated").scheme;
        Ok(Box::new(LogAssisted { inner, config: config.clone(), scheme, log_slot }))
    }
}

impl Layout for LogAssisted {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn planner(&self) -> &'static dyn crate::layout::plan::Planner {
        match self.scheme.consistency() {
            Consistency::Deferred => &super::planner::LOG_PLANNER,
            Consistency::Journal | Consistency::PartialParity => &super::md::MD_PLANNER,
            Consistency::WriteBack => &super::write_back::WRITE_BACK_PLANNER,
        }
    }
    fn placement_state(&self) -> Option<Box<dyn PlacementState>> {
        let capacity = self.config.capacity_blocks();
        Some(Box::new(LogState {
            scheme: self.scheme,
            index: LogIndex::new(capacity),
            log_slot: self.log_slot,
            block_sectors: self.config.block_sectors(),
            threshold_blocks: ((capacity as f64 * self.config.resync_threshold).ceil() as u64).clamp(1, capacity),
            stats: LogStats::default(),
            first_wrong_recovery: None,
            records: Vec::new(),
            layout_scratch: Vec::new(),
            data_units: self.inner.data_units_per_stripe(),
            rows_per_unit: self.inner.stripe_unit_sectors() / self.config.block_sectors(),
            resync: Resync::default(),
            log_failed: false,
            stripes: self.inner.stripes(),
            write_back: self.scheme.consistency() == Consistency::WriteBack,
            wb_full: Default::default(),
            wb_torn: Default::default(),
            wb_cut_short: Default::default(),
            lookup_ns: self.config.lookup_ns(),
            lost_blocks: Default::default(),
            crash_suspects: Default::default(),
            failed_slots: Default::default(),
            md: super::md::MdState {
                journal: super::md::Ring::new(capacity * self.config.block_sectors()),
                ppl_start: self.inner.stripes() * self.inner.stripe_unit_sectors(),
                ppl_size: super::md::ppl_area_sectors(self.inner.stripe_unit_sectors()),
                ..Default::default()
            },
        }))
    }
    fn volatile_state(&self) -> &'static str {
        "the log index: the parity of every logged row is stale until re-synchronized, and without the index \
         every stripe is re-synchronized (seed 002 §III-D)"
    }

    fn rebuild_refusal(&self, rebuild: &RebuildAsked) -> Option<String> {
        // A piggybacked read answers the user from the plain reconstruction, which a logged
        // row's stale parity makes wrong.
        // (md's schemes keep the parity current.)
        (rebuild.piggyback && self.scheme.consistency() == Consistency::Deferred)
            .then(|| "piggybacking is not simulated with a log (its reads reconstruct without the log)".into())
    }
    fn fault_tolerance(&self) -> u32 {
        self.inner.fault_tolerance()
    }
    fn shape(&self) -> &LayoutShape {
        self.inner.shape()
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.inner.data_units_per_stripe()
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        self.inner.map_stripe(stripe, out)
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        self.inner.locate(drive, pba)
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        self.inner.data_lost(failed)
    }
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        self.inner.redundancy_set(member)
    }
    fn data_unit(&self, stripe: u64, index: u32) -> Option<UnitLocation> {
        self.inner.data_unit(stripe, index)
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        self.inner.reconstruction(member)
    }
    /// Per row of the lost member's sectors: a row with no entry, or whose lost unit is its
    /// parity (recomputed from the data, Fig. 5 lines 3–5), is rebuilt from every other
    /// member; a logged row's lost data block from the log by Fig. 5 (its newest record; or
    /// the stale parity, the logged survivors' old values from the log and the other
    /// survivors; the deltas for Parity Logging). Unlogged rows next to each other are read
    /// as one run.
    fn rebuild_reads(
        &self,
        member: u32,
        reconstruction: &Reconstruction,
        start: u64,
        end: u64,
        placement: Option<&dyn PlacementState>,
        out: &mut Vec<SourceRead>,
    ) {
        let Some(state) = placement
            .and_then(|p| p.as_any().downcast_ref::<LogState>())
            .filter(|_| self.scheme.consistency() == Consistency::Deferred)
        else {
            // md's schemes keep the homes and the parity agreeing: plain reconstruction
            // (a write-back journal's cached blocks go home with their flush).
            return self.inner.rebuild_reads(member, reconstruction, start, end, placement, out);
        };
        let unit = self.inner.stripe_unit_sectors();
        let block = state.block_sectors;
        let end = end.min(self.inner.stripes() * unit);
        let mut map = StripeMap::default();
        // The plain run being gathered: [from, to) of the member.
        let mut plain: Option<(u64, u64)> = None;
        let flush = |plain: &mut Option<(u64, u64)>, out: &mut Vec<SourceRead>| {
            if let Some((from, to)) = plain.take() {
                for &source in &reconstruction.sources {
                    out.push(SourceRead { source, pba: from, offset: from - start, sectors: to - from, outside: None });
                }
            }
        };
        let mut sector = start;
        while sector < end {
            let stripe = sector / unit;
            let row = (sector % unit) / block;
            let row_end = (stripe * unit + (row + 1) * block).min(end);
            self.inner.map_stripe(stripe, &mut map);
            let lost = map.data.iter().position(|u| u.drive == member);
            let row_id = stripe * state.rows_per_unit + row;
            // (A block lost with what could recover it is rebuilt plainly, for the row's
            // parity to agree with what the target holds; it stays lost.)
            let gone = |f: usize| state.block_lost(row_id, f as u32);
            let how = match (lost, state.index.row(row_id)) {
                (Some(f), Some(entry)) if !gone(f) => super::recovery(self.scheme.recovery_rule(), Some(entry), f as u32)
                    .expect("the schemes keep Fig. 5's invariant"),
                _ => super::Recovery::Plain,
            };
            if how == super::Recovery::Plain {
                plain = match plain {
                    Some((from, to)) if to == sector => Some((from, row_end)),
                    other => {
                        let mut other = other;
                        flush(&mut other, out);
                        Some((sector, row_end))
                    }
                };
                sector = row_end;
                continue;
            }
            flush(&mut plain, out);
            let (offset, sectors) = (sector - start, row_end - sector);
            let within = sector % block;
            let from_log = |address: u64| SourceRead {
                source: member,
                pba: address * block + within,
                offset,
                sectors,
                outside: Some(state.log_slot),
            };
            let lost = lost.expect("a logged recovery is of a data block");
            let members = |skip: &dyn Fn(usize) -> bool, out: &mut Vec<SourceRead>| {
                out.push(SourceRead { source: map.parity[0].drive, pba: sector, offset, sectors, outside: None });
                for i in (0..map.data.len()).filter(|&i| i != lost && !skip(i)) {
                    out.push(SourceRead { source: map.data[i].drive, pba: sector, offset, sectors, outside: None });
                }
            };
            match how {
                super::Recovery::Plain => unreachable!("handled above"),
                super::Recovery::Record(address) => out.push(from_log(address)),
                super::Recovery::OldValues { from_log: logged } => {
                    members(&|i| logged.iter().any(|&(b, _)| b as usize == i), out);
                    out.extend(logged.iter().map(|&(_, address)| from_log(address)));
                }
                super::Recovery::ParityAndDeltas { deltas } => {
                    members(&|_| false, out);
                    out.extend(deltas.iter().map(|&address| from_log(address)));
                }
            }
            sector = row_end;
        }
        flush(&mut plain, out);
    }
    fn outside_sources(&self) -> Vec<u32> {
        // md's schemes rebuild plainly: their logs hold nothing a rebuild reads.
        if self.scheme.consistency() == Consistency::Deferred {
            vec![self.log_slot]
        } else {
            Vec::new()
        }
    }
    fn rebuilds_units_in_place(&self) -> bool {
        // Logged rows are rebuilt from the log.
        false
    }
}
