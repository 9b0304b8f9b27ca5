//! Issue disciplines: when a rebuild op may enter a drive's queue, and at which priority.
//! One file per discipline, one line in [`DISCIPLINES`].

mod pcm;
mod rate;
mod vsm;

use super::RebuildConfig;
use crate::disk::Priority;
use crate::sim::Nanos;

/// When rebuild ops may enter a drive.
pub trait Discipline: Send {
    /// The priority class rebuild ops carry in the drive queue.
    fn priority(&self) -> Priority;
    /// The earliest time a rebuild op may enter drive slot `drive`; by default `now` (at
    /// once: the discipline keeps no clock).
    fn ready_at(&self, _drive: u32, now: Nanos) -> Nanos {
        now
    }
    /// A rebuild op of `sectors` sectors entered drive slot `drive` at `now`; by default
    /// nothing to note.
    fn issued(&mut self, _drive: u32, _now: Nanos, _sectors: u64) {}
    /// Whether a rebuild read may enter only a drive with nothing queued or in service. The
    /// engine then pulls: a drive that goes idle asks the executor for its next read. By
    /// default false.
    fn waits_for_idle(&self) -> bool {
        false
    }
}

/// One registered discipline.
pub struct DisciplineEntry {
    pub name: &'static str,
    /// Build it for a run with `slots` drive slots.
    pub make: fn(&RebuildConfig, u32) -> Box<dyn Discipline>,
    pub doc: &'static str,
}

/// Every issue discipline, in documentation order.
pub static DISCIPLINES: &[DisciplineEntry] = &[
    DisciplineEntry { name: "vsm", make: vsm::Vsm::boxed, doc: vsm::DOC },
    DisciplineEntry { name: "pcm", make: pcm::Pcm::boxed, doc: pcm::DOC },
    DisciplineEntry { name: "rate", make: rate::Rate::boxed, doc: rate::DOC },
];

/// Names of the registered disciplines.
pub fn names() -> Vec<&'static str> {
    DISCIPLINES.iter().map(|e| e.name).collect()
}

/// The entry of discipline `name`.
pub fn entry(name: &str) -> Option<&'static DisciplineEntry> {
    DISCIPLINES.iter().find(|e| e.name == name)
}
