//! Zoned geometry: the mapping from a logical sector (LBA) to cylinder, surface and sector.
//!
//! The traditional mapping: LBAs fill one track, then the next surface of the same cylinder,
//! then the next cylinder inward. Zones are bands of cylinders with the same number of sectors
//! per track, outermost first.
//!
//! ```text
//!   zone 0 (outer, most sectors/track)   zone 1              zone 2 (inner)
//!   cyl 0: surf 0 [0 .. spt0)            cyl c1: ...          ...
//!          surf 1 [spt0 .. 2·spt0)
//!          ...
//!   cyl 1: surf 0 ...
//! ```
//!
//! [`Geometry::locate`] finds the zone by binary search over the zones' first LBAs, then
//! divides; it allocates nothing and runs once per disk operation.

use super::ZoneConfig;
use crate::error::{Error, Result};

/// The largest number of sectors per track accepted. Rotational arithmetic multiplies phase
/// units by sector indices in 64 bits; this bound keeps that exact (real drives have a few
/// thousand).
pub const MAX_SECTORS_PER_TRACK: u32 = 100_000;

/// Physical location of one sector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicalAddress {
    /// Cylinder, 0 = outermost.
    pub cylinder: u32,
    /// Surface (head) within the cylinder.
    pub surface: u32,
    /// Sector index within the track, 0-based in logical order.
    pub sector: u32,
    /// Sectors on this track (the zone's sectors per track).
    pub sectors_per_track: u32,
}

/// A divisor fixed when the drive is built, divided by with a precomputed reciprocal
/// (multiply and shift) instead of a hardware division: address mapping and rotational
/// position divide by sectors per track on every access, and hardware 64-bit division is
/// the slowest arithmetic instruction there.
#[derive(Debug, Clone, Copy)]
pub struct Divisor(strength_reduce::StrengthReducedU64);

impl Divisor {
    /// A divisor of `d` (> 0).
    pub fn new(d: u64) -> Self {
        Divisor(strength_reduce::StrengthReducedU64::new(d))
    }
    /// The divisor's value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.0.get()
    }
    /// `n / d`.
    #[inline]
    pub fn div(&self, n: u64) -> u64 {
        n / self.0
    }
    /// `n % d`.
    #[inline]
    pub fn rem(&self, n: u64) -> u64 {
        n % self.0
    }
    /// `(n / d, n % d)`.
    #[inline]
    pub fn div_rem(&self, n: u64) -> (u64, u64) {
        strength_reduce::StrengthReducedU64::div_rem(n, self.0)
    }
    /// `⌈n / d⌉`.
    #[inline]
    pub fn div_ceil(&self, n: u64) -> u64 {
        let (q, r) = self.div_rem(n);
        q + (r != 0) as u64
    }
}

impl PartialEq for Divisor {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}
impl Eq for Divisor {}

/// One zone with its position precomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    /// First LBA of the zone.
    pub first_lba: u64,
    /// First cylinder of the zone.
    pub first_cylinder: u32,
    /// Cylinders in the zone.
    pub cylinders: u32,
    /// Sectors on every track of the zone.
    pub sectors_per_track: u32,
    /// Sectors in one cylinder of the zone (`surfaces × sectors_per_track`).
    pub sectors_per_cylinder: u64,
    /// `sectors_per_track` as a precomputed divisor.
    pub track_divisor: Divisor,
    /// `sectors_per_cylinder` as a precomputed divisor.
    pub cylinder_divisor: Divisor,
}

impl Zone {
    /// One past the last cylinder of the zone.
    pub fn end_cylinder(&self) -> u32 {
        self.first_cylinder + self.cylinders
    }
    /// Sectors in the zone.
    pub fn sectors(&self) -> u64 {
        self.sectors_per_cylinder * self.cylinders as u64
    }
}

/// Zoned drive geometry with the traditional mapping: LBAs fill a track, then the next surface
/// of the same cylinder, then the next cylinder inward.
#[derive(Debug, Clone)]
pub struct Geometry {
    surfaces: u32,
    cylinders: u32,
    capacity: u64,
    zones: Vec<Zone>,
}

