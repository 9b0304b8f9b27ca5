//! Per-drive queues: a scheduling discipline within each of two priority classes.
//! CONTRACT STUB.

use super::{Drive, OpKind};
use crate::sim::Nanos;

/// Priority class of a disk operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Priority {
    /// User (application) work.
    Foreground,
    /// Rebuild and other internal work.
    Background,
}

/// An operation waiting in a drive's queue.
#[derive(Debug, Clone, Copy)]
pub struct QueuedOp {
    /// First sector.
    pub lba: u64,
    /// Length in sectors.
    pub sectors: u32,
    pub kind: OpKind,
    /// Cylinder of `lba`, cached at enqueue time for seek-ordering disciplines.
    pub cylinder: u32,
    /// When the operation entered the queue, ns.
    pub enqueued: Nanos,
    /// Opaque handle of the controller's operation.
    pub token: u64,
}

/// A queue discipline within one priority class.
pub trait Scheduler: Send + std::fmt::Debug {
    /// Add an operation.
    fn push(&mut self, op: QueuedOp);
    /// Remove the operation to serve next, given the drive's state at `now`.
    fn pop(&mut self, drive: &Drive, now: Nanos) -> Option<QueuedOp>;
    /// Operations waiting.
    fn len(&self) -> usize;
    /// Whether none is waiting.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Remove every waiting operation (in arrival order) into `out`.
    fn drain_into(&mut self, out: &mut Vec<QueuedOp>);
}

/// Names of the registered disciplines.
pub fn names() -> Vec<&'static str> {
    todo!()
}

/// A new empty queue of discipline `name`, or `None` if unknown.
pub fn make(_name: &str) -> Option<Box<dyn Scheduler>> {
    todo!()
}

/// A drive's queue: foreground and background classes, each ordered by the discipline.
#[derive(Debug)]
pub struct DiskQueue {
    _private: (),
}

impl DiskQueue {
    /// Queue with discipline `name` in both classes (`None` if the name is unknown).
    pub fn new(_name: &str) -> Option<Self> {
        todo!()
    }
    pub fn push(&mut self, _priority: Priority, _op: QueuedOp) {
        todo!()
    }
    /// Next operation to serve: foreground first; background only when no foreground
    /// operation waits. Service is never preempted.
    pub fn pop(&mut self, _drive: &Drive, _now: Nanos) -> Option<(Priority, QueuedOp)> {
        todo!()
    }
    /// Waiting operations, both classes.
    pub fn len(&self) -> usize {
        todo!()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Remove everything waiting (used when the drive fails).
    pub fn drain_into(&mut self, _out: &mut Vec<(Priority, QueuedOp)>) {
        todo!()
    }
}
