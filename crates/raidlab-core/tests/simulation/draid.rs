//! OpenZFS dRAID end to end: reads current and P (and Q) exact through failures and
//! rebuilds (onto the distributed spare, and onto spare drives) with writes racing them, and
//! a failure beyond the parity in a shared group is data loss.

use raidlab_core::engine::Simulation;

use crate::common::*;

/// dRAID `draid` over `drives` drives of rows of 32 KiB, under [`content_scenario`]'s load.
fn scenario(seed: u64, drives: u32, draid: &str, requests: u64, spares: u32, failures: &[(u32, f64)], rebuild: &str) -> String {
    let array = format!("layout = \"draid\"\ndrives = {drives}\ndraid = \"{draid}\"\nrow_kib = 32");
    content_scenario(&array, seed, requests, spares, failures, rebuild)
}

#[test]
fn draid1_and_draid2_read_current_data_and_keep_parity_exact_through_failures_and_rebuilds() {
    let seeds = if long_tests() { 10 } else { 1 };
    for seed in 1..=seeds {
        for (drives, draid, failures) in [
            (7, "draid1:4d:1s", vec![(2, 0.2)]),
            (7, "draid2:3d:1s", vec![(2, 0.2), (5, 0.3)]),
            (9, "draid2:4d:2s", vec![(5, 0.2), (0, 0.3)]),
        ] {
            for rebuild in ["", "order = \"pro\"", "discipline = \"pcm\"\nunit = { sectors = 12 }"] {
                // Without a spare (degraded to the end), then rebuilt onto spares.
                let (_, s) = run_checked(&scenario(seed, drives, draid, 4_000, 0, &failures, ""), true);
                assert_eq!(s["data_loss"], false, "{draid} {failures:?}");
                let text = scenario(seed, drives, draid, 6_000, failures.len() as u32, &failures, rebuild);
                let (_, s) = run_checked(&text, true);
                let what = format!("{draid} {failures:?} {rebuild:?}: {}", s["rebuilds"]);
                assert_eq!(s["data_loss"], false, "{what}");
                // Each member rebuilt once, completely; a rebuild onto the distributed spare
                // is abandoned when a second child fails under it (the spare fails with it).
                let rebuilds = s["rebuilds"].as_array().unwrap();
                let complete = rebuilds.iter().filter(|r| r["outcome"] == "complete").count();
                assert_eq!(complete, failures.len(), "{what}");
                assert!(s["members_not_rebuilt"].as_array().unwrap().is_empty(), "{what}");
                for r in rebuilds.iter().filter(|r| r["outcome"] != "complete") {
                    assert!(r["reason"].as_str().unwrap().contains("its target"), "{what}");
                }
            }
        }
    }
}

#[test]
fn more_failures_than_parity_in_a_group_is_data_loss_never_stale() {
    let (_, s) = run_checked(&scenario(2, 7, "draid1:4d:1s", 3_000, 0, &[(1, 0.2), (5, 0.3)], ""), false);
    assert_eq!(s["data_loss"], true);
    assert!(f(&s, "lost_read_sectors") > 0.0);
}

#[test]
fn a_lost_child_is_rebuilt_onto_the_distributed_spare_and_read_from_it() {
    for rebuild in ["", "discipline = \"zfs\"\nzfs = { mode = \"sequential\" }", "executor = \"sor\"\nparallel_units = 3"] {
        // 9 children, no spare drive: the distributed spare is slot 9.
        let text = scenario(1, 9, "draid2:4d:1s", 6_000, 0, &[(4, 0.2)], "") + &format!("[rebuild]\n{rebuild}\n");
        let mut sim = Simulation::new(config(&text)).unwrap_or_else(|e| panic!("{e}\n{text}"));
        sim.run(None).unwrap();
        let s = raidlab_core::api::summary(&sim, "");
        let what = format!("{rebuild:?}: {}", s["rebuilds"]);
        assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{what}");
        assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0, "{what}");
        assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{what}");
        assert_eq!(s["rebuilds"][0]["target_slot"], 9, "{what}");
        // The member now lives in the spare, which holds what it should (a scrub reads it
        // through the members' free columns).
        assert_eq!(sim.controller.member_slot(4), 9);
        let (compared, differ) = sim.controller.scrub().unwrap();
        assert!(compared > 10_000 && differ == 0, "{what}: {differ} of {compared}");
        // The spare has no drive of its own: its writes went to the children.
        assert_eq!(sim.drives[9].operations, 0);
    }
}

#[test]
fn a_child_lost_while_the_distributed_spare_holds_another_fails_the_spare_too() {
    // The spare's sectors on the second lost child are gone: raidlab fails the spare whole
    // (a conservative choice) and rebuilds both members onto the spare drives.
    let text = scenario(2, 9, "draid2:4d:1s", 6_000, 2, &[(4, 0.1), (7, 2.5)], "");
    let (_, s) = run_checked(&text, true);
    let what = format!("{}", s["rebuilds"]);
    assert_eq!(s["data_loss"], false, "{what}");
    let failures = s["failures"].as_array().unwrap();
    assert!(failures.iter().any(|f| f["drive"] == 11), "the distributed spare (slot 11) fails with child 7: {s}");
    assert!(s["members_not_rebuilt"].as_array().unwrap().is_empty(), "{what}");
}