impl Geometry {
    /// Build from zones (outermost first). `key` names the config key for errors.
    pub fn new(surfaces: u32, zones: &[ZoneConfig], key: &str) -> Result<Self> {
        if surfaces == 0 {
            return Err(Error::config(format!("{key}.surfaces"), "must be at least 1"));
        }
        if zones.is_empty() {
            return Err(Error::config(format!("{key}.zones"), "at least one zone is required"));
        }
        let mut built = Vec::with_capacity(zones.len());
        let mut first_lba = 0u64;
        let mut first_cylinder = 0u32;
        for (i, zone) in zones.iter().enumerate() {
            if zone.cylinders == 0 {
                return Err(Error::config(
                    format!("{key}.zones[{i}].cylinders"),
                    "must be at least 1",
                ));
            }
            if zone.sectors_per_track == 0 {
                return Err(Error::config(
                    format!("{key}.zones[{i}].sectors_per_track"),
                    "must be at least 1",
                ));
            }
            if zone.sectors_per_track > MAX_SECTORS_PER_TRACK {
                return Err(Error::config(
                    format!("{key}.zones[{i}].sectors_per_track"),
                    format!(
                        "{} exceeds the supported maximum {MAX_SECTORS_PER_TRACK}",
                        zone.sectors_per_track
                    ),
                ));
            }
            let sectors_per_cylinder = surfaces as u64 * zone.sectors_per_track as u64;
            built.push(Zone {
                first_lba,
                first_cylinder,
                cylinders: zone.cylinders,
                sectors_per_track: zone.sectors_per_track,
                sectors_per_cylinder,
                track_divisor: Divisor::new(zone.sectors_per_track as u64),
                cylinder_divisor: Divisor::new(sectors_per_cylinder),
            });
            first_cylinder = first_cylinder.checked_add(zone.cylinders).ok_or_else(|| {
                Error::config(
                    format!("{key}.zones[{i}].cylinders"),
                    "total cylinder count overflows",
                )
            })?;
            first_lba = sectors_per_cylinder
                .checked_mul(zone.cylinders as u64)
                .and_then(|sectors| first_lba.checked_add(sectors))
                .ok_or_else(|| Error::config(format!("{key}.zones[{i}]"), "capacity overflows"))?;
        }
        Ok(Geometry { surfaces, cylinders: first_cylinder, capacity: first_lba, zones: built })
    }

