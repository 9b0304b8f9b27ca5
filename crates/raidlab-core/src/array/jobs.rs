//! The kinds of work the controller does, and the ids that name a job of each kind.
//!
//! Every piece of work that holds stripe locks or issues disk operations is a **job** of one
//! [`JobKind`], kept in that kind's own slab. A [`JobId`] names the kind and the index in the
//! slab; it is what the lock table's waiter lists and the ready list hold. An [`OpToken`] names
//! one disk operation of a job: the engine hands it to the drive's queue and back to
//! [`super::Controller::op_done`], and asks it only one thing, [`OpToken::is_rebuild_work`],
//! for each drive's accounting. A new kind of internal work (a log append, a log replay, a
//! parity re-sync) is one more variant here, with its slab and its content rule
//! ([`crate::content::rules::Access`]), and nothing outside the controller learns of it.

/// What a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum JobKind {
    /// One stripe piece of a user request (or of a buffer cache's fill, write or destage),
    /// carried out by its planner's plan, phase by phase.
    UserPiece = 0,
    /// A user request that its planner answered with one disk operation
    /// ([`super::plan::Planner::one_op`]): a small record instead of a request, a piece and a
    /// plan, which becomes a piece if its drive fails under it.
    UserOneOp = 1,
    /// One rebuild unit being made current on the rebuild target
    /// ([`super::rebuild_io`]).
    RebuildUnit = 2,
}

impl JobKind {
    /// Every kind, in id order.
    pub const ALL: [JobKind; 3] = [JobKind::UserPiece, JobKind::UserOneOp, JobKind::RebuildUnit];

    /// The kind's name, for errors.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::UserPiece => "user piece",
            JobKind::UserOneOp => "one-op user request",
            JobKind::RebuildUnit => "rebuild unit",
        }
    }

    /// Whether its disk operations count as rebuild work in each drive's accounting (the
    /// time and sectors a rebuild discipline that watches user work subtracts).
    #[inline(always)]
    pub fn is_rebuild_work(self) -> bool {
        matches!(self, JobKind::RebuildUnit)
    }

    #[inline(always)]
    fn from_bits(bits: u32) -> Option<JobKind> {
        match bits {
            0 => Some(JobKind::UserPiece),
            1 => Some(JobKind::UserOneOp),
            2 => Some(JobKind::RebuildUnit),
            _ => None,
        }
    }
}

/// Bits of a [`JobId`] below its kind: the index in the kind's slab. 2²⁹ jobs of one kind in
/// flight would take hundreds of GiB; the top kind (all bits set) is the lock table's "no
/// waiter" ([`super::locks::NONE`]) and is never a job's.
const INDEX_BITS: u32 = 29;
const INDEX_MASK: u32 = (1 << INDEX_BITS) - 1;

/// A job: its kind and its index in the kind's slab, in one `u32` (the lock table's waiter
/// id). A user piece's id is its index, so the hot path needs no masking for pieces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobId(u32);

impl JobId {
    /// The most jobs of one kind that may be in flight.
    pub const MAX_INDEX: u32 = INDEX_MASK;

    /// Job `index` of `kind` (`index` ≤ [`JobId::MAX_INDEX`], which the slabs check).
    #[inline(always)]
    pub fn new(kind: JobKind, index: u32) -> JobId {
        debug_assert!(index <= INDEX_MASK);
        JobId((kind as u32) << INDEX_BITS | index)
    }

    /// The id a lock table's waiter list holds.
    #[inline(always)]
    pub fn from_raw(raw: u32) -> JobId {
        JobId(raw)
    }

    #[inline(always)]
    pub fn raw(self) -> u32 {
        self.0
    }

    /// Its kind (`None` for an id no job has).
    #[inline(always)]
    pub fn kind(self) -> Option<JobKind> {
        JobKind::from_bits(self.0 >> INDEX_BITS)
    }

    /// Its index in its kind's slab.
    #[inline(always)]
    pub fn index(self) -> u32 {
        self.0 & INDEX_MASK
    }
}

/// Bits of an [`OpToken`] that hold the op's index in its job (a piece's op in its plan, a
/// rebuild job's source slot): a plan can have about two ops per drive, and arrays have up to
/// 65,536 drives.
pub(super) const OP_BITS: u32 = 32;

/// One disk operation of a job: the job's id in the top half, the op's index in the job in
/// the bottom half. The engine passes it through the drive's queue as a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpToken(u64);

impl OpToken {
    /// Op `op_index` of job `job`.
    #[inline(always)]
    pub fn new(job: JobId, op_index: u32) -> OpToken {
        OpToken((job.raw() as u64) << OP_BITS | op_index as u64)
    }

    /// The token a drive's queue carried.
    #[inline(always)]
    pub fn from_raw(raw: u64) -> OpToken {
        OpToken(raw)
    }

    #[inline(always)]
    pub fn raw(self) -> u64 {
        self.0
    }

    #[inline(always)]
    pub fn job(self) -> JobId {
        JobId((self.0 >> OP_BITS) as u32)
    }

    #[inline(always)]
    pub fn op_index(self) -> u32 {
        self.0 as u32
    }

    /// Whether the op is rebuild work, for the drive's accounting (see
    /// [`JobKind::is_rebuild_work`]).
    #[inline(always)]
    pub fn is_rebuild_work(self) -> bool {
        // One comparison of the kind's bits, on the path of every op.
        (self.0 >> (OP_BITS + INDEX_BITS)) == JobKind::RebuildUnit as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_tokens_give_back_what_they_were_made_of() {
        for kind in JobKind::ALL {
            for index in [0, 1, 12_345, JobId::MAX_INDEX] {
                let id = JobId::new(kind, index);
                assert_eq!((id.kind(), id.index()), (Some(kind), index));
                for op_index in [0, 7, u32::MAX] {
                    let token = OpToken::new(id, op_index);
                    assert_eq!((token.job(), token.op_index()), (id, op_index));
                    assert_eq!(token.is_rebuild_work(), kind.is_rebuild_work());
                    assert_eq!(OpToken::from_raw(token.raw()), token);
                }
            }
        }
        // A piece's id is its index; the lock table's "no waiter" is no job's.
        assert_eq!(JobId::new(JobKind::UserPiece, 42).raw(), 42);
        assert_eq!(JobId::from_raw(super::super::locks::NONE).kind(), None);
    }
}
