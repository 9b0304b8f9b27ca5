//! SWO (seed 002 Fig. 4): one look-up finds the row's entry and marks its logged blocks;
//! read-modify-write counts the updated blocks not marked, reconstruct-write the other data
//! blocks not marked (never the parity); `IF (rcw > rmw)` read-modify-write, else
//! reconstruct-write, so ties go to reconstruct-write. A full-row write is logged too, and
//! the write path never writes the parity.

use super::{all_blocks, IndexKind, LogScheme, Method, RowPlan, RowState};

pub const DOC: &str = "SWO (seed 002 Fig. 4): rmw or rcw counted without the parity and the logged blocks, ties to rcw; stripe-oriented index";

#[derive(Debug)]
pub struct Swo;

/// SWO's choice and plan (Fig. 4 lines 4–40), with its one look-up.
pub(super) fn plan(row: &RowState) -> RowPlan {
    let rmw = (row.updated & !row.logged).count_ones();
    let rcw = (all_blocks(row.data_blocks) & !row.updated & !row.logged).count_ones();
    let method = if rcw > rmw { Method::ReadModifyWrite } else { Method::ReconstructWrite };
    RowPlan { lookups: 1, ..super::logged_branch(row, method) }
}

impl LogScheme for Swo {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        plan(row)
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::StripeOriented
    }
}
