//! The in-memory log index (seed 002 Fig. 3) and the append-only log it points into.
//!
//! One entry per logged row (the paper's logged stripe entry, `Stripe_num`), holding its
//! logged blocks (logged data entries: the block's `Log_old_LBA` and `Log_new_LBA`) and,
//! for Parity Logging, its deltas. Both index kinds keep this one structure: what differs
//! between a stripe-oriented and a block-oriented index is the number of look-ups a scheme
//! makes, which the schemes count ([`super::RowPlan::lookups`]).
//!
//! The log is appended at its end (§III-A: "Writing the log disk is performed in an appending
//! fashion"); a rewrite invalidates the old record and appends a new one. The used size is
//! the append offset, and it returns to 0 when the index empties (notes A.11).

use rustc_hash::FxHashMap;

use super::{BlockMask, RowPlan};

/// One logged block of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockEntry {
    /// Its data block index in the row.
    pub index: u8,
    /// Log address (in log blocks) of its old value, if logged.
    pub old: Option<u64>,
    /// Log address of its newest value, if logged.
    pub new: Option<u64>,
}

/// A logged row: its logged blocks, in the order they were first logged, and its deltas.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowEntry {
    /// Blocks with a [`BlockEntry`].
    logged: BlockMask,
    /// Blocks with a delta (Parity Logging).
    delta_blocks: BlockMask,
    has_old: BlockMask,
    blocks: Vec<BlockEntry>,
    deltas: Vec<(u8, u64)>,
}

impl RowEntry {
    /// The logged blocks ("marked"): with a record of their value, or a delta.
    pub fn logged(&self) -> BlockMask {
        self.logged | self.delta_blocks
    }
    /// The logged blocks with a `Log_old` record.
    pub fn has_old(&self) -> BlockMask {
        self.has_old
    }
    /// Logged block `index`, if logged.
    pub fn block(&self, index: u32) -> Option<&BlockEntry> {
        if self.logged >> index & 1 == 0 {
            return None;
        }
        self.blocks.iter().find(|b| b.index as u32 == index)
    }
    /// Every logged block.
    pub fn blocks(&self) -> impl Iterator<Item = &BlockEntry> {
        self.blocks.iter()
    }
    /// Parity Logging's deltas: (block, log address), oldest first.
    pub fn deltas(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        self.deltas.iter().copied()
    }

    fn block_mut(&mut self, index: u8) -> &mut BlockEntry {
        if self.logged >> index & 1 == 0 {
            self.logged |= 1 << index;
            self.blocks.push(BlockEntry { index, old: None, new: None });
        }
        self.blocks.iter_mut().find(|b| b.index == index).expect("a marked block has its entry")
    }
}

/// What one log record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// The block's value before the write.
    Old,
    /// The block's value after it.
    New,
    /// The XOR of the two (Parity Logging).
    Delta,
}

/// One record a row's write appends: `kind` of data block `block`, at log block `address`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRecord {
    pub block: u32,
    pub kind: RecordKind,
    pub address: u64,
}

/// The index of logged rows and the log's append offset.
#[derive(Debug, Clone)]
pub struct LogIndex {
    rows: FxHashMap<u64, RowEntry>,
    /// Log blocks the log holds.
    capacity_blocks: u64,
    /// The append offset, log blocks.
    used_blocks: u64,
    /// Logged blocks (entries) over every row, for the memory estimate.
    logged_blocks: u64,
    /// Log blocks reserved by writes in flight and not yet recorded ([`LogIndex::reserve`]):
    /// the log's space does not return while any is.
    pending_blocks: u64,
}

impl LogIndex {
    /// An empty index over a log of `capacity_blocks` blocks.
    pub fn new(capacity_blocks: u64) -> LogIndex {
        LogIndex { rows: FxHashMap::default(), capacity_blocks, used_blocks: 0, logged_blocks: 0, pending_blocks: 0 }
    }

    /// Row `row`'s entry, if logged.
    pub fn row(&self, row: u64) -> Option<&RowEntry> {
        self.rows.get(&row)
    }

    /// Logged rows.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// The logged rows, in increasing order (what a re-synchronization walks).
    pub fn logged_rows(&self) -> Vec<u64> {
        let mut rows: Vec<u64> = self.rows.keys().copied().collect();
        rows.sort_unstable();
        rows
    }

    /// Logged blocks over every row.
    pub fn logged_blocks(&self) -> u64 {
        self.logged_blocks
    }

    /// The append offset: log blocks used (invalidated records included).
    pub fn used_blocks(&self) -> u64 {
        self.used_blocks
    }

    /// Log blocks the log holds.
    pub fn capacity_blocks(&self) -> u64 {
        self.capacity_blocks
    }

    /// Whether `records` more records fit.
    pub fn fits(&self, records: u32) -> bool {
        self.used_blocks + records as u64 <= self.capacity_blocks
    }

    /// Append row `row`'s records for `plan` at the log's end and record them in the index:
    /// per block in index order, its old value, then its new value, then its delta. Returns
    /// the records, at consecutive addresses; `None` (and nothing changed) when they do not
    /// fit.
    pub fn append(&mut self, row: u64, plan: &RowPlan) -> Option<Vec<LogRecord>> {
        let mut records = Vec::new();
        self.append_into(row, plan, &mut records).then_some(records)
    }

