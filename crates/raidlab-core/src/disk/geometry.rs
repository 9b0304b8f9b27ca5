//! Zoned geometry: the mapping from a logical sector (LBA) to cylinder, surface and sector,
//! and back.
//!
//! **Traditional mapping.** LBAs fill one track, then the next surface of the same cylinder,
//! then the next cylinder inward. Zones are bands of cylinders with the same number of
//! sectors per track, outermost first.
//!
//! ```text
//!   zone 0 (outer, most sectors/track)   zone 1              zone 2 (inner)
//!   cyl 0: surf 0 [0 .. spt0)            cyl c1: ...          ...
//!          surf 1 [spt0 .. 2·spt0)
//!          ...
//!   cyl 1: surf 0 ...
//! ```
//!
//! **DiskSim's layout** (`dm_layout_g1`, imported by `disk::diskspec`) adds, per zone:
//! cylinders between zones that hold no data, a reserved area at the zone's front, spare
//! sectors (per track, cylinder, range of cylinders or zone) or spare tracks, *slips* —
//! defective positions the mapping skips, pushing the rest of their sparing unit on by one —
//! and *remaps* — a defective position whose LBA lives in a spare instead. A zone's
//! positions are numbered in mapping order (cylinder, then track of the cylinder in LBA
//! order, then sector from the track's logical start):
//!
//! ```text
//!   LBA offset in zone ──(+ reserved)──▶ L′ ──(sparing unit, + slips before it)──▶ position
//!   position ──(remap)──▶ position′ ──(÷ sectors per cylinder, ÷ sectors per track)──▶
//!   (cylinder, track of cylinder, sector) ──(track order)──▶ (cylinder, surface, sector)
//! ```
//!
//! Within a unit, slip `i` (in increasing order, `j` slips of the unit before it, at offset
//! `o` in the unit) moves every L′ with `o − j ≤ r` (`r` = L′'s offset in the unit) one on:
//! the number of slips before an L′ is one binary search over these precomputed thresholds.
//! This is DiskSim's rule: its loops count a slip when it lies at or before the running
//! position.
//!
//! **Rotational position.** Sector `k` of a track passes under the head at slot
//! `(k + skew) mod spt`. A zone's skew starts at its first sector's offset and grows by the
//! track-switch skew at each track switch and by the cylinder-switch skew at each cylinder
//! switch (DiskSim's `dm_pbn_skew`); the drive-wide `track_skew_sectors` and
//! `cylinder_skew_sectors` are the special case that continues from cylinder 0 across zones.
//!
//! [`Geometry::locate_run`] finds the zone from a table of LBA buckets, then divides with
//! precomputed reciprocals; it allocates nothing and runs once per track a disk operation
//! touches. Zones without spares, slips, remaps or a reserved area take a path with no extra
//! work. In a zone whose LBAs pass over slips only (spares at the end of the zone or the
//! disk, as on the IBM 18ES), a table of each cylinder's first L′ value finds an LBA's
//! cylinder, and says whether it holds a slip, without the binary search over the slips
//! (which only cylinders holding one still need).

use super::{DriveModelConfig, SparingConfig, TrackOrder, ZoneConfig};
use crate::error::{Error, Result};
use crate::sim::Divisor;

/// The largest number of sectors per track accepted. Rotational arithmetic multiplies phase
/// units by sector indices in 64 bits; this bound keeps that exact (real drives have a few
/// thousand).
pub const MAX_SECTORS_PER_TRACK: u32 = 100_000;

/// The most recording surfaces accepted (real drives have at most a few dozen). With
/// [`MAX_SECTORS_PER_TRACK`] and [`MAX_CYLINDERS`] it keeps a zone's sector and track
/// counts, and the skew products, far inside 64 bits.
pub const MAX_SURFACES: u32 = 1024;

/// The most cylinders accepted, counting those between zones (the densest drives have under
/// a million). The seek curve holds one entry per cylinder, so this bound also bounds its
/// memory (40 MB).
pub const MAX_CYLINDERS: u32 = 10_000_000;

/// Physical location of one sector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicalAddress {
    /// Cylinder, 0 = outermost.
    pub cylinder: u32,
    /// Surface (head) within the cylinder.
    pub surface: u32,
    /// Sector index within the track, counted from the track's logical start (the sector the
    /// skew places; DiskSim's "0l" numbering).
    pub sector: u32,
    /// Sectors on this track (the zone's sectors per track).
    pub sectors_per_track: u32,
}

/// How a zone's L′ values (LBA offset + reserved) become positions.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ZoneMap {
    /// Position = L′.
    Direct,
    /// Sector sparing: units of `unit_sectors` positions, the first `unit_lbas` of which hold
    /// L′ values; slips push later L′ values of their unit on.
    Units {
        unit_lbas: Divisor,
        unit_sectors: u64,
        /// Per slip, (unit, threshold): the slip moves L′ values of its unit at offset ≥
        /// threshold. Sorted.
        thresholds: Vec<(u64, u64)>,
        /// Slip positions, sorted.
        positions: Vec<u64>,
        /// The whole zone is one unit (spares and slips at the end of the zone or of the
        /// disk): every L′ value and position lies in unit 0, found without a division.
        one_unit: bool,
    },
    /// Track sparing: L′ → (track, sector); slipped tracks are skipped.
    Tracks {
        /// Per slipped track `t_i` (sorted), `t_i − i`: tracks at or after it move on by one.
        thresholds: Vec<u64>,
        /// Slipped tracks, sorted.
        slipped: Vec<u64>,
    },
}

/// Which slips push a track's skew on (DiskSim counts, for sector-per-track and
/// sector-per-cylinder sparing, the zone's slips before the track's cylinder or track).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SkewSlips {
    None,
    BeforeCylinder,
    BeforeTrack,
}

/// The LBA → zone lookup of [`Geometry::zone_index_of_lba`]: a table of about
/// `ZONE_BUCKETS_PER_ZONE` buckets per zone, each the zone holding its first LBA, and the
/// shift from an LBA to its bucket.
fn zone_lookup(zones: &[Zone], capacity: u64) -> (Box<[u16]>, u32) {
    let end = zones.last().map_or(capacity, |z| z.first_lba + z.lbas).max(capacity).max(1);
    let buckets = (zones.len() as u64 * ZONE_BUCKETS_PER_ZONE).next_power_of_two();
    // Smallest shift with (end - 1) >> shift < buckets.
    let mut shift = 0;
    while (end - 1) >> shift >= buckets {
        shift += 1;
    }
    let count = ((end - 1) >> shift) + 1;
    let table = (0..count)
        .map(|b| {
            let first = b << shift;
            (zones.partition_point(|z| z.first_lba <= first).max(1) - 1) as u16
        })
        .collect();
    (table, shift)
}

/// Index of the first of the sorted `slips` at or after `position`; `None` when `position`
/// itself is slipped.
#[inline]
fn first_slip_from(slips: &[u64], position: u64) -> Option<usize> {
    let i = slips.partition_point(|&p| p < position);
    (slips.get(i) != Some(&position)).then_some(i)
}

/// One zone with its position precomputed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// First LBA of the zone.
    pub first_lba: u64,
    /// LBAs the zone maps (including any beyond the drive's exported capacity).
    pub lbas: u64,
    /// First cylinder of the zone.
    pub first_cylinder: u32,
    /// Cylinders in the zone.
    pub cylinders: u32,
    /// Sectors on every track of the zone.
    pub sectors_per_track: u32,
    /// Physical sectors in one cylinder of the zone (`surfaces × sectors_per_track`).
    pub sectors_per_cylinder: u64,
    /// `sectors_per_track` as a precomputed divisor.
    pub track_divisor: Divisor,
    /// `sectors_per_cylinder` as a precomputed divisor.
    pub cylinder_divisor: Divisor,
    reserved: u64,
    map: ZoneMap,
    /// Remapped defects `(defect, replacement)`, sorted by defect; in positions (tracks for
    /// track sparing).
    remaps: Vec<(u64, u64)>,
    /// The same pairs as `(replacement, defect)`, sorted by replacement.
    remap_targets: Vec<(u64, u64)>,
    /// Skew of the zone's first track, per cylinder and per track of a cylinder, each
    /// reduced mod `sectors_per_track`.
    skew_base: u64,
    skew_per_cylinder: u64,
    skew_per_track: u64,
    skew_slips: SkewSlips,
    /// No skew at all on any track of the zone.
    unskewed: bool,
    /// In a zone whose LBAs pass over slips only ([`Zone::slips_in_order`]) and which has
    /// slips: entry `c`, for each cylinder of the zone and one past the last, is the first L′
    /// value at or after the cylinder's first position (`c · sectors_per_cylinder` less the
    /// slips before it). Cylinder `c` holds no slip when entry `c + 1` is a cylinder's
    /// sectors more than entry `c`; its LBAs are then found without searching the slips
    /// ([`Zone::slip_free_cylinder`]). Empty in other zones.
    cylinder_first_l: Box<[u64]>,
}

