//! Drive model: geometry with zones, seek curve, rotation, transfer, overheads — and the
//! per-drive request queue with its scheduling discipline and two priority classes.
//!
//! All addresses are in 512-byte sectors (`lba`). A [`DriveModel`] is the immutable
//! description of a drive type (shared by every drive of the array through an `Arc`); a
//! [`Drive`] is one mechanism with its own arm position and random stream.

pub mod cache;
pub mod diskspec;
pub mod geometry;
pub mod interface;
pub mod mechanics;
pub mod presets;
pub mod scheduler;
pub mod seek;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use cache::{DriveCacheConfig, PrefetchMode};
pub use geometry::{Geometry, PhysicalAddress};
pub use interface::{ExtraWriteDisconnectConfig, HostInterfaceConfig, WatermarkBase};
pub use mechanics::{Drive, DriveModel, ServiceTime};
pub use scheduler::{DiskQueue, Priority, QueuedOp, Scheduler};
pub use seek::SeekCurve;

/// Bytes in one addressable sector; every address in raidlab counts these.
pub const SECTOR_BYTES: u64 = 512;

/// Whether a disk operation reads or writes the medium.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OpKind {
    Read,
    Write,
}

/// How rotational latency is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum RotationModel {
    /// The platter's angle is tracked exactly from simulated time; latency is the time until
    /// the first wanted sector passes under the head.
    #[default]
    Exact,
    /// Latency is drawn uniformly from [0, one revolution) for every access
    /// (the thesis's "uniform latency cost function", seed 004 Table 2).
    Uniform,
}

/// Which drive every member of the array is, and how its queue is ordered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    /// Name of a built-in drive (see `docs/drives.md`): `ibm0661`, `hc550`, `ibm18es`,
    /// `cheetah9LP`, `st3146807lc`. At most one of `preset`, `model` and `diskspec` may be
    /// given; with none, the drive is `ibm0661`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// A drive described parameter by parameter, instead of a preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<DriveModelConfig>,
    /// A DiskSim 4 parameter file (`.parv`, `.diskspecs` or `.model`) to import the drive
    /// from; a relative path is resolved against the configuration file's directory. What is
    /// imported, and what is reported as not modelled, is in `docs/drives.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskspec: Option<PathBuf>,
    /// Queue discipline within a priority class: `fcfs`, `sstf`, `clook` or `sptf`.
    #[serde(default = "default_scheduler")]
    pub scheduler: String,
    /// How the user (foreground) and internal (background: rebuild) classes of operations
    /// share the drive: `foreground_first` (background only when no user op waits, never
    /// preempted), `mclock` (Ceph's mClock tags) or `time_share` (drive time split by
    /// weight); see `raidlab list class_disciplines`. A rebuild discipline that shares the
    /// drive at its queue (`mclock`, `hw_rate`) brings its own, and refuses any other here.
    // Left out of the resolved configuration at its default, so that configurations
    // written before it keep their hash.
    #[serde(default = "default_classes", skip_serializing_if = "is_default_classes")]
    #[schemars(extend("default" = "foreground_first"))]
    pub classes: String,
    /// Override of the drive's rotational model (`exact` or `uniform`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<RotationModel>,
    /// Override of the drive's zero-latency (immediate) access, reads and writes alike: a
    /// transfer starts at whatever sector of its range passes under the head first (Fu et
    /// al. assume it; DiskSim's `ibm18es` has it off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_latency: Option<bool>,
    /// `false`: the drive's host interface adds no time (no bus transfer time, no
    /// disconnect and reconnect), as for a drive whose data path to the array controller is
    /// never the bottleneck. A DiskSim-validated drive carries the bus of the host it was
    /// measured on (the `ibm18es`'s moves a sector in 0.1 ms, a whole track in 34 ms, four
    /// revolutions). Absent or `true`: the drive's own interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bus: Option<bool>,
    /// Use only the first this many sectors of each drive (the outermost ones), as if the
    /// drive were that small: the array's capacity, its rebuilds and its addresses follow.
    /// At least 1 and at most what the drive holds. The PRO paper limits every disk to 5 GB
    /// this way (seed 000 §4.1). Absent: the whole drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_sectors: Option<u64>,
}

fn default_scheduler() -> String {
    "fcfs".to_string()
}

fn default_classes() -> String {
    scheduler::classes::DEFAULT.to_string()
}

