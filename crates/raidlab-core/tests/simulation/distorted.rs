//! Distorted mirrors (the thesis's DM, `layout::distorted`) through whole runs under the
//! content model: whole-block writes move their slave copies to free slots near the
//! partner's head, partial writes update them in place, and every read, in normal and
//! degraded mode, returns the value last written; a lost drive is rebuilt a block at a time
//! from its partner (its master blocks from where the partner keeps their copies, its copies
//! from the partner's master blocks) and every rebuilt sector is proved. A second failure
//! loses data only in the failed drive's pair. Track and cylinder units rebuild in the
//! thesis's two phases (`order = "replacement"`); reads may be redirected to the
//! replacement. Piggybacking during a DM rebuild, and crashes, are refused by name until
//! they are built.

use raidlab_core::layout::distorted::DistortionMap;

use crate::common::*;

/// Six drives (three pairs) of the small drive, 4 KB units, DFF `dff`, unaligned requests of
/// half a block to four blocks (so writes of whole blocks and of parts of one both occur).
fn scenario(dff: f64, band: u64, failures: &str) -> String {
    format!(
        "seed = 17\n[array]\nlayout = \"distorted\"\ndrives = 6\ndff = {dff}\ndm_band_units = {band}\nstripe_unit_kib = 4\n\
         {SMALL_DRIVE}\n[workload]\nrequests = 5000\n{MIXED_HOT_REQUESTS}\n\
         [workload.arrival]\nprocess = \"closed\"\noutstanding = 8\nthink_ms = 2\n[content]\ncheck = true\n{failures}"
    )
}

/// Blocks whose slave copy is no longer where the array started it, over every drive.
fn moved_copies(sim: &raidlab_core::engine::Simulation) -> u64 {
    let map = sim
        .controller
        .state()
        .placement()
        .and_then(|p| p.as_any().downcast_ref::<DistortionMap>())
        .expect("DM's map");
    let g = map.geometry;
    (0..6u32)
        .map(|drive| {
            (0..g.master_slots())
                .filter(|&k| map.slave_slot(drive, k) != g.initial_slave(k))
                .count() as u64
        })
        .sum()
}

#[test]
fn every_read_returns_the_last_write_while_slave_copies_move() {
    for (dff, band) in [(0.8, 0), (0.8, 64), (0.5, 0), (0.95, 16)] {
        for failures in [
            "",
            "[[failures]]\ndrive = 2\nat_s = 0.3\n",
            "[[failures]]\ndrive = 1\nat_s = 0.2\n[[failures]]\ndrive = 4\nat_s = 0.4\n",
        ] {
            let what = format!("dff {dff}, band {band}, {failures:?}");
            let text = scenario(dff, band, failures);
            let sim = simulate(&text);
            let content = sim.controller.content().expect("content check on");
            assert_eq!(
                content.stats.stale_sectors, 0,
                "{what}: {:?}",
                content.first_stale
            );
            assert!(
                content.stats.sectors_checked > 10_000,
                "{what}: reads were checked"
            );
            assert!(
                moved_copies(&sim) > 100,
                "{what}: whole-block writes moved their copies"
            );
            let s = run(&text).summary;
            assert_eq!(s["requests_completed"], 5000, "{what}");
            assert_eq!(s["data_loss"], false, "{what}");
            if !failures.is_empty() {
                assert!(
                    f(&s, "response_ms.degraded_read.count") > 0.0,
                    "{what}: reads served by a survivor's slave copies"
                );
            }
        }
    }
}

