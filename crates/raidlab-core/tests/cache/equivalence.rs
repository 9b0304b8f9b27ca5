//! Policies held to each other: VDF in fault-free mode is its base policy; LRU is a stack
//! algorithm.

use raidlab_core::cache::placement::Placement;
use raidlab_core::cache::{build, FaultFree, CACHES};

use crate::common::{long_tests, Draws};

/// A skewed random trace over `footprint` blocks.
fn skewed(draws: &mut Draws, requests: usize, footprint: u64) -> Vec<u64> {
    (0..requests).map(|_| draws.below(footprint).min(draws.below(footprint))).collect()
}

#[test]
fn every_vdf_variant_in_fault_free_mode_equals_its_base_hit_for_hit() {
    let rounds = if long_tests() { 400 } else { 40 };
    let mut draws = Draws::new(7);
    let vdf_entries: Vec<_> = CACHES.iter().filter(|entry| entry.failure_aware).collect();
    assert_eq!(vdf_entries.len(), 4);
    for round in 0..rounds {
        let drives = 3 + draws.below(7) as u32;
        let chunk_blocks = 1 + draws.below(4);
        let placement = Placement::raid5(drives, chunk_blocks, Default::default(), "cache").unwrap();
        let capacity = 1 + draws.below(64);
        let footprint = capacity + 1 + draws.below(200);
        let trace = skewed(&mut draws, 3000, footprint);
        for vdf in &vdf_entries {
            let base = vdf.name.trim_start_matches("vdf-");
            let mut with_vdf = build(vdf.name, capacity, Some(&placement), "cache").unwrap();
            let mut plain = build(base, capacity, None, "cache").unwrap();
            for (i, &block) in trace.iter().enumerate() {
                assert_eq!(
                    with_vdf.access(block, &FaultFree),
                    plain.access(block, &FaultFree),
                    "{} against {base}: round {round}, request {i}, capacity {capacity}, {drives} drives",
                    vdf.name
                );
            }
            assert_eq!(with_vdf.counters(), plain.counters());
        }
    }
}

#[test]
fn lru_misses_never_rise_with_the_cache_size() {
    // LRU is a stack algorithm (a bigger cache holds what a smaller one does), so its misses
    // cannot grow with the size; CLOCK and FIFO-like policies have no such guarantee.
    let mut draws = Draws::new(11);
    for _ in 0..10 {
        let trace = skewed(&mut draws, 5000, 300);
        let mut previous = u64::MAX;
        for capacity in 1..=120 {
            let mut lru = build("lru", capacity, None, "cache").unwrap();
            for &block in &trace {
                lru.access(block, &FaultFree);
            }
            let misses = lru.counters().misses;
            assert!(misses <= previous, "{misses} misses at {capacity} blocks, {previous} at one less");
            previous = misses;
        }
    }
}