fn is_default_classes(name: &String) -> bool {
    name == scheduler::classes::DEFAULT
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig {
            preset: Some("ibm0661".into()),
            model: None,
            diskspec: None,
            scheduler: default_scheduler(),
            classes: default_classes(),
            rotation: None,
            zero_latency: None,
            host_bus: None,
            capacity_sectors: None,
        }
    }
}

/// A drive's mechanical and geometric parameters.
///
/// The fields after `rotation` came with the DiskSim import (`drive.diskspec`); they all
/// default to "absent", so a drive written before them behaves exactly as it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriveModelConfig {
    /// Spindle speed in revolutions per minute.
    pub rpm: f64,
    /// Recording surfaces, i.e. tracks per cylinder.
    pub surfaces: u32,
    /// Zones from the outermost cylinder inward. Without `first_cylinder` they are contiguous
    /// and their cylinder counts add up to the drive's.
    pub zones: Vec<ZoneConfig>,
    /// Seek time as a function of distance in cylinders.
    pub seek: SeekConfig,
    /// Time to switch between heads of one cylinder, in ms.
    #[serde(default)]
    pub head_switch_ms: f64,
    /// Fixed controller overhead per command, in ms.
    #[serde(default)]
    pub command_overhead_ms: f64,
    /// Rotational offset of sector 0 between consecutive tracks of a cylinder, in sectors.
    /// A zone's `track_switch_skew_sectors` overrides it.
    #[serde(default)]
    pub track_skew_sectors: u32,
    /// Rotational offset of sector 0 between consecutive cylinders, in sectors, added to the
    /// track skew (a cylinder switch also moves to the next track). A zone's
    /// `cylinder_switch_skew_sectors` overrides the sum.
    #[serde(default)]
    pub cylinder_skew_sectors: u32,
    /// Zero-latency access: a transfer may start at whichever wanted sector comes under the
    /// head first, so a whole-track transfer takes exactly one revolution.
    #[serde(default)]
    pub zero_latency: bool,
    /// Rotational model (`exact` or `uniform`).
    #[serde(default)]
    pub rotation: RotationModel,
    /// Zero-latency access for writes, when it differs from reads (`zero_latency`); absent:
    /// writes follow `zero_latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_latency_writes: Option<bool>,
    /// Extra settling time of a write after every seek or head switch, in ms (DiskSim's
    /// "Add. write settling delay"). May be negative, as some of DiskSim's extracted drives
    /// have it; a positioning time never goes below 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_settle_ms: f64,
    /// Processing time of a read command when the drive's previous command was a read, in ms,
    /// added to `command_overhead_ms` (DiskSim's "Read miss over. after read").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_after_read_overhead_ms: f64,
    /// Processing time of a read command after a write, in ms (DiskSim's "Read miss over.
    /// after write").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_after_write_overhead_ms: f64,
    /// Processing time of a write command after a read, in ms (DiskSim's "Write miss over.
    /// after read").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_after_read_overhead_ms: f64,
    /// Processing time of a write command after a write, in ms (DiskSim's "Write miss over.
    /// after write").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_after_write_overhead_ms: f64,
    /// Time to complete a read once its data has been sent, in ms (DiskSim's "Read
    /// completion overhead").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_completion_overhead_ms: f64,
    /// Time to complete a write once its data is on the medium, in ms (DiskSim's "Write
    /// completion overhead").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_completion_overhead_ms: f64,
    /// Time to move one 512-byte sector over the host interface, in ms (DiskSim's "Bulk
    /// sector transfer time", the largest along the bus path). Reads send each sector once it
    /// is read; writes cannot put a sector on the medium before it has arrived. 0: the
    /// interface is never the bottleneck.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bus_sector_ms: f64,
    /// Time to move one sector towards the drive (a write's data), in ms, when it differs
    /// from `bus_sector_ms` (DiskSim's bus "Write block transfer time" against its "Read
    /// block transfer time"); absent: `bus_sector_ms` both ways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_sector_write_ms: Option<f64>,
    /// How the drive disconnects from the bus while the medium works and what reconnecting
    /// costs (DiskSim's water marks, reselect and disconnect overheads; see `docs/drives.md`);
    /// absent: the drive keeps the bus from command to completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<HostInterfaceConfig>,
    /// Order of the tracks of a cylinder in LBA order: `ascending` surfaces (the
    /// traditional mapping), or `serpentine` (odd cylinders descending, so a cylinder switch
    /// keeps the head).
    #[serde(default, skip_serializing_if = "TrackOrder::is_ascending")]
    pub track_order: TrackOrder,
    /// Where spare sectors lie and how slipped sectors move the mapping (DiskSim's sparing
    /// schemes). Each zone gives its spare count and slip and remap lists.
    #[serde(default, skip_serializing_if = "SparingConfig::is_none")]
    pub sparing: SparingConfig,
    /// Sectors the drive exports, in 512-byte sectors; absent: every sector the zones map.
    /// When it is smaller, the sectors beyond it are never addressed (DiskSim's "Block count"
    /// below the zones' total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_sectors: Option<u64>,
    /// The on-drive buffer cache (read cache with read-ahead, write-back); absent: no cache,
    /// every access goes to the medium (see `docs/drives.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<DriveCacheConfig>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl DriveModelConfig {
    /// A drive with the four required parameters and every other one at its default (no
    /// overheads, skews, sparing or write settle; exact rotation).
    pub fn basic(rpm: f64, surfaces: u32, zones: Vec<ZoneConfig>, seek: SeekConfig) -> Self {
        DriveModelConfig {
            rpm,
            surfaces,
            zones,
            seek,
            head_switch_ms: 0.0,
            command_overhead_ms: 0.0,
            track_skew_sectors: 0,
            cylinder_skew_sectors: 0,
            zero_latency: false,
            rotation: RotationModel::Exact,
            zero_latency_writes: None,
            write_settle_ms: 0.0,
            read_after_read_overhead_ms: 0.0,
            read_after_write_overhead_ms: 0.0,
            write_after_read_overhead_ms: 0.0,
            write_after_write_overhead_ms: 0.0,
            read_completion_overhead_ms: 0.0,
            write_completion_overhead_ms: 0.0,
            bus_sector_ms: 0.0,
            bus_sector_write_ms: None,
            interface: None,
            track_order: TrackOrder::Ascending,
            sparing: SparingConfig::None,
            capacity_sectors: None,
            cache: None,
        }
    }
}

