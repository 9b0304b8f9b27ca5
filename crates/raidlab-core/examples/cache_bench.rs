//! Times the buffer cache's simulator on an `oracleGeneral` trace, one policy at a time, with
//! no Python in the way (for profiling: `perf record -e cpu-clock target/release/examples/
//! cache_bench FILE 100000 lru`).
//!
//! ```text
//! cargo run --release -p raidlab-core --example cache_bench -- FILE SIZE POLICY...
//! ```
//!
//! Each policy runs on 8 drives with drive 0 failed; the line gives its misses, the wall
//! time, the process's CPU time (Linux: `/proc/self/stat`) and requests per CPU second.

use std::path::Path;
use std::time::Instant;

/// The process's user + system CPU time, s (`None` where `/proc` is missing).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    // Clock ticks of 1/100 s, the kernel's USER_HZ on every Linux we run on.
    Some((user + system) / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: cache_bench FILE SIZE POLICY...");
        std::process::exit(2);
    }
    let (path, size) = (&args[1], &args[2]);
    for policy in &args[3..] {
        let config = format!(
            "trace = {{ path = {path:?}, format = \"oracleGeneral\" }}\npolicies = [{policy:?}]\nsizes = [{size}]\ndrives = [8]\nfailed_drive = 0\n"
        );
        let (wall, cpu) = (Instant::now(), cpu_seconds());
        let report = match raidlab_core::cache::sim::run_toml(&config, Path::new("."), None) {
            Ok(Some(report)) => report,
            Ok(None) => unreachable!("no progress callback, so no cancellation"),
            Err(err) => {
                eprintln!("error: {err}");
                std::process::exit(2);
            }
        };
        let wall = wall.elapsed().as_secs_f64();
        let cpu = cpu.zip(cpu_seconds()).map(|(before, after)| after - before);
        let report: serde_json::Value = serde_json::from_str(&report).expect("the report is JSON");
        let total = &report["cells"][0]["total"];
        let requests = total["requests"].as_f64().unwrap_or(0.0);
        match cpu {
            Some(cpu) => println!(
                "{policy:10} misses {} wall {wall:.3} s CPU {cpu:.2} s {:.2} M requests/CPU s",
                total["misses"],
                requests / cpu / 1e6
            ),
            None => println!("{policy:10} misses {} wall {wall:.3} s {:.2} M requests/s", total["misses"], requests / wall / 1e6),
        }
    }
}
