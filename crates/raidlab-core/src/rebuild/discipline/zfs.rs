//! OpenZFS's resilver and rebuild throttle (`rebuild-controls.md` §2.2; `man4/zfs.4` "ZFS
//! I/O SCHEDULER"; `module/zfs/vdev_queue.c`): per leaf vdev (a drive), scan I/O may have
//! between `*_min_active` and `*_max_active` operations in flight, switched by an idle test
//! on the *non-interactive* (NIA) credit (OpenZFS 2.0.1+, PR #11166):
//!
//! ```text
//!   interactive (user) I/O in flight on the drive  → at most min(credit, min_active)
//!   none, but fewer than nia_delay scan completions
//!     since the last interactive one               → at most max(1, min_active)
//!   otherwise (idle)                               → at most max_active
//! ```
//!
//! The credit is reset to `zfs_vdev_nia_credit` when an interactive I/O completes, spent by
//! one for each scan I/O issued while interactive I/O is in flight, and grows by one for each
//! scan I/O that completes while none is. Scan bytes in flight per drive are also capped by
//! `zfs_scan_vdev_limit` (healing) or `zfs_rebuild_vdev_limit` (sequential).
//!
//! `mode`: `healing` (the default `zpool replace`: a resilver, scrub class, min/max 1/2) or
//! `sequential` (`zpool replace -s`: LBA order, rebuild class, min/max 1/3), which OpenZFS
//! allows on mirrors and dRAID only, "not possible on RAIDZ due to its variable stripe
//! width": raidlab refuses it on a parity layout. Both read in the order `rebuild.order`
//! gives (a healing resilver since 0.8 sorts what it issues to be "as sequential as memory
//! allows"), so the mode picks the class limits.
//!
//! Not modelled here: the five-class priority order among user classes (user I/O queues at
//! the drive as it arrives; ZFS's own sync read/write depths of 10 are not imposed), the
//! aggregate `zfs_vdev_max_active`, I/O aggregation, checksums, and
//! `zfs_resilver_min_time_ms`, which bounds the time the sync thread spends on a resilver per
//! TXG (raidlab has no TXGs): the key is accepted and checked, and has no effect. The 0.7
//! tunables (`zfs_resilver_delay`, `zfs_scan_idle`) were removed in 0.8 and are not modelled.
//! Scan reads carry the user class at the drive: ZFS's queue has already decided when they
//! may go.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{non_negative, Admit, Discipline};
use crate::disk::{Priority, SECTOR_BYTES};
use crate::error::{Error, Result};
use crate::rebuild::{DriveState, RebuildConfig};
use crate::sim::Nanos;

pub const DOC: &str = "OpenZFS: scan (healing) or rebuild (sequential) min/max active per drive, switched by the non-interactive delay and credit";

/// OpenZFS's scan throttle (`[rebuild.zfs]`; `rebuild-controls.md` §2.2). Defaults are
/// OpenZFS 2.4's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZfsConfig {
    /// `healing` (a resilver: the scrub class's limits) or `sequential` (`zpool replace -s`:
    /// the rebuild class's; mirrors only).
    #[serde(default = "default_mode")]
    pub mode: String,
    /// `zfs_vdev_scrub_min_active`: scan I/Os per drive while user I/O is active (default 1).
    #[serde(default = "one")]
    pub vdev_scrub_min_active: i64,
    /// `zfs_vdev_scrub_max_active`: scan I/Os per idle drive (default 2).
    #[serde(default = "two")]
    pub vdev_scrub_max_active: i64,
    /// `zfs_vdev_rebuild_min_active`: sequential rebuild I/Os per drive while user I/O is
    /// active (default 1).
    #[serde(default = "one")]
    pub vdev_rebuild_min_active: i64,
    /// `zfs_vdev_rebuild_max_active`: sequential rebuild I/Os per idle drive (default 3).
    #[serde(default = "three")]
    pub vdev_rebuild_max_active: i64,
    /// `zfs_vdev_nia_delay`: scan completions, with no user I/O active, before the drive
    /// counts as idle (default 5).
    #[serde(default = "five")]
    pub vdev_nia_delay: i64,
    /// `zfs_vdev_nia_credit`: scan I/Os that may be issued while user I/O is in flight,
    /// renewed by each user completion (default 5).
    #[serde(default = "five")]
    pub vdev_nia_credit: i64,
    /// `zfs_scan_vdev_limit`: scan bytes in flight per drive, MiB (default 16).
    #[serde(default = "default_scan_limit")]
    pub scan_vdev_limit_mib: f64,
    /// `zfs_rebuild_vdev_limit`: sequential rebuild bytes in flight per drive, MiB
    /// (default 64).
    #[serde(default = "default_rebuild_limit")]
    pub rebuild_vdev_limit_mib: f64,
    /// `zfs_resilver_min_time_ms`: the sync thread's minimum resilver time per TXG (default
    /// 1500 since 2.4.1, 3000 before). Checked, but not modelled: raidlab has no TXGs.
    #[serde(default = "default_min_time")]
    pub resilver_min_time_ms: f64,
}

