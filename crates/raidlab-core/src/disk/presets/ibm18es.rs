//! `ibm18es`: DiskSim 4's validated model `IBM_DNES-309170W_validate` as parameters.
//!
//! Generated from DiskSim's `ibm18es.parv` by
//! `cargo run -p raidlab-core --example diskspec_preset -- ibm18es PATH/ibm18es.parv`; do not edit.
//! The test `disksim_presets_equal_the_conversion_of_their_files` keeps it in step.
//!
//! Derived from DiskSim's data files, which carry this notice:
//!
//! DiskSim Storage Subsystem Simulation Environment (Version 4.0)
//! Revision Authors: John Bucy, Greg Ganger
//! Contributors: John Griffin, Jiri Schindler, Steve Schlosser
//!
//! Copyright (c) of Carnegie Mellon University, 2001-2008.
//!
//! This software is being provided by the copyright holders under the
//! following license. By obtaining, using and/or copying this software,
//! you agree that you have read, understood, and will comply with the
//! following terms and conditions:
//!
//! Permission to reproduce, use, and prepare derivative works of this
//! software is granted provided the copyright and "No Warranty" statements
//! are included with all reproductions and derivative works and associated
//! documentation. This software may also be redistributed without charge
//! provided that the copyright and "No Warranty" statements are included
//! in all redistributions.
//!
//! NO WARRANTY. THIS SOFTWARE IS FURNISHED ON AN "AS IS" BASIS.
//! CARNEGIE MELLON UNIVERSITY MAKES NO WARRANTIES OF ANY KIND, EITHER
//! EXPRESSED OR IMPLIED AS TO THE MATTER INCLUDING, BUT NOT LIMITED
//! TO: WARRANTY OF FITNESS FOR PURPOSE OR MERCHANTABILITY, EXCLUSIVITY
//! OF RESULTS OR RESULTS OBTAINED FROM USE OF THIS SOFTWARE. CARNEGIE
//! MELLON UNIVERSITY DOES NOT MAKE ANY WARRANTY OF ANY KIND WITH RESPECT
//! TO FREEDOM FROM PATENT, TRADEMARK, OR COPYRIGHT INFRINGEMENT.
//! COPYRIGHT HOLDERS WILL BEAR NO LIABILITY FOR ANY USE OF THIS SOFTWARE
//! OR DOCUMENTATION.

use super::disksim::{Drive, Seek, Zone};
use crate::disk::{DriveCacheConfig, PrefetchMode, RotationModel, SparingConfig, TrackOrder};

pub(super) const DRIVE: Drive = Drive {
    rpm: 7200.0,
    surfaces: 5,
    head_switch_ms: 0.062,
    write_settle_ms: 0.126,
    command_overhead_ms: 0.0,
    overheads_ms: [0.25229, 0.42386, 0.49386, 0.79329],
    completion_ms: [0.0, 0.0],
    bus_sector_ms: 0.101,
    zero_latency: false,
    zero_latency_writes: None,
    rotation: RotationModel::Exact,
    track_order: TrackOrder::Ascending,
    sparing: SparingConfig::SectorsAtEnd,
    capacity_sectors: Some(17916240),
    zones: &ZONES,
    seek: Seek::Table(&SEEK),
    cache: Some(DriveCacheConfig {
        segments: 7,
        segment_sectors: 511,
        separate_write_segment: true,
        write_segments: 1,
        fast_write_level: 2,
        combine_sequential_writes: true,
        read_hits_on_write_data: false,
        prefetch: PrefetchMode::Segment,
        read_ahead_max_sectors: 511,
        read_ahead_over_requested: false,
        read_ahead_on_idle_hit: false,
        read_any_free_blocks: true,
        stop_prefetch_in_sector: false,
        read_hit_after_read_ms: 0.082,
        read_hit_after_write_ms: 0.121,
        write_hit_after_read_ms: 0.083,
        write_hit_after_write_ms: 0.1852,
    }),
};

