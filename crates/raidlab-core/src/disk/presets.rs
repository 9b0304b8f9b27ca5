//! Built-in drives. Every parameter and its source is listed in `docs/drives.md`.
//!
//! To add a preset: write a `fn name() -> DriveModelConfig` below, add one line to the
//! `registry!` list, and give its figures and sources a section in `docs/drives.md`. A drive
//! from DiskSim's validated models is generated instead (see [`disksim`]): its constants live
//! in `presets/<name>.rs`.

mod cheetah9lp;
pub mod disksim;
mod ibm18es;

use super::{DriveModelConfig, RotationModel, SeekConfig, ZoneConfig};

/// One built-in drive.
pub struct PresetEntry {
    /// Name used in configs (`drive.preset`).
    pub name: &'static str,
    /// Its parameters.
    pub build: fn() -> DriveModelConfig,
    /// One line: what the drive is and where its figures come from.
    pub doc: &'static str,
}

macro_rules! registry {
    ($($name:literal => $build:ident, $doc:literal;)+) => {
        /// Every built-in drive, in documentation order.
        pub static PRESETS: &[PresetEntry] =
            &[$(PresetEntry { name: $name, build: $build, doc: $doc }),+];
        const NAMES: &[&str] = &[$($name),+];
    };
}

registry! {
    "ibm0661" => ibm0661,
        "IBM 0661 Model 370, thesis Table 2: 949 cyl, 14 heads, 4318 rpm, uniform latency";
    "hc550" => hc550,
        "WD Ultrastar DC HC550 18 TB, 7200 rpm; derived zones and seek, proxy figures";
    "ibm18es" => ibm18es,
        "IBM Ultrastar 18ES DNES-309170W, 7200 rpm: DiskSim 4's validated model (Fu et al.'s drive)";
    "cheetah9LP" => cheetah9lp,
        "Seagate Cheetah 9LP ST39102LW, 10045 rpm: DiskSim 4's validated model";
    "st3146807lc" => st3146807lc,
        "Seagate Cheetah 10K.6 ST3146807LC, 147 GB, 10,000 rpm, 4.7 ms average seek (the PRO paper's drive); derived zones and seek";
}

/// Names of the built-in drives, for error messages and docs.
pub fn names() -> &'static [&'static str] {
    NAMES
}

/// The parameters of a built-in drive, if `name` is one.
pub fn preset(name: &str) -> Option<DriveModelConfig> {
    PRESETS.iter().find(|p| p.name == name).map(|p| (p.build)())
}

/// IBM 0661 Model 370, exactly the thesis's Table 2 (seed 004 §2.1): 949 cylinders, 14 tracks
/// per cylinder, 6 blocks of 4096 bytes per track (48 sectors of 512 bytes), 4318 rpm,
/// seek 2.0 + 0.01·d + 0.46·√d ms, uniform latency. No overheads, skew or zones are given.
fn ibm0661() -> DriveModelConfig {
    DriveModelConfig {
        rotation: RotationModel::Uniform,
        ..DriveModelConfig::basic(
            4318.0,
            14,
            vec![ZoneConfig::new(949, 48)],
            SeekConfig::Formula { a_ms: 2.0, b_ms: 0.01, c_ms: 0.46 },
        )
    }
}

/// Cylinders in each of the HC550's 20 derived zones.
const HC550_CYLINDERS_PER_ZONE: u32 = 28_936;
/// Sectors per track of the outermost and innermost HC550 zones (derived).
const HC550_OUTER_SPT: u32 = 4_500;
const HC550_INNER_SPT: u32 = 2_250;
const HC550_ZONES: u32 = 20;

/// Western Digital Ultrastar DC HC550, 18 TB, 7200 rpm, 9 platters (18 heads).
/// Only capacity, spindle speed and head count are sourced facts. The average seek (7.40 ms)
/// and single-track seek (0.23 ms) are proxies from the same vendor's HC310 spec and the outer
/// sustained rate (269 MB/s) is assumed; the zone table, seek curve, head switch and skew are
/// derived from them as `docs/drives.md` explains.
fn hc550() -> DriveModelConfig {
    let zones = (0..HC550_ZONES)
        .map(|i| {
            // Linear fall from the outer to the inner rate, rounded to whole sectors.
            let drop =
                (HC550_OUTER_SPT - HC550_INNER_SPT) as f64 * i as f64 / (HC550_ZONES - 1) as f64;
            ZoneConfig::new(
                HC550_CYLINDERS_PER_ZONE,
                (HC550_OUTER_SPT as f64 - drop).round() as u32,
            )
        })
        .collect();
    DriveModelConfig {
        head_switch_ms: 0.23,
        // 0.23 ms of the outermost zone's 1.852 µs sectors, rounded up.
        track_skew_sectors: 125,
        ..DriveModelConfig::basic(
            7200.0,
            18,
            zones,
            // a + c·√d with seek(1) = 0.23 ms and a data-sheet-weighted mean of 7.40 ms.
            SeekConfig::Formula { a_ms: 0.2123, b_ms: 0.0, c_ms: 0.017716 },
        )
    }
}

