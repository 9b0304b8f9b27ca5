//! `cargo run -p raidlab-core --example diskspec_info -- PATH.parv [...]`: import DiskSim
//! parameter files and print, for each, a summary of the drive raidlab makes of it and every
//! warning (each parameter or block not modelled, with its file and line).
use std::path::Path;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: diskspec_info PATH.parv [...]");
        std::process::exit(2);
    }
    for path in paths {
        let spec = match raidlab_core::disk::diskspec::load(Path::new(&path)) {
            Ok(spec) => spec,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        };
        let m = &spec.model;
        let slips: usize = m.zones.iter().map(|z| z.slips.len()).sum();
        println!("{path}: `{}`", spec.name);
        println!(
            "  {} rpm, {} surfaces, {} zones ({} slips), sparing {:?}, track order {:?}",
            m.rpm,
            m.surfaces,
            m.zones.len(),
            slips,
            m.sparing,
            m.track_order
        );
        println!(
            "  block count {}, zones map {}, exported {}",
            spec.block_count,
            spec.mapped_sectors,
            m.capacity_sectors.unwrap_or(spec.mapped_sectors)
        );
        println!(
            "  head switch {} ms, write settle {} ms, overheads {} / {} / {} / {} ms, completion {} / {} ms, bus {} ms/sector, zero latency {} (writes {:?})",
            m.head_switch_ms,
            m.write_settle_ms,
            m.read_after_read_overhead_ms,
            m.read_after_write_overhead_ms,
            m.write_after_read_overhead_ms,
            m.write_after_write_overhead_ms,
            m.read_completion_overhead_ms,
            m.write_completion_overhead_ms,
            m.bus_sector_ms,
            m.zero_latency,
            m.zero_latency_writes
        );
        if let Some(write) = m.bus_sector_write_ms {
            println!("  bus towards the drive (writes) {write} ms/sector");
        }
        if let Some(interface) = &m.interface {
            println!("  bus protocol: {interface:?}");
        }
        println!("  {} warnings:", spec.warnings.len());
        for w in &spec.warnings {
            println!("    {w}");
        }
    }
}
