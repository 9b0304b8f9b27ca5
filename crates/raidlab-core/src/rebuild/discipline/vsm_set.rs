//! VSM with eligibility tested over the whole rebuild: the thesis's §2.1 rule ("a rebuild
//! request is serviced if and only if there is no outstanding application request; once
//! started, it cannot be preempted"), read set-wide. A rebuild read enters its drive only
//! when that drive is idle (as [`super::vsm`]) and no drive of the rebuild, its sources and
//! its target (the failed drive's pair, or its whole cluster for interleaved declustering),
//! has a user request queued or in service. The thesis does not say whether it tests per
//! disk or per set; its §3.5 explanation of Fig. 27 (a write maps to ID's cluster with the
//! replacement one time in two, to TM's pair one time in eight) fits this reading. The
//! engine pumps the policies after every completion, so a read held back for another drive's
//! user work is tried again as soon as that work ends.

use super::{Admit, Discipline};
use crate::disk::Priority;
use crate::rebuild::{DriveState, RebuildConfig};
use crate::sim::Nanos;

pub const DOC: &str = "vacationing server over the whole rebuild: rebuild reads only when no drive of the rebuild (sources, \
                       target) has user work, never preempted";

/// The vacationing server model, eligibility tested over the rebuild's drives.
pub struct VsmSet {
    /// The rebuild's sources and target.
    drives: Vec<u32>,
}

impl VsmSet {
    pub fn boxed(_: &RebuildConfig, _: u32) -> Box<dyn Discipline> {
        Box::new(VsmSet { drives: Vec::new() })
    }
}

impl Discipline for VsmSet {
    fn priority(&self) -> Priority {
        Priority::Background
    }
    fn waits_for_idle(&self) -> bool {
        true
    }
    fn pulls_on_completion(&self) -> bool {
        true
    }
    fn begin(&mut self, sources: &[u32], target: u32, _parity: bool) {
        self.drives.clear();
        self.drives.extend_from_slice(sources);
        self.drives.push(target);
    }
    fn admit(&mut self, _drive: u32, _now: Nanos, drives: &dyn DriveState) -> Admit {
        if self.drives.iter().all(|&d| drives.user_ops_in_flight(d) == 0) {
            Admit::Now
        } else {
            Admit::Later
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct InFlight(Vec<u64>);
    impl DriveState for InFlight {
        fn cylinder(&self, _: u32) -> u32 {
            0
        }
        fn is_idle(&self, d: u32) -> bool {
            self.0[d as usize] == 0
        }
        fn user_ops_in_flight(&self, d: u32) -> u64 {
            self.0[d as usize]
        }
    }

    /// A read is let in only while no source and not the target has user work; a drive
    /// outside the rebuild does not count.
    #[test]
    fn a_read_waits_for_user_work_anywhere_in_the_rebuild() {
        let config: RebuildConfig = toml::from_str("discipline = \"vsm_set\"").unwrap();
        let mut d = VsmSet::boxed(&config, 5);
        d.begin(&[0, 1], 3, false);
        assert_eq!(d.admit(0, 0, &InFlight(vec![0, 0, 7, 0, 9])), Admit::Now, "drives 2 and 4 are outside");
        assert_eq!(d.admit(0, 0, &InFlight(vec![0, 1, 0, 0, 0])), Admit::Later, "the other source is busy");
        assert_eq!(d.admit(0, 0, &InFlight(vec![0, 0, 0, 2, 0])), Admit::Later, "the target is busy");
        d.begin(&[4], 2, false);
        assert_eq!(d.admit(4, 0, &InFlight(vec![3, 3, 0, 0, 0])), Admit::Now, "a new rebuild forgets the old set");
    }
}