    /// [`LogIndex::append`] into `records` (cleared first); false when they do not fit.
    pub fn append_into(&mut self, row: u64, plan: &RowPlan, records: &mut Vec<LogRecord>) -> bool {
        records.clear();
        let Some(first) = self.reserve(plan.records()) else { return false };
        self.record(row, plan, first, records);
        self.release(plan.records());
        true
    }

    /// Reserve `count` log blocks at the log's end for a write in flight; returns the first,
    /// or `None` when they do not fit. The write records them once it is done
    /// ([`LogIndex::record`]) and releases them ([`LogIndex::release`]), or only releases them
    /// if it is abandoned.
    pub fn reserve(&mut self, count: u32) -> Option<u64> {
        if !self.fits(count) {
            return None;
        }
        let first = self.used_blocks;
        self.used_blocks += count as u64;
        self.pending_blocks += count as u64;
        Some(first)
    }

    /// `count` reserved blocks are recorded or abandoned.
    pub fn release(&mut self, count: u32) {
        self.pending_blocks -= count as u64;
        self.reclaim();
    }

    /// The records of `plan` for row `row`, at consecutive addresses from `first` (reserved),
    /// into the index and `records` (cleared first): per block in index order, its old
    /// value, then its new value, then its delta.
    pub fn record(&mut self, row: u64, plan: &RowPlan, first: u64, records: &mut Vec<LogRecord>) {
        records.clear();
        if plan.records() == 0 {
            return;
        }
        let entry = self.rows.entry(row).or_default();
        let before = entry.logged().count_ones();
        let touched = plan.log_old | plan.log_new | plan.log_delta;
        let mut address = first;
        let mut bits = touched;
        while bits != 0 {
            let index = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            let bit = 1u64 << index;
            for (kind, mask) in [(RecordKind::Old, plan.log_old), (RecordKind::New, plan.log_new), (RecordKind::Delta, plan.log_delta)] {
                if mask & bit == 0 {
                    continue;
                }
                records.push(LogRecord { block: index as u32, kind, address });
                match kind {
                    RecordKind::Old => {
                        entry.block_mut(index).old = Some(address);
                        entry.has_old |= bit;
                    }
                    RecordKind::New => entry.block_mut(index).new = Some(address),
                    RecordKind::Delta => {
                        entry.deltas.push((index, address));
                        entry.delta_blocks |= bit;
                    }
                }
                address += 1;
            }
        }
        self.logged_blocks += (entry.logged().count_ones() - before) as u64;
    }

    /// The addresses `plan`'s records for a row would take from `first`, in the order
    /// [`LogIndex::record`] gives them: (block, kind) per address.
    pub fn record_layout(plan: &RowPlan, out: &mut Vec<(u32, RecordKind)>) {
        out.clear();
        let mut bits = plan.log_old | plan.log_new | plan.log_delta;
        while bits != 0 {
            let index = bits.trailing_zeros();
            bits &= bits - 1;
            for (kind, mask) in [(RecordKind::Old, plan.log_old), (RecordKind::New, plan.log_new), (RecordKind::Delta, plan.log_delta)] {
                if mask >> index & 1 == 1 {
                    out.push((index, kind));
                }
            }
        }
    }

    /// The log's space returns when the index is empty and no write holds a reservation.
    fn reclaim(&mut self) {
        if self.rows.is_empty() && self.pending_blocks == 0 {
            self.used_blocks = 0;
        }
    }

    /// Drop row `row`'s entry (its parity is current again); the log's space returns when the
    /// index empties.
    pub fn drop_row(&mut self, row: u64) {
        if let Some(entry) = self.rows.remove(&row) {
            self.logged_blocks -= entry.logged().count_ones() as u64;
        }
        self.reclaim();
    }

    /// Forget the reservations of the writes in flight (a crash lost them; their space stays
    /// used until the log empties, as the log is appended only).
    pub fn forget_pending(&mut self) {
        self.pending_blocks = 0;
        self.reclaim();
    }

    /// Forget everything (a crash lost the index, and every write in flight with it): the
    /// log's records are no longer found, and the log is empty again.
    pub fn clear(&mut self) {
        self.rows.clear();
        self.logged_blocks = 0;
        self.pending_blocks = 0;
        self.reclaim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_go_at_consecutive_addresses_and_the_space_returns_when_the_index_empties() {
        let mut index = LogIndex::new(10);
        let plan = RowPlan { log_old: 0b101, log_new: 0b111, ..RowPlan::default() };
        let records = index.append(3, &plan).unwrap();
        assert_eq!(records.iter().map(|r| r.address).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        assert_eq!(records[0], LogRecord { block: 0, kind: RecordKind::Old, address: 0 });
        assert_eq!(records[2], LogRecord { block: 1, kind: RecordKind::New, address: 2 });
        let entry = index.row(3).unwrap();
        assert_eq!((entry.logged(), entry.has_old()), (0b111, 0b101));
        assert_eq!(entry.block(2).unwrap().new, Some(4));
        assert_eq!(index.logged_blocks(), 3);
        // Six more do not fit in 10; nothing changes.
        assert!(index.append(4, &RowPlan { log_new: 0b111111, ..RowPlan::default() }).is_none());
        assert_eq!((index.used_blocks(), index.rows()), (5, 1));
        index.drop_row(3);
        assert_eq!((index.used_blocks(), index.rows(), index.logged_blocks()), (0, 0, 0));
    }
}
