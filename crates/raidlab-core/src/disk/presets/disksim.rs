//! Built-in drives taken from DiskSim 4's validated models, held as parameters.
//!
//! raidlab may not copy DiskSim's data files, so a DiskSim preset is the *parameters* its
//! converter extracts from the shared file (`disk::diskspec::load`), written out as Rust
//! constants by [`preset_source`] (`cargo run -p raidlab-core --example diskspec_preset --
//! NAME PATH.parv > src/disk/presets/NAME.rs`). A test checks that each preset equals the
//! conversion of its shared file. DiskSim's copyright notice is in each generated file and in
//! `docs/drives.md`.

use std::fmt::Write;

use crate::disk::diskspec::DiskSpec;
use crate::disk::{DriveCacheConfig, DriveModelConfig, RotationModel, SeekConfig, SeekSegment, SparingConfig, TrackOrder, ZoneConfig};

/// DiskSim 4's copyright and no-warranty notice (`DISKSIM-COPYING`), which must travel with
/// anything derived from its files.
pub const DISKSIM_NOTICE: &str = "\
DiskSim Storage Subsystem Simulation Environment (Version 4.0)
Revision Authors: John Bucy, Greg Ganger
Contributors: John Griffin, Jiri Schindler, Steve Schlosser

Copyright (c) of Carnegie Mellon University, 2001-2008.

This software is being provided by the copyright holders under the
following license. By obtaining, using and/or copying this software,
you agree that you have read, understood, and will comply with the
following terms and conditions:

Permission to reproduce, use, and prepare derivative works of this
software is granted provided the copyright and \"No Warranty\" statements
are included with all reproductions and derivative works and associated
documentation. This software may also be redistributed without charge
provided that the copyright and \"No Warranty\" statements are included
in all redistributions.

NO WARRANTY. THIS SOFTWARE IS FURNISHED ON AN \"AS IS\" BASIS.
CARNEGIE MELLON UNIVERSITY MAKES NO WARRANTIES OF ANY KIND, EITHER
EXPRESSED OR IMPLIED AS TO THE MATTER INCLUDING, BUT NOT LIMITED
TO: WARRANTY OF FITNESS FOR PURPOSE OR MERCHANTABILITY, EXCLUSIVITY
OF RESULTS OR RESULTS OBTAINED FROM USE OF THIS SOFTWARE. CARNEGIE
MELLON UNIVERSITY DOES NOT MAKE ANY WARRANTY OF ANY KIND WITH RESPECT
TO FREEDOM FROM PATENT, TRADEMARK, OR COPYRIGHT INFRINGEMENT.
COPYRIGHT HOLDERS WILL BEAR NO LIABILITY FOR ANY USE OF THIS SOFTWARE
OR DOCUMENTATION.
";

/// One zone: first cylinder, cylinders, sectors per track, first-sector offset, track-switch
/// skew, cylinder-switch skew (sectors), reserved sectors, spares, slips, remaps.
pub type Zone = ZoneOf<'static>;

/// A [`Zone`] tuple whose slips and remaps live for `'a`.
pub type ZoneOf<'a> = (u32, u32, u32, u32, u32, u32, u64, u32, &'a [u64], &'a [(u64, u64)]);

/// The zone configuration of a [`Zone`] tuple (of any lifetime, so that tests can build
/// DiskSim-style zones the same way).
pub fn zone_config(
    &(first, cylinders, spt, offset, track, cylinder, reserved, spares, slips, remaps): &ZoneOf<'_>,
) -> ZoneConfig {
    ZoneConfig {
        cylinders,
        sectors_per_track: spt,
        first_cylinder: Some(first),
        first_sector_offset: Some(offset),
        track_switch_skew_sectors: Some(track),
        cylinder_switch_skew_sectors: Some(cylinder),
        reserved_sectors: reserved,
        spares,
        slips: slips.to_vec(),
        remaps: remaps.to_vec(),
    }
}

