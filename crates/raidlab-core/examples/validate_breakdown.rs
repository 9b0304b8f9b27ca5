//! `cargo run --release -p raidlab-core --example validate_breakdown -- NAME.parv NAME.trace`:
//! replay a DiskSim validate trace on one drive (closed loop, one request outstanding, as
//! `api::validate_toml` does) and print one CSV row per request with the simulated service
//! time's parts next to the measured time — for diagnosing which part of the model differs.
use std::path::Path;
use std::sync::Arc;

use raidlab_core::disk::{diskspec, Drive, DriveModel, OpKind, RotationModel};
use raidlab_core::sim::{RngStream, StreamId};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (spec, trace) = match args.as_slice() {
        [_, spec, trace] => (spec, trace),
        _ => {
            eprintln!("usage: validate_breakdown NAME.parv NAME.trace");
            std::process::exit(2);
        }
    };
    let spec = diskspec::load(Path::new(spec)).unwrap_or_else(|e| panic!("{e}"));
    let model = Arc::new(DriveModel::new(&spec.model, "drive.model").unwrap_or_else(|e| panic!("{e}")));
    let capacity = model.capacity_sectors();
    let mut drive = Drive::new(model, RotationModel::Exact, RngStream::new(1, StreamId::Drive(0)));
    let requests = raidlab_core::workload::trace::read_validate_trace(Path::new(trace)).unwrap_or_else(|e| panic!("{e}"));
    println!("line,is_write,lbn,blocks,measured_ms,simulated_ms,overhead_ms,seek_ms,rotation_ms,transfer_ms,bus_ms,wait_ms,track_left,cylinder");
    let mut now = 0u64;
    let ms = |ns: u64| ns as f64 / 1e6;
    for r in &requests {
        let sectors = r.blocks as u32;
        let lba = (r.lbn % capacity).min(capacity - r.blocks);
        let kind = if r.is_write { OpKind::Write } else { OpKind::Read };
        let s = drive.service(now, lba, sectors, kind);
        println!(
            "{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{}",
            r.line,
            r.is_write as u8,
            r.lbn,
            r.blocks,
            ms(r.measured_ns),
            ms(s.total()),
            ms(s.overhead),
            ms(s.seek),
            ms(s.rotation),
            ms(s.transfer),
            ms(s.bus),
            ms(s.wait),
            drive.model.geometry.locate_run(lba + r.blocks - 1).sectors - 1,
            drive.model.geometry.locate_run(lba).address.cylinder
        );
        now += s.total() + r.next_interarrival_ns;
    }
}
