//! RAID5L (seed 002 §I, §II-A/B: "the main idea of RAID6L in RAID5"): chooses the method
//! counting with only the parity taken out (read-modify-write k, reconstruct-write n − k;
//! ties to reconstruct-write), then consults the log: it looks up each block it might
//! pre-read ("the times of search operation that RAID5L needs equals the pre-read data block
//! number"), and pre-reads and logs the old value only of blocks not yet logged. Under
//! reconstruct-write the updated blocks' new values are logged with no pre-read (Fig. 1:
//! "RAID5L writes the pre-read data blocks D0, E0, F0 and new data blocks A2, B2 and C2").
//! Block-oriented index.

use super::{all_blocks, IndexKind, LogScheme, Method, RowPlan, RowState};

pub const DOC: &str = "RAID5L (seed 002 §II-A/B): rmw or rcw chosen without the parity, ties to rcw, then the log consulted; block-oriented index";

#[derive(Debug)]
pub struct Raid5L;

/// RAID5L's choice and plan, with one look-up per block it might pre-read.
pub(super) fn plan(row: &RowState) -> RowPlan {
    let k = row.updated.count_ones();
    let (rmw, rcw) = (k, row.data_blocks - k);
    let method = if rcw <= rmw { Method::ReconstructWrite } else { Method::ReadModifyWrite };
    let mut plan = super::logged_branch(row, method);
    plan.lookups = match method {
        Method::ReadModifyWrite => k,
        Method::ReconstructWrite => (all_blocks(row.data_blocks) & !row.updated).count_ones(),
    };
    plan
}

impl LogScheme for Raid5L {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        plan(row)
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::BlockOriented
    }
}