fn default_mode() -> String {
    "healing".into()
}
fn one() -> i64 {
    1
}
fn two() -> i64 {
    2
}
fn three() -> i64 {
    3
}
fn five() -> i64 {
    5
}
fn default_scan_limit() -> f64 {
    16.0
}
fn default_rebuild_limit() -> f64 {
    64.0
}
fn default_min_time() -> f64 {
    1500.0
}

impl Default for ZfsConfig {
    fn default() -> Self {
        toml::from_str("").expect("every key has a default")
    }
}

/// The two reconstruction algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZfsMode {
    Healing,
    Sequential,
}

impl ZfsConfig {
    /// Errors name the key under `rebuild.zfs.`.
    pub fn validate(&self) -> Result<()> {
        self.mode()?;
        for (key, min, max) in [
            (
                "vdev_scrub",
                self.vdev_scrub_min_active,
                self.vdev_scrub_max_active,
            ),
            (
                "vdev_rebuild",
                self.vdev_rebuild_min_active,
                self.vdev_rebuild_max_active,
            ),
        ] {
            if min < 0 {
                return Err(Error::config(
                    format!("rebuild.zfs.{key}_min_active"),
                    format!("must be at least 0, not {min}"),
                ));
            }
            if max < 1 {
                return Err(Error::config(
                    format!("rebuild.zfs.{key}_max_active"),
                    format!("must be at least 1, not {max}"),
                ));
            }
            if min > max {
                return Err(Error::config(
                    format!("rebuild.zfs.{key}_min_active"),
                    format!("{min} is more than {key}_max_active = {max}"),
                ));
            }
        }
        for (key, value) in [
            ("vdev_nia_delay", self.vdev_nia_delay),
            ("vdev_nia_credit", self.vdev_nia_credit),
        ] {
            if value < 0 {
                return Err(Error::config(
                    format!("rebuild.zfs.{key}"),
                    format!("must be at least 0, not {value}"),
                ));
            }
        }
        for (key, value) in [
            ("scan_vdev_limit_mib", self.scan_vdev_limit_mib),
            ("rebuild_vdev_limit_mib", self.rebuild_vdev_limit_mib),
        ] {
            non_negative(&format!("rebuild.zfs.{key}"), value, "MiB")?;
            if value == 0.0 {
                return Err(Error::config(
                    format!("rebuild.zfs.{key}"),
                    "must be more than 0 MiB",
                ));
            }
        }
        non_negative(
            "rebuild.zfs.resilver_min_time_ms",
            self.resilver_min_time_ms,
            "ms",
        )
    }

    /// The mode named.
    pub fn mode(&self) -> Result<ZfsMode> {
        match self.mode.as_str() {
            "healing" => Ok(ZfsMode::Healing),
            "sequential" => Ok(ZfsMode::Sequential),
            other => Err(Error::config(
                "rebuild.zfs.mode",
                format!("unknown mode {other:?}; known modes: healing, sequential"),
            )),
        }
    }
}

/// One leaf vdev's queue state.
#[derive(Debug, Clone, Default)]
struct Leaf {
    /// Scan I/Os and sectors in flight.
    active: u64,
    sectors: u64,
    /// `vq_nia_credit`.
    credit: i64,
    /// User ops completed when last looked at.
    user_ops_seen: u64,
}

