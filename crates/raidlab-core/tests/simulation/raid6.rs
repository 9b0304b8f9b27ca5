//! RAID-6 (P+Q) end to end: every read returns the value last written, and P and Q stay
//! exact (a scrub finds every unit on a working member holding what the layout says), through
//! one and two failures in either order, rebuilds onto spares with writes racing them, and a
//! third failure, which is data loss and is reported as such.

use raidlab_core::engine::Simulation;

use crate::common::*;

/// A 6-drive RAID-6 of small drives under [`content_scenario`]'s load.
fn scenario(seed: u64, requests: u64, spares: u32, failures: &[(u32, f64)], rebuild: &str) -> String {
    content_scenario("layout = \"raid6\"\ndrives = 6", seed, requests, spares, failures, rebuild)
}

/// [`run_checked`] with the scrub.
fn run_and_scrub(text: &str) -> (Simulation, serde_json::Value) {
    run_checked(text, true)
}

const EXECUTORS: &[&str] = &["", "executor = \"dor\"\nbuffer_units = 4", "discipline = \"pcm\"", "order = \"pro\""];

#[test]
fn one_and_two_failures_in_either_order_read_current_data_and_keep_p_and_q_exact() {
    let seeds = if long_tests() { 20 } else { 2 };
    for seed in 1..=seeds {
        // Without a rebuild: degraded reads and writes with one, then two drives lost.
        for failures in [vec![(1, 0.2)], vec![(1, 0.2), (4, 0.4)], vec![(4, 0.2), (1, 0.4)], vec![(0, 0.2), (1, 0.3)]] {
            let (_, s) = run_and_scrub(&scenario(seed, 3_000, 0, &failures, ""));
            assert_eq!(s["data_loss"], false, "{failures:?}");
            assert_eq!(f(&s, "lost_read_sectors") + f(&s, "lost_write_sectors"), 0.0, "{failures:?}");
            assert_eq!(s["requests_completed"].as_u64(), Some(3_000));
        }
    }
}

#[test]
fn both_lost_drives_are_rebuilt_with_writes_racing_the_rebuilds() {
    let seeds = if long_tests() { 10 } else { 1 };
    for seed in 1..=seeds {
        for rebuild in EXECUTORS {
            // The second drive fails while the first is being rebuilt (the rebuild goes on
            // from the drives left), in either order of the two.
            for failures in [vec![(1, 0.2), (4, 0.3)], vec![(4, 0.2), (1, 0.3)]] {
                let (sim, s) = run_and_scrub(&scenario(seed, 6_000, 2, &failures, rebuild));
                let what = format!("{rebuild:?} {failures:?}: {}", s["rebuilds"]);
                assert_eq!(s["data_loss"], false, "{what}");
                let rebuilds = s["rebuilds"].as_array().unwrap();
                assert_eq!(rebuilds.len(), 2, "{what}");
                assert!(rebuilds.iter().all(|r| r["outcome"] == "complete"), "{what}");
                // Each rebuild was checked sector by sector as it was written: both members
                // whole.
                let member_sectors = sim.controller.layout().member_sectors() as f64;
                assert_eq!(f(&s, "content.rebuilt_sectors_checked"), 2.0 * member_sectors, "{what}");
            }
        }
    }
}

#[test]
fn a_third_failure_is_data_loss_and_is_never_read_as_data() {
    // (Writes after the loss keep data only, so P and Q are not scrubbed.)
    let failures = [(1, 0.2), (4, 0.3), (2, 0.4)];
    let (_, s) = run_checked(&scenario(3, 3_000, 0, &failures, ""), false);
    assert_eq!(s["data_loss"], true);
    assert!(f(&s, "lost_read_sectors") > 0.0, "{s}");
    assert_eq!(f(&s, "content.stale_sectors"), 0.0);
}

#[test]
fn refused_settings_name_their_key() {
    let err = |text: &str| Simulation::new(config(text)).map(|_| ()).unwrap_err().to_string();
    let three = scenario(1, 100, 0, &[], "").replace("drives = 6", "drives = 3");
    assert!(err(&three).contains("array.drives: RAID-6 needs at least 4 drives"), "{}", err(&three));
    let piggyback = scenario(1, 100, 1, &[(1, 0.2)], "piggyback = true");
    assert!(err(&piggyback).contains("piggyback"), "{}", err(&piggyback));
}
