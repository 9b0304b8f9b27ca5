//! Linux md's raid5 journal in write-through mode (`raid5-cache`, since Linux 4.4;
//! `../shared/anchors/layouts-and-logs.md` §3): a write chooses read-modify-write or
//! reconstruct-write as plain RAID-5 does, then appends its data blocks and the row's new
//! parity to the journal, and only once they are there writes them home; it completes after
//! the home writes. The parity is current whenever no write is in flight, so nothing is
//! left to re-synchronize and a lost drive is rebuilt plainly.
//!
//! After a crash, a write whose journal append had completed is replayed from the journal
//! (its data and parity written home again); one whose append had not is discarded, and the
//! drives never saw it (its home writes had not started). This is md's rule: "replays every
//! stripe whose parity is complete, and discards the rest".

use super::{Consistency, IndexKind, LogScheme, RowPlan, RowState};

pub const DOC: &str = "Linux md raid5 journal, write-through: data and parity appended to the journal before the home writes; a crash replays every complete entry";

#[derive(Debug)]
pub struct MdJournal;

impl LogScheme for MdJournal {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        super::md_row(row)
    }
    fn index_kind(&self) -> IndexKind {
        // md keeps no index of logged blocks: the journal is replayed stripe by stripe.
        IndexKind::StripeOriented
    }
    fn consistency(&self) -> Consistency {
        Consistency::Journal
    }
}
