//! The hot loop allocates nothing per event: doubling the number of simulated requests adds
//! only a handful of allocations (vectors growing by doubling: the time-series windows, the
//! slabs while the number of requests in flight is still climbing).
//!
//! A counting global allocator needs its own test binary, hence this file.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `Simulation::run` alone (set-up excluded).
fn allocations_during_run(layout: &str, drives: u32, requests: u64) -> u64 {
    let text = format!(
        r#"
[array]
layout = "{layout}"
drives = {drives}
stripe_unit_kib = 16
[drive]
preset = "ibm0661"
scheduler = "sstf"
[workload]
requests = {requests}
read_fraction = 0.7
size = {{ distribution = "uniform", min_kib = 4, max_kib = 64 }}
[workload.arrival]
process = "poisson"
target_utilization = 0.5
[[failures]]
drive = 1
at_s = 30
"#
    );
    let config = raidlab_core::Config::from_toml(&text, Path::new(".")).unwrap();
    let mut sim = raidlab_core::engine::Simulation::new(config).unwrap();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    sim.run(None).unwrap();
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn allocations_do_not_grow_with_the_number_of_events() {
    for (layout, drives) in [("raid5", 6), ("raid1", 4), ("raid0", 3)] {
        let small = allocations_during_run(layout, drives, 20_000);
        let large = allocations_during_run(layout, drives, 80_000);
        // 60,000 more requests are ~150,000 more events; a per-event allocation would add at
        // least that many. Amortized growth of vectors adds a few dozen.
        assert!(large - small < 100, "{layout}: {small} allocations for 20k requests, {large} for 80k");
    }
}
