//! The `[cache]` table: the buffer cache in front of the array, as a configuration reads it
//! (the cache itself is `cache::front`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How the cache treats whole-block writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    /// Cache the block dirty and answer the user at once; write it to the array (a destage)
    /// when it is evicted.
    #[default]
    WriteBack,
    /// Send the write to the array and answer the user when it is done; a cached copy is
    /// updated, an uncached block is not loaded (no write-allocate).
    WriteThrough,
}

/// A buffer cache in front of the array (`docs/cache.md`, "In front of the array").
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Replacement policy: `lru`, `lfu`, `arc`, `clock`, or a failure-aware `vdf-lru`,
    /// `vdf-lfu`, `vdf-arc`, `vdf-clock` (these need a `raid5` layout whose stripe unit is a
    /// whole number of 4 KiB blocks).
    pub policy: String,
    /// Capacity, in 4 KiB blocks (1 to 2³² − 2).
    pub size_blocks: u64,
    /// `write-back` (default) or `write-through`.
    #[serde(default)]
    pub write_policy: WritePolicy,
    /// Time to answer a request every block of which is a hit, ms (default 0: at once). A
    /// closed loop with no think time then needs `workload.requests` to end, as its time
    /// would not advance if every request hit.
    #[serde(default)]
    pub hit_ms: f64,
    /// Reads a read miss of a block already rebuilt onto the spare costs while the rebuild
    /// runs with `rebuild.redirect_reads`: 0 (default), the paper's count of surviving-drive
    /// reads only (§6.5), or 1 to count the spare's read as a survivor's.
    #[serde(default)]
    pub rebuilt_miss_reads: u32,
}

impl CacheConfig {
    /// Checks that need no layout. Errors name `cache.…`.
    pub fn validate(&self) -> Result<()> {
        super::entry_for(&self.policy, "cache.policy")?;
        super::checked_capacity(self.size_blocks, "cache")
            .map_err(|_| Error::config("cache.size_blocks", format!("a cache holds 1 to {} blocks, not {}", u32::MAX - 1, self.size_blocks)))?;
        if !(self.hit_ms.is_finite() && self.hit_ms >= 0.0 && self.hit_ms <= 1e6) {
            return Err(Error::config("cache.hit_ms", format!("must be 0 to 10⁶ ms, not {}", self.hit_ms)));
        }
        if self.rebuilt_miss_reads > 1 {
            return Err(Error::config(
                "cache.rebuilt_miss_reads",
                format!("a rebuilt block is read from the spare alone: 0 or 1 reads, not {}", self.rebuilt_miss_reads),
            ));
        }
        Ok(())
    }
}