/// A band of cylinders with the same number of sectors per track.
///
/// Only `cylinders` and `sectors_per_track` are needed for the traditional mapping; the
/// other fields describe DiskSim's layout: gaps between zones, per-zone skews, a reserved
/// area, spares, slipped and remapped defects.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZoneConfig {
    /// Cylinders in this zone.
    pub cylinders: u32,
    /// 512-byte sectors on every track of this zone.
    pub sectors_per_track: u32,
    /// Physical number of the zone's first cylinder; absent: right after the previous zone.
    /// Cylinders between zones hold no data but count in seek distances.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_cylinder: Option<u32>,
    /// Rotational offset, in sectors, of the first sector of the zone's first track; the
    /// zone's skews count from it. Absent: the drive-wide skews continue from cylinder 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-unit" = "sectors (512 B)"))]
    pub first_sector_offset: Option<u32>,
    /// Skew at a switch to the next track of the same cylinder, in sectors; absent:
    /// the drive's `track_skew_sectors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track_switch_skew_sectors: Option<u32>,
    /// Skew at a switch to the next cylinder, in sectors (instead of a track switch's);
    /// absent: the drive's `track_skew_sectors + cylinder_skew_sectors`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cylinder_switch_skew_sectors: Option<u32>,
    /// Sectors at the front of the zone that hold no LBAs (DiskSim's "Empty space at zone
    /// front"), counted in the units LBAs fill the zone in (with `sectors_per_track` sparing,
    /// spare sectors are not counted).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub reserved_sectors: u64,
    /// Spare sectors (or tracks, with `tracks_per_zone` sparing) per sparing unit of this
    /// zone: per track, cylinder, range or zone as `sparing` says.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    #[schemars(extend("x-unit" = "sectors or tracks"))]
    pub spares: u32,
    /// Slipped defects: physical positions the mapping skips, as sector numbers counted
    /// from the zone's first sector in mapping order (track numbers with `tracks_per_zone`
    /// sparing). Increasing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slips: Vec<u64>,
    /// Remapped defects: `[defect, replacement]` positions in the same units as `slips`; the
    /// LBA of the defective position lives at the replacement, which must be a spare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remaps: Vec<(u64, u64)>,
}

