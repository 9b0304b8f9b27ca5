//! RAID5L_O (seed 002 §IV-B, Fig. 11): SWO's choice ("considers the logged data blocks when
//! choosing the method") with a block-oriented index: to count, it must know every data
//! block's logged state, so one look-up per data block of the row (notes A.6: UNSPECIFIED,
//! this is the recommended reading).

use super::{IndexKind, LogScheme, RowPlan, RowState};

pub const DOC: &str = "RAID5L_O (seed 002 §IV-B): SWO's choices with a block-oriented index, one look-up per data block of the row";

#[derive(Debug)]
pub struct Raid5LO;

impl LogScheme for Raid5LO {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        RowPlan { lookups: row.data_blocks, ..super::swo::plan(row) }
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::BlockOriented
    }
}
