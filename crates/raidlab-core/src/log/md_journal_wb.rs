//! Linux md's raid5 journal in write-back mode (`raid5-cache`, since Linux 4.10;
//! `../shared/anchors/layouts-and-logs.md` §3): a write completes once its data is in the
//! journal; the data stays in memory (md's stripe cache) and its home is left stale. A stripe
//! is flushed (its parity computed, appended to the journal, then data and parity written
//! home) when one of its parity rows is wholly cached, when the journal runs low
//! (`log.resync_threshold`), or, with `log.resync_idle_ms`, when the array is idle. Reads of
//! cached blocks are served from memory.
//!
//! The journal outlives a crash: md rebuilds its cache from the journal, so an acknowledged
//! write survives, and a flush the crash caught is run again.

use super::{Consistency, IndexKind, LogScheme, RecoveryRule, RowPlan, RowState};

pub const DOC: &str = "Linux md raid5 journal, write-back: a write completes once its data is in the journal; stripes flushed when a row is full, the journal runs low, or the array is idle";

#[derive(Debug)]
pub struct MdJournalWriteBack;

impl LogScheme for MdJournalWriteBack {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        // Every updated block's new value goes to the journal; nothing is read for parity
        // until the flush.
        RowPlan { log_new: row.updated, lookups: 1, ..RowPlan::default() }
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::StripeOriented
    }
    fn recovery_rule(&self) -> RecoveryRule {
        RecoveryRule::CachedOrHome
    }
    fn consistency(&self) -> Consistency {
        Consistency::WriteBack
    }
}