/// (first cylinder, cylinders, sectors per track, first-sector offset, track-switch skew,
/// cylinder-switch skew, reserved sectors, spares, slips, remaps)
#[rustfmt::skip]
const ZONES: [Zone; 55] = [
    (0, 257, 390, 0, 58, 101, 1950, 0, &[199078, 346029, 384777], &[]),
    (258, 120, 390, 0, 58, 101, 0, 0, &[], &[]),
    (378, 136, 374, 0, 56, 97, 0, 0, &[187771], &[]),
    (515, 256, 374, 0, 56, 97, 0, 0, &[77785, 147167, 472742, 474976, 476837, 478697], &[]),
    (772, 256, 374, 0, 56, 97, 0, 0, &[342827], &[]),
    (1029, 235, 374, 0, 56, 96, 0, 0, &[351931, 369022], &[]),
    (1264, 21, 364, 0, 54, 94, 0, 0, &[24279], &[]),
    (1286, 256, 364, 0, 54, 94, 0, 0, &[78771, 113027, 114838, 116649, 118459, 265129], &[]),
    (1543, 256, 364, 0, 54, 94, 0, 0, &[379094, 391728, 426906], &[]),
    (1800, 256, 364, 0, 54, 94, 0, 0, &[56898, 70255, 196598], &[]),
    (2057, 191, 364, 0, 54, 94, 0, 0, &[34960], &[]),
    (2248, 65, 351, 0, 52, 92, 0, 0, &[18228, 42782], &[]),
    (2314, 256, 351, 0, 52, 91, 0, 0, &[22840, 63847], &[]),
    (2571, 256, 351, 0, 52, 91, 0, 0, &[4035, 100826, 132204], &[]),
    (2828, 256, 351, 0, 52, 91, 0, 0, &[312896], &[]),
    (3085, 256, 351, 0, 52, 91, 0, 0, &[121620, 123366, 125112, 126858, 260927], &[]),
    (3342, 125, 351, 0, 52, 91, 0, 0, &[], &[]),
    (3467, 131, 338, 0, 51, 88, 0, 0, &[], &[]),
    (3599, 256, 338, 0, 51, 88, 0, 0, &[4266], &[]),
    (3856, 256, 338, 0, 51, 87, 0, 0, &[209877, 404981], &[]),
    (4113, 256, 338, 0, 51, 87, 0, 0, &[], &[]),
    (4370, 134, 338, 0, 51, 87, 0, 0, &[], &[]),
    (4504, 122, 325, 0, 49, 84, 0, 0, &[], &[]),
    (4627, 256, 325, 0, 49, 84, 0, 0, &[], &[]),
    (4884, 256, 325, 0, 49, 84, 0, 0, &[
        129101, 160983, 162600, 164217, 165833, 177150, 178767, 180383, 182000,
    ], &[]),
    (5141, 256, 325, 0, 49, 84, 0, 0, &[], &[]),
    (5398, 129, 325, 0, 49, 84, 0, 0, &[
        13886, 15503, 17119, 18736, 20353, 21969, 23586, 25203, 26819, 28436, 30053, 31669, 33286,
        34903, 36519, 38136, 39753, 205627,
    ], &[]),
    (5527, 127, 312, 0, 46, 81, 0, 0, &[], &[]),
    (5655, 256, 312, 0, 46, 81, 0, 0, &[], &[]),
    (5912, 256, 312, 0, 46, 81, 0, 0, &[], &[]),
    (6169, 256, 312, 0, 46, 81, 0, 0, &[], &[]),
    (6426, 256, 312, 0, 46, 81, 0, 0, &[83483, 101403, 232893], &[]),
    (6683, 256, 312, 0, 46, 81, 0, 0, &[154397], &[]),
    (6940, 105, 312, 0, 46, 81, 0, 0, &[26857], &[]),
    (7045, 151, 286, 0, 43, 74, 0, 0, &[], &[]),
    (7197, 256, 286, 0, 43, 74, 0, 0, &[], &[]),
    (7454, 256, 286, 0, 43, 74, 0, 0, &[3115], &[]),
    (7711, 256, 286, 0, 43, 74, 0, 0, &[], &[]),
    (7968, 256, 286, 0, 43, 74, 0, 0, &[], &[]),
    (8225, 256, 286, 0, 43, 74, 0, 0, &[143315, 347114], &[]),
    (8482, 256, 286, 0, 43, 74, 0, 0, &[54636], &[]),
    (8739, 23, 286, 0, 43, 74, 0, 0, &[], &[]),
    (8762, 233, 273, 0, 41, 71, 0, 0, &[], &[]),
    (8996, 256, 273, 0, 41, 70, 0, 0, &[], &[]),
    (9253, 256, 273, 0, 41, 70, 0, 0, &[
        223351, 224709, 226067, 227425, 228783, 230141, 231772, 233130, 234488, 235846, 237204,
        238562, 239920, 241278, 242636, 243994, 245352, 246710, 248068, 249426, 250784, 252142,
        253500, 254858, 256216, 257574, 258932, 260290, 261648, 263006, 264364, 265722, 299474,
        343674, 345032, 346390, 347748, 349106,
    ], &[]),
    (9510, 256, 273, 0, 41, 70, 0, 0, &[182458], &[]),
    (9767, 49, 273, 0, 41, 70, 0, 0, &[], &[]),
    (9816, 207, 260, 0, 39, 67, 0, 0, &[], &[]),
    (10024, 256, 260, 0, 39, 66, 0, 0, &[18332], &[]),
    (10281, 256, 260, 0, 39, 66, 0, 0, &[], &[]),
    (10538, 145, 260, 0, 39, 66, 0, 0, &[], &[]),
    (10683, 111, 247, 0, 37, 63, 0, 0, &[8843], &[]),
    (10795, 256, 247, 0, 37, 63, 0, 0, &[49817], &[]),
    (11052, 256, 247, 0, 37, 63, 0, 0, &[], &[]),
    (11309, 165, 247, 0, 37, 63, 0, 0, &[52886], &[]),
];