/// OpenZFS's scan throttle.
pub struct Zfs {
    min_active: i64,
    max_active: i64,
    /// The class limits of the configured mode, and of a healing resilver: (min active,
    /// max active, bytes in flight as sectors). A healing copy out of a distributed spare
    /// is a healing resilver whatever the mode ([`Discipline::healing`]).
    configured: (i64, i64, u64),
    resilver: (i64, i64, u64),
    nia_delay: i64,
    nia_credit: i64,
    limit_sectors: u64,
    leaves: Vec<Leaf>,
}

impl Zfs {
    pub fn boxed(config: &RebuildConfig, slots: u32) -> Box<dyn Discipline> {
        let zfs = config.zfs.clone().unwrap_or_default();
        let (min_active, max_active, limit_mib) = match zfs.mode().unwrap_or(ZfsMode::Healing) {
            ZfsMode::Healing => (
                zfs.vdev_scrub_min_active,
                zfs.vdev_scrub_max_active,
                zfs.scan_vdev_limit_mib,
            ),
            ZfsMode::Sequential => (
                zfs.vdev_rebuild_min_active,
                zfs.vdev_rebuild_max_active,
                zfs.rebuild_vdev_limit_mib,
            ),
        };
        let sectors = |mib: f64| (mib * 1024.0 * 1024.0 / SECTOR_BYTES as f64) as u64;
        Box::new(Zfs {
            min_active,
            max_active,
            configured: (min_active, max_active, sectors(limit_mib)),
            resilver: (zfs.vdev_scrub_min_active, zfs.vdev_scrub_max_active, sectors(zfs.scan_vdev_limit_mib)),
            nia_delay: zfs.vdev_nia_delay,
            nia_credit: zfs.vdev_nia_credit,
            limit_sectors: sectors(limit_mib),
            leaves: vec![
                Leaf {
                    credit: zfs.vdev_nia_credit,
                    ..Leaf::default()
                };
                slots as usize
            ],
        })
    }

    /// A user completion since the last look renews the credit.
    fn observe(&mut self, drive: u32, drives: &dyn DriveState) {
        let done = drives.user_ops_done(drive);
        let leaf = &mut self.leaves[drive as usize];
        if done != leaf.user_ops_seen {
            leaf.user_ops_seen = done;
            leaf.credit = self.nia_credit;
        }
    }

    /// `vdev_queue_class_max_active` for the scan class.
    fn max_active(&self, leaf: &Leaf, interactive: bool) -> i64 {
        if interactive {
            leaf.credit.min(self.min_active)
        } else if leaf.credit < self.nia_delay {
            self.min_active.max(1)
        } else {
            self.max_active
        }
    }
}

impl Discipline for Zfs {
    fn priority(&self) -> Priority {
        Priority::Foreground
    }

    fn healing(&mut self, healing: bool) {
        (self.min_active, self.max_active, self.limit_sectors) = if healing { self.resilver } else { self.configured };
    }

    fn admit(&mut self, drive: u32, _now: Nanos, drives: &dyn DriveState) -> Admit {
        if drive as usize >= self.leaves.len() {
            return Admit::Now;
        }
        self.observe(drive, drives);
        let interactive = drives.user_ops_in_flight(drive) > 0;
        let leaf = &self.leaves[drive as usize];
        let allowed = self.max_active(leaf, interactive);
        if (leaf.active as i64) < allowed && (leaf.active == 0 || leaf.sectors < self.limit_sectors)
        {
            if interactive {
                self.leaves[drive as usize].credit -= 1;
            }
            Admit::Now
        } else {
            // Asked again after every completion (`pulls_on_completion`).
            Admit::Later
        }
    }

    fn issued(&mut self, drive: u32, _now: Nanos, sectors: u64) {
        if let Some(leaf) = self.leaves.get_mut(drive as usize) {
            leaf.active += 1;
            leaf.sectors += sectors;
        }
    }

    fn completed(&mut self, drive: u32, _now: Nanos, sectors: u64, drives: &dyn DriveState) {
        if drive as usize >= self.leaves.len() {
            return;
        }
        self.observe(drive, drives);
        let leaf = &mut self.leaves[drive as usize];
        leaf.active = leaf.active.saturating_sub(1);
        leaf.sectors = leaf.sectors.saturating_sub(sectors);
        if drives.user_ops_in_flight(drive) == 0 {
            leaf.credit += 1;
        }
    }

    fn begin(&mut self, _sources: &[u32], _target: u32, _parity: bool) {
        for leaf in &mut self.leaves {
            leaf.active = 0;
            leaf.sectors = 0;
            leaf.credit = self.nia_credit;
        }
    }

