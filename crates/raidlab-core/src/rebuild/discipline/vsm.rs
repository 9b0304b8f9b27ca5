//! VSM, the vacationing server model (Fu et al., seed 001 §1, §2.1): a rebuild read is served
//! only when the drive has no user request queued or in service, and is never preempted. The
//! read enters the drive's background class, which `foreground_first` serves only when no
//! user op waits; the executor keeps one read per drive, so reads follow one another while
//! the drive stays idle.

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vsm_reads_are_background_work_issued_at_once() {
        let mut v = Vsm;
        assert_eq!(v.priority(), Priority::Background);
        v.issued(0, 5, 100);
        assert_eq!(v.ready_at(0, 7), 7);
    }
}
