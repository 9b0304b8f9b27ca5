//! Every read returns the value last written, in normal and degraded mode, on every layout,
//! with requests of every size racing on few stripes; lost data is reported, never returned.

use crate::common::*;

fn scenario(layout: &str, drives: u32, seed: u64, requests: u64, failures: &str, outstanding: u32) -> String {
    format!(
        r#"
seed = {seed}
[array]
layout = "{layout}"
drives = {drives}
stripe_unit_kib = 4
{SMALL_DRIVE}
[workload]
requests = {requests}
{MIXED_HOT_REQUESTS}
[workload.arrival]
process = "closed"
outstanding = {outstanding}
[content]
check = true
{failures}
"#
    )
}

fn check(layout: &str, drives: u32, failures: &str, expect_loss: bool) {
    let seeds = if long_tests() { 40 } else { 4 };
    let requests = if long_tests() { 40_000 } else { 4_000 };
    for seed in 1..=seeds {
        let out = run(&scenario(layout, drives, seed, requests, failures, 16));
        let s = &out.summary;
        let what = format!("{layout} seed {seed} {failures}: {s}");
        assert_eq!(s["requests_completed"].as_u64(), Some(requests), "{what}");
        assert!(f(s, "content.sectors_checked") > 10_000.0, "{what}");
        assert_eq!(f(s, "content.stale_sectors"), 0.0, "{what}");
        assert_eq!(s["data_loss"].as_bool(), Some(expect_loss), "{what}");
        let lost = f(s, "lost_read_sectors") + f(s, "lost_write_sectors");
        assert_eq!(lost > 0.0, expect_loss, "{what}");
    }
}

const ONE_FAILURE: &str = "[[failures]]\ndrive = 1\nat_s = 0.3\n";
const TWO_FAILURES: &str = "[[failures]]\ndrive = 1\nat_s = 0.3\n[[failures]]\ndrive = 2\nat_s = 0.6\n";
const SAME_MIRROR_SET: &str = "[[failures]]\ndrive = 2\nat_s = 0.3\n[[failures]]\ndrive = 3\nat_s = 0.6\n";

#[test]
fn raid5_reads_are_current_before_and_after_a_failure() {
    check("raid5", 5, "", false);
    check("raid5", 5, ONE_FAILURE, false);
}

#[test]
fn raid5_second_failure_is_data_loss_and_never_stale() {
    check("raid5", 4, TWO_FAILURES, true);
}

#[test]
fn raid1_reads_are_current_before_and_after_a_failure() {
    check("raid1", 4, "", false);
    check("raid1", 4, TWO_FAILURES, false); // one drive of each of two mirror sets
    check("raid1", 4, SAME_MIRROR_SET, true);
}

#[test]
fn raid0_reports_every_lost_read_as_loss() {
    check("raid0", 3, "", false);
    check("raid0", 3, ONE_FAILURE, true);
}

#[test]
fn raid5_degraded_reads_are_slower_and_counted() {
    let out = run(&scenario("raid5", 5, 7, 6_000, ONE_FAILURE, 8));
    let s = &out.summary;
    assert!(f(s, "response_ms.degraded_read.count") > 100.0, "{s}");
    assert!(f(s, "response_ms.degraded_read.mean") > f(s, "response_ms.read.mean"), "{s}");
}
