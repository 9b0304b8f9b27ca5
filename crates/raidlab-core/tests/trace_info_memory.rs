//! `raidlab trace info` reads a trace in memory that does not grow with the number of distinct
//! blocks it touches: the peak of the heap is measured by a counting global allocator (hence
//! a test binary of its own) on traces of 1 M and of 12 M distinct 4 KiB blocks.
//!
//! The traces are a few SPC lines of large requests (1 GiB each, 262,144 blocks), so that the
//! files stay small while the blocks are many; each block is touched twice, by two requests,
//! so the hot-20 % share has a known value (a fifth).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        grew(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const GIB: u64 = 1 << 30;

/// An SPC trace of `gib` requests of 1 GiB back to back, then the same again: `gib` × 262,144
/// distinct blocks, each touched twice.
fn trace(gib: u64) -> PathBuf {
    let path = std::env::temp_dir().join(format!("raidlab-trace-info-memory-{}-{gib}.spc", std::process::id()));
    let lines: String = (0..2 * gib).map(|i| format!("0,{},{GIB},r,{i}\n", (i % gib) * GIB / 512)).collect();
    std::fs::write(&path, lines).unwrap();
    path
}

/// Peak heap bytes of one `stats` pass over a trace of `gib` GiB of distinct blocks, and the
/// figures it gave.
fn peak_of_stats(gib: u64) -> (usize, raidlab_core::workload::trace::TraceStats) {
    let path = trace(gib);
    let cfg: raidlab_core::workload::TraceConfig =
        toml::from_str(&format!("path = {:?}\nformat = \"spc\"", path.display().to_string())).unwrap();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let stats = raidlab_core::workload::trace::stats(&cfg).unwrap();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    std::fs::remove_file(&path).unwrap();
    (peak, stats)
}

#[test]
fn trace_info_memory_does_not_grow_with_distinct_blocks() {
    // 1 M and 12 M distinct blocks (4 and 46 GiB of address space).
    let (small_peak, small) = peak_of_stats(4);
    let (large_peak, large) = peak_of_stats(46);
    eprintln!("peak heap: {small_peak} B for 1 M blocks, {large_peak} B for 12 M blocks");
    for (stats, blocks) in [(&small, 4 * 262_144), (&large, 46 * 262_144)] {
        let estimated = stats.footprint_bytes as f64 / 4096.0;
        assert!((estimated - blocks as f64).abs() <= stats.footprint_error * blocks as f64, "{estimated} of {blocks}");
        assert!((stats.locality_hot20 - 0.2).abs() <= stats.locality_hot20_error.max(1e-5), "{stats:?}");
    }
    // Exact counting held 24 B or more a block: 25 MB and 300 MB here.
    assert!(large_peak <= small_peak + small_peak / 10, "{large_peak} B against {small_peak} B");
    assert!(large_peak < 24 << 20, "{large_peak} B");
}