impl Zone {
    /// One past the last cylinder of the zone.
    pub fn end_cylinder(&self) -> u32 {
        self.first_cylinder + self.cylinders
    }

    /// Physical sectors in the zone.
    pub fn physical_sectors(&self) -> u64 {
        self.sectors_per_cylinder * self.cylinders as u64
    }

    /// Position of the first sector of track `track` (in the zone's track order) of cylinder
    /// `cylinder_in_zone`.
    #[inline]
    fn track_first_position(&self, cylinder_in_zone: u64, track: u64) -> u64 {
        cylinder_in_zone * self.sectors_per_cylinder + track * self.sectors_per_track as u64
    }

    /// When the zone's LBAs fill its positions in order, passing over slipped ones only (no
    /// remaps, and a direct map or sector sparing in one unit, whose spares all lie after
    /// the LBAs), the slipped positions, sorted; `None` for the other maps. Within such a
    /// zone, the LBAs around one on the same track or the next are found from these alone.
    #[inline]
    fn slips_in_order(&self) -> Option<&[u64]> {
        if !self.remaps.is_empty() {
            return None;
        }
        match &self.map {
            ZoneMap::Direct => Some(&[]),
            ZoneMap::Units { positions, one_unit: true, .. } => Some(positions),
            _ => None,
        }
    }

    /// The cylinder (of the zone) holding L′ value `l`, and the cylinder's first L′ value,
    /// when the zone has a per-cylinder table (`cylinder_first_l`) and that cylinder holds no
    /// slip: `l` then lies `l − first` positions into the cylinder. `None` otherwise. One
    /// division and a load or two instead of a binary search over the zone's slips, on
    /// every access.
    #[inline]
    fn slip_free_cylinder(&self, l: u64) -> Option<(u64, u64)> {
        let table = &self.cylinder_first_l;
        if table.is_empty() {
            return None;
        }
        // An L′ value lies at or before its position (slips only push values on), so its
        // cylinder is this one or a later one; one holding slips only is passed over.
        let mut c = self.cylinder_divisor.div(l) as usize;
        while table.get(c + 1).is_some_and(|&next| next <= l) {
            c += 1;
        }
        self.is_slip_free(c as u64).then(|| (c as u64, table[c]))
    }

    /// Whether cylinder `cylinder_in_zone` is known to hold no slip (from the per-cylinder
    /// table; `false` in a zone without one).
    #[inline]
    fn is_slip_free(&self, cylinder_in_zone: u64) -> bool {
        let c = cylinder_in_zone as usize;
        match (self.cylinder_first_l.get(c), self.cylinder_first_l.get(c + 1)) {
            (Some(&first), Some(&next)) => next - first == self.sectors_per_cylinder,
            _ => false,
        }
    }

    /// Position of the zone's LBA offset `offset`, before remapping, and how many LBAs from
    /// it lie on consecutive positions (bounded by the unit, the next slip and the zone).
    #[inline]
    fn raw_position(&self, offset: u64) -> (u64, u64) {
        let l = offset + self.reserved;
        let left_in_zone = self.lbas - offset;
        match &self.map {
            ZoneMap::Direct => (l, left_in_zone),
            ZoneMap::Units { unit_lbas, unit_sectors, thresholds, positions, one_unit } => {
                let (unit, r) = if *one_unit { (0, l) } else { unit_lbas.div_rem(l) };
                let mut position = unit * unit_sectors + r;
                let mut run = (unit_lbas.get() - r).min(left_in_zone);
                if !thresholds.is_empty() {
                    let to = thresholds.partition_point(|&(u, t)| u < unit || (u == unit && t <= r));
                    // This unit's slips among the `to` are the last few of them (thresholds
                    // are sorted by unit): counted stepping back, not by a second search, as
                    // a unit rarely holds one. In a zone that is one unit, all of them are.
                    let mut in_unit = if *one_unit { to } else { 0 };
                    while in_unit < to && thresholds[to - 1 - in_unit].0 == unit {
                        in_unit += 1;
                    }
                    position += in_unit as u64;
                    // The slips at or before `position` are the `to` ones counted so far
                    // (the unit's uncounted ones have thresholds past `r`, so positions past
                    // `position`): the next is the `to`-th.
                    if let Some(&next) = positions.get(to) {
                        run = run.min(next - position);
                    }
                }
                (position, run)
            }
            ZoneMap::Tracks { thresholds, .. } => {
                let (track, sector) = self.track_divisor.div_rem(l);
                let track = track + thresholds.partition_point(|&t| t <= track) as u64;
                (track * self.sectors_per_track as u64 + sector, left_in_zone)
            }
        }
    }

    /// Position of LBA offset `offset` after remapping, and its run length.
    #[inline]
    fn position(&self, offset: u64) -> (u64, u64) {
        let (position, run) = self.raw_position(offset);
        if self.remaps.is_empty() {
            return (position, run);
        }
        if let ZoneMap::Tracks { .. } = self.map {
            let (track, sector) = self.track_divisor.div_rem(position);
            return match self.remaps.binary_search_by_key(&track, |r| r.0) {
                Ok(i) => (self.remaps[i].1 * self.sectors_per_track as u64 + sector, run),
                Err(_) => (position, run),
            };
        }
        match self.remaps.binary_search_by_key(&position, |r| r.0) {
            Ok(i) => (self.remaps[i].1, 1),
            Err(i) => match self.remaps.get(i) {
                Some(&(next, _)) => (position, run.min(next - position)),
                None => (position, run),
            },
        }
    }

    /// The L′ value held at `position` ignoring remaps, or `None` for a slipped or spare
    /// position.
    fn raw_inverse(&self, position: u64) -> Option<u64> {
        match &self.map {
            ZoneMap::Direct => Some(position),
            ZoneMap::Units { unit_lbas, unit_sectors, positions, one_unit, .. } => {
                let unit = if *one_unit { 0 } else { position / unit_sectors };
                let start = unit * unit_sectors;
                let before = positions.partition_point(|&p| p < position);
                if positions.get(before) == Some(&position) {
                    return None;
                }
                let in_unit_before = before - positions.partition_point(|&p| p < start);
                let r = position - start - in_unit_before as u64;
                (r < unit_lbas.get()).then(|| unit * unit_lbas.get() + r)
            }
            ZoneMap::Tracks { slipped, .. } => {
                let (track, sector) = self.track_divisor.div_rem(position);
                let before = slipped.partition_point(|&t| t < track);
                if slipped.get(before) == Some(&track) {
                    return None;
                }
                Some((track - before as u64) * self.sectors_per_track as u64 + sector)
            }
        }
    }

    /// The zone's LBA offset at `position` (after remaps), if any.
    fn inverse(&self, position: u64) -> Option<u64> {
        let position = if self.remaps.is_empty() {
            position
        } else {
            let tracks = matches!(self.map, ZoneMap::Tracks { .. });
            let spt = self.sectors_per_track as u64;
            let (unit, within) = if tracks { (position / spt, position % spt) } else { (position, 0) };
            let unit = match self.remap_targets.binary_search_by_key(&unit, |r| r.0) {
                Ok(i) => self.remap_targets[i].1,
                Err(_) if self.remaps.binary_search_by_key(&unit, |r| r.0).is_ok() => return None,
                Err(_) => unit,
            };
            if tracks {
                unit * spt + within
            } else {
                unit
            }
        };
        let l = self.raw_inverse(position)?;
        let offset = l.checked_sub(self.reserved)?;
        (offset < self.lbas).then_some(offset)
    }

    /// Slot of logical sector 0 on the track (`cylinder_in_zone`, `track` of the cylinder in
    /// LBA order, on `surface`).
    #[inline]
    fn skew(&self, cylinder_in_zone: u64, track: u64, surface: u32, surfaces: u32) -> u32 {
        if self.unskewed {
            return 0;
        }
        let mut x = self.skew_base + cylinder_in_zone * self.skew_per_cylinder + track * self.skew_per_track;
        if self.skew_slips != SkewSlips::None {
            if let ZoneMap::Units { positions, .. } = &self.map {
                let mut tracks = cylinder_in_zone * surfaces as u64;
                if self.skew_slips == SkewSlips::BeforeTrack {
                    tracks += surface as u64;
                }
                let cutoff = tracks * self.sectors_per_track as u64;
                x += positions.partition_point(|&p| p < cutoff) as u64;
            }
        }
        self.track_divisor.rem(x) as u32
    }
}

