//! Rebuild executors: how the reads of the surviving drives and the writes of the target are
//! organised. One file per executor, one line in [`EXECUTORS`].

mod dor;
mod sor;

use super::{Ctx, RebuildConfig};
use crate::array::rebuild_io::RebuildEvent;

/// Drives a rebuild's jobs through the controller.
pub trait Executor: Send {
    /// Issue whatever may be issued now.
    fn pump(&mut self, ctx: &mut Ctx<'_>);
    /// A job of this executor was locked, read or written; then issue what follows.
    fn on_event(&mut self, event: RebuildEvent, ctx: &mut Ctx<'_>);
    /// Forget every job (the rebuild ended or was abandoned; the controller drains them).
    fn reset(&mut self);
    /// Per drive slot, over the run's rebuilds so far: ns the slot's rebuild process spent
    /// blocked on a full buffer (units left to read, no read outstanding, no room). Empty
    /// for an executor without per-drive processes (SOR).
    fn blocked_ns_by_slot(&self) -> &[u64] {
        &[]
    }
}

/// One registered executor.
pub struct ExecutorEntry {
    pub name: &'static str,
    pub make: fn(&RebuildConfig) -> Box<dyn Executor>,
    pub doc: &'static str,
}

/// Every executor, in documentation order.
pub static EXECUTORS: &[ExecutorEntry] = &[
    ExecutorEntry { name: "sor", make: sor::Sor::boxed, doc: sor::DOC },
    ExecutorEntry { name: "dor", make: dor::Dor::boxed, doc: dor::DOC },
];

/// Names of the registered executors.
pub fn names() -> Vec<&'static str> {
    EXECUTORS.iter().map(|e| e.name).collect()
}

/// The entry of executor `name`.
pub fn entry(name: &str) -> Option<&'static ExecutorEntry> {
    EXECUTORS.iter().find(|e| e.name == name)
}
