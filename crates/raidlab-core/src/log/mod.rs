//! Log-assisted RAID-5 (seed 002, Mei et al., "SWO"; `../shared/papers/notes/swo-vdf.md`
//! Part A): writes update data in place and append what recovery needs to a log drive, so
//! the parity is brought up to date later, by a *re-synchronization*, instead of on every
//! write.
//!
//! The schemes work on **parity rows**: one 4 KB block per drive, Linux md's stripe_head
//! (seed 002 §III-B; notes A.1), not the chunk-sized stripe. For every row a write touches a
//! scheme ([`LogScheme`], one file each, registered in [`SCHEMES`]) decides from the row's
//! [`RowState`] (which data blocks the write updates, which the log index holds) a
//! [`RowPlan`]: the method, the blocks pre-read, the records appended to the log, and the
//! index look-ups the paper counts. The data is always written home; the parity is never
//! read or written on the write path.
//!
//! The names are the paper's:
//! * **Data Logging** (DL, §II-A): always read-modify-write; logs a block's old and new
//!   values the first time, its new value after that.
//! * **RAID5L** (§II-A/B): chooses read-modify-write or reconstruct-write counting without
//!   the parity, then consults the log; **RAID5L_S** is the same with a stripe-oriented
//!   index (one look-up per row), **RAID5L_O** counts the logged blocks when choosing
//!   (SWO's choice) with a block-oriented index.
//! * **SWO** (Fig. 4): counts without the parity and without the logged ("marked") blocks;
//!   `IF (rcw > rmw)` read-modify-write, else reconstruct-write.
//! * **Parity Logging** (Stodolsky et al.; the paper's background, §II-A, not measured
//!   there): always read-modify-write, appends old ⊕ new per updated block. Its index,
//!   re-synchronization and recovery are raidlab's design (notes A.3).
//!
//! * **md_journal** and **md_ppl**: Linux md's production answers to the write hole (its
//!   raid5 journal in write-through mode, and its partial parity log), built beside the
//!   paper's schemes (`../shared/anchors/layouts-and-logs.md` §3). They keep the parity
//!   current on every write ([`Consistency`]) and log only what a crash needs.
//!
//! The [`LogIndex`] holds, per logged row, each logged block's `Log_old` and `Log_new`
//! records (Fig. 3) and Parity Logging's deltas. [`recovery`] gives the Fig. 5 rule that
//! recovers a lost block of a row from the log and the survivors.

pub mod config;
mod data_logging;
mod index;
pub mod layout;
pub mod md;
mod md_journal;
mod md_journal_wb;
mod md_ppl;
mod parity_logging;
mod planner;
mod raid5l;
mod raid5l_o;
mod raid5l_s;
mod swo;
pub mod verify;
mod write_back;

#[cfg(test)]
mod model;

pub use index::{LogIndex, LogRecord, RecordKind, RowEntry};

/// A set of a row's data blocks, bit `i` for data block `i` (a row has at most 64).
pub type BlockMask = u64;

/// Most data blocks a parity row may have (the width of [`BlockMask`]).
pub const MAX_ROW_DATA_BLOCKS: u32 = 64;

/// The mask of a row's `n` data blocks.
#[inline]
pub fn all_blocks(n: u32) -> BlockMask {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The data blocks of the parity row at offsets `[start, end)` of the unit that a write
/// updates, from each data unit's touched range (offsets; empty when equal), and of those the
/// blocks it updates only in part.
#[inline(always)]
pub(crate) fn row_masks(units: impl Iterator<Item = (usize, (u64, u64))>, start: u64, end: u64) -> (BlockMask, BlockMask) {
    let (mut updated, mut partial): (BlockMask, BlockMask) = (0, 0);
    for (i, (a, b)) in units {
        if a < end && b > start {
            updated |= 1 << i;
            if a > start || b < end {
                partial |= 1 << i;
            }
        }
    }
    (updated, partial)
}

/// The blocks of `block` sectors that touched ranges (one per data unit, offsets in the
/// unit) cover, in part or whole: (data unit, row in the unit, first sector, end sector).
pub(crate) fn touched_blocks(touched: &[(u64, u64)], block: u64) -> impl Iterator<Item = (usize, u64, u64, u64)> + '_ {
    touched.iter().enumerate().flat_map(move |(i, &(a, b))| {
        let rows = if a < b { a / block..b.div_ceil(block) } else { 0..0 };
        rows.map(move |row| (i, row, a.max(row * block), b.min((row + 1) * block)))
    })
}

