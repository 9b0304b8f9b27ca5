//! Parity declustering end to end: reads current and parity exact (a scrub at the end)
//! through a failure and its rebuild with writes racing it, a second failure in a shared
//! stripe is data loss, an idle rebuild reads exactly the declustering ratio
//! α = (G − 1)/(C − 1) of the lost member from each survivor, and lasts what the drive model
//! says.

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

/// The idle rebuild's time, from the drive model: each survivor reads only α of the lost
/// member, a unit at a time in address order, and the spare writes all of it. With
/// α = 2/8 (9 drives, stripes of 3) the spare is the bottleneck: its writes go back to back in
/// address order from the first unit's end, so the rebuild lasts one unit's read plus the
/// sum of the spare's writes, each timed by the drive model from where the last one left
/// the head. Within 2 %: the queue sees the writes one event after each unit's last read.
#[test]
fn an_idle_declustered_rebuild_lasts_what_the_drive_model_says() {
    use raidlab_core::disk::{Drive, DriveModel, OpKind};
    use raidlab_core::sim::{RngStream, StreamId};
    use std::sync::Arc;
    let (drives, width, unit) = (9u32, 3u32, 8u64);
    let text = scenario(1, drives, width, 1, 1, &[(3, 0.0)], &format!("unit = {{ sectors = {unit} }}"))
        .replace("[content]\ncheck = true\n", "");
    let config = config(&text);
    let sim = simulate(&text);
    assert_eq!(sim.rebuilds[0].outcome, "complete");
    let took = (sim.rebuilds[0].ended_at.unwrap() - sim.rebuilds[0].started_at) as f64 / 1e9;
    let model = Arc::new(DriveModel::new(&config.drive_model().unwrap(), "drive.model").unwrap());
    let member = sim.controller.layout().member_sectors();
    let mut spare = Drive::new(model.clone(), config.drive.rotation.unwrap_or(model.config.rotation), RngStream::new(1, StreamId::Drive(0)));
    let mut reader = Drive::new(model.clone(), config.drive.rotation.unwrap_or(model.config.rotation), RngStream::new(1, StreamId::Drive(1)));
    let first_read = reader.service(0, 0, unit as u32, OpKind::Read).total();
    let mut now = first_read;
    for lba in (0..member).step_by(unit as usize) {
        now += spare.service(now, lba, unit as u32, OpKind::Write).total();
    }
    let expected = now as f64 / 1e9;
    // The survivors' reads are a quarter of the member each: they are not what takes time.
    let busiest_survivor = (0..drives).filter(|&d| d != 3).map(|d| sim.drives[d as usize].rebuild_busy_ns).max().unwrap();
    assert!((busiest_survivor as f64 / 1e9) < 0.8 * took, "a survivor was busy {busiest_survivor} ns of {took} s");
    assert!((took - expected).abs() / expected < 0.02, "the rebuild took {took} s; the drive model says {expected} s");
    eprintln!("declustered idle rebuild: {took} s, drive model {expected} s");
}

/// A survivor is charged only for what it reads: under the `rate` discipline (each drive's
/// rebuild reads capped at `rate_mb_s`) an idle declustered rebuild reads α = 2/8 of the
/// member from each survivor, so it lasts α × member / rate, a quarter of what a RAID-5 of the
/// same drives takes (every survivor reads the whole member). The units a survivor holds
/// nothing of cost it no time and no share of its rate.
#[test]
fn a_rate_capped_declustered_rebuild_lasts_alpha_of_the_member_over_the_rate() {
    let (drives, width, rate_mb_s) = (9u32, 3u32, 0.05);
    let rebuild = format!("discipline = \"rate\"\nrate_mb_s = {rate_mb_s}\nunit = {{ sectors = 8 }}");
    let text = scenario(1, drives, width, 1, 1, &[(3, 0.0)], &rebuild).replace("[content]\ncheck = true\n", "");
    let sim = simulate(&text);
    assert_eq!(sim.rebuilds[0].outcome, "complete");
    let took = (sim.rebuilds[0].ended_at.unwrap() - sim.rebuilds[0].started_at) as f64 / 1e9;
    let member = sim.controller.layout().member_sectors() as f64 * 512.0;
    let alpha = (width - 1) as f64 / (drives - 1) as f64;
    let expected = alpha * member / (rate_mb_s * 1e6);
    assert!((took - expected).abs() / expected < 0.02, "{took} s against α × member / rate = {expected} s");
}