impl ZoneConfig {
    /// A zone of `cylinders` cylinders of `sectors_per_track` sectors, in the traditional
    /// mapping (every other field at its default).
    pub fn new(cylinders: u32, sectors_per_track: u32) -> Self {
        ZoneConfig { cylinders, sectors_per_track, ..ZoneConfig::default() }
    }
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

fn is_zero_u32(x: &u32) -> bool {
    *x == 0
}

/// Order of the tracks of one cylinder in LBA order (DiskSim's "LBN-to-PBN mapping scheme").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TrackOrder {
    /// Surface 0, 1, …, last on every cylinder (DiskSim scheme 0).
    #[default]
    Ascending,
    /// Ascending on a zone's first cylinder, descending on the next, and so on: a cylinder
    /// switch stays on the same surface (DiskSim scheme 1).
    SerpentineZone,
    /// Ascending on even cylinders, descending on odd ones, whatever the zone (DiskSim scheme 2).
    Serpentine,
}

impl TrackOrder {
    fn is_ascending(&self) -> bool {
        *self == TrackOrder::Ascending
    }
}

/// Where spare space lies and how slips move the LBA mapping: DiskSim's `dm_layout_g1`
/// sparing schemes (number in parentheses). A slip pushes every later LBA of its sparing
/// unit one position on, into the unit's spares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SparingConfig {
    /// No spares (DiskSim scheme 0).
    #[default]
    None,
    /// `spares` whole tracks at the end of each zone; slips and remaps are track numbers (DiskSim scheme 1).
    TracksPerZone,
    /// `spares` sectors at the end of each cylinder (DiskSim scheme 2).
    SectorsPerCylinder,
    /// `spares` sectors at the end of each track (DiskSim scheme 3).
    SectorsPerTrack,
    /// Spares at the end of the disk: a slip pushes the rest of its zone on by one sector;
    /// zones have no spares of their own (DiskSim scheme 7).
    SectorsAtEnd,
    /// `spares` sectors at the end of each range of `range_cylinders` cylinders (DiskSim scheme 8).
    SectorsPerRange {
        /// Cylinders per sparing range.
        range_cylinders: u32,
    },
    /// `spares` sectors at the end of each zone, which slips use up (DiskSim scheme 9).
    SectorsPerZone,
    /// `spares` sectors at the end of each zone that slips do not use: slips push the rest
    /// of the zone on past them (DiskSim scheme 10).
    SectorsPerZoneSlipToEnd,
}

impl SparingConfig {
    fn is_none(&self) -> bool {
        *self == SparingConfig::None
    }
}

/// Seek time in ms as a function of seek distance d (cylinders); a seek of 0 cylinders
/// takes no time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SeekConfig {
    /// seek(d) = a + b·d + c·√d ms for d ≥ 1 (the thesis's form, seed 004 Table 2).
    Formula {
        /// Constant term, ms.
        a_ms: f64,
        /// Linear coefficient, ms per cylinder.
        #[schemars(extend("x-unit" = "ms/cylinder"))]
        b_ms: f64,
        /// Square-root coefficient, ms per √cylinder.
        #[schemars(extend("x-unit" = "ms/√cylinder"))]
        c_ms: f64,
    },
    /// Several formula segments; each applies to distances up to its `max_distance`.
    Piecewise {
        /// Segments in increasing `max_distance` order; the last must reach the full stroke.
        segments: Vec<SeekSegment>,
    },
    /// Measured points `[distance_cylinders, ms]`, linearly interpolated (and extrapolated
    /// from the last two points beyond the last one).
    Table {
        /// Points in strictly increasing distance order.
        points: Vec<(u32, f64)>,
    },
}

/// One segment of a piecewise seek curve: a + b·d + c·√d ms for d ≤ `max_distance`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeekSegment {
    /// Largest distance (cylinders) this segment covers.
    pub max_distance: u32,
    /// Constant term, ms.
    pub a_ms: f64,
    /// Linear coefficient, ms per cylinder.
    #[schemars(extend("x-unit" = "ms/cylinder"))]
    pub b_ms: f64,
    /// Square-root coefficient, ms per √cylinder.
    #[schemars(extend("x-unit" = "ms/√cylinder"))]
    pub c_ms: f64,
}