/// Where an LBA lies and how many LBAs from it follow on consecutive sectors of its track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Index of the LBA's zone (32 bits, like every other field: a run copied with wide moves
    /// is then read back field by field from stores that hold each field whole).
    pub zone_index: u32,
    /// The LBA's physical address.
    pub address: PhysicalAddress,
    /// LBAs from this one on consecutive sectors of the same track (at least 1, at most to
    /// the end of the track, of the zone and of the drive).
    pub sectors: u32,
    /// Slot at which the track's logical sector 0 passes under the head.
    pub skew: u32,
}

/// Zoned drive geometry: the LBA ↔ physical mapping of one drive type.
#[derive(Debug, Clone)]
pub struct Geometry {
    surfaces: u32,
    cylinders: u32,
    capacity: u64,
    track_order: TrackOrder,
    zones: Vec<Zone>,
    /// Zone lookup by LBA: entry `i` is the zone holding LBA `i << lba_shift`, so the zone
    /// of any LBA is that entry or a few after it. Drives have tens of zones and the search
    /// runs on every access.
    zone_of_bucket: Box<[u16]>,
    lba_shift: u32,
    /// Entry `i`: the first LBA of zone `i + 1` (`u64::MAX` for the last zone).
    next_zone_lba: Box<[u64]>,
}

/// Most zones a drive may have (zone indices are held in 16 bits).
pub const MAX_ZONES: usize = u16::MAX as usize;

/// Buckets of the LBA → zone lookup per zone (a power of two is taken at or above).
const ZONE_BUCKETS_PER_ZONE: u64 = 4;

fn check_sorted_unique(values: &[u64], key: &str) -> Result<()> {
    for (i, pair) in values.windows(2).enumerate() {
        if pair[1] <= pair[0] {
            return Err(Error::config(
                format!("{key}[{}]", i + 1),
                format!("{} must be greater than the previous entry {}; list them in increasing order", pair[1], pair[0]),
            ));
        }
    }
    Ok(())
}

impl Geometry {
    /// Build from a drive's parameters. `key` names the config key for errors (`drive.model`).
    pub fn new(cfg: &DriveModelConfig, key: &str) -> Result<Self> {
        let surfaces = cfg.surfaces;
        if surfaces == 0 {
            return Err(Error::config(format!("{key}.surfaces"), "must be at least 1"));
        }
        if surfaces > MAX_SURFACES {
            return Err(Error::config(
                format!("{key}.surfaces"),
                format!("{surfaces} exceeds the supported maximum {MAX_SURFACES}"),
            ));
        }
        if cfg.zones.is_empty() {
            return Err(Error::config(format!("{key}.zones"), "at least one zone is required"));
        }
        if cfg.zones.len() > MAX_ZONES {
            return Err(Error::config(
                format!("{key}.zones"),
                format!("{} zones; at most {MAX_ZONES} are supported", cfg.zones.len()),
            ));
        }
        if let SparingConfig::SectorsPerRange { range_cylinders: 0 } = cfg.sparing {
            return Err(Error::config(format!("{key}.sparing.range_cylinders"), "must be at least 1"));
        }
        let mut built = Vec::with_capacity(cfg.zones.len());
        let mut first_lba = 0u64;
        let mut next_cylinder = 0u32;
        for (i, zone) in cfg.zones.iter().enumerate() {
            let zkey = format!("{key}.zones[{i}]");
            let first_cylinder = zone.first_cylinder.unwrap_or(next_cylinder);
            if first_cylinder < next_cylinder {
                return Err(Error::config(
                    format!("{zkey}.first_cylinder"),
                    format!("{first_cylinder} overlaps the previous zone, which ends before cylinder {next_cylinder}; zones go outermost first"),
                ));
            }
            next_cylinder = first_cylinder
                .checked_add(zone.cylinders)
                .filter(|&end| end <= MAX_CYLINDERS)
                .ok_or_else(|| {
                    Error::config(
                        format!("{zkey}.cylinders"),
                        format!(
                            "the zone ends beyond cylinder {MAX_CYLINDERS}, the most supported (it starts at {first_cylinder} and has {} cylinders)",
                            zone.cylinders
                        ),
                    )
                })?;
            let z = Self::zone(cfg, zone, first_cylinder, first_lba, &zkey)?;
            first_lba = first_lba
                .checked_add(z.lbas)
                .ok_or_else(|| Error::config(zkey.clone(), "capacity overflows"))?;
            built.push(z);
        }
        let capacity = match cfg.capacity_sectors {
            None => first_lba,
            Some(0) => return Err(Error::config(format!("{key}.capacity_sectors"), "must be at least 1")),
            Some(c) if c > first_lba => {
                return Err(Error::config(
                    format!("{key}.capacity_sectors"),
                    format!("{c} is more than the {first_lba} sectors the zones map"),
                ))
            }
            Some(c) => c,
        };
        let (zone_of_bucket, lba_shift) = zone_lookup(&built, capacity);
        let next_zone_lba = built.iter().skip(1).map(|z| z.first_lba).chain([u64::MAX]).collect();
        Ok(Geometry {
            next_zone_lba,
            surfaces,
            cylinders: next_cylinder,
            capacity,
            track_order: cfg.track_order,
            zones: built,
            zone_of_bucket,
            lba_shift,
        })
    }

