//! Data Logging (seed 002 §II-A): always read-modify-write, never the parity. A block not yet
//! logged is pre-read and logs its old and new values; a logged block logs its new value.
//! Block-oriented index: one look-up per updated block (notes A.4).

use super::{IndexKind, LogScheme, Method, RowPlan, RowState};

pub const DOC: &str = "Data Logging (seed 002 §II-A): always read-modify-write; old and new values the first time a block is logged, the new value after";

#[derive(Debug)]
pub struct DataLogging;

impl LogScheme for DataLogging {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        let mut plan = super::logged_branch(row, Method::ReadModifyWrite);
        plan.lookups = row.updated.count_ones();
        plan
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::BlockOriented
    }
}