/// Cylinders in each of the ST3146807LC's 15 derived zones.
const ST3146807LC_CYLINDERS_PER_ZONE: u32 = 3_780;
/// Sectors per track of the outermost and innermost ST3146807LC zones (derived).
const ST3146807LC_OUTER_SPT: u32 = 797;
const ST3146807LC_INNER_SPT: u32 = 469;
const ST3146807LC_ZONES: u32 = 15;

/// Seagate Cheetah 10K.6 ST3146807LC, 147 GB, 10,000 rpm: the drive of the PRO paper (seed 000
/// Table 1; §4.1: "10000 rpm, its average seek time is 4.7ms, and its capacity is 147GB").
/// Those three figures are the sourced facts; the product manual of the family (Seagate,
/// Cheetah 10K.6 FC Product Manual, Volume 1, publication 100195490 Rev. B, June 2002) gives
/// the 8,192 KB buffer, which is not modelled. The surfaces (8), the single-track seek
/// (0.35 ms) and the sustained media rates (68 MB/s outer, 40 MB/s inner) are raidlab's
/// assumptions, and the zone table, seek curve, head switch and skew are derived from them as
/// `docs/drives.md` explains.
fn st3146807lc() -> DriveModelConfig {
    let zones = (0..ST3146807LC_ZONES)
        .map(|i| {
            // Linear fall from the outer to the inner rate, rounded to whole sectors.
            let drop = (ST3146807LC_OUTER_SPT - ST3146807LC_INNER_SPT) as f64 * i as f64
                / (ST3146807LC_ZONES - 1) as f64;
            ZoneConfig::new(
                ST3146807LC_CYLINDERS_PER_ZONE,
                (ST3146807LC_OUTER_SPT as f64 - drop).round() as u32,
            )
        })
        .collect();
    DriveModelConfig {
        head_switch_ms: 0.35,
        // 0.35 ms of the outermost zone's 7.53 µs sectors, rounded up.
        track_skew_sectors: 47,
        ..DriveModelConfig::basic(
            10_000.0,
            8,
            zones,
            // a + c·√d with seek(1) = 0.35 ms and a data-sheet-weighted mean of 4.70 ms.
            SeekConfig::Formula { a_ms: 0.315476, b_ms: 0.0, c_ms: 0.0345243 },
        )
    }
}

/// IBM Ultrastar 18ES (DNES-309170W), 9 GB, 7200 rpm: DiskSim 4's validated model, as the
/// parameters `disk::diskspec` extracts from `ibm18es.parv` (the drive of Fu et al., seed 001).
fn ibm18es() -> DriveModelConfig {
    ibm18es::DRIVE.build()
}