/// Measured seek times: (distance in cylinders, ms).
#[rustfmt::skip]
const SEEK: [(u32, f64); 151] = [
    (1, 1.062), (2, 1.477), (3, 1.558), (4, 1.586), (5, 1.625), (6, 1.718), (7, 1.722), (8, 1.719),
    (9, 1.749), (10, 1.02), (12, 1.823), (14, 1.863), (16, 1.894), (18, 1.898), (20, 2.0),
    (25, 2.221), (30, 2.261), (35, 2.311), (40, 2.411), (45, 2.366), (50, 2.514), (60, 2.458),
    (70, 2.456), (80, 2.598), (90, 2.616), (100, 2.622), (125, 2.94), (150, 2.86), (175, 3.645),
    (200, 3.782), (225, 3.807), (250, 3.929), (275, 3.997), (300, 4.004), (325, 3.997),
    (350, 4.143), (375, 4.206), (400, 4.122), (425, 4.088), (450, 4.21), (475, 4.331),
    (500, 4.187), (600, 4.451), (700, 4.582), (800, 4.694), (900, 4.848), (1000, 4.958),
    (1100, 5.049), (1200, 5.209), (1300, 5.243), (1400, 5.357), (1500, 5.47), (1600, 5.561),
    (1700, 5.693), (1800, 5.794), (1900, 5.868), (2000, 5.895), (2100, 6.032), (2200, 6.151),
    (2300, 6.219), (2400, 6.369), (2500, 6.516), (2600, 6.631), (2700, 6.724), (2800, 6.839),
    (2900, 6.891), (3000, 7.078), (3100, 7.233), (3200, 7.253), (3300, 7.373), (3400, 1.026),
    (3500, 7.643), (3600, 7.621), (3700, 7.694), (3800, 7.733), (3900, 7.736), (4000, 7.7),
    (4100, 7.787), (4200, 7.793), (4300, 7.842), (4400, 7.919), (4500, 7.971), (4600, 8.006),
    (4700, 8.057), (4800, 8.077), (4900, 8.126), (5000, 7.833), (5100, 7.917), (5200, 8.329),
    (5300, 8.447), (5400, 8.752), (5500, 8.882), (5600, 8.762), (5700, 8.915), (5800, 8.957),
    (5900, 9.121), (6000, 9.067), (6100, 9.33), (6200, 9.293), (6300, 9.387), (6400, 9.382),
    (6500, 9.48), (6600, 9.596), (6700, 9.64), (6800, 9.762), (6900, 9.823), (7000, 9.702),
    (7100, 9.811), (7200, 9.849), (7300, 10.141), (7400, 10.073), (7500, 10.178), (7600, 10.224),
    (7700, 10.316), (7800, 10.294), (7900, 10.403), (8000, 10.439), (8100, 10.504), (8200, 10.601),
    (8300, 10.62), (8400, 10.772), (8500, 10.745), (8600, 10.966), (8700, 10.909), (8800, 11.047),
    (8900, 11.137), (9000, 11.164), (9100, 11.281), (9200, 11.334), (9300, 11.257), (9400, 11.345),
    (9500, 11.486), (9600, 11.504), (9700, 11.645), (9800, 11.702), (9900, 11.66), (10000, 11.813),
    (10100, 11.86), (10200, 11.906), (10300, 12.1), (10400, 12.075), (10500, 12.11),
    (10600, 12.234), (10700, 12.229), (10800, 12.391), (10900, 12.388), (11000, 12.445),
    (11100, 12.604), (11200, 12.655), (11300, 12.662), (11377, 12.853),
];
