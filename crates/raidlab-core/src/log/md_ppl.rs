//! Linux md's partial parity log (PPL, `raid5-ppl`; `../shared/anchors/layouts-and-logs.md`
//! §3): a write chooses read-modify-write or reconstruct-write as plain RAID-5 does; before
//! its data and parity are written, the *partial parity* of every row it writes (the XOR of
//! the row's data blocks the write leaves unmodified: from the old parity and the old
//! modified blocks under read-modify-write, from the pre-read blocks under reconstruct-write)
//! is written with a 4 KiB header to a reserved area of that stripe's parity drive. A write
//! of every data block of its rows logs the header alone. There is no log drive.
//!
//! After a crash, every write whose PPL entry was complete when its home writes started has
//! its parity recomputed: the XOR of the modified blocks as the drives hold them and the
//! partial parity (the XOR of every data block, for a full-row write). PPL protects the
//! parity, not the data in flight.

use super::{Consistency, IndexKind, LogScheme, RowPlan, RowState};

pub const DOC: &str = "Linux md partial parity log (PPL): the XOR of the unmodified blocks written to the parity drive before data and parity; a crash recomputes the parity from it";

#[derive(Debug)]
pub struct MdPpl;

impl LogScheme for MdPpl {
    fn plan_row(&self, row: &RowState) -> RowPlan {
        super::md_row(row)
    }
    fn index_kind(&self) -> IndexKind {
        IndexKind::StripeOriented
    }
    fn consistency(&self) -> Consistency {
        Consistency::PartialParity
    }
}