/// A seek curve in constant form.
pub enum Seek {
    /// Measured `(distance, ms)` points.
    Table(&'static [(u32, f64)]),
    /// `(max_distance, a, b, c)` segments of a + b·d + c·√d ms.
    Piecewise(&'static [(u32, f64, f64, f64)]),
}

/// A DiskSim drive as constants; [`Drive::build`] makes the model.
pub struct Drive {
    pub rpm: f64,
    pub surfaces: u32,
    pub head_switch_ms: f64,
    pub write_settle_ms: f64,
    pub command_overhead_ms: f64,
    /// Read after read, read after write, write after read, write after write, ms.
    pub overheads_ms: [f64; 4],
    /// Read and write completion, ms.
    pub completion_ms: [f64; 2],
    pub bus_sector_ms: f64,
    pub zero_latency: bool,
    pub zero_latency_writes: Option<bool>,
    pub rotation: RotationModel,
    pub track_order: TrackOrder,
    pub sparing: SparingConfig,
    pub capacity_sectors: Option<u64>,
    pub zones: &'static [Zone],
    pub seek: Seek,
    /// The on-drive cache.
    pub cache: Option<DriveCacheConfig>,
}

impl Drive {
    /// The drive model these constants describe.
    pub fn build(&self) -> DriveModelConfig {
        let zones = self.zones.iter().map(zone_config).collect();
        let seek = match self.seek {
            Seek::Table(points) => SeekConfig::Table { points: points.to_vec() },
            Seek::Piecewise(segments) => SeekConfig::Piecewise {
                segments: segments
                    .iter()
                    .map(|&(max_distance, a_ms, b_ms, c_ms)| SeekSegment { max_distance, a_ms, b_ms, c_ms })
                    .collect(),
            },
        };
        let [rr, rw, wr, ww] = self.overheads_ms;
        DriveModelConfig {
            head_switch_ms: self.head_switch_ms,
            command_overhead_ms: self.command_overhead_ms,
            zero_latency: self.zero_latency,
            rotation: self.rotation,
            zero_latency_writes: self.zero_latency_writes,
            write_settle_ms: self.write_settle_ms,
            read_after_read_overhead_ms: rr,
            read_after_write_overhead_ms: rw,
            write_after_read_overhead_ms: wr,
            write_after_write_overhead_ms: ww,
            read_completion_overhead_ms: self.completion_ms[0],
            write_completion_overhead_ms: self.completion_ms[1],
            bus_sector_ms: self.bus_sector_ms,
            track_order: self.track_order,
            sparing: self.sparing,
            capacity_sectors: self.capacity_sectors,
            cache: self.cache.clone(),
            ..DriveModelConfig::basic(self.rpm, self.surfaces, zones, seek)
        }
    }
}

/// Comma-separated items wrapped at about 100 columns, each line indented by `indent`.
fn wrapped(items: impl IntoIterator<Item = String>, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && indent.len() + line.len() + item.len() + 2 > 100 {
            let _ = writeln!(out, "{indent}{}", line.trim_end());
            line.clear();
        }
        line.push_str(&item);
        line.push_str(", ");
    }
    if !line.is_empty() {
        let _ = writeln!(out, "{indent}{}", line.trim_end());
    }
    out
}

/// The Rust source of a preset module for `spec`, converted from `source_file` (a file name
/// for the header). Fails if the drive uses a form the constant tables cannot hold (a seek
/// formula, zones without DiskSim's per-zone fields, a write bus time or a bus protocol).
pub fn preset_source(spec: &DiskSpec, name: &str, source_file: &str) -> Result<String, String> {
    let m = &spec.model;
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(format!("{name}: {what}")) };
    check(m.track_skew_sectors == 0 && m.cylinder_skew_sectors == 0, "drive-wide skews")?;
    check(m.bus_sector_write_ms.is_none(), "a write bus time of its own")?;
    check(m.interface.is_none(), "a bus protocol (`interface`)")?;
    let mut s = String::new();
    let _ = writeln!(s, "//! `{name}`: DiskSim 4's validated model `{}` as parameters.", spec.name);
    let _ = writeln!(s, "//!");
    let _ = writeln!(s, "//! Generated from DiskSim's `{source_file}` by");
    let _ = writeln!(
        s,
        "//! `cargo run -p raidlab-core --example diskspec_preset -- {name} PATH/{source_file}`; do not edit."
    );
    let _ = writeln!(s, "//! The test `disksim_presets_equal_the_conversion_of_their_files` keeps it in step.");
    let _ = writeln!(s, "//!");
    let _ = writeln!(s, "//! Derived from DiskSim's data files, which carry this notice:");
    let _ = writeln!(s, "//!");
    for line in DISKSIM_NOTICE.lines() {
        let _ = writeln!(s, "//!{}{line}", if line.is_empty() { "" } else { " " });
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "use super::disksim::{{Drive, Seek, Zone}};");
    let _ = writeln!(s, "use crate::disk::{{DriveCacheConfig, PrefetchMode, RotationModel, SparingConfig, TrackOrder}};");
    let _ = writeln!(s);
    let _ = writeln!(s, "pub(super) const DRIVE: Drive = Drive {{");
    let _ = writeln!(s, "    rpm: {:?},", m.rpm);
    let _ = writeln!(s, "    surfaces: {},", m.surfaces);
    let _ = writeln!(s, "    head_switch_ms: {:?},", m.head_switch_ms);
    let _ = writeln!(s, "    write_settle_ms: {:?},", m.write_settle_ms);
    let _ = writeln!(s, "    command_overhead_ms: {:?},", m.command_overhead_ms);
    let _ = writeln!(
        s,
        "    overheads_ms: [{:?}, {:?}, {:?}, {:?}],",
        m.read_after_read_overhead_ms,
        m.read_after_write_overhead_ms,
        m.write_after_read_overhead_ms,
        m.write_after_write_overhead_ms
    );
    let _ = writeln!(s, "    completion_ms: [{:?}, {:?}],", m.read_completion_overhead_ms, m.write_completion_overhead_ms);
    let _ = writeln!(s, "    bus_sector_ms: {:?},", m.bus_sector_ms);
    let _ = writeln!(s, "    zero_latency: {},", m.zero_latency);
    let _ = writeln!(s, "    zero_latency_writes: {:?},", m.zero_latency_writes);
    let _ = writeln!(s, "    rotation: RotationModel::{:?},", m.rotation);
    let _ = writeln!(s, "    track_order: TrackOrder::{:?},", m.track_order);
    let _ = writeln!(s, "    sparing: SparingConfig::{:?},", m.sparing);
    let _ = writeln!(s, "    capacity_sectors: {:?},", m.capacity_sectors);
    let _ = writeln!(s, "    zones: &ZONES,");
    let seek_const = match &m.seek {
        SeekConfig::Table { .. } => "Seek::Table(&SEEK)",
        SeekConfig::Piecewise { .. } => "Seek::Piecewise(&SEEK)",
        SeekConfig::Formula { .. } => return Err(format!("{name}: a seek formula")),
    };
    let _ = writeln!(s, "    seek: {seek_const},");
    match &m.cache {
        None => {
            let _ = writeln!(s, "    cache: None,");
        }
        Some(c) => {
            let _ = writeln!(s, "    cache: Some(DriveCacheConfig {{");
            let _ = writeln!(s, "        segments: {},", c.segments);
            let _ = writeln!(s, "        segment_sectors: {},", c.segment_sectors);
            let _ = writeln!(s, "        separate_write_segment: {},", c.separate_write_segment);
            let _ = writeln!(s, "        write_segments: {},", c.write_segments);
            let _ = writeln!(s, "        fast_write_level: {},", c.fast_write_level);
            let _ = writeln!(s, "        combine_sequential_writes: {},", c.combine_sequential_writes);
            let _ = writeln!(s, "        read_hits_on_write_data: {},", c.read_hits_on_write_data);
            let _ = writeln!(s, "        prefetch: PrefetchMode::{:?},", c.prefetch);
            let _ = writeln!(s, "        read_ahead_max_sectors: {},", c.read_ahead_max_sectors);
            let _ = writeln!(s, "        read_ahead_over_requested: {},", c.read_ahead_over_requested);
            let _ = writeln!(s, "        read_ahead_on_idle_hit: {},", c.read_ahead_on_idle_hit);
            let _ = writeln!(s, "        read_any_free_blocks: {},", c.read_any_free_blocks);
            let _ = writeln!(s, "        stop_prefetch_in_sector: {},", c.stop_prefetch_in_sector);
            let _ = writeln!(s, "        read_hit_after_read_ms: {:?},", c.read_hit_after_read_ms);
            let _ = writeln!(s, "        read_hit_after_write_ms: {:?},", c.read_hit_after_write_ms);
            let _ = writeln!(s, "        write_hit_after_read_ms: {:?},", c.write_hit_after_read_ms);
            let _ = writeln!(s, "        write_hit_after_write_ms: {:?},", c.write_hit_after_write_ms);
            let _ = writeln!(s, "    }}),");
        }
    }
    let _ = writeln!(s, "}};");
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "/// (first cylinder, cylinders, sectors per track, first-sector offset, track-switch skew,\n\
         /// cylinder-switch skew, reserved sectors, spares, slips, remaps)"
    );
    let _ = writeln!(s, "#[rustfmt::skip]");
    let _ = writeln!(s, "const ZONES: [Zone; {}] = [", m.zones.len());
    for z in &m.zones {
        let (Some(first), Some(offset), Some(track), Some(cylinder)) =
            (z.first_cylinder, z.first_sector_offset, z.track_switch_skew_sectors, z.cylinder_switch_skew_sectors)
        else {
            return Err(format!("{name}: a zone without DiskSim's per-zone fields"));
        };
        let head = format!(
            "    ({first}, {}, {}, {offset}, {track}, {cylinder}, {}, {},",
            z.cylinders, z.sectors_per_track, z.reserved_sectors, z.spares
        );
        let remaps: Vec<String> = z.remaps.iter().map(|(d, r)| format!("({d}, {r})")).collect();
        let one_line = format!("{head} &[{}], &[{}]),", join(&z.slips), remaps.join(", "));
        if one_line.len() <= 100 {
            let _ = writeln!(s, "{one_line}");
        } else {
            let _ = writeln!(s, "{head} &[");
            s.push_str(&wrapped(z.slips.iter().map(|x| x.to_string()), "        "));
            let _ = writeln!(s, "    ], &[{}]),", remaps.join(", "));
        }
    }
    let _ = writeln!(s, "];");
    let _ = writeln!(s);
    match &m.seek {
        SeekConfig::Table { points } => {
            let _ = writeln!(s, "/// Measured seek times: (distance in cylinders, ms).");
            let _ = writeln!(s, "#[rustfmt::skip]");
            let _ = writeln!(s, "const SEEK: [(u32, f64); {}] = [", points.len());
            s.push_str(&wrapped(points.iter().map(|(d, t)| format!("({d}, {t:?})")), "    "));
        }
        SeekConfig::Piecewise { segments } => {
            let _ = writeln!(s, "/// Seek segments: (up to distance, a, b, c) of a + b·d + c·√d ms.");
            let _ = writeln!(s, "#[rustfmt::skip]");
            let _ = writeln!(s, "const SEEK: [(u32, f64, f64, f64); {}] = [", segments.len());
            let items = segments.iter().map(|g| format!("({}, {:?}, {:?}, {:?})", g.max_distance, g.a_ms, g.b_ms, g.c_ms));
            s.push_str(&wrapped(items, "    "));
        }
        SeekConfig::Formula { .. } => unreachable!("rejected above"),
    }
    let _ = writeln!(s, "];");
    Ok(s)
}

fn join(values: &[u64]) -> String {
    values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}
