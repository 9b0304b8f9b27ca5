//! RAID5L_S (seed 002 §IV-B, Fig. 11): RAID5L's choice and pre-reads with a stripe-oriented
//! index, so one look-up per row ("considers the logged data blocks after choosing").

use super::{IndexKind, LogScheme, RowPlan, RowState};

pub const DOC: &str = "RAID5L_S (seed 002 §IV-B): RAID5L's choices with a stripe-oriented index, one look-up per row";

#[derive(Debug)]
pub struct Raid5LS;

impl LogScheme for Raid5LS {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        RowPlan { lookups: 1, ..super::raid5l::plan(row) }
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::StripeOriented
    }
}
