//! Rebuild onto a spare: every lost unit becomes current exactly once and holds what the lost
//! drive held, every read returns the value last written through failure, rebuild and after,
//! for every executor, order and discipline; failures during a rebuild; the idle rebuild time
//! from the drive model; and Fu et al.'s conclusions on small arrays.

use crate::common::*;

/// Small RAID scenario with a failure of drive 1 at 0.2 s, one hot spare and the given
/// `[rebuild]` keys; random reads and writes race on few stripes (closed loop).
fn scenario(layout: &str, drives: u32, seed: u64, requests: u64, rebuild: &str) -> String {
    format!(
        r#"
seed = {seed}
[array]
layout = "{layout}"
drives = {drives}
stripe_unit_kib = 4
spares = 1
{SMALL_DRIVE}
[workload]
requests = {requests}
{MIXED_HOT_REQUESTS}
[workload.arrival]
process = "closed"
outstanding = 8
think_ms = 2
[content]
check = true
[[failures]]
drive = 1
at_s = 0.2
[rebuild]
{rebuild}
"#
    )
}

/// Sectors of a member of the small drive that hold stripe units: 30 cylinders of 2 × 64
/// sectors and 20 of 2 × 48, 5,760 sectors, all in whole 8-sector (4 KiB) units.
const MEMBER_SECTORS: f64 = 5760.0;

/// The invariants of one finished run with one rebuild.
fn check_rebuilt(s: &serde_json::Value, requests: u64, what: &str) {
    assert_eq!(s["requests_completed"].as_u64(), Some(requests), "{what}");
    assert_eq!(f(s, "content.stale_sectors"), 0.0, "{what}: {s}");
    assert_eq!(f(s, "content.rebuilt_sectors_wrong"), 0.0, "{what}: {s}");
    // Every sector of the lost member checked once: each unit became current exactly once.
    assert_eq!(f(s, "content.rebuilt_sectors_checked"), MEMBER_SECTORS, "{what}: {s}");
    let r = &s["rebuilds"][0];
    assert_eq!(r["outcome"].as_str(), Some("complete"), "{what}: {s}");
    let units = f(r, "units");
    assert_eq!(f(r, "units_by_executor") + f(r, "units_by_user_writes") + f(r, "units_by_piggyback"), units, "{what}");
    assert!(!s["data_loss"].as_bool().unwrap(), "{what}");
}

/// The executor settings every scenario set covers.
const EXECUTORS: &[&str] = &[
    "executor = \"sor\"",
    "executor = \"sor\"\nparallel_units = 3",
    "executor = \"dor\"\nbuffer_units = 1",
    "executor = \"dor\"\nbuffer_units = 16",
    "executor = \"dor\"\nbuffer = \"shared\"\nbuffer_units = 4\nhead_separation_units = 2",
];
const ORDERS: &[&str] = &["sequential", "nearest", "pro"];
const DISCIPLINES: &[&str] = &[
    "discipline = \"vsm\"",
    "discipline = \"pcm\"",
    "discipline = \"rate\"\nrate_mb_s = 2",
    "discipline = \"md\"\nmd = { speed_limit_min_kib_s = 200, speed_limit_max_kib_s = 1000 }",
    "discipline = \"md\"\nmd = { idle_rule = \"2025\", sync_io_depth = 1 }",
    "discipline = \"zfs\"",
    "discipline = \"mclock\"\nmclock = { profile = \"high_recovery_ops\" }",
    "discipline = \"hw_rate\"",
];
/// Units aligned with the 8-sector stripe units, straddling them, and whole tracks.
const UNITS: &[&str] = &["{ sectors = 8 }", "{ sectors = 24 }", "{ sectors = 5 }", "{ tracks = 1 }"];

