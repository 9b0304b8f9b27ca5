//! Parity Logging (Stodolsky et al., ISCA 1993; seed 002 §II-A as background, measured in no
//! table or figure): always read-modify-write; every updated block is pre-read, written home,
//! and old ⊕ new is appended to the log ("Parity Logging does not reuse existing log
//! records"). The parity is never read or written on the write path.
//!
//! raidlab's design (the paper gives none; notes A.3): the index keeps each row's deltas;
//! re-synchronization recomputes the parity from the data like the other schemes; a lost
//! data block is the on-disk parity XOR every delta of its row (the current parity) XOR the
//! surviving data. One look-up per updated block.

use super::{IndexKind, LogScheme, Method, RecoveryRule, RowPlan, RowState};

pub const DOC: &str = "Parity Logging (Stodolsky et al.; seed 002 §II-A background): always rmw, old XOR new appended per updated block; index, re-sync and recovery are raidlab's design";

#[derive(Debug)]
pub struct ParityLogging;

impl LogScheme for ParityLogging {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        RowPlan {
            method: Method::ReadModifyWrite,
            pre_read: row.updated,
            log_delta: row.updated,
            lookups: row.updated.count_ones(),
            ..RowPlan::default()
        }
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::BlockOriented
    }
    fn recovery_rule(&self) -> RecoveryRule {
        RecoveryRule::Deltas
    }
}
