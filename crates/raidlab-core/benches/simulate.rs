//! Simulator throughput: simulated requests per wall-clock second for the two reference
//! cases of `raidlab bench` (one drive, random 4 KiB reads; 8-drive RAID-5, 70 % reads,
//! 4–64 KiB). Run with `cargo bench -p raidlab-core`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use raidlab_core::api;

const REQUESTS: u64 = 200_000;

fn simulate(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group.throughput(Throughput::Elements(REQUESTS));
    for case in api::bench_cases() {
        group.bench_function(*case, |b| {
            b.iter(|| api::bench(case, REQUESTS, None).expect("bench case runs"));
        });
    }
    group.finish();
}

criterion_group!(benches, simulate);
criterion_main!(benches);
