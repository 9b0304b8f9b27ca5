//! One drive, FCFS, Poisson arrivals, uniform random one-block reads is an M/G/1 queue: the
//! mean response time must match Pollaczek–Khinchine computed from the drive model's own
//! service-time moments.

use std::sync::Arc;

use raidlab_core::disk::{presets, Drive, DriveModel, OpKind, RotationModel};
use raidlab_core::sim::{RngStream, StreamId};

use crate::common::*;

/// Mean and second moment (ns, ns²) of the service time of random 4 KiB reads, served one
/// after another (FCFS serves the arrival order, so this is the stationary sequence).
fn service_moments() -> (f64, f64) {
    let model = Arc::new(DriveModel::new(&presets::preset("ibm0661").unwrap(), "drive").unwrap());
    let mut drive = Drive::new(model.clone(), RotationModel::Uniform, RngStream::new(99, StreamId::Drive(0)));
    let mut rng = RngStream::new(98, StreamId::Requests);
    let slots = model.capacity_sectors() / 8;
    let n = 400_000;
    let (mut s1, mut s2) = (0.0, 0.0);
    for _ in 0..n {
        let s = drive.service(0, rng.below(slots) * 8, 8, OpKind::Read).total() as f64;
        s1 += s;
        s2 += s * s;
    }
    (s1 / n as f64, s2 / n as f64)
}

#[test]
fn single_drive_fcfs_matches_pollaczek_khinchine() {
    let (es, es2) = service_moments();
    let requests = if long_tests() { 2_000_000 } else { 400_000 };
    for rho in [0.2, 0.5, 0.8] {
        let lambda = rho / es; // per ns
        let expected = es + lambda * es2 / (2.0 * (1.0 - rho));
        let text = format!(
            r#"
seed = 5
[array]
layout = "raid0"
drives = 1
stripe_unit_kib = 4
[drive]
preset = "ibm0661"
scheduler = "fcfs"
rotation = "uniform"
[workload]
requests = {requests}
read_fraction = 1.0
size_kib = 4
[workload.arrival]
process = "poisson"
rate_per_s = {rate}
[metrics]
warmup_s = 20
"#,
            rate = lambda * 1e9
        );
        let out = run(&text);
        let mean_ms = f(&out.summary, "response_ms.read.mean");
        let expected_ms = expected / 1e6;
        let err = (mean_ms - expected_ms).abs() / expected_ms;
        eprintln!("rho {rho}: simulated {mean_ms:.3} ms, P-K {expected_ms:.3} ms, error {:.2} %", err * 100.0);
        assert!(err < 0.03, "rho {rho}: simulated {mean_ms} ms vs P-K {expected_ms} ms");
        let util = f(&out.summary, "drives.mean_utilization");
        assert!((util - rho).abs() < 0.02, "utilization {util} vs {rho}");
    }
}

/// `target_utilization` chooses the Poisson rate from the drive model's own mean service time
/// and the layout's disk operations per request; the utilization reached must be close.
#[test]
fn target_utilization_is_reached() {
    let cases = [
        ("raid0", 1, "ibm0661", "size_kib = 4", 0.5),
        ("raid0", 1, "ibm18es", "size_kib = 4", 0.3),
        ("raid1", 4, "ibm0661", "size_kib = 4\nread_fraction = 0.75", 0.4),
        ("raid5", 8, "ibm0661", "size = { distribution = \"uniform\", min_kib = 4, max_kib = 64 }\nread_fraction = 0.7", 0.6),
    ];
    for (layout, drives, preset, workload, target) in cases {
        let text = format!(
            "[array]\nlayout = \"{layout}\"\ndrives = {drives}\nstripe_unit_kib = 64\n[drive]\npreset = \"{preset}\"\n\
             [workload]\nrequests = 60000\n{workload}\n[workload.arrival]\nprocess = \"poisson\"\ntarget_utilization = {target}\n"
        );
        let util = f(&run(&text).summary, "drives.mean_utilization");
        assert!((util - target).abs() / target < 0.06, "{layout} {preset}: reached {util}, target {target}");
    }
}