    /// Total addressable sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.capacity
    }

    /// Number of cylinders.
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
        // Zones are few and sorted by first LBA; the first zone starts at 0, so the
        // partition point is at least 1.
        self.zones.partition_point(|z| z.first_lba <= lba) - 1
    }

    /// Index of the zone holding `cylinder` (`cylinder` below the cylinder count).
    #[inline]
    pub fn zone_index_of_cylinder(&self, cylinder: u32) -> usize {
        self.zones.partition_point(|z| z.first_cylinder <= cylinder) - 1
    }

    /// Sectors per track on `cylinder`.
    #[inline]
    pub fn sectors_per_track(&self, cylinder: u32) -> u32 {
        self.zones[self.zone_index_of_cylinder(cylinder)].sectors_per_track
    }

    /// Where sector `lba` lies. `lba` must be below the capacity.
    #[inline]
    pub fn locate(&self, lba: u64) -> PhysicalAddress {
        self.locate_in_zone(lba).1
    }

    /// Where sector `lba` lies, with the index of its zone. `lba` must be below the capacity.
    #[inline]
    pub fn locate_in_zone(&self, lba: u64) -> (usize, PhysicalAddress) {
        debug_assert!(lba < self.capacity, "lba {lba} beyond capacity {}", self.capacity);
        let zone_index = self.zone_index_of_lba(lba);
        let zone = &self.zones[zone_index];
        let offset = lba - zone.first_lba;
        let (cylinder_in_zone, in_cylinder) = zone.cylinder_divisor.div_rem(offset);
        let (surface, sector) = zone.track_divisor.div_rem(in_cylinder);
        let address = PhysicalAddress {
            cylinder: zone.first_cylinder + cylinder_in_zone as u32,
            surface: surface as u32,
            sector: sector as u32,
            sectors_per_track: zone.sectors_per_track,
        };
        (zone_index, address)
    }

    /// First LBA of the track at (`cylinder`, `surface`).
    pub fn first_lba_of_track(&self, cylinder: u32, surface: u32) -> u64 {
        debug_assert!(cylinder < self.cylinders && surface < self.surfaces);
        let zone = &self.zones[self.zone_index_of_cylinder(cylinder)];
        zone.first_lba
            + (cylinder - zone.first_cylinder) as u64 * zone.sectors_per_cylinder
            + surface as u64 * zone.sectors_per_track as u64
    }

    /// The LBA at a physical address (inverse of [`Geometry::locate`]).
    pub fn lba_of(&self, address: PhysicalAddress) -> u64 {
        self.first_lba_of_track(address.cylinder, address.surface) + address.sector as u64
    }

    /// First LBA of `cylinder`.
    pub fn first_lba_of_cylinder(&self, cylinder: u32) -> u64 {
        self.first_lba_of_track(cylinder, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zoned() -> Geometry {
        let zones = [
            ZoneConfig { cylinders: 5, sectors_per_track: 13 },
            ZoneConfig { cylinders: 3, sectors_per_track: 9 },
            ZoneConfig { cylinders: 4, sectors_per_track: 7 },
        ];
        Geometry::new(3, &zones, "drive.model").unwrap()
    }

    #[test]
    fn every_lba_round_trips_through_its_physical_address() {
        let g = zoned();
        let mut previous: Option<PhysicalAddress> = None;
        for lba in 0..g.capacity_sectors() {
            let a = g.locate(lba);
            assert!(a.cylinder < g.cylinders());
            assert!(a.surface < g.surfaces());
            assert!(a.sector < a.sectors_per_track);
            assert_eq!(a.sectors_per_track, g.sectors_per_track(a.cylinder));
            assert_eq!(g.lba_of(a), lba, "{a:?}");
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
        let by_zone: u64 = g.zones().iter().map(|z| z.sectors()).sum();
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
        assert_eq!(
            g.locate(z1),
            PhysicalAddress { cylinder: 5, surface: 0, sector: 0, sectors_per_track: 9 }
        );
        assert_eq!(
            g.locate(z1 - 1),
            PhysicalAddress { cylinder: 4, surface: 2, sector: 12, sectors_per_track: 13 }
        );
        assert_eq!(g.zone_index_of_cylinder(7), 1);
        assert_eq!(g.zone_index_of_cylinder(8), 2);
        assert_eq!(g.first_lba_of_cylinder(8), g.zones()[2].first_lba);
    }

    fn config_key(result: Result<Geometry>) -> String {
        match result {
            Err(Error::Config { key, .. }) => key,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn invalid_geometries_name_the_offending_key() {
        let ok = ZoneConfig { cylinders: 2, sectors_per_track: 4 };
        assert_eq!(config_key(Geometry::new(0, &[ok], "drive.model")), "drive.model.surfaces");
        assert_eq!(config_key(Geometry::new(2, &[], "drive.model")), "drive.model.zones");
        let no_cylinders = ZoneConfig { cylinders: 0, sectors_per_track: 4 };
        assert_eq!(
            config_key(Geometry::new(2, &[ok, no_cylinders], "drive.model")),
            "drive.model.zones[1].cylinders"
        );
        let no_sectors = ZoneConfig { cylinders: 3, sectors_per_track: 0 };
        assert_eq!(
            config_key(Geometry::new(2, &[ok, ok, no_sectors], "drive.model")),
            "drive.model.zones[2].sectors_per_track"
        );
        let huge = ZoneConfig { cylinders: 3, sectors_per_track: MAX_SECTORS_PER_TRACK + 1 };
        assert_eq!(
            config_key(Geometry::new(2, &[huge], "drive.model")),
            "drive.model.zones[0].sectors_per_track"
        );
    }
}
