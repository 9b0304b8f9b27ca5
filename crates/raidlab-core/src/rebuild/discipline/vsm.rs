//! VSM, the vacationing server model (Fu et al., seed 001 §1, §2.1): a rebuild read is served
//! only when the drive has no user request queued or in service, and is never preempted. The
//! read enters only an idle drive: when a drive goes idle, the engine pulls, and the
//! executor issues the drive's next read, which the idle drive serves at once. Reads follow
//! one another while the drive stays idle; a user request that arrives meanwhile waits for
//! the read in service, never for one queued. Rebuild ops carry the background class, so the
//! target's unit writes wait behind its user work.

use super::Discipline;
use crate::disk::Priority;
use crate::rebuild::RebuildConfig;

pub const DOC: &str = "vacationing server: rebuild reads only when the drive has no user work, never preempted";

/// The vacationing server model.
pub struct Vsm;

impl Vsm {
    pub fn boxed(_: &RebuildConfig, _: u32) -> Box<dyn Discipline> {
        Box::new(Vsm)
    }
}

impl Discipline for Vsm {
    fn priority(&self) -> Priority {
        Priority::Background
    }
    fn waits_for_idle(&self) -> bool {
        true
    }
}

// Tested with the executors' pull in `rebuild::tests`.
