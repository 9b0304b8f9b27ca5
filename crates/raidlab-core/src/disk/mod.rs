//! Drive model: geometry with zones, seek curve, rotation, transfer, overheads — and the
//! per-drive request queue with its scheduling discipline and two priority classes.
//!
//! All addresses are in 512-byte sectors (`lba`). A [`DriveModel`] is the immutable
//! description of a drive type (shared by every drive of the array through an `Arc`); a
//! [`Drive`] is one mechanism with its own arm position and random stream.

pub mod geometry;
pub mod mechanics;
pub mod presets;
pub mod scheduler;
pub mod seek;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use geometry::{Geometry, PhysicalAddress};
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
    /// Name of a built-in drive (see `docs/drives.md`): `ibm0661`, `hc550`.
    /// Exactly one of `preset` and `model` must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// A drive described parameter by parameter, instead of a preset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<DriveModelConfig>,
    /// Queue discipline within a priority class: `fcfs`, `sstf`, `clook` or `sptf`.
    #[serde(default = "default_scheduler")]
    pub scheduler: String,
    /// Override of the drive's rotational model (`exact` or `uniform`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<RotationModel>,
}

fn default_scheduler() -> String {
    "fcfs".to_string()
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig {
            preset: Some("ibm0661".into()),
            model: None,
            scheduler: default_scheduler(),
            rotation: None,
        }
    }
}

/// A drive's mechanical and geometric parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriveModelConfig {
    /// Spindle speed in revolutions per minute.
    pub rpm: f64,
    /// Recording surfaces, i.e. tracks per cylinder.
    pub surfaces: u32,
    /// Zones from the outermost cylinder inward; their cylinder counts add up to the drive's.
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
    #[serde(default)]
    pub track_skew_sectors: u32,
    /// Rotational offset of sector 0 between consecutive cylinders, in sectors.
    #[serde(default)]
    pub cylinder_skew_sectors: u32,
    /// Zero-latency access: a transfer may start at whichever wanted sector comes under the
    /// head first, so a whole-track transfer takes exactly one revolution.
    #[serde(default)]
    pub zero_latency: bool,
    /// Rotational model (`exact` or `uniform`).
    #[serde(default)]
    pub rotation: RotationModel,
}

/// A band of cylinders with the same number of sectors per track.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ZoneConfig {
    /// Cylinders in this zone.
    pub cylinders: u32,
    /// 512-byte sectors on every track of this zone.
    pub sectors_per_track: u32,
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