/// The free slots stay free and the copies distinct: each drive's map is a bijection between
/// its partner's master blocks and its held slave slots, with the rest free.
#[test]
fn the_distortion_map_stays_a_bijection() {
    let sim = simulate(&scenario(0.8, 0, "[[failures]]\ndrive = 3\nat_s = 0.3\n"));
    let map = sim
        .controller
        .state()
        .placement()
        .and_then(|p| p.as_any().downcast_ref::<DistortionMap>())
        .unwrap();
    let g = map.geometry;
    for drive in 0..6 {
        let mut held = 0;
        for t in 0..g.slave_slots() {
            if let Some(k) = map.held_by(drive, t) {
                assert_eq!(map.slave_slot(drive, k), t, "drive {drive} slot {t}");
                held += 1;
            }
        }
        assert_eq!(held, g.master_slots(), "drive {drive}");
        assert_eq!(
            map.free_slots(drive) as u64,
            g.slave_slots() - g.master_slots(),
            "drive {drive}: no slot leaked"
        );
    }
}

#[test]
fn a_second_failure_loses_data_only_in_the_pair() {
    let apart = run(&scenario(
        0.8,
        0,
        "[[failures]]\ndrive = 2\nat_s = 0.2\n[[failures]]\ndrive = 5\nat_s = 0.25\n",
    ))
    .summary;
    assert_eq!(apart["data_loss"], false, "{apart}");
    let pair = run(&scenario(
        0.8,
        0,
        "[[failures]]\ndrive = 2\nat_s = 0.2\n[[failures]]\ndrive = 3\nat_s = 0.25\n",
    ))
    .summary;
    assert_eq!(pair["data_loss"], true, "{pair}");
}

#[test]
fn bad_keys_rebuilds_and_crashes_are_refused_by_name() {
    let error = |text: &str| {
        raidlab_core::config::Config::from_toml(text, std::path::Path::new("."))
            .and_then(|c| raidlab_core::engine::Simulation::new(c).map(|_| ()))
            .unwrap_err()
            .to_string()
    };
    for dff in ["0.0", "1.0", "1.5", "-0.2"] {
        let err = error(&scenario(0.8, 0, "").replace("dff = 0.8", &format!("dff = {dff}")));
        assert!(
            err.starts_with(
                "array.dff: the disk-fill factor is a fraction strictly between 0 and 1"
            ),
            "{err}"
        );
    }
    let err = error(&scenario(0.8, 0, "").replace("dff = 0.8", "dff = \"high\""));
    assert!(err.starts_with("array.dff:"), "{err}");
    let err = error(&scenario(0.8, 0, "").replace("layout = \"distorted\"", "layout = \"raid1\""));
    assert!(
        err.contains("array.dff") && err.contains("distorted"),
        "a DM key given to RAID-1: {err}"
    );
    let with_rebuild = |rebuild: &str| {
        error(&scenario(0.8, 0, &format!("[[failures]]\ndrive = 2\nat_s = 0.2\n[rebuild]\n{rebuild}")).replace("drives = 6\n", "drives = 6\nspares = 1\n"))
    };
    let err = with_rebuild("unit = { sectors = 8 }\npiggyback = true\n");
    assert!(err.starts_with("rebuild: layout distorted: a distorted mirror's rebuild runs without piggybacking"), "{err}");
    let err = error(&scenario(
        0.8,
        0,
        "[[failures]]\nkind = \"crash\"\nat_s = 0.2\n",
    ));
    assert!(
        err.starts_with("failures[0].kind: a crash of a distorted mirror"),
        "{err}"
    );
}