    /// One zone, validated and precomputed.
    fn zone(cfg: &DriveModelConfig, zone: &ZoneConfig, first_cylinder: u32, first_lba: u64, zkey: &str) -> Result<Zone> {
        let surfaces = cfg.surfaces as u64;
        if zone.cylinders == 0 {
            return Err(Error::config(format!("{zkey}.cylinders"), "must be at least 1"));
        }
        let spt = zone.sectors_per_track;
        if spt == 0 {
            return Err(Error::config(format!("{zkey}.sectors_per_track"), "must be at least 1"));
        }
        if spt > MAX_SECTORS_PER_TRACK {
            return Err(Error::config(
                format!("{zkey}.sectors_per_track"),
                format!("{spt} exceeds the supported maximum {MAX_SECTORS_PER_TRACK}"),
            ));
        }
        let spt64 = spt as u64;
        let cylinders = zone.cylinders as u64;
        let sectors_per_cylinder = surfaces * spt64;
        let physical = sectors_per_cylinder * cylinders;
        let tracks = surfaces * cylinders;
        let spares = zone.spares as u64;
        let slips = zone.slips.len() as u64;
        check_sorted_unique(&zone.slips, &format!("{zkey}.slips"))?;
        let units_bound = if cfg.sparing == SparingConfig::TracksPerZone { tracks } else { physical };
        if let Some(&last) = zone.slips.last() {
            if last >= units_bound {
                return Err(Error::config(
                    format!("{zkey}.slips[{}]", zone.slips.len() - 1),
                    format!("{last} lies beyond the zone's {units_bound} {}", if units_bound == tracks { "tracks" } else { "sectors" }),
                ));
            }
        }
        // LBAs in the zone: DiskSim's `blksinband` for each scheme.
        let removed = match cfg.sparing {
            SparingConfig::None => {
                if !zone.slips.is_empty() {
                    return Err(Error::config(format!("{zkey}.slips"), "slips need a sparing scheme to move into (`sparing`)"));
                }
                0
            }
            // Saturating: any count at or above the zone's sectors is rejected just below.
            SparingConfig::TracksPerZone => spares * spt64,
            SparingConfig::SectorsPerCylinder => spares * cylinders,
            SparingConfig::SectorsPerTrack => spares.saturating_mul(tracks),
            SparingConfig::SectorsAtEnd => {
                if spares != 0 {
                    return Err(Error::config(
                        format!("{zkey}.spares"),
                        "`sectors_at_end` sparing keeps its spares at the end of the disk: zones have none",
                    ));
                }
                slips
            }
            SparingConfig::SectorsPerRange { range_cylinders } => spares.saturating_mul(cylinders / range_cylinders as u64),
            SparingConfig::SectorsPerZone => spares,
            SparingConfig::SectorsPerZoneSlipToEnd => spares + slips,
        };
        let lbas = physical
            .checked_sub(zone.reserved_sectors)
            .and_then(|x| x.checked_sub(removed))
            .filter(|&x| x > 0)
            .ok_or_else(|| {
                Error::config(
                    zkey.to_string(),
                    format!("its reserved sectors ({}) and spares leave no sectors for data out of {physical}", zone.reserved_sectors),
                )
            })?;
        let (unit_sectors, unit_lbas) = match cfg.sparing {
            SparingConfig::None | SparingConfig::TracksPerZone => (0, 0),
            SparingConfig::SectorsPerTrack => (spt64, spt64.saturating_sub(spares)),
            SparingConfig::SectorsPerCylinder => {
                (sectors_per_cylinder, sectors_per_cylinder.saturating_sub(spares))
            }
            SparingConfig::SectorsPerRange { range_cylinders } => {
                let range = sectors_per_cylinder * range_cylinders as u64;
                (range, range.saturating_sub(spares))
            }
            SparingConfig::SectorsAtEnd | SparingConfig::SectorsPerZone | SparingConfig::SectorsPerZoneSlipToEnd => {
                (physical, physical)
            }
        };
        let map = match cfg.sparing {
            SparingConfig::None => ZoneMap::Direct,
            SparingConfig::TracksPerZone => {
                let thresholds = zone.slips.iter().enumerate().map(|(i, &t)| t - i as u64).collect();
                ZoneMap::Tracks { thresholds, slipped: zone.slips.clone() }
            }
            _ => {
                if unit_lbas == 0 {
                    return Err(Error::config(format!("{zkey}.spares"), "spares fill the whole sparing unit"));
                }
                let mut thresholds = Vec::with_capacity(zone.slips.len());
                let mut previous_unit = u64::MAX;
                let mut in_unit = 0;
                for &p in &zone.slips {
                    let unit = p / unit_sectors;
                    if unit != previous_unit {
                        previous_unit = unit;
                        in_unit = 0;
                    }
                    thresholds.push((unit, p - unit * unit_sectors - in_unit));
                    in_unit += 1;
                }
                ZoneMap::Units {
                    unit_lbas: Divisor::new(unit_lbas),
                    unit_sectors,
                    thresholds,
                    positions: zone.slips.clone(),
                    // L′ values run below reserved + LBAs, positions below the zone's sectors.
                    one_unit: unit_lbas >= zone.reserved_sectors + lbas && unit_sectors >= physical,
                }
            }
        };
        let reserved = zone.reserved_sectors;
        // Skews (see the module docs), reduced mod sectors per track.
        let track_skew = zone.track_switch_skew_sectors.map_or(cfg.track_skew_sectors as u64, u64::from);
        let cylinder_switch = zone
            .cylinder_switch_skew_sectors
            .map_or(cfg.track_skew_sectors as u64 + cfg.cylinder_skew_sectors as u64, u64::from);
        let skew_base = match zone.first_sector_offset {
            Some(offset) => offset as u64 % spt64,
            None => {
                let per_cylinder = (surfaces * cfg.track_skew_sectors as u64 + cfg.cylinder_skew_sectors as u64) % spt64;
                (first_cylinder as u64 % spt64) * per_cylinder % spt64
            }
        };
        let skew_per_cylinder = ((surfaces - 1) * (track_skew % spt64) + cylinder_switch) % spt64;
        let skew_per_track = track_skew % spt64;
        let skew_slips = match cfg.sparing {
            _ if zone.slips.is_empty() => SkewSlips::None,
            SparingConfig::SectorsPerCylinder => SkewSlips::BeforeCylinder,
            SparingConfig::SectorsPerTrack => SkewSlips::BeforeTrack,
            _ => SkewSlips::None,
        };
        let unskewed = skew_base == 0 && skew_per_cylinder == 0 && skew_per_track == 0 && skew_slips == SkewSlips::None;
        let mut z = Zone {
            first_lba,
            lbas,
            first_cylinder,
            cylinders: zone.cylinders,
            sectors_per_track: spt,
            sectors_per_cylinder,
            track_divisor: Divisor::new(spt64),
            cylinder_divisor: Divisor::new(sectors_per_cylinder),
            reserved,
            map,
            remaps: Vec::new(),
            remap_targets: Vec::new(),
            skew_base,
            skew_per_cylinder,
            skew_per_track,
            skew_slips,
            unskewed,
            cylinder_first_l: Box::default(),
        };
        // Every L′ value must land inside its unit (slips may only use the unit's room).
        let last_l = reserved + lbas - 1;
        match &z.map {
            ZoneMap::Direct => {}
            ZoneMap::Tracks { thresholds, .. } => {
                let last_track = last_l / spt64;
                let moved = last_track + thresholds.partition_point(|&t| t <= last_track) as u64;
                if moved >= tracks {
                    return Err(Error::config(
                        format!("{zkey}.slips"),
                        format!("{slips} slipped tracks do not fit in the zone's {} spare tracks", zone.spares),
                    ));
                }
            }
            ZoneMap::Units { unit_lbas, unit_sectors, thresholds, .. } => {
                let units = last_l / unit_lbas.get() + 1;
                let check = |unit: u64| -> Result<()> {
                    let last_r = if unit + 1 == units { last_l % unit_lbas.get() } else { unit_lbas.get() - 1 };
                    let from = thresholds.partition_point(|&(u, _)| u < unit);
                    let to = thresholds.partition_point(|&(u, t)| u < unit || (u == unit && t <= last_r));
                    let end = unit * unit_sectors + last_r + (to - from) as u64;
                    if end >= ((unit + 1) * unit_sectors).min(physical) {
                        return Err(Error::config(
                            format!("{zkey}.slips"),
                            format!("the slips of sparing unit {unit} push its LBAs past the unit's spares"),
                        ));
                    }
                    Ok(())
                };
                // Only the last unit (which may be partial) and units holding slips can overflow.
                check(units - 1)?;
                let mut previous = u64::MAX;
                for &(unit, _) in thresholds {
                    if unit != previous && unit < units {
                        check(unit)?;
                    }
                    previous = unit;
                }
            }
        }
        // Remaps: from a position holding an LBA to one holding none.
        let mut remaps: Vec<(u64, u64)> = zone.remaps.iter().copied().filter(|(d, r)| d != r).collect();
        remaps.sort_unstable();
        let tracks_map = matches!(z.map, ZoneMap::Tracks { .. });
        for (j, &(defect, target)) in remaps.iter().enumerate() {
            let rkey = format!("{zkey}.remaps");
            if defect >= units_bound || target >= units_bound {
                return Err(Error::config(rkey, format!("[{defect}, {target}] lies beyond the zone")));
            }
            if j > 0 && remaps[j - 1].0 == defect {
                return Err(Error::config(rkey, format!("position {defect} is remapped twice")));
            }
            let holds = |position: u64| {
                let p = if tracks_map { position * spt64 } else { position };
                z.raw_inverse(p).and_then(|l| l.checked_sub(reserved)).is_some_and(|o| o < lbas)
            };
            if !holds(defect) {
                return Err(Error::config(rkey, format!("defect {defect} holds no LBA, so there is nothing to remap")));
            }
            if holds(target) {
                return Err(Error::config(rkey, format!("replacement {target} already holds an LBA; it must be a spare")));
            }
        }
        let mut targets: Vec<(u64, u64)> = remaps.iter().map(|&(d, r)| (r, d)).collect();
        targets.sort_unstable();
        if let Some(pair) = targets.windows(2).find(|p| p[0].0 == p[1].0) {
            return Err(Error::config(format!("{zkey}.remaps"), format!("two defects are remapped to {}", pair[0].0)));
        }
        z.remaps = remaps;
        z.remap_targets = targets;
        if let Some(slips) = z.slips_in_order().filter(|slips| !slips.is_empty()) {
            let table = (0..=z.cylinders as u64)
                .map(|c| {
                    let start = c * z.sectors_per_cylinder;
                    start - slips.partition_point(|&p| p < start) as u64
                })
                .collect();
            z.cylinder_first_l = table;
        }
        Ok(z)
    }