    fn pulls_on_completion(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Users {
        done: Vec<u64>,
        in_flight: Vec<u64>,
    }
    impl DriveState for Users {
        fn cylinder(&self, _: u32) -> u32 {
            0
        }
        fn is_idle(&self, _: u32) -> bool {
            true
        }
        fn user_ops_done(&self, d: u32) -> u64 {
            self.done[d as usize]
        }
        fn user_ops_in_flight(&self, d: u32) -> u64 {
            self.in_flight[d as usize]
        }
    }

    fn zfs(text: &str) -> Box<dyn Discipline> {
        let config: RebuildConfig =
            toml::from_str(&format!("discipline = \"zfs\"\n[zfs]\n{text}")).unwrap();
        config.validate().unwrap();
        Zfs::boxed(&config, 2)
    }

    /// Busy: min(credit, min_active), the credit spent per scan I/O issued and renewed by a
    /// user completion; idle after nia_delay scan completions: max_active.
    #[test]
    fn the_credit_switches_between_min_and_max_active() {
        let mut z = zfs("vdev_scrub_min_active = 2\nvdev_scrub_max_active = 4\nvdev_nia_credit = 3\nvdev_nia_delay = 5");
        let mut users = Users {
            done: vec![0, 0],
            in_flight: vec![1, 0],
        };
        // Busy: two at once (min_active 2 < credit 3).
        assert_eq!(z.admit(0, 0, &users), Admit::Now);
        z.issued(0, 0, 8);
        assert_eq!(z.admit(0, 0, &users), Admit::Now);
        z.issued(0, 0, 8);
        assert_eq!(z.admit(0, 0, &users), Admit::Later, "min_active reached");
        // Both complete while user work is in flight: credit 1 left, so one more.
        for _ in 0..2 {
            z.completed(0, 1, 8, &users);
        }
        assert_eq!(z.admit(0, 1, &users), Admit::Now);
        z.issued(0, 1, 8);
        z.completed(0, 2, 8, &users);
        assert_eq!(z.admit(0, 2, &users), Admit::Later, "credit spent");
        // A user op completes: the credit is renewed (3, then 2 once this one is issued).
        users.done[0] = 1;
        assert_eq!(z.admit(0, 3, &users), Admit::Now);
        z.issued(0, 3, 8);
        // The user work ends. Credit 2 < nia_delay 5: max(1, min_active) = 2 at once.
        users.in_flight[0] = 0;
        assert_eq!(z.admit(0, 4, &users), Admit::Now);
        z.issued(0, 4, 8);
        assert_eq!(z.admit(0, 4, &users), Admit::Later);
        // Three scan completions with no user I/O: credit 5 = nia_delay, idle: max_active 4.
        z.completed(0, 5, 8, &users);
        z.completed(0, 5, 8, &users);
        z.issued(0, 5, 8);
        z.completed(0, 6, 8, &users);
        for _ in 0..4 {
            assert_eq!(z.admit(0, 6, &users), Admit::Now);
            z.issued(0, 6, 8);
        }
        assert_eq!(z.admit(0, 6, &users), Admit::Later, "max_active reached");
        // Drive 1 is another leaf.
        assert_eq!(z.admit(1, 6, &users), Admit::Now);
    }

    #[test]
    fn bad_settings_name_their_key() {
        for (text, key) in [
            ("mode = \"raidz\"", "rebuild.zfs.mode"),
            (
                "vdev_scrub_min_active = 3",
                "rebuild.zfs.vdev_scrub_min_active",
            ),
            (
                "vdev_rebuild_max_active = 0",
                "rebuild.zfs.vdev_rebuild_max_active",
            ),
            ("vdev_nia_credit = -1", "rebuild.zfs.vdev_nia_credit"),
            (
                "scan_vdev_limit_mib = -16",
                "rebuild.zfs.scan_vdev_limit_mib",
            ),
            (
                "resilver_min_time_ms = -1",
                "rebuild.zfs.resilver_min_time_ms",
            ),
        ] {
            let config: RebuildConfig =
                toml::from_str(&format!("discipline = \"zfs\"\n[zfs]\n{text}")).unwrap();
            let e = config.validate().unwrap_err().to_string();
            assert!(e.starts_with(key), "{text}: {e}");
        }
    }
}
