//! Parity declustering end to end: reads current and parity exact (a scrub at the end)
//! through a failure and its rebuild with writes racing it, a second failure in a shared
//! stripe is data loss, and an idle rebuild reads exactly the declustering ratio
//! α = (G − 1)/(C − 1) of the lost member from each survivor.

use crate::common::*;

/// Parity declustering of `drives` drives in stripes of `width`, under
/// [`content_scenario`]'s load.
fn scenario(seed: u64, drives: u32, width: u32, requests: u64, spares: u32, failures: &[(u32, f64)], rebuild: &str) -> String {
    let array = format!("layout = \"declustered\"\ndrives = {drives}\nstripe_width = {width}");
    content_scenario(&array, seed, requests, spares, failures, rebuild)
}

#[test]
fn reads_are_current_and_parity_exact_through_a_failure_and_its_rebuild() {
    let seeds = if long_tests() { 10 } else { 1 };
    for seed in 1..=seeds {
        for (drives, width) in [(7, 3), (8, 4), (6, 6)] {
            for rebuild in ["", "executor = \"sor\"", "order = \"pro\"", "discipline = \"pcm\"\nunit = { sectors = 12 }"] {
                let (sim, s) = run_checked(&scenario(seed, drives, width, 6_000, 1, &[(2, 0.2)], rebuild), true);
                let what = format!("{drives} drives, width {width}, {rebuild:?}: {}", s["rebuilds"]);
                assert_eq!(s["data_loss"], false, "{what}");
                assert_eq!(s["rebuilds"][0]["outcome"], "complete", "{what}");
                let member_sectors = sim.controller.layout().member_sectors() as f64;
                assert_eq!(f(&s, "content.rebuilt_sectors_checked"), member_sectors, "{what}");
            }
        }
    }
}

#[test]
fn a_second_failure_sharing_a_stripe_is_data_loss_never_stale() {
    // The complete design: every two drives share stripes.
    let (_, s) = run_checked(&scenario(2, 7, 3, 3_000, 0, &[(1, 0.2), (5, 0.3)], ""), false);
    assert_eq!(s["data_loss"], true);
    assert!(f(&s, "lost_read_sectors") > 0.0);
}

#[test]
fn an_idle_rebuild_reads_the_declustering_ratio_of_each_survivor() {
    for (drives, width) in [(7, 3), (8, 4), (9, 5)] {
        let text = scenario(1, drives, width, 1, 1, &[(3, 0.0)], "");
        let (sim, s) = run_checked(&text, true);
        assert_eq!(s["rebuilds"][0]["outcome"], "complete");
        let alpha = (width - 1) as f64 / (drives - 1) as f64;
        let member = sim.controller.layout().member_sectors() as f64;
        for slot in (0..drives).filter(|&d| d != 3) {
            let read = sim.drives[slot as usize].rebuild_sectors as f64;
            assert!((read / member - alpha).abs() < 1e-9, "{drives} drives, width {width}: slot {slot} read {read} of {member}");
        }
        // The target wrote the whole member.
        assert_eq!(sim.drives[drives as usize].rebuild_sectors as f64, member);
    }
}
