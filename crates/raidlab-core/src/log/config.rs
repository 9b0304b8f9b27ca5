//! The `[log]` table: a log drive beside a RAID-5 array, and the scheme that writes to it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A log-assisted RAID-5 (seed 002; `docs/log.md`): one more drive, outside the data layout,
/// that a log scheme appends to.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// The write scheme: `data_logging`, `raid5l`, `raid5l_s`, `raid5l_o`, `swo`,
    /// `parity_logging`, or Linux md's `md_journal` (write-through), `md_journal_wb`
    /// (write-back) and `md_ppl` (partial parity log, on the members: no log drive)
    /// (`raidlab list`).
    pub scheme: String,
    /// The log's capacity, GB (10⁹ bytes) from the start of the log drive (default 10, the
    /// paper's, §IV-A).
    #[serde(default = "default_capacity_gb")]
    pub capacity_gb: f64,
    /// The fraction of the log in use at which parity re-synchronization starts (0 to 1,
    /// default 0.8, §IV-A).
    #[serde(default = "default_threshold")]
    pub resync_threshold: f64,
    /// The block a parity row holds per drive, and a log record's size, KiB (default 4: Linux
    /// md's stripe_head, §III-B; notes A.1). Must divide the stripe unit.
    #[serde(default = "default_block_kib")]
    pub block_kib: u32,
    /// Re-synchronize once the array has had no user request for this long, ms (§III-D:
    /// "the system is idle or lightly loaded"); absent (the default), only the threshold,
    /// a lost log drive or a crash start one. The re-sync then runs until the log is empty,
    /// serving user requests meanwhile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resync_idle_ms: Option<f64>,
    /// The controller's CPU time per index look-up, µs (the paper gives none, notes A.9):
    /// a write's (or a re-sync's) look-ups delay its disk operations by this much each, the
    /// piece holding its stripe's lock meanwhile. Absent (the default): look-ups are counted
    /// and cost nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup_us: Option<f64>,
}

fn default_capacity_gb() -> f64 {
    10.0
}
fn default_threshold() -> f64 {
    0.8
}
fn default_block_kib() -> u32 {
    4
}

impl LogConfig {
    /// When the scheme brings the parity up to date (the scheme is validated first).
    pub fn consistency(&self) -> super::Consistency {
        super::entry(&self.scheme).map_or(super::Consistency::Deferred, |e| e.scheme.consistency())
    }

    /// Whether the scheme appends to a log drive of its own (md's PPL writes to the members).
    pub fn has_log_drive(&self) -> bool {
        self.consistency() != super::Consistency::PartialParity
    }

    /// Sectors the scheme reserves at the end of every member (md's PPL area), with a stripe
    /// unit of `stripe_unit_sectors`.
    pub fn member_reserved_sectors(&self, stripe_unit_sectors: u64) -> u64 {
        if self.has_log_drive() {
            0
        } else {
            super::md::ppl_area_sectors(stripe_unit_sectors)
        }
    }

    /// The block, sectors.
    pub fn block_sectors(&self) -> u64 {
        self.block_kib as u64 * 2
    }

    /// The CPU time of one index look-up, ns.
    pub fn lookup_ns(&self) -> u64 {
        (self.lookup_us.unwrap_or(0.0) * 1e3).round() as u64
    }

    /// The log's capacity, whole blocks.
    pub fn capacity_blocks(&self) -> u64 {
        (self.capacity_gb * 1e9 / (self.block_kib as f64 * 1024.0)).floor() as u64
    }

    /// Checks that need no layout and no drive. Errors name `log.…`.
    pub fn validate(&self) -> Result<()> {
        super::entry(&self.scheme).ok_or_else(|| {
            Error::config("log.scheme", format!("unknown log scheme {:?}; known schemes: {}", self.scheme, super::names().join(", ")))
        })?;
        if !(self.block_kib >= 1 && self.block_kib <= 1024 && self.block_kib.is_power_of_two()) {
            return Err(Error::config("log.block_kib", format!("must be a power of two from 1 to 1024 KiB, not {}", self.block_kib)));
        }
        if !(self.capacity_gb.is_finite() && self.capacity_gb > 0.0 && self.capacity_gb <= 1e6) {
            return Err(Error::config("log.capacity_gb", format!("must be above 0 and at most 10⁶ GB, not {}", self.capacity_gb)));
        }
        if self.capacity_blocks() < 1 {
            return Err(Error::config(
                "log.capacity_gb",
                format!("{} GB holds no log entry of {} KiB", self.capacity_gb, self.block_kib),
            ));
        }
        if let Some(ms) = self.resync_idle_ms {
            if !(ms.is_finite() && ms > 0.0 && ms <= 1e9) {
                return Err(Error::config("log.resync_idle_ms", format!("must be above 0 and at most 10⁹ ms, not {ms}")));
            }
        }
        if let Some(us) = self.lookup_us {
            if !(us.is_finite() && us >= 0.0 && us <= 1e6) {
                return Err(Error::config("log.lookup_us", format!("must be from 0 to 10⁶ µs, not {us}")));
            }
        }
        if !(self.resync_threshold > 0.0 && self.resync_threshold <= 1.0) {
            return Err(Error::config(
                "log.resync_threshold",
                format!("is a fraction of the log in (0, 1], not {}", self.resync_threshold),
            ));
        }
        Ok(())
    }
}