/// What a scheme sees of one parity row a write touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowState {
    /// Data blocks in the row (drives − 1).
    pub data_blocks: u32,
    /// The blocks the write updates (not empty).
    pub updated: BlockMask,
    /// The blocks the log index holds ("marked", Fig. 4 line 3).
    pub logged: BlockMask,
    /// Of the logged blocks, those with a `Log_old` record.
    pub has_old: BlockMask,
}

/// How a row's write is carried out (seed 002 §II-A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// Pre-read the updated blocks (read-modify-write).
    #[default]
    ReadModifyWrite,
    /// Pre-read the blocks not updated (reconstruct-write).
    ReconstructWrite,
}

/// What a scheme does for one row of a write. The updated blocks are always written home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowPlan {
    pub method: Method,
    /// Data blocks read before the write (their old values).
    pub pre_read: BlockMask,
    /// Blocks whose old value is appended to the log (`Log_old`).
    pub log_old: BlockMask,
    /// Blocks whose new value is appended to the log (`Log_new`).
    pub log_new: BlockMask,
    /// Blocks whose old ⊕ new is appended (Parity Logging).
    pub log_delta: BlockMask,
    /// Index look-ups, by the paper's counting rules (§III-B, §III-D; notes A.4–A.7).
    pub lookups: u32,
}

impl RowPlan {
    /// Log records the row appends.
    pub fn records(&self) -> u32 {
        self.log_old.count_ones() + self.log_new.count_ones() + self.log_delta.count_ones()
    }
}

/// Which index a scheme keeps (what its look-ups find).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// One entry per logged row, holding its logged blocks (Fig. 3).
    StripeOriented,
    /// One entry per logged block, keyed by its address.
    BlockOriented,
}

/// How a lost data block of a logged row is recovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryRule {
    /// Fig. 5: the block's own newest record, or the XOR of the survivors' old values (from
    /// the log where logged, else from the drives) and the stale parity.
    OldAndNew,
    /// The parity brought up to date by the row's deltas, XORed with the surviving data
    /// (raidlab's design for Parity Logging, notes A.3).
    Deltas,
    /// md's write-back journal: a cached block from its newest record; any other block
    /// plainly from the drives, whose parity matches the (stale) home data.
    CachedOrHome,
}

/// When a scheme brings the parity up to date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// Later, by a re-synchronization (the paper's schemes): the log holds what recovery
    /// needs meanwhile.
    Deferred,
    /// On every write, after data and parity are appended to a journal drive (md's
    /// write-through journal); a crash replays the complete entries.
    Journal,
    /// On every write, after the partial parity is written to the stripe's parity drive
    /// (md's PPL); a crash recomputes the parity of the writes it caught.
    PartialParity,
    /// When the stripe is flushed: the data waits in memory and in the journal, its home
    /// and its parity both stale (md's write-back journal).
    WriteBack,
}

