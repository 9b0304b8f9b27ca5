//! The thesis's normal mode (seed 004 §2.1 and §3.2, Figures 6–7): 16 IBM 0661 drives as 8
//! mirror pairs, 4 KB uniform requests, 75 % reads, 250 I/O per second. The thesis reports a
//! 90th-percentile read response of 41.65 ms and a mean drive utilization of 40.33 %.
//! Parameters are the thesis's; nothing is tuned to the published figures.

use crate::common::*;

#[test]
fn traditional_mirroring_at_250_ios_matches_the_thesis() {
    let requests = if long_tests() { 1_000_000 } else { 150_000 };
    let text = format!(
        r#"
seed = 4
[array]
layout = "raid1"
drives = 16
copies = 2
stripe_unit_kib = 4
[drive]
preset = "ibm0661"
scheduler = "fcfs"
[workload]
requests = {requests}
read_fraction = 0.75
size_kib = 4
[workload.arrival]
process = "poisson"
rate_per_s = 250
[metrics]
warmup_s = 10
"#
    );
    let out = run(&text);
    let p90 = f(&out.summary, "response_ms.read.p90");
    let util = f(&out.summary, "drives.mean_utilization");
    eprintln!("thesis normal mode: p90 read {p90:.2} ms (thesis 41.65), utilization {:.2} % (thesis 40.33)", util * 100.0);
    assert!((p90 - 41.65).abs() / 41.65 < 0.10, "p90 read {p90} ms vs 41.65 ms");
    assert!((util - 0.4033).abs() / 0.4033 < 0.10, "utilization {util} vs 0.4033");
}
