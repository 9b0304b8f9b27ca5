//! User requests: what a workload asks of the array, from its arrival to its answer.
//!
//! A workload produces [`RequestRecord`]s (time, place, size, direction). The engine gives
//! each one an id and an [`Origin`] as it submits it, and the controller answers with a
//! [`CompletedRequest`] carrying both, so that a response can be told apart by who asked
//! for it: only requests of origin [`Origin::Workload`] are user responses in the metrics.
//! Work the array's own layers issue on the user's behalf (a buffer cache's destage writes,
//! a log's replay) enters the same way with an origin of its own, and never counts as a
//! user response.

use crate::sim::Nanos;

/// What a workload produces: one request's arrival time, first logical sector, length and
/// direction, before it has an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRecord {
    /// Arrival time, ns.
    pub arrival: Nanos,
    /// First logical sector.
    pub lba: u64,
    /// Length in sectors.
    pub sectors: u32,
    pub is_write: bool,
}

/// Who asked for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// The workload (a synthetic generator or a trace replay): a user request, whose
    /// response the metrics record.
    #[default]
    Workload,
    /// A buffer cache's read of blocks a user read missed (`cache::front`); the user
    /// requests waiting on it are answered when it completes.
    CacheFill,
    /// A user write, or its part blocks, that a buffer cache sends on to the array.
    CacheWrite,
    /// A buffer cache writing an evicted dirty block back.
    CacheDestage,
    /// The array's own re-synchronization of a stripe's redundancy (a log-assisted array's
    /// parity rows, seed 002 §III-D): planned by the layout's planner as a re-sync, finished
    /// inside the controller, never answered to anyone.
    Resync,
}

impl Origin {
    /// Whether the request's response is a user response (counted in the response-time
    /// statistics and, in a closed loop, followed by the thread's next request).
    #[inline(always)]
    pub fn is_user(self) -> bool {
        matches!(self, Origin::Workload)
    }
}

/// A request submitted to the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRequest {
    /// Submission sequence number, from 0, unique within a run.
    pub id: u64,
    pub origin: Origin,
    /// Arrival time, ns.
    pub arrival: Nanos,
    /// First logical sector.
    pub lba: u64,
    /// Length in sectors.
    pub sectors: u32,
    pub is_write: bool,
}

impl UserRequest {
    /// Request `id` of origin `origin` for `record`.
    #[inline(always)]
    pub fn new(id: u64, origin: Origin, record: RequestRecord) -> Self {
        UserRequest {
            id,
            origin,
            arrival: record.arrival,
            lba: record.lba,
            sectors: record.sectors,
            is_write: record.is_write,
        }
    }
}

/// A request the array has answered.
#[derive(Debug, Clone, Copy)]
pub struct CompletedRequest {
    /// The id and origin it was submitted with.
    pub id: u64,
    pub origin: Origin,
    /// Arrival time, ns.
    pub arrival: Nanos,
    pub is_write: bool,
    /// Some piece touched a unit on a failed drive.
    pub degraded: bool,
    /// Some piece's data lies (any copy, or its stripe's parity) on a drive of a failed
    /// member's redundancy set or on the failed member: the thesis's reads "that map to the
    /// set with a failed disk" (seed 004 §3.3, Figs. 10–11).
    pub in_failed_set: bool,
    /// Some sector could not be read or stored (data loss).
    pub lost: bool,
}
