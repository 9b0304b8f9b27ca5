//! Simulator throughput: simulated requests per wall-clock second for the reference cases of
//! `raidlab bench` (`simulate`), and for the drive model alone on the one-drive cases
//! (`drive_alone`). Run with `cargo bench -p raidlab-core`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use raidlab_core::request::RequestRecord;
use raidlab_core::disk::{Drive, OpKind};
use raidlab_core::sim::{RngStream, StreamId};
use raidlab_core::api;

const REQUESTS: u64 = 200_000;

fn simulate(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(REQUESTS));
    // The trace case writes its trace file each time it runs, which is not what it measures:
    // `raidlab bench` (and `examples/bench.rs`) time its replay alone.
    for case in api::bench_cases().iter().filter(|case| **case != api::TRACE_CASE) {
        group.bench_function(*case, |b| {
            b.iter(|| api::bench(case, REQUESTS, None).expect("bench case runs"));
        });
    }
    group.finish();
}

/// The drive model alone: a one-drive case's requests (generated beforehand) served first
/// come, first served by its drive, each starting when it has arrived and the one before it
/// is done. No event queue, controller, drive queue or metrics: what a simulator around the
/// same drive model could reach if all of that cost nothing (`docs/performance.md`).
fn drive_alone(c: &mut Criterion) {
    let mut group = c.benchmark_group("drive_alone");
    group.sample_size(10);
    group.throughput(Throughput::Elements(REQUESTS));
    for case in ["single_drive", "ibm18es_cached"] {
        let (sim, mut workload) = api::bench_case_workload(case, REQUESTS).expect("the case builds");
        let drive = &sim.drives[0].drive;
        let (model, rotation, seed) = (drive.model.clone(), drive.rotation(), sim.config.seed);
        let mut requests: Vec<RequestRecord> = Vec::new();
        while let Some(request) = workload.next(0).expect("synthetic requests") {
            requests.push(request);
        }
        group.bench_function(case, |b| {
            b.iter(|| {
                let mut drive = Drive::new(model.clone(), rotation, RngStream::new(seed, StreamId::Drive(0)));
                let mut free = 0;
                for r in &requests {
                    let start = r.arrival.max(free);
                    let kind = if r.is_write { OpKind::Write } else { OpKind::Read };
                    free = start + drive.service(start, r.lba, r.sectors, kind).total();
                }
                free
            });
        });
    }
    group.finish();
}

criterion_group!(benches, simulate, drive_alone);
criterion_main!(benches);
