//! Real block traces drive the array end to end: every record becomes exactly one request,
//! folded onto the array, at the trace's own (scaled) times, with every read checked.

use crate::common::*;

fn replay(format: &str, file: &str, extra: &str) -> serde_json::Value {
    let path = format!("{}/../../../shared/traces/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = format!(
        r#"
[array]
layout = "raid5"
drives = 5
stripe_unit_kib = 64
[drive]
preset = "ibm0661"
[workload]
arrival = {{ process = "trace" }}
[workload.trace]
path = "{path}"
format = "{format}"
{extra}
[content]
check = true
[[failures]]
drive = 0
at_s = 5
"#
    );
    run(&text).summary
}

#[test]
fn msr_sample_replays_every_record_once() {
    // 1,000 records, 508 reads, spanning 127.2 s (shared/traces/README.md).
    let s = replay("msr", "msr-cambridge1-sample.csv", "");
    assert_eq!(s["requests_completed"], 1000);
    assert_eq!(s["response_ms"]["read"]["count"], 508);
    assert_eq!(s["response_ms"]["write"]["count"], 492);
    assert!(f(&s, "simulated_seconds") > 127.2);
    assert_eq!(f(&s, "content.stale_sectors"), 0.0);
    assert!(f(&s, "response_ms.degraded_read.count") > 0.0);
}

#[test]
fn time_scale_compresses_the_trace() {
    let s = replay("msr", "msr-cambridge1-sample.csv", "time_scale = 0.1");
    let secs = f(&s, "simulated_seconds");
    assert!(secs > 12.7 && secs < 20.0, "{secs}");
}

#[test]
fn compressed_traces_replay_too() {
    let s = replay("systor", "systor17-traces-sample.csv.gz", "");
    assert_eq!(s["requests_completed"], 999);
    let s = replay("tencent", "tencent-cbs-cloud_storage-sample.bz2", "max_requests = 5000");
    assert_eq!(s["requests_completed"], 5000);
    assert_eq!(f(&s, "content.stale_sectors"), 0.0);
}