    /// Total addressable sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.capacity
    }

    /// Number of cylinders, counting those between zones (one past the last zone's last).
    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }

    /// Recording surfaces (tracks per cylinder).
    pub fn surfaces(&self) -> u32 {
        self.surfaces
    }

    /// The zones, outermost first.
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    /// Index of the zone holding sector `lba` (`lba` below the capacity).
    #[inline]
    pub fn zone_index_of_lba(&self, lba: u64) -> usize {
        // The bucket's first LBA lies in zone `i`; zones are sorted by first LBA, so the
        // LBA's zone is `i` or one of the next few.
        let mut i = self.zone_of_bucket[(lba >> self.lba_shift) as usize] as usize;
        // A bucket rarely holds more than one zone's start: one step taken by adding 0 or
        // 1 (whether this LBA lies past it is a coin toss), then a loop that almost never
        // runs.
        i += (self.next_zone_lba[i] <= lba) as usize;
        while self.next_zone_lba[i] <= lba {
            i += 1;
        }
        i
    }

    /// Index of the zone holding `cylinder`, or of the zone before it when `cylinder` lies
    /// between zones (`cylinder` below the cylinder count).
    #[inline]
    pub fn zone_index_of_cylinder(&self, cylinder: u32) -> usize {
        self.zones.partition_point(|z| z.first_cylinder <= cylinder).max(1) - 1
    }

    /// Sectors per track on `cylinder` (for a cylinder between zones, the zone before's).
    #[inline]
    pub fn sectors_per_track(&self, cylinder: u32) -> u32 {
        self.zones[self.zone_index_of_cylinder(cylinder)].sectors_per_track
    }

    /// Surface of the `track`-th track of a cylinder in LBA order (and, the order being an
    /// involution, the inverse).
    #[inline]
    fn surface_of(&self, zone: &Zone, cylinder_in_zone: u64, track: u64) -> u64 {
        let odd = match self.track_order {
            TrackOrder::Ascending => return track,
            TrackOrder::SerpentineZone => cylinder_in_zone & 1 == 1,
            TrackOrder::Serpentine => (zone.first_cylinder as u64 + cylinder_in_zone) & 1 == 1,
        };
        if odd {
            self.surfaces as u64 - 1 - track
        } else {
            track
        }
    }

    /// Where sector `lba` lies. `lba` must be below the capacity.
    #[inline]
    pub fn locate(&self, lba: u64) -> PhysicalAddress {
        self.locate_run(lba).address
    }

    /// Where sector `lba` lies, with the index of its zone. `lba` must be below the capacity.
    #[inline]
    pub fn locate_in_zone(&self, lba: u64) -> (usize, PhysicalAddress) {
        let run = self.locate_run(lba);
        (run.zone_index as usize, run.address)
    }

    /// Where sector `lba` lies, how many LBAs from it follow on consecutive sectors of the
    /// same track, and the track's skew. `lba` must be below the capacity.
    #[inline]
    pub fn locate_run(&self, lba: u64) -> Run {
        debug_assert!(lba < self.capacity, "lba {lba} beyond capacity {}", self.capacity);
        let zone_index = self.zone_index_of_lba(lba);
        let zone = &self.zones[zone_index];
        let offset = lba - zone.first_lba;
        let l = offset + zone.reserved;
        let (cylinder_in_zone, in_cylinder, run) = match zone.slip_free_cylinder(l) {
            // No slip in the cylinder: the LBAs run on to the track's end (the next slip lies
            // beyond the cylinder), within the zone.
            Some((cylinder_in_zone, first)) => (cylinder_in_zone, l - first, zone.lbas - offset),
            None => {
                let (position, run) = zone.position(offset);
                let (cylinder_in_zone, in_cylinder) = zone.cylinder_divisor.div_rem(position);
                (cylinder_in_zone, in_cylinder, run)
            }
        };
        let (track, sector) = zone.track_divisor.div_rem(in_cylinder);
        let surface = self.surface_of(zone, cylinder_in_zone, track) as u32;
        let spt = zone.sectors_per_track;
        let run = run.min((spt as u64) - sector).min(self.capacity - lba) as u32;
        Run {
            zone_index: zone_index as u32,
            address: PhysicalAddress {
                cylinder: zone.first_cylinder + cylinder_in_zone as u32,
                surface,
                sector: sector as u32,
                sectors_per_track: spt,
            },
            sectors: run,
            skew: zone.skew(cylinder_in_zone, track, surface, self.surfaces),
        }
    }

    /// The run at `lba` when `lba` lies inside `known`, the run [`Geometry::locate_run`]
    /// returned for `known_lba`: the same track, `lba − known_lba` sectors further on.
    /// Equal to `locate_run(lba)`, because everything that ends a run (the track's end, a
    /// slipped or spare sector, a remapped LBA, the zone's or the drive's end) is a fixed
    /// place that both runs end at. `None` when `lba` is outside `known`.
    #[inline]
    pub fn run_within(known_lba: u64, known: &Run, lba: u64) -> Option<Run> {
        let offset = lba.checked_sub(known_lba)?;
        if offset >= known.sectors as u64 {
            return None;
        }
        let mut run = *known;
        run.address.sector += offset as u32;
        run.sectors -= offset as u32;
        Some(run)
    }

    /// The run that starts at `lba`, the LBA right after run `previous` (a transfer going on
    /// to the next track). Equal to `locate_run(lba)`. When `previous` ended at its track's
    /// end in a zone whose LBAs pass over slips only (`Zone::slips_in_order`: a direct map,
    /// or spares at the end of the zone or the disk, as on the IBM 18ES), `lba` is on the
    /// next track in LBA order, from its first sector unless that one is slipped: the run is
    /// found without a search for the zone or a division, which matters for drives with
    /// short tracks where transfers and read-aheads cross many.
    #[inline(always)]
    pub fn next_run(&self, previous: &Run, lba: u64) -> Run {
        let zone = &self.zones[previous.zone_index as usize];
        let at_track_end = previous.address.sector + previous.sectors == zone.sectors_per_track;
        let Some(slips) =
            zone.slips_in_order().filter(|_| at_track_end && lba < zone.first_lba + zone.lbas && lba < self.capacity)
        else {
            return self.locate_run(lba);
        };
        let mut cylinder_in_zone = (previous.address.cylinder - zone.first_cylinder) as u64;
        let mut track = self.surface_of(zone, cylinder_in_zone, previous.address.surface as u64) + 1;
        if track == self.surfaces as u64 {
            track = 0;
            cylinder_in_zone += 1;
        }
        let spt = zone.sectors_per_track;
        let mut sectors = (spt as u64).min(self.capacity - lba).min(zone.first_lba + zone.lbas - lba);
        if !slips.is_empty() && !zone.is_slip_free(cylinder_in_zone) {
            // The LBAs after the previous track's last one fill the positions that follow,
            // passing over slips: only a slip ends the run before the track or the zone does.
            let first = zone.track_first_position(cylinder_in_zone, track);
            let Some(next_slip) = first_slip_from(slips, first) else { return self.locate_run(lba) };
            if let Some(&slip) = slips.get(next_slip) {
                sectors = sectors.min(slip - first);
            }
        }
        let surface = self.surface_of(zone, cylinder_in_zone, track) as u32;
        let run = Run {
            zone_index: previous.zone_index,
            address: PhysicalAddress {
                cylinder: zone.first_cylinder + cylinder_in_zone as u32,
                surface,
                sector: 0,
                sectors_per_track: spt,
            },
            sectors: sectors as u32,
            skew: zone.skew(cylinder_in_zone, track, surface, self.surfaces),
        };
        debug_assert_eq!(run, self.locate_run(lba), "next run after {previous:?} at LBA {lba}");
        run
    }

    /// The first LBA of the track holding `lba` (whose run is `run`), if the track's first
    /// sector holds one: the LBAs from it to `lba` are the track's sectors before `lba`.
    pub fn track_first_lba(&self, lba: u64, run: &Run) -> Option<u64> {
        let zone = &self.zones[run.zone_index as usize];
        let before = run.address.sector as u64;
        if let Some(slips) = zone.slips_in_order() {
            // The track's sectors before `lba` hold consecutive LBAs but for the slipped
            // ones, unless its first sector is slipped, or holds a reserved L′ value (the
            // LBA worked out then lies before the zone's first): no search by cylinder.
            let mut slipped = 0;
            let cylinder_in_zone = (run.address.cylinder - zone.first_cylinder) as u64;
            if !slips.is_empty() && !zone.is_slip_free(cylinder_in_zone) {
                let track = self.surface_of(zone, cylinder_in_zone, run.address.surface as u64);
                let first_position = zone.track_first_position(cylinder_in_zone, track);
                let from = first_slip_from(slips, first_position)?;
                slipped = slips[from..].partition_point(|&p| p < first_position + before) as u64;
            }
            return lba.checked_sub(before - slipped).filter(|&first| first >= zone.first_lba);
        }
        self.lba_of(PhysicalAddress { sector: 0, ..run.address }).filter(|&first| first <= lba)
    }

    /// Slot at which logical sector 0 of the track (`cylinder`, `surface`) passes under the
    /// head (for a cylinder between zones, 0).
    pub fn skew(&self, cylinder: u32, surface: u32) -> u32 {
        let zone = &self.zones[self.zone_index_of_cylinder(cylinder)];
        if cylinder < zone.first_cylinder || cylinder >= zone.end_cylinder() || surface >= self.surfaces {
            return 0;
        }
        let cylinder_in_zone = (cylinder - zone.first_cylinder) as u64;
        let track = self.surface_of(zone, cylinder_in_zone, surface as u64);
        zone.skew(cylinder_in_zone, track, surface, self.surfaces)
    }

    /// The LBA at a physical address (inverse of [`Geometry::locate`]), or `None` if the
    /// sector holds none: between zones, reserved, spare, slipped, remapped away, or beyond
    /// the exported capacity.
    pub fn lba_of(&self, address: PhysicalAddress) -> Option<u64> {
        if address.cylinder >= self.cylinders || address.surface >= self.surfaces {
            return None;
        }
        let zone = &self.zones[self.zone_index_of_cylinder(address.cylinder)];
        if address.cylinder < zone.first_cylinder
            || address.cylinder >= zone.end_cylinder()
            || address.sector >= zone.sectors_per_track
        {
            return None;
        }
        let cylinder_in_zone = (address.cylinder - zone.first_cylinder) as u64;
        let track = self.surface_of(zone, cylinder_in_zone, address.surface as u64);
        let position = zone.track_first_position(cylinder_in_zone, track) + address.sector as u64;
        let lba = zone.first_lba + zone.inverse(position)?;
        (lba < self.capacity).then_some(lba)
    }

    /// Lowest LBA on the track at (`cylinder`, `surface`), if it holds any.
    pub fn first_lba_of_track(&self, cylinder: u32, surface: u32) -> Option<u64> {
        let spt = self.sectors_per_track(cylinder.min(self.cylinders.saturating_sub(1)));
        (0..spt)
            .filter_map(|sector| {
                self.lba_of(PhysicalAddress { cylinder, surface, sector, sectors_per_track: spt })
            })
            .min()
    }

    /// Lowest LBA on `cylinder`, if it holds any.
    pub fn first_lba_of_cylinder(&self, cylinder: u32) -> Option<u64> {
        (0..self.surfaces).filter_map(|surface| self.first_lba_of_track(cylinder, surface)).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::SeekConfig;

    fn model(surfaces: u32, zones: Vec<ZoneConfig>) -> DriveModelConfig {
        DriveModelConfig::basic(6000.0, surfaces, zones, SeekConfig::Formula { a_ms: 1.0, b_ms: 0.0, c_ms: 0.0 })
    }

    fn zoned() -> Geometry {
        let zones = vec![ZoneConfig::new(5, 13), ZoneConfig::new(3, 9), ZoneConfig::new(4, 7)];
        Geometry::new(&model(3, zones), "drive.model").unwrap()
    }

    /// Every LBA maps to a distinct sector that maps back to it, runs agree with the next
    /// LBA's address (also as [`Geometry::next_run`] steps to it), and every sector not
    /// holding an LBA says so.
    fn check_bijection(g: &Geometry) {
        let mut seen = std::collections::HashSet::new();
        for lba in 0..g.capacity_sectors() {
            let run = g.locate_run(lba);
            let a = run.address;
            assert!(a.cylinder < g.cylinders() && a.surface < g.surfaces() && a.sector < a.sectors_per_track);
            assert_eq!(a.sectors_per_track, g.sectors_per_track(a.cylinder));
            assert_eq!(g.lba_of(a), Some(lba), "{a:?}");
            let first = g.lba_of(PhysicalAddress { sector: 0, ..a }).filter(|&f| f <= lba);
            assert_eq!(g.track_first_lba(lba, &run), first, "first LBA of the track of {lba}");
            assert!(seen.insert((a.cylinder, a.surface, a.sector)), "{lba} lands on a used sector {a:?}");
            assert!(run.sectors >= 1);
            assert_eq!(run.skew, g.skew(a.cylinder, a.surface));
            for k in 1..run.sectors as u64 {
                let b = g.locate(lba + k);
                assert_eq!((b.cylinder, b.surface, b.sector), (a.cylinder, a.surface, a.sector + k as u32), "run of {lba}");
            }
            if lba + (run.sectors as u64) < g.capacity_sectors() {
                let b = g.locate(lba + run.sectors as u64);
                let contiguous = (b.cylinder, b.surface, b.sector) == (a.cylinder, a.surface, a.sector + run.sectors);
                assert!(!contiguous, "run of {lba} stops early at {}", run.sectors);
                // A transfer going on past the run finds the same run as a search.
                let next = lba + run.sectors as u64;
                assert_eq!(g.next_run(&run, next), g.locate_run(next), "run after the one of {lba}");
            }
        }
        let mut unmapped = 0;
        for cylinder in 0..g.cylinders() {
            let spt = g.sectors_per_track(cylinder);
            for surface in 0..g.surfaces() {
                for sector in 0..spt {
                    if g.lba_of(PhysicalAddress { cylinder, surface, sector, sectors_per_track: spt }).is_none() {
                        unmapped += 1;
                    }
                }
            }
        }
        let physical: u64 = (0..g.cylinders()).map(|c| g.sectors_per_track(c) as u64 * g.surfaces() as u64).sum();
        assert_eq!(unmapped + g.capacity_sectors(), physical);
    }

    #[test]
    fn every_lba_round_trips_through_its_physical_address() {
        let g = zoned();
        check_bijection(&g);
        let mut previous: Option<PhysicalAddress> = None;
        for lba in 0..g.capacity_sectors() {
            let a = g.locate(lba);
            // Traditional order: next sector, else next surface, else next cylinder.
            if let Some(p) = previous {
                let expected = if p.sector + 1 < p.sectors_per_track {
                    (p.cylinder, p.surface, p.sector + 1)
                } else if p.surface + 1 < g.surfaces() {
                    (p.cylinder, p.surface + 1, 0)
                } else {
                    (p.cylinder + 1, 0, 0)
                };
                assert_eq!((a.cylinder, a.surface, a.sector), expected);
            }
            previous = Some(a);
        }
        let last = previous.unwrap();
        assert_eq!((last.cylinder, last.surface, last.sector), (11, 2, 6));
    }

    #[test]
    fn capacity_is_the_sum_over_zones_of_tracks_times_sectors_per_track() {
        let g = zoned();
        assert_eq!(g.cylinders(), 12);
        assert_eq!(g.capacity_sectors(), 3 * (5 * 13 + 3 * 9 + 4 * 7));
        let by_zone: u64 = g.zones().iter().map(|z| z.lbas).sum();
        assert_eq!(by_zone, g.capacity_sectors());
        assert_eq!(g.zones()[1].first_lba, 3 * 5 * 13);
        assert_eq!(g.zones()[2].first_cylinder, 8);
    }

    #[test]
    fn zone_boundaries_are_found_exactly() {
        let g = zoned();
        let z1 = g.zones()[1].first_lba;
        assert_eq!(g.zone_index_of_lba(z1 - 1), 0);
        assert_eq!(g.zone_index_of_lba(z1), 1);
        assert_eq!(g.locate(z1), PhysicalAddress { cylinder: 5, surface: 0, sector: 0, sectors_per_track: 9 });
        assert_eq!(g.locate(z1 - 1), PhysicalAddress { cylinder: 4, surface: 2, sector: 12, sectors_per_track: 13 });
        assert_eq!(g.zone_index_of_cylinder(7), 1);
        assert_eq!(g.zone_index_of_cylinder(8), 2);
        assert_eq!(g.first_lba_of_cylinder(8), Some(g.zones()[2].first_lba));
        assert_eq!(g.locate_run(z1 - 2).sectors, 2);
    }

    #[test]
    fn a_run_found_inside_a_known_run_is_the_run_located_afresh() {
        // Slips, spares, a remapped LBA and a remapped track end runs inside tracks.
        let mut slipped = disksim_like(SparingConfig::SectorsPerCylinder, TrackOrder::Serpentine, [&[2, 50, 51, 52], &[0], &[100]]);
        slipped.zones[2].remaps = vec![(30, 30)];
        let mut remapped = disksim_like(SparingConfig::SectorsPerZone, TrackOrder::Ascending, [&[], &[], &[]]);
        remapped.zones[0].remaps = vec![(50, 304), (60, 60)];
        let mut tracks = disksim_like(SparingConfig::TracksPerZone, TrackOrder::Ascending, [&[1, 2], &[11], &[]]);
        tracks.zones[1].remaps = vec![(1, 10)];
        let mut geometries = vec![zoned(), Geometry::new(&crate::disk::presets::preset("ibm18es").unwrap(), "m").unwrap()];
        for cfg in [slipped, remapped, tracks] {
            geometries.push(Geometry::new(&cfg, "m").unwrap());
        }
        for g in &geometries {
            let capacity = g.capacity_sectors();
            let step = (capacity / 5000).max(1);
            for known_lba in (0..capacity).step_by(step as usize) {
                let known = g.locate_run(known_lba);
                for lba in known_lba..known_lba + known.sectors as u64 {
                    assert_eq!(Geometry::run_within(known_lba, &known, lba), Some(g.locate_run(lba)), "lba {lba}");
                }
                let past = known_lba + known.sectors as u64;
                assert_eq!(Geometry::run_within(known_lba, &known, past), None);
                if known_lba > 0 {
                    assert_eq!(Geometry::run_within(known_lba, &known, known_lba - 1), None);
                }
            }
        }
    }

    /// The per-cylinder table of a zone whose LBAs pass over slips finds, for every L′ value
    /// in a cylinder without slips, the position the search over the slips finds, and
    /// declines exactly the cylinders that hold a slip: on a small drive for every L′ value,
    /// and on the IBM 18ES (122 slips in 31 of its 55 zones) around every slip and at a stride elsewhere.
    #[test]
    fn the_per_cylinder_table_agrees_with_the_slip_search() {
        fn check(zone: &Zone, l: u64) -> bool {
            let (position, _) = zone.raw_position(l - zone.reserved);
            let (cylinder, _) = zone.cylinder_divisor.div_rem(position);
            let spc = zone.sectors_per_cylinder;
            let Some(slips) = zone.slips_in_order() else { unreachable!("a table in a zone without slips in order") };
            let holds_slip = slips.iter().any(|&p| p / spc == cylinder);
            match zone.slip_free_cylinder(l) {
                Some((c, first)) => {
                    assert!(!holds_slip, "L′ {l}: cylinder {cylinder} holds a slip");
                    assert_eq!((c, c * spc + l - first), (cylinder, position), "L′ {l}");
                    assert!(zone.is_slip_free(c));
                }
                None => assert!(holds_slip && !zone.is_slip_free(cylinder), "L′ {l}: cylinder {cylinder} declined"),
            }
            holds_slip
        }
        let small = Geometry::new(&disksim_like(SparingConfig::SectorsAtEnd, TrackOrder::Ascending, [&[3, 4, 40, 300], &[0, 155], &[164]]), "m").unwrap();
        let (mut fast, mut slow) = (0, 0);
        for zone in small.zones() {
            assert_eq!(zone.cylinder_first_l.is_empty(), zone.slips_in_order().is_none_or(|s| s.is_empty()));
            if !zone.cylinder_first_l.is_empty() {
                for l in zone.reserved..zone.reserved + zone.lbas {
                    if check(zone, l) { slow += 1 } else { fast += 1 }
                }
            }
        }
        assert!(fast > 100 && slow > 100, "both paths taken: {fast} by the table, {slow} by the search");
        let cfg = crate::disk::presets::preset("ibm18es").unwrap();
        let g = Geometry::new(&cfg, "m").unwrap();
        let with_table = g.zones().iter().filter(|z| !z.cylinder_first_l.is_empty()).count();
        assert_eq!(with_table, cfg.zones.iter().filter(|z| !z.slips.is_empty()).count(), "every 18ES zone with slips has a table");
        for zone in g.zones().iter().filter(|z| !z.cylinder_first_l.is_empty()) {
            let (first_l, end_l) = (zone.reserved, zone.reserved + zone.lbas);
            let slips = zone.slips_in_order().unwrap();
            let near = slips.iter().flat_map(|&p| p.saturating_sub(2 * zone.sectors_per_cylinder)..p + 2 * zone.sectors_per_cylinder);
            for l in near.chain((first_l..end_l).step_by(997)).filter(|l| (first_l..end_l).contains(l)) {
                check(zone, l);
            }
        }
    }

    #[test]
    fn the_zone_lookup_table_agrees_with_a_search_at_every_zone_edge() {
        // ibm18es: 55 zones of unequal size, so buckets straddle zone edges.
        let cfg = crate::disk::presets::preset("ibm18es").expect("preset");
        let g = Geometry::new(&cfg, "drive.model").expect("valid");
        let search = |lba: u64| g.zones().partition_point(|z| z.first_lba <= lba) - 1;
        let last = g.capacity_sectors() - 1;
        let mut probes = vec![0, 1, last];
        for z in g.zones() {
            probes.extend([z.first_lba.saturating_sub(1), z.first_lba, z.first_lba + 1]);
        }
        // Every bucket edge too.
        probes.extend((0..=last >> g.lba_shift).flat_map(|b| {
            let first = b << g.lba_shift;
            [first.saturating_sub(1), first]
        }));
        for lba in probes.into_iter().filter(|&l| l <= last) {
            assert_eq!(g.zone_index_of_lba(lba), search(lba), "lba {lba}");
        }
        assert!(g.zone_of_bucket.len() <= 4 * ZONE_BUCKETS_PER_ZONE as usize * g.zones().len());
    }

    /// A small DiskSim-style drive: gaps between zones, per-zone skews and offsets, a
    /// reserved area, serpentine tracks, and slips in every zone.
    fn disksim_like(sparing: SparingConfig, track_order: TrackOrder, slips: [&[u64]; 3]) -> DriveModelConfig {
        let zone = |first, cylinders, spt, offset, track, cylinder, reserved, spares, slips: &[u64]| {
            crate::disk::presets::disksim::zone_config(&(
                first, cylinders, spt, offset, track, cylinder, reserved, spares, slips, &[],
            ))
        };
        let spares = match sparing {
            SparingConfig::SectorsAtEnd | SparingConfig::None => 0,
            SparingConfig::TracksPerZone => 2,
            _ => 3,
        };
        let mut cfg = model(
            3,
            vec![
                zone(0, 6, 17, 0, 4, 7, 5, spares, slips[0]),
                zone(7, 4, 13, 5, 3, 5, 0, spares, slips[1]),
                zone(12, 5, 11, 2, 2, 4, 0, spares, slips[2]),
            ],
        );
        cfg.sparing = sparing;
        cfg.track_order = track_order;
        cfg
    }

    #[test]
    fn disksim_layouts_round_trip_every_lba_with_skews_gaps_and_slips() {
        let cases: Vec<(SparingConfig, [&[u64]; 3])> = vec![
            (SparingConfig::None, [&[], &[], &[]]),
            (SparingConfig::SectorsAtEnd, [&[3, 4, 40, 300], &[0, 155], &[164]]),
            (SparingConfig::SectorsPerZone, [&[3, 4, 300], &[0, 155], &[]]),
            (SparingConfig::SectorsPerZoneSlipToEnd, [&[3, 4, 40, 300], &[0, 155], &[164]]),
            (SparingConfig::SectorsPerTrack, [&[16, 18, 19, 20], &[38], &[]]),
            (SparingConfig::SectorsPerCylinder, [&[2, 50, 51, 52], &[0], &[100]]),
            (SparingConfig::SectorsPerRange { range_cylinders: 2 }, [&[2, 50, 51, 102], &[0, 80], &[]]),
            (SparingConfig::TracksPerZone, [&[1, 2], &[11], &[]]),
        ];
        for (sparing, slips) in cases {
            for order in [TrackOrder::Ascending, TrackOrder::SerpentineZone, TrackOrder::Serpentine] {
                let cfg = disksim_like(sparing, order, slips);
                let g = Geometry::new(&cfg, "m").unwrap_or_else(|e| panic!("{sparing:?}: {e}"));
                assert_eq!(g.cylinders(), 17);
                check_bijection(&g);
                // Slipped positions hold no LBA.
                for (z, zone) in g.zones().iter().enumerate() {
                    for &p in &cfg.zones[z].slips {
                        let p = if sparing == SparingConfig::TracksPerZone { p * zone.sectors_per_track as u64 } else { p };
                        assert_eq!(zone.inverse(p), None, "{sparing:?} zone {z} slip {p}");
                    }
                }
            }
        }
    }

    #[test]
    fn slips_move_later_lbas_of_their_unit_on_by_one() {
        // Zone-wide slips (DiskSim scheme 7): every later LBA of the zone moves one on.
        let cfg = disksim_like(SparingConfig::SectorsAtEnd, TrackOrder::Ascending, [&[3, 4, 40], &[], &[]]);
        let g = Geometry::new(&cfg, "m").unwrap();
        let position = |lba| {
            let a = g.locate(lba);
            (a.cylinder as u64 * 3 + a.surface as u64) * 17 + a.sector as u64
        };
        // Reserved 5 positions; LBA 0 → 5, 1 → 6 (3 and 4 are before the reserved end but
        // still slipped: L′ 0..2 use positions 0..2, L′ 3 jumps to 5).
        assert_eq!(g.zones()[0].lbas, 6 * 3 * 17 - 5 - 3);
        assert_eq!(position(0), 5 + 2);
        assert_eq!(position(32), 39);
        assert_eq!(position(33), 41);
        // Per-track spares (scheme 3): a slip only moves its own track.
        let cfg = disksim_like(SparingConfig::SectorsPerTrack, TrackOrder::Ascending, [&[20], &[], &[]]);
        let g = Geometry::new(&cfg, "m").unwrap();
        // 14 LBAs per track; reserved 5 L′ values: LBA 0 is L′ 5 on track 0.
        let a = g.locate(14 - 5 + 2); // L′ 16 = track 1, offset 2 → position 17 + 2 = 19
        assert_eq!((a.surface, a.sector), (1, 2));
        let a = g.locate(14 - 5 + 3); // L′ 17 = track 1, offset 3: slip at 20 = offset 3 → 4
        assert_eq!((a.surface, a.sector), (1, 4));
        let a = g.locate(2 * 14 - 5); // track 2 unaffected
        assert_eq!((a.surface, a.sector), (2, 0));
    }

    #[test]
    fn remaps_move_one_lba_to_a_spare() {
        let mut cfg = disksim_like(SparingConfig::SectorsPerZone, TrackOrder::Ascending, [&[], &[], &[]]);
        // Zone 0 has 306 positions, 3 spares at 303..305; reserved 5: position 50 holds LBA 45.
        cfg.zones[0].remaps = vec![(50, 304), (60, 60)];
        let g = Geometry::new(&cfg, "m").unwrap();
        check_bijection(&g);
        let a = g.locate(45);
        assert_eq!((a.cylinder, a.surface, a.sector), (5, 2, 15)); // 304 = 5·51 + 2·17 + 15
        assert_eq!(g.locate_run(44).sectors, 1);
        assert_eq!(g.locate_run(45).sectors, 1);
        // Track remap under track sparing.
        let mut cfg = disksim_like(SparingConfig::TracksPerZone, TrackOrder::Ascending, [&[], &[], &[]]);
        cfg.zones[1].remaps = vec![(1, 10)];
        let g = Geometry::new(&cfg, "m").unwrap();
        check_bijection(&g);
    }

    #[test]
    fn legacy_skews_continue_across_zones_and_disksim_skews_restart_per_zone() {
        let mut cfg = model(2, vec![ZoneConfig::new(4, 100), ZoneConfig::new(3, 50)]);
        cfg.track_skew_sectors = 7;
        cfg.cylinder_skew_sectors = 3;
        let g = Geometry::new(&cfg, "m").unwrap();
        for cylinder in 0..7u32 {
            let spt = g.sectors_per_track(cylinder);
            for surface in 0..2u32 {
                let track = cylinder * 2 + surface;
                assert_eq!(g.skew(cylinder, surface), (cylinder * 3 + track * 7) % spt);
            }
        }
        // DiskSim: offset + track switches × track skew + cylinder switches × cylinder skew,
        // counted from the zone's first track.
        let cfg = disksim_like(SparingConfig::None, TrackOrder::Ascending, [&[], &[], &[]]);
        let g = Geometry::new(&cfg, "m").unwrap();
        assert_eq!(g.skew(7, 0), 5);
        assert_eq!(g.skew(7, 2), 5 + 2 * 3);
        assert_eq!(g.skew(9, 1), (5 + 2 * (2 * 3 + 5) + 3) % 13);
        assert_eq!(g.skew(6, 0), 0, "cylinder 6 lies between zones");
    }

    fn config_key(result: Result<Geometry>) -> String {
        match result {
            Err(Error::Config { key, .. }) => key,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn invalid_geometries_name_the_offending_key() {
        let ok = ZoneConfig::new(2, 4);
        let g = |surfaces, zones: Vec<ZoneConfig>| Geometry::new(&model(surfaces, zones), "drive.model");
        assert_eq!(config_key(g(0, vec![ok.clone()])), "drive.model.surfaces");
        assert_eq!(config_key(g(2, vec![])), "drive.model.zones");
        assert_eq!(config_key(g(2, vec![ok.clone(), ZoneConfig::new(0, 4)])), "drive.model.zones[1].cylinders");
        assert_eq!(
            config_key(g(2, vec![ok.clone(), ok.clone(), ZoneConfig::new(3, 0)])),
            "drive.model.zones[2].sectors_per_track"
        );
        let huge = ZoneConfig::new(3, MAX_SECTORS_PER_TRACK + 1);
        assert_eq!(config_key(g(2, vec![huge])), "drive.model.zones[0].sectors_per_track");
        let overlap = ZoneConfig { first_cylinder: Some(1), ..ok.clone() };
        assert_eq!(config_key(g(2, vec![ok.clone(), overlap])), "drive.model.zones[1].first_cylinder");
        let slips = ZoneConfig { slips: vec![3], ..ok.clone() };
        assert_eq!(config_key(g(2, vec![slips.clone()])), "drive.model.zones[0].slips");
        let mut cfg = model(2, vec![ZoneConfig { slips: vec![5, 3], ..ok.clone() }]);
        cfg.sparing = SparingConfig::SectorsPerZone;
        assert_eq!(config_key(Geometry::new(&cfg, "d")), "d.zones[0].slips[1]");
        // More slips than spares.
        cfg.zones[0] = ZoneConfig { spares: 1, slips: vec![1, 2], ..ok.clone() };
        assert_eq!(config_key(Geometry::new(&cfg, "d")), "d.zones[0].slips");
        cfg.zones[0] = ZoneConfig { spares: 1, remaps: vec![(2, 3)], ..ok.clone() };
        assert_eq!(config_key(Geometry::new(&cfg, "d")), "d.zones[0].remaps");
        cfg.zones[0] = ZoneConfig { reserved_sectors: 16, ..ok.clone() };
        assert_eq!(config_key(Geometry::new(&cfg, "d")), "d.zones[0]");
        let mut cfg = model(2, vec![ok.clone()]);
        cfg.capacity_sectors = Some(17);
        assert_eq!(config_key(Geometry::new(&cfg, "d")), "d.capacity_sectors");
        cfg.capacity_sectors = Some(10);
        assert_eq!(Geometry::new(&cfg, "d").unwrap().capacity_sectors(), 10);
    }

    #[test]
    fn surfaces_and_cylinders_beyond_the_supported_maximum_are_errors_not_overflows() {
        let big = |cylinders| ZoneConfig::new(cylinders, MAX_SECTORS_PER_TRACK);
        // Once a u64 overflow computing the zone's sectors (a panic with overflow checks).
        assert_eq!(config_key(Geometry::new(&model(u32::MAX, vec![big(MAX_CYLINDERS)]), "d")), "d.surfaces");
        assert_eq!(config_key(Geometry::new(&model(MAX_SURFACES, vec![big(MAX_CYLINDERS + 1)]), "d")), "d.zones[0].cylinders");
        let late = ZoneConfig { first_cylinder: Some(MAX_CYLINDERS - 1), ..ZoneConfig::new(2, 4) };
        assert_eq!(config_key(Geometry::new(&model(2, vec![ZoneConfig::new(2, 4), late]), "d")), "d.zones[1].cylinders");
        let end = ZoneConfig { first_cylinder: Some(u32::MAX), ..ZoneConfig::new(1, 4) };
        assert_eq!(config_key(Geometry::new(&model(2, vec![end]), "d")), "d.zones[0].cylinders");
        let at_limit = Geometry::new(&model(MAX_SURFACES, vec![big(MAX_CYLINDERS)]), "d").unwrap();
        assert_eq!(at_limit.capacity_sectors(), MAX_SURFACES as u64 * MAX_SECTORS_PER_TRACK as u64 * MAX_CYLINDERS as u64);
        // Spares times tracks beyond 64 bits leave no sectors for data.
        let mut cfg = model(MAX_SURFACES, vec![ZoneConfig { spares: u32::MAX, ..big(MAX_CYLINDERS) }]);
        cfg.sparing = SparingConfig::SectorsPerTrack;
        assert_eq!(config_key(Geometry::new(&cfg, "d")), "d.zones[0]");
    }
}
