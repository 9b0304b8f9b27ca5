//! PRO (seed 000) in whole simulations: its conclusions on a small array, with workloads of
//! the paper's kind (read-only, 70 % of the reads to 20 % of the space) and without locality.

use crate::common::*;

/// A RAID-5 of 4 drives and a hot spare, 4 KiB stripe units and rebuild units, 19,200 units
/// a member; open-loop 4 KiB reads (read-only, as the paper's WebSearch replays) at `u` =
/// 0.4 before the failure, addressed by `address`; drive 1 fails at 2 s and DOR rebuilds it
/// with RAIDframe's buffers (20, head separation 10), rebuild reads at low priority (VSM),
/// in `order`. Returns (rebuild time s, mean response ms while rebuilding), averaged over
/// `seeds` seeds.
fn pro_small(order: &str, address: &str, seeds: u64) -> (f64, f64) {
    let (mut time, mut response) = (0.0, 0.0);
    let drive = rebuild_test_drive(10_000);
    for seed in 1..=seeds {
        let text = format!(
            r#"
seed = {seed}
[array]
layout = "raid5"
drives = 4
stripe_unit_kib = 4
spares = 1
{drive}
[workload]
duration_s = 3000
read_fraction = 1.0
size_kib = 4
align_kib = 4
address = {address}
[workload.arrival]
process = "poisson"
target_utilization = 0.4
[[failures]]
drive = 1
at_s = 2
[rebuild]
executor = "dor"
buffer = "shared"
buffer_units = 20
head_separation_units = 10
discipline = "vsm"
unit = {{ sectors = 8 }}
order = "{order}"
end_run = true
"#
        );
        let s = run(&text).summary;
        assert_eq!(s["rebuilds"][0]["outcome"].as_str(), Some("complete"), "{order}: {s}");
        if order == "pro" {
            // The Access Monitor saw reads, and hot zones were made of them.
            assert!(f(&s["rebuilds"][0], "order.reads_seen") > 0.0 && f(&s["rebuilds"][0], "order.zones_created") > 0.0, "{s}");
        } else {
            assert!(s["rebuilds"][0].get("order").is_none(), "only PRO counts");
        }
        time += f(&s["rebuilds"][0], "rebuild_time_s");
        response += f(&s, "response_ms_by_period.rebuilding.mean");
    }
    (time / seeds as f64, response / seeds as f64)
}

/// 70 % of the reads to a fifth of the space, away from where the sequential order starts.
const LOCALITY: &str =
    r#"{ distribution = "hot_cold", hot_request_fraction = 0.7, hot_space_fraction = 0.2, hot_start_fraction = 0.6 }"#;
const UNIFORM: &str = r#"{ distribution = "uniform" }"#;

/// PRO's conclusion (seed 000 §4.3, Tables 3–4): with 70/20 locality it shortens both the
/// rebuild and the user response time during recovery, compared with DOR's sequential
/// order.
#[test]
fn with_locality_pro_shortens_the_rebuild_and_the_response_time() {
    let seeds = if long_tests() { 4 } else { 1 };
    let dor = pro_small("sequential", LOCALITY, seeds);
    let pro = pro_small("pro", LOCALITY, seeds);
    eprintln!("70/20: DOR {dor:?}, PRO {pro:?}");
    assert!(pro.0 < dor.0, "rebuild time: PRO {pro:?} against DOR {dor:?}");
    assert!(pro.1 < dor.1, "response time: PRO {pro:?} against DOR {dor:?}");
}

/// Without locality there is nothing for PRO to find: it stays within a few % of DOR.
#[test]
fn without_locality_pro_is_within_a_few_percent_of_dor() {
    let seeds = if long_tests() { 4 } else { 1 };
    let dor = pro_small("sequential", UNIFORM, seeds);
    let pro = pro_small("pro", UNIFORM, seeds);
    eprintln!("uniform: DOR {dor:?}, PRO {pro:?}");
    let time = (pro.0 - dor.0).abs() / dor.0;
    let response = (pro.1 - dor.1).abs() / dor.1;
    assert!(time < 0.05 && response < 0.05, "PRO {pro:?} against DOR {dor:?}");
}
