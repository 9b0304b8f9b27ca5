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
/// Bytes held now, and the most held since the last reset.
static HELD: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);

fn hold(bytes: u64) {
    let now = HELD.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        hold(layout.size() as u64);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        HELD.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        hold(new_size as u64);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counters are the process's: tests that read them take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for (layout, drives) in [("raid5", 6), ("raid1", 4), ("raid0", 3)] {
        let small = allocations_during_run(layout, drives, 20_000);
        let large = allocations_during_run(layout, drives, 80_000);
        // 60,000 more requests are ~150,000 more events; a per-event allocation would add at
        // least that many. Amortized growth of vectors adds a few dozen.
        assert!(large - small < 100, "{layout}: {small} allocations for 20k requests, {large} for 80k");
    }
}

/// The most bytes a dRAID rebuild (100 drives, draid2:8d:2s, 128 KiB units, sequential, onto
/// the distributed spare) of members of `sectors` sectors held beyond what its set-up held.
fn bytes_of_a_draid_rebuild(sectors: u64) -> u64 {
    let text = format!(
        r#"
[array]
layout = "draid"
drives = 100
draid = "draid2:8d:2s"
stripe_unit_kib = 128
[drive]
preset = "hc550"
capacity_sectors = {sectors}
[workload]
duration_s = 0.1
[workload.arrival]
process = "poisson"
rate_per_s = 10
[[failures]]
drive = 3
at_s = 0.05
[rebuild]
unit = {{ sectors = 2048 }}
discipline = "zfs"
zfs = {{ mode = "sequential" }}
end_run = true
"#
    );
    let config = raidlab_core::Config::from_toml(&text, Path::new(".")).unwrap();
    let mut sim = raidlab_core::engine::Simulation::new(config).unwrap();
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    sim.run(None).unwrap();
    assert_eq!(sim.rebuilds[0].outcome, "complete");
    PEAK.load(Ordering::Relaxed) - before
}

/// A rebuild's memory does not grow with the member: the sequential order never asks where
/// each stripe's pieces lie (only `fetch` does), which for 128 KiB units is one record of
/// tens of bytes per stripe and source, gigabytes for a 20 TB member. Members 4 times larger
/// may allocate a little more (windows, longer queues), nowhere near 4 times more.
#[test]
fn a_draid_rebuild_allocates_nothing_per_stripe_of_the_member() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let small = bytes_of_a_draid_rebuild(2_000_000);
    let large = bytes_of_a_draid_rebuild(8_000_000);
    assert!(large < small + small / 2, "{small} bytes for 1 GB members, {large} for 4 GB");
}