/// Seagate Cheetah 9LP (ST39102LW), 9 GB, 10045 rpm: DiskSim 4's validated model, as the
/// parameters `disk::diskspec` extracts from `cheetah9LP.parv`.
fn cheetah9lp() -> DriveModelConfig {
    cheetah9lp::DRIVE.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{DriveModel, OpKind};
    use crate::sim::{RngStream, StreamId};
    use std::sync::Arc;

    #[test]
    fn names_list_exactly_the_presets_and_each_one_validates() {
        assert_eq!(names(), &["ibm0661", "hc550", "ibm18es", "cheetah9LP", "st3146807lc"]);
        assert_eq!(names().len(), PRESETS.len());
        for name in names() {
            let cfg = preset(name).unwrap_or_else(|| panic!("{name} listed but missing"));
            DriveModel::new(&cfg, &format!("drive.preset({name})")).unwrap();
        }
        assert!(preset("nonexistent").is_none());
    }

    #[test]
    fn ibm0661_is_the_thesis_drive() {
        let m = DriveModel::new(&preset("ibm0661").unwrap(), "d").unwrap();
        assert_eq!(m.geometry.cylinders(), 949);
        assert_eq!(m.geometry.surfaces(), 14);
        // 6 blocks of 4096 bytes per track.
        assert_eq!(m.geometry.sectors_per_track(0) as u64 * 512, 6 * 4096);
        assert_eq!(m.capacity_sectors() * 512, 949 * 14 * 6 * 4096);
        assert!((m.revolution_ns() - 60e9 / 4318.0).abs() < 1e-6);
        assert_eq!(m.seek.time(1), 2_470_000);
        assert_eq!(m.config.rotation, RotationModel::Uniform);
        // Table 2 states an average seek of 12.50 ms; the formula's mean over distinct
        // uniformly random cylinder pairs is 12.73 ms (docs/drives.md).
        assert!((m.seek.datasheet_average_ms() - 12.732).abs() < 0.001);
    }

    #[test]
    fn hc550_matches_its_sources_and_derivations() {
        let m = DriveModel::new(&preset("hc550").unwrap(), "d").unwrap();
        // 18 TB (10^12 bytes) within 0.01 %.
        let bytes = m.capacity_sectors() as f64 * 512.0;
        assert!((bytes / 18e12 - 1.0).abs() < 1e-4, "{bytes}");
        assert!(bytes >= 18e12);
        assert_eq!(m.geometry.zones().len(), 20);
        let inner = m.geometry.zones().last().unwrap().sectors_per_track;
        assert_eq!(2 * inner, m.geometry.sectors_per_track(0));
        // Average latency 4.16 ms = half a revolution at 7200 rpm.
        assert!((m.revolution_ns() / 2.0 / 1e6 - 4.1667).abs() < 1e-3);
        // Data-sheet-weighted average seek 7.40 ms; single-track 0.23 ms.
        assert!(
            (m.seek.datasheet_average_ms() - 7.40).abs() < 0.01,
            "{}",
            m.seek.datasheet_average_ms()
        );
        assert!((m.seek.time(1) as f64 / 1e6 - 0.23).abs() < 0.001);
    }

    #[test]
    fn hc550_outer_zone_streams_at_the_sustained_rate() {
        // Read the first 10 cylinders sequentially in 1 MiB commands, each issued when the
        // previous one ends (exact rotation, skew hides head switches).
        let model = Arc::new(DriveModel::new(&preset("hc550").unwrap(), "d").unwrap());
        let mut d = crate::disk::Drive::new(
            model,
            RotationModel::Exact,
            RngStream::new(1, StreamId::Drive(0)),
        );
        let first = d.service(0, 0, 1, OpKind::Read);
        let (start, mut now, mut lba) = (first.total(), first.total(), 1u64);
        let end = 10 * 18 * 4500;
        while lba < end {
            let n = (2048).min(end - lba) as u32;
            now += d.service(now, lba, n, OpKind::Read).total();
            lba += n as u64;
        }
        let mb_per_s = (end - 1) as f64 * 512.0 / ((now - start) as f64 / 1e9) / 1e6;
        assert!((mb_per_s / 269.0 - 1.0).abs() < 0.01, "{mb_per_s} MB/s");
    }

    /// The PRO paper's drive (seed 000 §4.1): 10,000 rpm, 147 GB, 4.7 ms average seek.
    #[test]
    fn st3146807lc_matches_the_pro_papers_figures() {
        let m = DriveModel::new(&preset("st3146807lc").unwrap(), "d").unwrap();
        // 10,000 rpm: 6.0 ms per revolution.
        assert!((m.revolution_ns() - 6.0e6).abs() < 1e-6, "{}", m.revolution_ns());
        // 147 GB (10^9 bytes) within 0.1 %.
        let bytes = m.capacity_sectors() as f64 * 512.0;
        assert!((bytes / 147e9 - 1.0).abs() < 1e-3, "{bytes}");
        assert_eq!(m.geometry.surfaces(), 8);
        assert_eq!(m.geometry.zones().len(), 15);
        // The seek curve's mean over all pairs of distinct cylinders (the data-sheet
        // definition) is the paper's 4.7 ms within 0.01 ms; single-track 0.35 ms (assumed).
        assert!((m.seek.datasheet_average_ms() - 4.7).abs() < 0.01, "{}", m.seek.datasheet_average_ms());
        assert!((m.seek.time(1) as f64 / 1e6 - 0.35).abs() < 0.001);
        // Full stroke follows from the two: 8.5 ms (1.8 × the average).
        let full = m.seek.time(m.geometry.cylinders() - 1) as f64 / 1e6;
        assert!((8.4..8.7).contains(&full), "{full}");
    }

    /// Measured the other way: random cylinder pairs drawn uniformly, seek time averaged.
    #[test]
    fn st3146807lc_random_pairs_seek_4_7_ms_on_average() {
        let m = DriveModel::new(&preset("st3146807lc").unwrap(), "d").unwrap();
        let cylinders = m.geometry.cylinders() as u64;
        let mut rng = RngStream::new(3, StreamId::Requests);
        let (mut sum, mut n) = (0u64, 0u64);
        while n < 200_000 {
            let (from, to) = (rng.below(cylinders), rng.below(cylinders));
            if from != to {
                sum += m.seek.time(from.abs_diff(to) as u32);
                n += 1;
            }
        }
        let mean_ms = sum as f64 / n as f64 / 1e6;
        // Sampling error of 200,000 pairs is about 0.005 ms.
        assert!((mean_ms - 4.7).abs() < 0.03, "{mean_ms}");
    }

    /// `drive.capacity_sectors` limits a preset to its first sectors (the PRO paper's 5 GB).
    #[test]
    fn capacity_limit_keeps_the_first_sectors_and_refuses_more_than_the_drive() {
        let text = "[array]\nlayout = \"raid5\"\ndrives = 3\n[workload]\nrequests = 1\n[drive]\npreset = \"st3146807lc\"\n";
        let limited = format!("{text}capacity_sectors = 10485760\n");
        let cfg = crate::config::Config::from_toml(&limited, std::path::Path::new(".")).unwrap();
        let model = DriveModel::new(&cfg.drive_model().unwrap(), "d").unwrap();
        assert_eq!(model.capacity_sectors(), 10_485_760);
        assert_eq!(model.geometry.sectors_per_track(0), ST3146807LC_OUTER_SPT);
        for bad in ["0", "287128801"] {
            let err = crate::config::Config::from_toml(&format!("{text}capacity_sectors = {bad}\n"), std::path::Path::new("."))
                .and_then(|c| c.drive_model())
                .unwrap_err();
            assert!(err.to_string().contains("drive.capacity_sectors"), "{err}");
        }
    }

    fn shared(name: &str) -> std::path::PathBuf {
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/diskspecs")).join(name)
    }

    #[test]
    fn disksim_presets_equal_the_conversion_of_their_files() {
        for (name, file, source) in [
            ("ibm18es", "ibm18es.parv", include_str!("presets/ibm18es.rs")),
            ("cheetah9LP", "cheetah9LP.parv", include_str!("presets/cheetah9lp.rs")),
        ] {
            let spec = crate::disk::diskspec::load(&shared(file)).unwrap();
            assert_eq!(preset(name).unwrap(), spec.model, "{name}: regenerate with the diskspec_preset example");
            let generated = disksim::preset_source(&spec, name, file).unwrap();
            assert_eq!(generated, source, "{name}: presets/{name}.rs is stale; regenerate it");
            assert!(source.contains("Copyright (c) of Carnegie Mellon University, 2001-2008."));
        }
    }

    /// Fu et al. (seed 001, §2): "random 4 KB accesses on its IBM 18ES took 11.54 ms per
    /// request with FCFS". raidlab's imported 18ES, random 4 KiB reads issued one after the
    /// other (what FCFS serves under load), exact rotation: the mean is reported, not tuned.
    #[test]
    fn ibm18es_random_4k_reads_take_a_physically_plausible_time() {
        let model = Arc::new(DriveModel::new(&preset("ibm18es").unwrap(), "d").unwrap());
        let revolution_ms = model.revolution_ns() / 1e6;
        let mut d = crate::disk::Drive::new(model, RotationModel::Exact, RngStream::new(7, StreamId::Drive(0)));
        let mut rng = RngStream::new(8, StreamId::Requests);
        let blocks = d.model.capacity_sectors() / 8;
        let n = 200_000;
        let (mut now, mut sum) = (0, crate::disk::ServiceTime::default());
        for _ in 0..n {
            let s = d.service(now, rng.below(blocks) * 8, 8, OpKind::Read);
            now += s.total();
            sum.overhead += s.overhead;
            sum.seek += s.seek;
            sum.rotation += s.rotation;
            sum.transfer += s.transfer;
            sum.bus += s.bus;
        }
        let ms = |x: u64| x as f64 / n as f64 / 1e6;
        let mean = ms(sum.total());
        println!(
            "ibm18es random 4 KiB reads, FCFS back to back: mean {mean:.3} ms (paper: 11.54 ms) = overhead {:.3} + seek {:.3} + rotation {:.3} + transfer {:.3} + bus {:.3}",
            ms(sum.overhead),
            ms(sum.seek),
            ms(sum.rotation),
            ms(sum.transfer),
            ms(sum.bus)
        );
        // Physical bounds only: some seek, about half a revolution of latency, little transfer.
        assert!((revolution_ms * 0.4..revolution_ms * 0.6).contains(&ms(sum.rotation)), "{}", ms(sum.rotation));
        assert!(ms(sum.seek) > 1.0 && ms(sum.seek) < 12.9);
        assert!(mean > 6.0 && mean < 20.0, "{mean}");
    }
}