/// A log-assisted write scheme: one file each, one line in [`SCHEMES`].
pub trait LogScheme: Sync + std::fmt::Debug {
    /// The row's plan.
    fn plan_row(&self, row: &RowState) -> RowPlan;
    /// Which index it keeps.
    fn index_kind(&self) -> IndexKind;
    /// Index look-ups to re-synchronize one logged row of `data_blocks` data blocks (§III-D:
    /// one for a stripe-oriented index, one per data block for a block-oriented one).
    fn resync_lookups(&self, data_blocks: u32) -> u32 {
        match self.index_kind() {
            IndexKind::StripeOriented => 1,
            IndexKind::BlockOriented => data_blocks,
        }
    }
    /// How a lost block of a logged row is recovered.
    fn recovery_rule(&self) -> RecoveryRule {
        RecoveryRule::OldAndNew
    }
    /// When the parity is brought up to date (by default later, by a re-sync).
    fn consistency(&self) -> Consistency {
        Consistency::Deferred
    }
}

/// One registered scheme.
pub struct SchemeEntry {
    pub name: &'static str,
    pub scheme: &'static dyn LogScheme,
    pub doc: &'static str,
}

/// Every scheme, in documentation order.
pub static SCHEMES: &[SchemeEntry] = &[
    SchemeEntry { name: "data_logging", scheme: &data_logging::DataLogging, doc: data_logging::DOC },
    SchemeEntry { name: "raid5l", scheme: &raid5l::Raid5L, doc: raid5l::DOC },
    SchemeEntry { name: "raid5l_s", scheme: &raid5l_s::Raid5LS, doc: raid5l_s::DOC },
    SchemeEntry { name: "raid5l_o", scheme: &raid5l_o::Raid5LO, doc: raid5l_o::DOC },
    SchemeEntry { name: "swo", scheme: &swo::Swo, doc: swo::DOC },
    SchemeEntry { name: "parity_logging", scheme: &parity_logging::ParityLogging, doc: parity_logging::DOC },
    SchemeEntry { name: "md_journal", scheme: &md_journal::MdJournal, doc: md_journal::DOC },
    SchemeEntry { name: "md_journal_wb", scheme: &md_journal_wb::MdJournalWriteBack, doc: md_journal_wb::DOC },
    SchemeEntry { name: "md_ppl", scheme: &md_ppl::MdPpl, doc: md_ppl::DOC },
];

/// The entry of scheme `name`.
pub fn entry(name: &str) -> Option<&'static SchemeEntry> {
    SCHEMES.iter().find(|e| e.name == name)
}

/// Names of the registered schemes.
pub fn names() -> Vec<&'static str> {
    SCHEMES.iter().map(|e| e.name).collect()
}

/// Plain RAID-5's choice for a row (§II-A; notes A.2), the baseline the schemes are measured
/// against: read-modify-write pre-reads the updated blocks and the parity (k + 1),
/// reconstruct-write the blocks not updated (n − k); ties go to reconstruct-write. Returns
/// the method and the data blocks pre-read (the parity's pre-read is implied by
/// read-modify-write).
pub fn raid5_row(data_blocks: u32, updated: BlockMask) -> (Method, BlockMask) {
    let k = updated.count_ones();
    let (rmw, rcw) = (k + 1, data_blocks - k);
    if rcw <= rmw {
        (Method::ReconstructWrite, all_blocks(data_blocks) & !updated)
    } else {
        (Method::ReadModifyWrite, updated)
    }
}

/// The row plan of md's schemes: plain RAID-5's choice (they keep the parity current), with
/// no record in the paper's sense and no index look-up.
pub(crate) fn md_row(row: &RowState) -> RowPlan {
    let (method, pre_read) = raid5_row(row.data_blocks, row.updated);
    RowPlan { method, pre_read, ..RowPlan::default() }
}

/// The log-assisted reconstruct-write and read-modify-write branches that RAID5L, SWO and
/// their variants share once they have chosen (Fig. 4 lines 13–40; RAID5L's §II-A/B text):
/// - read-modify-write: an updated block not logged is pre-read and gets old and new
///   records; a logged one gets a new record;
/// - reconstruct-write: a block not updated and not logged is pre-read and gets an old
///   record; every updated block gets a new record, with no pre-read.
pub(crate) fn logged_branch(row: &RowState, method: Method) -> RowPlan {
    let all = all_blocks(row.data_blocks);
    match method {
        Method::ReadModifyWrite => {
            let fresh = row.updated & !row.logged;
            RowPlan { method, pre_read: fresh, log_old: fresh, log_new: row.updated, ..RowPlan::default() }
        }
        Method::ReconstructWrite => {
            let fresh = all & !row.updated & !row.logged;
            RowPlan { method, pre_read: fresh, log_old: fresh, log_new: row.updated, ..RowPlan::default() }
        }
    }
}

