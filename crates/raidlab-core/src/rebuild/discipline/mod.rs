//! Issue disciplines: when a rebuild op may enter a drive's queue, and at which priority.
//! One file per discipline, one line in [`DISCIPLINES`].
//!
//! The seeds' two ends of the space are `vsm` (idle-only issue) and `pcm` (equal priority);
//! `rate` caps bandwidth. The production throttles (`docs/rebuild-throttles.md`) model what
//! real systems let an operator set: `md` (Linux md's resync throttle), `zfs` (OpenZFS's
//! scan/rebuild queue depths and its non-interactive credit), `mclock` (Ceph's mClock
//! profiles) and `hw_rate` (a hardware controller's rebuild rate in %). The last two share a
//! drive between user and rebuild work at the drive's queue, through a class discipline they
//! hand the engine ([`Discipline::class_discipline`]).

mod hw_rate;
mod mclock;
mod md;
mod pcm;
mod rate;
mod vsm;
mod vsm_set;
mod zfs;

pub use hw_rate::HwRateConfig;
pub use mclock::MclockConfig;
pub use md::MdConfig;
pub use zfs::ZfsConfig;

use super::{DriveState, RebuildConfig};
use crate::disk::scheduler::{ClassDiscipline, MakeScheduler};
use crate::disk::Priority;
use crate::sim::Nanos;

/// What a discipline says of a rebuild op that would enter a drive now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// It may enter now.
    Now,
    /// Not before this time: the policies are woken then (a timer).
    At(Nanos),
    /// When a rebuild op of this rebuild completes (the executors ask again after every
    /// rebuild event), or when the engine pumps the policies for another reason (a drive's
    /// idle pull, [`Discipline::pulls_on_completion`]). Say it only when such an event will
    /// come: some rebuild op in flight, or a pull the discipline asked for.
    Later,
}

/// When rebuild ops may enter a drive.
pub trait Discipline: Send {
    /// The priority class rebuild ops carry in the drive queue.
    fn priority(&self) -> Priority;
    /// The earliest time a rebuild op may enter drive slot `drive`; by default `now` (at
    /// once: the discipline keeps no clock).
    fn ready_at(&self, _drive: u32, now: Nanos) -> Nanos {
        now
    }
    /// Whether a rebuild read may enter drive slot `drive` now, seeing the drives' state
    /// (user work done and in flight). By default from [`Discipline::ready_at`]: now, or a
    /// time.
    fn admit(&mut self, drive: u32, now: Nanos, _drives: &dyn DriveState) -> Admit {
        let ready = self.ready_at(drive, now);
        if ready > now {
            Admit::At(ready)
        } else {
            Admit::Now
        }
    }
    /// A rebuild op of `sectors` sectors entered drive slot `drive` at `now`; by default
    /// nothing to note.
    fn issued(&mut self, _drive: u32, _now: Nanos, _sectors: u64) {}
    /// A rebuild read of `sectors` sectors issued to drive slot `drive` completed at `now`,
    /// the drives then as `drives` shows them; by default nothing to note.
    fn completed(&mut self, _drive: u32, _now: Nanos, _sectors: u64, _drives: &dyn DriveState) {}
    /// A rebuild starts, reading slots `sources` and writing slot `target`; `parity`: the
    /// lost sectors are the sources' XOR (RAID-5), else a copy (RAID-1). Forget any earlier
    /// rebuild. By default nothing to do.
    fn begin(&mut self, _sources: &[u32], _target: u32, _parity: bool) {}
    /// Whether the work that begins is a healing copy out of a distributed spare
    /// (`rebuild.healing`), told before [`Discipline::begin`]: a discipline that throttles
    /// the two differently switches. By default the same throttle.
    fn healing(&mut self, _healing: bool) {}
    /// Whether a rebuild read may enter only a drive with nothing queued or in service. The
    /// engine then pulls: a drive that goes idle asks the executor for its next read. By
    /// default false.
    fn waits_for_idle(&self) -> bool {
        false
    }
    /// Whether the engine must pump the policies after every op a drive completes (user
    /// or rebuild) while a rebuild runs: for a discipline whose gate opens when user work
    /// completes, not only when the drive goes idle. By default false, so that runs of
    /// other disciplines pay nothing.
    fn pulls_on_completion(&self) -> bool {
        false
    }
    /// The class discipline every drive's queue uses under this rebuild discipline (which
    /// shares each drive between the user and the rebuild class), built with queues from
    /// `scheduler`; `None` (the default) keeps `drive.classes`.
    fn class_discipline(&self, _scheduler: MakeScheduler) -> Option<Box<dyn ClassDiscipline>> {
        None
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
    DisciplineEntry {
        name: "vsm",
        make: vsm::Vsm::boxed,
        doc: vsm::DOC,
    },
    DisciplineEntry {
        name: "vsm_set",
        make: vsm_set::VsmSet::boxed,
        doc: vsm_set::DOC,
    },
    DisciplineEntry {
        name: "pcm",
        make: pcm::Pcm::boxed,
        doc: pcm::DOC,
    },
    DisciplineEntry {
        name: "rate",
        make: rate::Rate::boxed,
        doc: rate::DOC,
    },
    DisciplineEntry {
        name: "md",
        make: md::Md::boxed,
        doc: md::DOC,
    },
    DisciplineEntry {
        name: "zfs",
        make: zfs::Zfs::boxed,
        doc: zfs::DOC,
    },
    DisciplineEntry {
        name: "mclock",
        make: mclock::Mclock::boxed,
        doc: mclock::DOC,
    },
    DisciplineEntry {
        name: "hw_rate",
        make: hw_rate::HwRate::boxed,
        doc: hw_rate::DOC,
    },
];

/// Names of the registered disciplines.
pub fn names() -> Vec<&'static str> {
    DISCIPLINES.iter().map(|e| e.name).collect()
}

/// The entry of discipline `name`.
pub fn entry(name: &str) -> Option<&'static DisciplineEntry> {
    DISCIPLINES.iter().find(|e| e.name == name)
}

/// Checks of the per-discipline tables (`[rebuild.md]`, `[rebuild.zfs]`, `[rebuild.mclock]`,
/// `[rebuild.hw_rate]`): each belongs to its discipline only, and its values are sane.
/// Errors name the key.
pub fn validate_tables(config: &RebuildConfig) -> crate::error::Result<()> {
    let given: [(&str, bool); 4] = [
        ("md", config.md.is_some()),
        ("zfs", config.zfs.is_some()),
        ("mclock", config.mclock.is_some()),
        ("hw_rate", config.hw_rate.is_some()),
    ];
    for (name, present) in given {
        if present && config.discipline != name {
            return Err(crate::error::Error::config(
                format!("rebuild.{name}"),
                format!(
                    "only the `{name}` discipline takes these settings, not {:?}",
                    config.discipline
                ),
            ));
        }
    }
    if let Some(md) = &config.md {
        md.validate()?;
    }
    if let Some(zfs) = &config.zfs {
        zfs.validate()?;
    }
    if let Some(mclock) = &config.mclock {
        mclock.validate()?;
    }
    if let Some(hw) = &config.hw_rate {
        hw.validate()?;
    }
    Ok(())
}

/// A non-negative finite number, or an error naming `key`.
pub(crate) fn non_negative(key: &str, value: f64, unit: &str) -> crate::error::Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(crate::error::Error::config(
            key,
            format!("must be a non-negative number of {unit}, not {value}"),
        ))
    }
}
