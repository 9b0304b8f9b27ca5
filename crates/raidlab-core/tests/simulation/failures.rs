//! A failure with requests in flight: every request still completes exactly once, aborted
//! plans are re-planned, and degraded reads are recorded.

use crate::common::*;

#[test]
fn every_request_completes_once_across_a_failure_under_load() {
    for (layout, drives) in [("raid5", 5), ("raid1", 4), ("raid0", 4)] {
        let text = format!(
            r#"
seed = 3
[array]
layout = "{layout}"
drives = {drives}
stripe_unit_kib = 8
[drive]
preset = "ibm0661"
scheduler = "sstf"
[workload]
requests = 5000
read_fraction = 0.6
size = {{ distribution = "uniform", min_kib = 4, max_kib = 32 }}
[workload.arrival]
process = "closed"
outstanding = 24
[content]
check = true
[[failures]]
drive = 1
at_s = 5.0
"#
        );
        let sim = simulate(&text);
        assert_eq!(sim.recorder.completed, 5000, "{layout}");
        assert_eq!(sim.controller.in_flight(), 0, "{layout}");
        // At 24 outstanding the failed drive had work queued: some plans had to be re-made.
        assert!(sim.controller.stats.replans > 0, "{layout}: no plan was aborted");
        let content = sim.controller.content().unwrap();
        assert_eq!(content.stats.stale_sectors, 0, "{layout}: {:?}", content.first_stale);
        let failed = &sim.drives[1];
        assert_eq!(failed.failed_at, Some(5_000_000_000));
        // The failed drive does nothing after its failure.
        let others_ops: u64 = sim.drives.iter().map(|d| d.operations).sum::<u64>() - failed.operations;
        assert!(others_ops > failed.operations, "{layout}");
    }
}