/// Random arrays (2–8 drives, DFF, bands), random unaligned workloads and up to three
/// failures at random instants: every read returns the last write, and data is lost exactly
/// when both drives of a pair have failed. 200 scenarios by default; `RAIDLAB_LONG_TESTS=1`
/// runs 10,000.
#[test]
fn random_scenarios_read_only_what_was_last_written() {
    let scenarios = if long_tests() { 10_000 } else { 200 };
    // A small deterministic generator, so a failing scenario is named by its number.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    for scenario in 0..scenarios {
        let drives = 2 * (1 + next(4)) as u32;
        let dff = [0.3, 0.5, 0.8, 0.9][next(4) as usize];
        let band = [0, 16, 40][next(3) as usize];
        let mut failed = Vec::new();
        let mut failures = String::new();
        for _ in 0..next(4) {
            let drive = next(drives as u64) as u32;
            if !failed.contains(&drive) {
                failed.push(drive);
                failures += &format!("[[failures]]\ndrive = {drive}\nat_s = {:.3}\n", 0.05 + next(400) as f64 / 1000.0);
            }
        }
        let text = format!(
            "seed = {scenario}\n[array]\nlayout = \"distorted\"\ndrives = {drives}\ndff = {dff}\ndm_band_units = {band}\n\
             stripe_unit_kib = 4\n{SMALL_DRIVE}\n[workload]\nrequests = 600\n{MIXED_HOT_REQUESTS}\n\
             [workload.arrival]\nprocess = \"closed\"\noutstanding = 6\nthink_ms = 1\n[content]\ncheck = true\n{failures}"
        );
        let s = run(&text).summary;
        let what = format!("scenario {scenario}: {drives} drives, dff {dff}, band {band}, failed {failed:?}");
        assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}: {s}");
        assert_eq!(s["requests_completed"], 600, "{what}");
        let pair_lost = failed.iter().any(|d| failed.contains(&(d ^ 1)));
        assert_eq!(s["data_loss"], pair_lost, "{what}");
    }
}

/// A lost drive rebuilt onto a spare while whole-block and partial writes go on: every
/// rebuilt sector holds what the lost drive should (the content model proves each against the
/// distortion map as it is then), every read returns the last write, and the rebuild
/// completes. Block units (the thesis's block algorithm), track and cylinder units in the
/// thesis's two phases (`replacement`) or by `fetch`; both executors, both eligibility rules,
/// and a second failure outside the pair during the rebuild.
#[test]
fn a_lost_drive_is_rebuilt_and_every_rebuilt_sector_is_current() {
    let rebuild = |executor: &str, discipline: &str, unit: &str, order: &str| {
        // Reads redirected to the replacement with units given in sectors (a copy's current
        // slot says whether the replacement holds it), not with the others.
        let redirect = unit.contains("sectors");
        format!(
            "[rebuild]\nexecutor = \"{executor}\"\ndiscipline = \"{discipline}\"\norder = \"{order}\"\n\
             unit = {unit}\nredirect_reads = {redirect}\n"
        )
    };
    let settings = [
        ("sor", "vsm", "{ sectors = 8 }", "nearest"),
        ("dor", "vsm", "{ sectors = 8 }", "nearest"),
        ("sor", "pcm", "{ sectors = 8 }", "fetch"),
        ("sor", "vsm_set", "{ sectors = 8 }", "nearest"),
        ("sor", "vsm", "{ tracks = 1 }", "replacement"),
        ("dor", "pcm", "{ tracks = 1 }", "fetch"),
        ("sor", "vsm", "{ cylinders = 1 }", "replacement"),
        ("sor", "vsm", "{ sectors = 40 }", "sequential"),
    ];
    for (executor, discipline, unit, order) in settings {
        let rebuild = |executor: &str, discipline: &str| rebuild(executor, discipline, unit, order);
        for failures in ["[[failures]]\ndrive = 2\nat_s = 0.1\n", "[[failures]]\ndrive = 1\nat_s = 0.1\n[[failures]]\ndrive = 4\nat_s = 0.3\n"] {
            let what = format!("{executor}/{discipline}/{unit}/{order}, {failures:?}");
            let text = scenario(0.8, 0, &format!("{failures}{}", rebuild(executor, discipline)))
                .replace("drives = 6\n", "drives = 6\nspares = 2\n")
                .replace("requests = 5000", "requests = 20000");
            let s = run(&text).summary;
            assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}: {s}");
            assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
            assert!(f(&s, "content.rebuilt_sectors_checked") > 1000.0, "{what}");
            assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{what}: {}", s["rebuilds"]);
            if unit.contains("sectors = 8") {
                assert!(f(&s["rebuilds"][0], "units_by_user_writes") > 0.0, "{what}: user writes made blocks current");
            }
            assert_eq!(s["data_loss"], false, "{what}");
        }
    }
}