/// What recovers lost data block `failed` of a row from the log index's entry `entry` (Fig. 5;
/// `None`: the row has no entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// No entry: the XOR of the row's other data blocks and its parity, from the drives
    /// (Fig. 5 lines 3–5, ordinary RAID-5 reconstruction).
    Plain,
    /// The block's own record at this log address (its `Log_new`, else its `Log_old`; lines
    /// 6–10).
    Record(u64),
    /// The XOR of the on-disk (stale) parity, the log's `Log_old` records of `from_log`, and
    /// the other survivors read from the drives (lines 13–21).
    OldValues { from_log: Vec<(u32, u64)> },
    /// Parity Logging: the on-disk parity, every delta at these log addresses, and every
    /// surviving data block from the drives.
    ParityAndDeltas { deltas: Vec<u64> },
}

/// The rule that recovers data block `failed` of a row whose index entry is `entry`, under
/// `rule`. Errors when the entry breaks the invariant Fig. 5 relies on (a survivor logged
/// without a `Log_old` while the lost block is not logged): a scheme bug, never user input.
pub fn recovery(rule: RecoveryRule, entry: Option<&RowEntry>, failed: u32) -> Result<Recovery, String> {
    let Some(entry) = entry else { return Ok(Recovery::Plain) };
    match rule {
        RecoveryRule::Deltas => Ok(Recovery::ParityAndDeltas { deltas: entry.deltas().map(|(_, a)| a).collect() }),
        RecoveryRule::CachedOrHome => Ok(match entry.block(failed).and_then(|b| b.new) {
            Some(address) => Recovery::Record(address),
            None => Recovery::Plain,
        }),
        RecoveryRule::OldAndNew => {
            if let Some(block) = entry.block(failed) {
                return block
                    .new
                    .or(block.old)
                    .map(Recovery::Record)
                    .ok_or_else(|| format!("logged block {failed} has neither record"));
            }
            let mut from_log = Vec::new();
            for block in entry.blocks() {
                match block.old {
                    Some(address) => from_log.push((block.index as u32, address)),
                    None => {
                        return Err(format!(
                            "block {} is logged without its old value while block {failed} is not logged",
                            block.index
                        ))
                    }
                }
            }
            Ok(Recovery::OldValues { from_log })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The §II-B pre-state of Fig. 1: A, B and C logged, each by its own read-modify-write
    /// (so each has Log_old), D, E and F not; then a write of A, B and C.
    fn fig1() -> RowState {
        RowState { data_blocks: 6, updated: 0b000111, logged: 0b000111, has_old: 0b000111 }
    }

    #[test]
    fn figure_1_swo_takes_read_modify_write_with_no_pre_read() {
        let plan = entry("swo").unwrap().scheme.plan_row(&fig1());
        assert_eq!(plan.method, Method::ReadModifyWrite);
        assert_eq!(plan.pre_read, 0);
        assert_eq!((plan.log_old, plan.log_new), (0, 0b000111), "logs A2, B2 and C2 only");
        assert_eq!(plan.lookups, 1);
    }

    #[test]
    fn figure_1_raid5l_takes_reconstruct_write_pre_reading_d_e_f() {
        let plan = entry("raid5l").unwrap().scheme.plan_row(&fig1());
        assert_eq!(plan.method, Method::ReconstructWrite, "rmw = 3 and rcw = 3: the tie goes to rcw");
        assert_eq!(plan.pre_read, 0b111000);
        assert_eq!(plan.records(), 6, "D0, E0, F0 and A2, B2, C2");
        assert_eq!(plan.lookups, 3);
        // RAID5L_S decides the same with one look-up; RAID5L_O as SWO with one per block.
        let s = entry("raid5l_s").unwrap().scheme.plan_row(&fig1());
        assert_eq!((s.method, s.pre_read, s.lookups), (plan.method, plan.pre_read, 1));
        let o = entry("raid5l_o").unwrap().scheme.plan_row(&fig1());
        assert_eq!((o.method, o.pre_read, o.lookups), (Method::ReadModifyWrite, 0, 6));
    }

    #[test]
    fn the_resync_example_one_look_up_for_swo_against_six_for_raid5l() {
        assert_eq!(entry("swo").unwrap().scheme.resync_lookups(6), 1);
        assert_eq!(entry("raid5l").unwrap().scheme.resync_lookups(6), 6);
    }

    /// The worked examples of notes A.8 (pre-state, write → pre-reads per scheme).
    #[test]
    fn the_worked_examples_pre_read_what_the_notes_table_says() {
        let row = |logged: u64, updated: u64| RowState { data_blocks: 6, updated, logged, has_old: logged };
        let pre = |name: &str, r: RowState| entry(name).unwrap().scheme.plan_row(&r).pre_read.count_ones();
        const A: u64 = 1;
        const B: u64 = 2;
        const C: u64 = 4;
        const D: u64 = 8;
        const E: u64 = 16;
        const F: u64 = 32;
        // (pre-state, write, RAID5 with parity, PL, DL, RAID5L, SWO)
        let cases = [
            (0, A, 2, 1, 1, 1, 1),
            (A | B | C | D, E | F, 3, 2, 2, 2, 0),
            (D | E | F, A | B | C, 3, 3, 3, 0, 0),
            (A | B, D | E, 3, 2, 2, 2, 2),
            (A, A | B | C | D, 2, 4, 3, 2, 2),
            (0, 63, 0, 6, 6, 0, 0),
        ];
        for (logged, updated, raid5, pl, dl, raid5l, swo) in cases {
            let r = row(logged, updated);
            let (method, blocks) = raid5_row(6, updated);
            let raid5_count = blocks.count_ones() + (method == Method::ReadModifyWrite) as u32;
            assert_eq!(raid5_count, raid5, "RAID5 on {logged:#b} → {updated:#b}");
            assert_eq!(pre("parity_logging", r), pl, "PL on {logged:#b} → {updated:#b}");
            assert_eq!(pre("data_logging", r), dl, "DL on {logged:#b} → {updated:#b}");
            assert_eq!(pre("raid5l", r), raid5l, "RAID5L on {logged:#b} → {updated:#b}");
            assert_eq!(pre("swo", r), swo, "SWO on {logged:#b} → {updated:#b}");
        }
        // A full row under SWO: reconstruct-write, six new values logged, nothing pre-read.
        let full = entry("swo").unwrap().scheme.plan_row(&row(0, 63));
        assert_eq!((full.method, full.log_new, full.log_old), (Method::ReconstructWrite, 63, 0));
    }

    #[test]
    fn a_row_without_an_entry_is_recovered_plainly_and_a_logged_block_from_its_newest_record() {
        assert_eq!(recovery(RecoveryRule::OldAndNew, None, 2), Ok(Recovery::Plain));
        let mut index = LogIndex::new(1 << 20);
        let plan = RowPlan { log_old: 0b01, log_new: 0b01, ..RowPlan::default() };
        let records = index.append(7, &plan).unwrap();
        let entry = index.row(7);
        assert_eq!(recovery(RecoveryRule::OldAndNew, entry, 0), Ok(Recovery::Record(records[1].address)));
        assert_eq!(
            recovery(RecoveryRule::OldAndNew, entry, 1),
            Ok(Recovery::OldValues { from_log: vec![(0, records[0].address)] })
        );
    }
}