/// Zero stale reads and every lost unit current exactly once, through failure, rebuild and
/// after, for every executor × order × discipline, redirection on and off, piggybacking on
/// and off, on RAID-5 and
/// RAID-1, with user writes racing the rebuild of the same stripes. Several hundred runs by
/// default; with `RAIDLAB_LONG_TESTS=1`, more than 10,000.
#[test]
fn every_policy_rebuilds_exactly_what_was_lost_and_no_read_is_stale() {
    let seeds = if long_tests() { 14 } else { 1 };
    let requests = if long_tests() { 3_000 } else { 800 };
    let mut runs = 0;
    for seed in 1..=seeds {
        for (layout, drives) in [("raid5", 5), ("raid1", 4)] {
            for (e, executor) in EXECUTORS.iter().enumerate() {
                for order in ORDERS {
                    for (d, discipline) in DISCIPLINES.iter().enumerate() {
                        for (redirect, piggyback) in [(true, false), (false, false), (true, true)] {
                            for (u, unit) in UNITS.iter().enumerate() {
                                // The default run samples the cross product (every value of
                                // every factor still appears many times); the long run takes all.
                                if !long_tests() && !(e + d + u + redirect as usize + piggyback as usize).is_multiple_of(3) {
                                    continue;
                                }
                                let rebuild = format!(
                                    "{executor}\norder = \"{order}\"\n{discipline}\nredirect_reads = {redirect}\npiggyback = {piggyback}\nunit = {unit}"
                                );
                                let out = run(&scenario(layout, drives, seed, requests, &rebuild));
                                check_rebuilt(&out.summary, requests, &format!("{layout} seed {seed} [{rebuild}]"));
                                runs += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(runs >= if long_tests() { 10_000 } else { 150 }, "{runs} runs");
}

/// User writes race the rebuild: some units are made current by writes that cover them, and
/// the rebuild still ends exactly when none is left (c(t) reaches 1 at the end, not before).
#[test]
fn user_writes_make_units_current_and_the_rebuild_ends_when_none_is_left() {
    let rebuild = "executor = \"dor\"\ndiscipline = \"vsm\"\nunit = { sectors = 8 }";
    let text = scenario("raid5", 5, 3, 3_000, rebuild)
        .replace("min_kib = 0.5, max_kib = 24, step_kib = 0.5", "min_kib = 4, max_kib = 32, step_kib = 4")
        .replace("align_kib = 0.5", "align_kib = 4")
        .replace("[metrics]", "")
        + "[metrics]\nwindow_s = 0.01\n";
    let out = run(&text);
    let s = &out.summary;
    check_rebuilt(s, 3_000, "aligned writes");
    assert!(f(&s["rebuilds"][0], "units_by_user_writes") > 0.0, "{s}");
    let ended = f(&s["rebuilds"][0], "ended_at_s");
    let series = out.tables.iter().find(|t| t.name == "timeseries").unwrap();
    let column = |name: &str| match &series.columns.iter().find(|c| c.name == name).unwrap().data {
        raidlab_core::api::ColumnData::F64(v) => v.clone(),
        _ => panic!("{name} is not f64"),
    };
    let (ends, fraction) = (column("window_end_s"), column("rebuilt_fraction"));
    for (end, c) in ends.iter().zip(&fraction) {
        if *end <= 0.2 {
            assert!(c.is_nan(), "c(t) before the rebuild: {c}");
        } else if *end < ended - 1e-9 {
            assert!(*c < 1.0, "c({end}) = {c} before the rebuild ended at {ended}");
        } else {
            assert_eq!(*c, 1.0, "c({end}) after the rebuild ended at {ended}");
        }
    }
    // c(t) never goes down.
    let known: Vec<f64> = fraction.iter().copied().filter(|c| !c.is_nan()).collect();
    assert!(known.windows(2).all(|w| w[0] <= w[1]), "{known:?}");
}

/// A second failure in the redundancy group during the rebuild is data loss at that instant;
/// the rebuild is abandoned and no read returns a wrong value.
#[test]
fn a_second_failure_during_rebuild_is_data_loss_at_that_instant() {
    let text = scenario("raid5", 5, 2, 2_000, "executor = \"dor\"\nunit = { sectors = 8 }")
        + "[[failures]]\ndrive = 3\nat_s = 0.25\n";
    let out = run(&text);
    let s = &out.summary;
    assert_eq!(s["data_loss"].as_bool(), Some(true), "{s}");
    assert_eq!(f(s, "data_loss_at_s"), 0.25, "{s}");
    assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("abandoned"), "{s}");
    assert_eq!(f(&s["rebuilds"][0], "ended_at_s"), 0.25, "{s}");
    assert_eq!(f(s, "content.stale_sectors"), 0.0, "{s}");
    assert_eq!(f(s, "content.rebuilt_sectors_wrong"), 0.0, "{s}");
}

/// The spare being written fails: the rebuild starts again on the next spare and completes;
/// without one, the array stays degraded, and every read is still current.
#[test]
fn a_failed_target_restarts_the_rebuild_on_another_spare_or_leaves_the_array_degraded() {
    let base = scenario("raid5", 5, 4, 2_000, "executor = \"sor\"\nunit = { sectors = 16 }") + "[[failures]]\ndrive = 5\nat_s = 0.25\n";
    let two_spares = base.replace("spares = 1", "spares = 2");
    let out = run(&two_spares);
    let s = &out.summary;
    assert_eq!(s["rebuilds"].as_array().unwrap().len(), 2, "{s}");
    assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("abandoned"), "{s}");
    assert_eq!(s["rebuilds"][1]["outcome"].as_str(), Some("complete"), "{s}");
    assert_eq!(s["rebuilds"][1]["target_slot"].as_u64(), Some(6), "{s}");
    assert_eq!(f(s, "content.stale_sectors"), 0.0, "{s}");
    assert_eq!(f(s, "content.rebuilt_sectors_wrong"), 0.0, "{s}");
    let out = run(&base);
    let s = &out.summary;
    assert_eq!(s["rebuilds"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("abandoned"), "{s}");
    assert!(!s["data_loss"].as_bool().unwrap(), "{s}");
    assert_eq!(f(s, "content.stale_sectors"), 0.0, "{s}");
    assert!(f(s, "response_ms_by_period.degraded.count") > 0.0, "{s}");
}

/// Rebuild starts `delay_s` after the failure, or when a spare arrives; without a spare the
/// array stays degraded.
#[test]
fn the_rebuild_starts_after_the_delay_or_when_a_spare_arrives() {
    let delayed = scenario("raid5", 5, 1, 1_000, "unit = { sectors = 64 }\ndelay_s = 0.05");
    let s = run(&delayed).summary;
    assert!((f(&s["rebuilds"][0], "started_at_s") - 0.25).abs() < 1e-9, "{s}");
    let arriving = scenario("raid5", 5, 1, 1_000, "unit = { sectors = 64 }")
        .replace("spares = 1", "")
        + "[[failures]]\nkind = \"spare_arrives\"\nat_s = 0.3\n";
    let s = run(&arriving).summary;
    assert!((f(&s["rebuilds"][0], "started_at_s") - 0.3).abs() < 1e-9, "{s}");
    assert_eq!(s["rebuilds"][0]["target_slot"].as_u64(), Some(5), "{s}");
    assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("complete"), "{s}");
}

/// Mistakes in `[rebuild]` and the spares name their key.
#[test]
fn bad_rebuild_settings_name_their_key() {
    let err = |rebuild: &str| {
        raidlab_core::api::run_toml(&scenario("raid5", 5, 1, 10, rebuild), std::path::Path::new("."), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(err("executor = \"magic\"").starts_with("rebuild.executor: unknown executor \"magic\""));
    assert!(err("order = \"random\"").starts_with("rebuild.order: unknown order"));
    assert!(err("discipline = \"eager\"").starts_with("rebuild.discipline: unknown discipline"));
    assert!(err("buffer_units = 0").starts_with("rebuild.buffer_units:"));
    assert!(err("unit = { sectors = 7000 }").starts_with("rebuild.unit:"), "{}", err("unit = { sectors = 7000 }"));
    assert!(err("unit = { cylinders = 51 }").starts_with("rebuild.unit:"));
    assert!(err("discipline = \"rate\"").starts_with("rebuild.rate_mb_s:"));
    assert!(err("unit = { sectors = 8, tracks = 1 }").starts_with("rebuild.unit"));
    let no_failure = scenario("raid5", 5, 1, 10, "").replace("[[failures]]\ndrive = 1\nat_s = 0.2\n", "");
    let e = raidlab_core::api::run_toml(&no_failure, std::path::Path::new("."), None).err().unwrap().to_string();
    assert!(e.starts_with("array.spares:"), "{e}");
    let no_rebuild = scenario("raid5", 5, 1, 10, "").replace("[rebuild]\n", "");
    let e = raidlab_core::api::run_toml(&no_rebuild, std::path::Path::new("."), None).err().unwrap().to_string();
    assert!(e.starts_with("array.spares:"), "{e}");
    let raid0 = scenario("raid0", 3, 1, 10, "");
    let e = raidlab_core::api::run_toml(&raid0, std::path::Path::new("."), None).err().unwrap().to_string();
    assert!(e.starts_with("rebuild:"), "{e}");
}

/// Same configuration and seed, byte-identical results.
#[test]
fn a_rebuild_run_is_deterministic() {
    let text = scenario("raid5", 5, 9, 1_500, "executor = \"dor\"\ndiscipline = \"pcm\"\nunit = { tracks = 1 }");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a.summary.to_string(), b.summary.to_string());
}

/// The rebuild time of an idle array (one request, then nothing) from the drive model, unit
/// by unit: for each one-track unit in address order, the survivors' read costs the command
/// overhead, the move from the last track (a head switch, or a one-cylinder seek), the
/// rotation until the unit's first sector comes under the head, and one revolution; the
/// target writes each unit as its reads end, and finishes one unit after the last read.
/// With zero latency the wait is to the next sector boundary (half a sector on average);
/// without it, the wait is worked out from the tracks' skews: the rotation DOR misses
/// between consecutive unit reads, nothing hiding it.
fn idle_rebuild_estimate_s(zero_latency: bool) -> f64 {
    use raidlab_core::array::state::{RebuildUnits, UnitMeasure};
    use raidlab_core::disk::{mechanics::DriveModel, OpKind};
    let cfg = config(&scenario("raid5", 5, 1, 1, ""));
    let model = DriveModel::new(&cfg.drive_model().unwrap(), "drive").unwrap();
    let geometry = &model.geometry;
    let units = RebuildUnits::new(geometry, MEMBER_SECTORS as u64, UnitMeasure::Tracks(1));
    let (mut read_ns, mut write_ns) = (0.0f64, 0.0f64);
    let (mut last_unit_read, mut last_unit_write) = (0.0, 0.0);
    let (mut cylinder, mut surface, mut slot_after) = (0u32, 0u32, 0.0f64);
    for u in 0..units.count() {
        let (start, end) = units.range(u);
        let at = geometry.locate(start);
        let spt = at.sectors_per_track as f64;
        let sector_ns = model.sector_ns(at.sectors_per_track);
        let per_kind = |kind: OpKind| {
            let overhead = model.overhead_ns(kind, kind) as f64;
            let moving = model.move_ns(cylinder, surface, at.cylinder, at.surface, kind) as f64;
            let wait = if zero_latency {
                0.5 * sector_ns
            } else {
                // The head leaves the last track at slot `slot_after`; the unit's first
                // sector passes under it at its track's skew.
                let passed = (overhead + moving) / sector_ns;
                let first = model.skew(at.cylinder, at.surface) as f64;
                (first - slot_after - passed).rem_euclid(spt) * sector_ns
            };
            overhead + moving + wait + (end - start) as f64 * sector_ns
        };
        let (r, w) = (per_kind(OpKind::Read), per_kind(OpKind::Write));
        read_ns += r;
        write_ns += w;
        last_unit_read = r;
        last_unit_write = w;
        if u == 0 {
            // The first write waits for the first reads.
            write_ns += r;
        }
        cylinder = at.cylinder;
        surface = at.surface;
        slot_after = (model.skew(at.cylinder, at.surface) as f64 + (end - start) as f64).rem_euclid(spt);
    }
    let _ = last_unit_read;
    (read_ns + last_unit_write).max(write_ns) / 1e9
}

/// The simulated rebuild time of the idle array, DOR with buffers that never fill.
fn idle_rebuild_simulated_s(zero_latency: bool) -> f64 {
    let text = scenario("raid5", 5, 1, 1, "executor = \"dor\"\nbuffer_units = 100000\nunit = { tracks = 1 }")
        .replace("[content]\ncheck = true", "")
        .replace("[workload]", &format!("[drive]\nzero_latency = {zero_latency}\n[workload]"));
    let s = run(&text).summary;
    assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("complete"), "{s}");
    // The survivors are busy nearly all the time, with rebuild work: no saturation warning.
    let warnings = s["warnings"].to_string();
    assert!(!warnings.contains("working life"), "a rebuild's busy time taken for saturation: {warnings}");
    f(&s["rebuilds"][0], "rebuild_time_s")
}

/// An idle array's rebuild time matches the drive-model calculation within 2 %, with and
/// without zero-latency access; with it, whole-track units approach the media rate (one
/// revolution per track plus the switches), and without it DOR loses rotations, which the
/// calculation names.
#[test]
fn an_idle_rebuild_takes_the_time_the_drive_model_gives() {
    for zero_latency in [true, false] {
        let (simulated, estimate) = (idle_rebuild_simulated_s(zero_latency), idle_rebuild_estimate_s(zero_latency));
        let error = (simulated - estimate).abs() / estimate;
        assert!(error < 0.02, "zero latency {zero_latency}: simulated {simulated:.4} s, estimate {estimate:.4} s");
    }
    // 100 tracks of 6 ms revolutions at 10,000 rpm: the media rate alone is 0.6 s.
    let media = 100.0 * 60.0 / 10_000.0;
    let zero = idle_rebuild_simulated_s(true);
    assert!(zero > media && zero < 1.15 * media, "zero latency: {zero} s against the media's {media} s");
    assert!(idle_rebuild_simulated_s(false) > zero, "without zero latency DOR misses rotations");
}

/// A 19-disk-like setup in small: RAID-5 of 5 drives of 1,600 tracks (7,200 rpm, zero
/// latency), random track-aligned 4 KiB reads at u = 0.45 before the failure (R:W = 1:0),
/// a failure at 5 s, one-track units, DOR: Fu et al.'s setup (seed 001 §2) on a drive small
/// enough for a test. Returns (rebuild time s, mean response ms while rebuilding) over
/// `seeds` seeds.
fn fu_small(rebuild: &str, seeds: u64) -> (f64, f64) {
    let (mut time, mut response) = (0.0, 0.0);
    let drive = rebuild_test_drive(7200);
    for seed in 1..=seeds {
        let text = format!(
            r#"
seed = {seed}
[array]
layout = "raid5"
drives = 5
stripe_unit_kib = 4
spares = 1
{drive}
[workload]
duration_s = 2000
read_fraction = 1.0
size_kib = 4
align_kib = 4
[workload.arrival]
process = "poisson"
target_utilization = 0.45
[[failures]]
drive = 2
at_s = 5
[rebuild]
{rebuild}
"#
        );
        let s = run(&text).summary;
        assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("complete"), "{rebuild}: {s}");
        time += f(&s["rebuilds"][0], "rebuild_time_s");
        response += f(&s, "response_ms_by_period.rebuilding.mean");
    }
    (time / seeds as f64, response / seeds as f64)
}

/// Fu et al.'s conclusions (seed 001 §2.1–§2.5, §3), on a small array: VSM beats PCM on both
/// the response time and the rebuild time; larger buffers shorten the rebuild; larger
/// rebuild units shorten it and raise the response time; piggybacking and read redirection
/// shorten it.
#[test]
fn fu_conclusions_hold_on_a_small_array() {
    let seeds = if long_tests() { 6 } else { 2 };
    let vsm = fu_small("discipline = \"vsm\"\nbuffer_units = 16", seeds);
    let pcm = fu_small("discipline = \"pcm\"\nbuffer_units = 16", seeds);
    assert!(vsm.0 < pcm.0 && vsm.1 < pcm.1, "VSM (time s, response ms) {vsm:?} against PCM {pcm:?}");
    let small_buffer = fu_small("buffer_units = 1", seeds);
    let large_buffer = fu_small("buffer_units = 64", seeds);
    assert!(large_buffer.0 < small_buffer.0, "B = 64: {large_buffer:?}, B = 1: {small_buffer:?}");
    let one_track = fu_small("unit = { tracks = 1 }", seeds);
    let four_tracks = fu_small("unit = { tracks = 4 }", seeds);
    assert!(
        four_tracks.0 < one_track.0 && four_tracks.1 > one_track.1,
        "4-track units {four_tracks:?} against 1-track {one_track:?}"
    );
    let piggybacked = fu_small("piggyback = true", seeds);
    assert!(piggybacked.0 < one_track.0, "piggybacking {piggybacked:?}, without {one_track:?}");
    let redirected = fu_small("redirect_reads = true", seeds);
    let not_redirected = fu_small("redirect_reads = false", seeds);
    assert!(redirected.0 < not_redirected.0, "redirection on {redirected:?}, off {not_redirected:?}");
    eprintln!(
        "vsm {vsm:?} pcm {pcm:?} B=1 {small_buffer:?} B=64 {large_buffer:?} RU=1 {one_track:?} RU=4 {four_tracks:?} \
         redirect {redirected:?} no redirect {not_redirected:?} piggyback {piggybacked:?}"
    );
}

/// The `rate` discipline caps each drive's rebuild bandwidth: on an idle array the rebuild
/// takes the lost member's bytes over the rate (each survivor reads all of them), whatever
/// the executor, once the rate is well below the drive's own speed.
#[test]
fn the_rate_discipline_caps_rebuild_bandwidth() {
    for executor in ["sor", "dor"] {
        let rate_mb_s = 0.5;
        let text = scenario(
            "raid5",
            5,
            1,
            1,
            &format!("executor = \"{executor}\"\ndiscipline = \"rate\"\nrate_mb_s = {rate_mb_s}\nunit = {{ sectors = 64 }}"),
        )
        .replace("[content]\ncheck = true", "");
        let s = run(&text).summary;
        let expected = MEMBER_SECTORS * 512.0 / (rate_mb_s * 1e6);
        let took = f(&s["rebuilds"][0], "rebuild_time_s");
        assert!((took - expected).abs() / expected < 0.02, "{executor}: {took} s against {expected} s");
    }
}

/// `rebuild.rotational_latency`, worked out by hand on an idle mirror of 60 `ibm0661`
/// cylinders (5,040 blocks of 4 KB, 84 per cylinder) rebuilt a block at a time, nearest
/// first (so in address order: read a block, write it, move on). Without rotational latency
/// each block costs its read's and its write's transfer (a sixth of a 13.8953 ms revolution
/// each), and each cylinder one seek of one cylinder (2.47 ms) on both drives. The drive's own
/// latency adds a uniform wait of half a revolution on average to each of the 10,080 ops.
#[test]
fn rebuild_without_rotational_latency_costs_transfers_and_seeks_only() {
    let text = |latency: &str| {
        format!(
            "seed = 3\n[array]\nlayout = \"raid1\"\ndrives = 2\nspares = 1\nstripe_unit_kib = 4\n\
             [drive]\npreset = \"ibm0661\"\ncapacity_sectors = 40320\n[workload]\nrequests = 1000\n\
             [workload.arrival]\nprocess = \"poisson\"\nrate_per_s = 0.01\n[[failures]]\ndrive = 1\nat_s = 1\n\
             [rebuild]\nexecutor = \"sor\"\norder = \"nearest\"\nunit = {{ sectors = 8 }}\nend_run = true\n{latency}"
        )
    };
    let time = |latency: &str| f(&run(&text(latency)).summary["rebuilds"][0], "rebuild_time_s");
    let revolution_s = 60.0 / 4318.0;
    let (blocks, cylinders) = (5040.0, 60.0);
    let seek_one_s = (2.0 + 0.01 + 0.46) / 1000.0;
    let expected = blocks * 2.0 * revolution_s / 6.0 + (cylinders - 1.0) * 2.0 * seek_one_s;
    let none = time("rotational_latency = \"none\"\n");
    assert!((none / expected - 1.0).abs() < 0.005, "{none} s against {expected} s");
    let drive = time("");
    let latency = blocks * 2.0 * revolution_s / 2.0;
    assert!(((drive - none) / latency - 1.0).abs() < 0.02, "the drive's latency adds {} s, expected {latency} s", drive - none);
}

/// DOR's blocked time, worked out by hand on a two-survivor array: a 3-drive RAID-5 of
/// zero-latency drives (4 tracks a cylinder) loses drive 0 at 1 ms onto a spare and rebuilds
/// it a track at a time under VSM, B = 4 units per survivor. A burst of 200 user reads at
/// t = 0, all on survivor 1, keeps it busy until U (the last one's response), and it reads
/// unit 0 from U to U + r₁ (its first rebuild read, seek included). Survivor 2 reads units
/// 0–3 from 1 ms to 1 ms + its first read + 3 r and then waits, blocked, until unit 0 is read
/// everywhere. After that each of its reads starts when survivor 1 starts one four tracks,
/// one cylinder, behind it: at the same place in its cylinder, so the two end together and
/// neither waits again. Survivor 1 is never blocked. Each survivor reads in one run (one
/// idle period), and reads every track once.
#[test]
fn dor_blocked_time_on_two_survivors_is_the_wait_worked_out_by_hand() {
    let path = std::env::temp_dir().join(format!("raidlab-blocked-{}.spc", std::process::id()));
    // 4 KiB reads of stripe unit 1 (sectors 96–191 of the array, the first track of drive 1
    // under the left-symmetric rotation).
    let burst: String = (0..200).map(|i| format!("0,{},4096,r,0\n", 96 + 8 * (i % 12))).collect();
    std::fs::write(&path, burst).unwrap();
    let drive = rebuild_test_drive(7200);
    let text = format!(
        "seed = 1\n[array]\nlayout = \"raid5\"\ndrives = 3\nstripe_unit_kib = 48\nspares = 1\n{drive}\n\
         [workload.trace]\npath = \"{}\"\nformat = \"spc\"\n[metrics]\nrecord_responses = true\nrecord_rebuild_progress = true\nwindow_s = 0.25\n\
         [[failures]]\ndrive = 0\nat_s = 0.001\n\
         [rebuild]\nexecutor = \"dor\"\ndiscipline = \"vsm\"\nunit = {{ tracks = 1 }}\nbuffer_units = 4\nend_run = true\n",
        path.display()
    );
    let out = run(&text);
    std::fs::remove_file(&path).unwrap();
    let s = &out.summary;
    assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{s}");
    assert_eq!(f(s, "response_ms.degraded_read.count"), 0.0, "the burst reads survivor 1 only: {s}");
    let user_done = table_column(&out, "responses", "response_ns").iter().copied().fold(0.0, f64::max) / 1e9;
    let blocked = table_column(&out, "drives", "rebuild_blocked_s");
    let first = table_column(&out, "drives", "rebuild_run_first_busy_s");
    let busy = table_column(&out, "drives", "rebuild_busy_s");
    let operations = table_column(&out, "drives", "rebuild_operations");
    let runs = table_column(&out, "drives", "rebuild_runs");
    let tracks = 400.0 * 4.0;
    assert_eq!((operations[1], operations[2]), (tracks, tracks), "each survivor reads every track once");
    assert_eq!((runs[1], runs[2]), (1.0, 1.0), "one idle period each");
    // Survivor 2's reads after its first all take one revolution and a head switch (its
    // first four are in cylinder 0; the later ones the same, a cylinder seek every fourth).
    let revolution = 60.0 / 7200.0;
    let read = revolution + 0.3e-3 + 0.2e-3;
    let expected = user_done + first[1] - (0.001 + first[2] + 3.0 * read);
    assert!(expected > 0.5, "the burst keeps survivor 1 busy for a while: {user_done} s");
    // Within a quarter of a millisecond, 3 % of one read: the three reads' exact times are
    // the drive model's (its track skew and switch overlap), not this sum's.
    assert!((blocked[2] - expected).abs() < 0.25e-3, "survivor 2 blocked {} s, expected {expected} s", blocked[2]);
    assert_eq!(blocked[1], 0.0, "survivor 1 is the slowest");
    assert!(busy[2] > tracks * revolution, "{busy:?}");
    // The progress table counts the same reads, window by window (0.25 s); survivor 2 reads
    // nothing in the windows it spends blocked (from about 35 ms to about 0.98 s).
    let progress_drive = table_column(&out, "rebuild_progress", "drive");
    let in_window = table_column(&out, "rebuild_progress", "rebuild_operations");
    let cumulative = table_column(&out, "rebuild_progress", "cumulative_rebuild_operations");
    for drive in [1.0, 2.0] {
        let rows: Vec<usize> = (0..progress_drive.len()).filter(|&i| progress_drive[i] == drive).collect();
        assert_eq!(rows.iter().map(|&i| in_window[i]).sum::<f64>(), tracks, "drive {drive}");
        assert_eq!(cumulative[*rows.last().unwrap()], tracks, "drive {drive}");
    }
    let survivor2: Vec<f64> = (0..progress_drive.len()).filter(|&i| progress_drive[i] == 2.0).map(|i| in_window[i]).collect();
    assert_eq!(survivor2[..3], [4.0, 0.0, 0.0], "{survivor2:?}");
}

/// `workload.arrival.service_time_ms` defines the load from a stated service time, as Fu et
/// al. do (seed 001 §2: u = 0.45 at 11.54 ms per 4 KB access): N = 19 drives of random 4 KiB
/// reads, one disk operation each, give 0.45 × 19 / 11.54 ms = 740.9 requests/s, with no
/// pilot runs.
#[test]
fn a_stated_service_time_sets_the_rate_of_a_target_utilization() {
    let text = "[array]\nlayout = \"raid5\"\ndrives = 19\nstripe_unit_kib = 64\n[drive]\npreset = \"ibm18es\"\n\
                [workload]\nrequests = 10\nread_fraction = 1.0\nsize_kib = 4\nalign_kib = 4\n\
                [workload.arrival]\nprocess = \"poisson\"\ntarget_utilization = 0.45\nservice_time_ms = 11.54\n";
    let out = run(text);
    let rate = f(&out.summary, "arrival_rate_per_s");
    assert!((rate - 0.45 * 19.0 / 0.01154).abs() < 1e-9, "{rate}");
    let e = raidlab_core::api::run_toml(&text.replace("target_utilization = 0.45", "rate_per_s = 700"), std::path::Path::new("."), None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("workload.arrival.service_time_ms:"), "{e}");
    let e = raidlab_core::api::run_toml(&text.replace("11.54", "-1"), std::path::Path::new("."), None).unwrap_err().to_string();
    assert!(e.starts_with("workload.arrival.service_time_ms: must be positive"), "{e}");
}
