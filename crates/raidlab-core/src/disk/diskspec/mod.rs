//! Import of DiskSim 4 drive parameter files: DiskSim's validated drives (extracted from real
//! drives with a logic analyzer or DIXtrac) as raidlab drive models.
//!
//! ```text
//!  NAME.parv ──source──▶ NAME.diskspecs ──Model = source──▶ NAME.model ──Full seek curve──▶ NAME.seek
//!      │                      │ disksim_disk: overheads,          │ dm_disk: surfaces, cylinders,
//!      │ bus, controller,     │ cache, host-interface time        │ zones, sparing, slips, skews,
//!      │ topology             │                                   │ rpm, head switch, write settle
//!      ▼                      ▼                                   ▼
//!  parser::parse_file ──▶ SpecTree (every value with its file:line) ──▶ convert ──▶ DiskSpec
//!                                                       { model: DriveModelConfig, cache, warnings }
//! ```
//!
//! [`load`] accepts any of the three kinds of file. Every parameter that raidlab does not
//! model — including the on-drive cache parameters that raidlab's cache model
//! (`DriveModelConfig::cache`, [`crate::disk::cache`]) does not use; all of them are kept
//! typed in [`DiskSpec::cache`] — is listed in [`DiskSpec::warnings`] with
//! its file and line; blocks that describe the host or the workload rather than the drive get
//! one warning each. `docs/drives.md` gives the parameter-by-parameter mapping.

pub mod convert;
pub mod parser;

use std::path::{Path, PathBuf};

use crate::disk::DriveModelConfig;
use crate::error::Result;

/// A drive imported from a DiskSim parameter file.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskSpec {
    /// Name of the `disksim_disk` block (of the `dm_disk` block for a model file).
    pub name: String,
    /// The drive as raidlab models it.
    pub model: DriveModelConfig,
    /// The on-drive cache parameters (`None` for a model file, which has none).
    pub cache: Option<DiskCacheSpec>,
    /// DiskSim's `Block count`: the capacity the drive declares, in 512-byte sectors.
    pub block_count: u64,
    /// Sectors the zones map by DiskSim's arithmetic (its `blksinband` summed over zones).
    pub mapped_sectors: u64,
    /// One line per parameter or block not modelled, `file:line: …`.
    pub warnings: Vec<String>,
    /// Every file read, the given one first (seek curves not included).
    pub files: Vec<PathBuf>,
}

/// The on-drive buffer cache of a `disksim_disk` block (manual §3.4.5), every parameter as
/// given; the ones raidlab's cache model uses are also in `DriveModelConfig::cache`. Sizes in 512-byte sectors, times in ms
/// (already multiplied by the block's time scale).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskCacheSpec {
    /// "Enable caching in buffer": segments cache data, not only match speeds.
    pub enabled: bool,
    /// "Number of buffer segments".
    pub segments: u32,
    /// "Segment size (in blks)".
    pub segment_sectors: u32,
    /// "Maximum number of write segments".
    pub write_segments: u32,
    /// "Use separate write segment".
    pub separate_write_segment: bool,
    /// "Fast write level": 0 no write-back, 1 for appending sequential writes, 2 also when
    /// other requests intervene.
    pub fast_write_level: u32,
    /// "Combine seq writes".
    pub combine_sequential_writes: bool,
    /// "Buffer continuous read": 0 no prefetch, 1 to the end of the track, 2 of the cylinder,
    /// 3 until the segment is full, 4 one track ahead of a sequential stream.
    pub buffer_continuous_read: u32,
    /// "Minimum read-ahead (blks)".
    pub read_ahead_min_sectors: u32,
    /// "Maximum read-ahead (blks)".
    pub read_ahead_max_sectors: u32,
    /// "Read-ahead over requested".
    pub read_ahead_over_requested: bool,
    /// "Read-ahead on idle hit".
    pub read_ahead_on_idle_hit: bool,
    /// "Read any free blocks": sectors before the requested ones are cached as they pass.
    pub read_any_free_blocks: bool,
    /// "Stop prefetch in sector".
    pub stop_prefetch_in_sector: bool,
    /// "Write hit stop prefetch".
    pub write_hit_stop_prefetch: bool,
    /// "Read directly to buffer".
    pub read_directly_to_buffer: bool,
    /// "Immed transfer partial hit".
    pub immediate_transfer_partial_hit: bool,
    /// "Low (write) water mark", a fraction.
    pub low_water_mark: f64,
    /// "High (read) water mark", a fraction.
    pub high_water_mark: f64,
    /// "Set watermark by reqsize".
    pub watermark_by_request_size: bool,
    /// "Calc sector by sector".
    pub calc_sector_by_sector: bool,
    /// "Allow almost read hits".
    pub allow_almost_read_hits: bool,
    /// "Allow sneaky full read hits".
    pub allow_sneaky_full_read_hits: bool,
    /// "Allow sneaky partial read hits".
    pub allow_sneaky_partial_read_hits: bool,
    /// "Allow sneaky intermediate read hits".
    pub allow_sneaky_intermediate_read_hits: bool,
    /// "Allow read hits on write data".
    pub allow_read_hits_on_write_data: bool,
    /// "Allow write prebuffering".
    pub allow_write_prebuffering: bool,
    /// "Read hit over. after read", ms.
    pub read_hit_after_read_ms: f64,
    /// "Read hit over. after write", ms.
    pub read_hit_after_write_ms: f64,
    /// "Write hit over. after read", ms.
    pub write_hit_after_read_ms: f64,
    /// "Write hit over. after write", ms.
    pub write_hit_after_write_ms: f64,
}

/// Import the drive described by a DiskSim parameter file (`.parv`, `.diskspecs` or
/// `.model`) and the files it sources. Malformed files give `Error::Spec` with the file and
/// line; a drive raidlab cannot represent gives `Error::Spec` naming the parameter.
pub fn load(path: &Path) -> Result<DiskSpec> {
    let tree = parser::parse_file(path)?;
    convert::convert(&tree, path)
}
