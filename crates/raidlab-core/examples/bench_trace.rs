//! `cargo run --release --example bench_trace -- REQUESTS FILE`: write the requests of the
//! `ibm18es_cached` bench case to FILE as a DiskSim ascii trace, the trace the
//! `ibm18es_cached_trace` case replays (and the one DiskSim's speed was measured on), so that
//! `make bench` can time a whole `raidlab run` of it with `/usr/bin/time`.
use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let requests: u64 = args.next().and_then(|a| a.parse().ok()).expect("usage: bench_trace REQUESTS FILE");
    let path = args.next().expect("usage: bench_trace REQUESTS FILE");
    let (_, mut workload) = raidlab_core::api::bench_case_workload("ibm18es_cached", requests).expect("the bench case builds");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("the trace file can be created"));
    // As the bench case writes it: arrival in ms to the ns, device 0, block, blocks, flags 1
    // for a read and 0 for a write.
    while let Some(r) = workload.next(0).expect("synthetic requests") {
        let (ms, ns) = (r.arrival / 1_000_000, r.arrival % 1_000_000);
        writeln!(out, "{ms}.{ns:06} 0 {} {} {}", r.lba, r.sectors, u8::from(!r.is_write)).expect("the trace is written");
    }
    out.flush().expect("the trace is written");
}
