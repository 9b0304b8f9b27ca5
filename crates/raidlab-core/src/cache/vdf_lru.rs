//! VDF-LRU (`papers/003_…`, Algorithm 1): LRU whose victim, while a drive is failed, is the
//! local-stack bottom with the largest age / miss penalty ([`super::vdf`]).

/// One line for the docs.
pub const DOC: &str = "VDF over LRU (Algorithm 1): while a drive is failed, the local-stack bottom with the largest age / miss penalty goes";

/// VDF-LRU.
pub type VdfLru = super::vdf::Vdf<super::lru::LruCache>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::placement::Placement;
    use crate::cache::tests::pattern;
    use crate::cache::vdf::tests::{Failed, FailedPerBlock};
    use crate::cache::Cache;

    /// Five drives, one block per chunk: block b is on drive b mod 5 (left-symmetric).
    fn vdf_lru(capacity: usize) -> Cache<VdfLru> {
        let placement = Placement::raid5(5, 1, Default::default(), "cache").unwrap();
        Cache::new("vdf-lru", VdfLru::new(capacity, 5), capacity, Some(placement))
    }

    /// Replay `trace`; drive 0 fails before access `fail_at` and is rebuilt before `repair_at`.
    fn replay(cache: &mut Cache<VdfLru>, trace: &[u64], failed: u32, fail_at: usize, repair_at: usize) -> String {
        let hits: Vec<bool> = trace
            .iter()
            .enumerate()
            .map(|(i, &block)| {
                let faulty = (fail_at..repair_at).contains(&i);
                cache.access(block, &Failed { drives: 5, failed: faulty.then_some(failed) })
            })
            .collect();
        pattern(&hits)
    }

    #[test]
    fn fault_free_then_faulty_then_rebuilt() {
        // Capacity 3; block b on drive b mod 5; drive 0 (blocks 5, …) fails before access 3
        // and is rebuilt before access 11. Each miss in faulty mode compares the drives'
        // bottoms: W = age on drive 0, age × 4 elsewhere; the largest goes.
        //  0-2  5 1 2 load (fault-free).
        //  3    3: W(5) = 3, W(1) = 2·4 = 8, W(2) = 1·4 = 4: 1 goes (LRU would take 5).
        //  4    5 hits.
        //  5    4: W(5) = 1, W(2) = 12, W(3) = 8: 2 goes.
        //  6    1: W(5) = 2, W(3) = 12, W(4) = 4: 3 goes.
        //  7    5 hits.
        //  8    6: W(5) = 1, W(1) = 8, W(4) = 12: 4 goes.
        //  9    7: W(5) = 2, drive 1's bottom 1 = 12: 1 goes.
        //  10   5 hits.
        //  11   8 (rebuilt: LRU again): the stack is 5 7 6, 6 goes.
        //  12   5 hits.  13  9: the stack is 5 8 7, 7 goes.
        let trace = [5, 1, 2, 3, 5, 4, 1, 5, 6, 7, 5, 8, 5, 9];
        let mut cache = vdf_lru(3);
        assert_eq!(replay(&mut cache, &trace, 0, 3, 11), "mmmmHmmHmmHmHm");
        assert_eq!(cache.policy().base().stack(), [9, 5, 8]);
        // LRU on the same trace: 5 is evicted by 3 and misses at 4.
        let mut lru = vdf_lru(3);
        assert_eq!(replay(&mut lru, &trace, 0, usize::MAX, usize::MAX), "mmmmmmmHmmHmHm");
    }

    #[test]
    fn equal_weights_evict_the_lower_drive() {
        // Drive 1 failed. At access 4, block 1 (drive 1) is 4 accesses old: W = 4; block 2
        // (drive 2) 1 old: W = 1·4 = 4. Equal: drive 1 comes first and goes.
        let mut cache = vdf_lru(2);
        assert_eq!(replay(&mut cache, &[1, 2, 2, 2, 3, 2, 1], 1, 0, usize::MAX), "mmHHmHm");
        assert_eq!(cache.policy().base().stack(), [1, 2]);
    }

    /// Algorithm 1 as printed (with its `else` restored), by brute force over a list of
    /// (block, TS): the reference the cache must match access for access.
    fn reference(trace: &[(u64, Option<u32>)], capacity: usize, drives: u32) -> Vec<bool> {
        let mut cached: Vec<(u64, u64)> = Vec::new();
        let mut hits = Vec::new();
        for (gts, &(block, failed)) in trace.iter().enumerate() {
            let gts = gts as u64;
            if let Some(entry) = cached.iter_mut().find(|(b, _)| *b == block) {
                entry.1 = gts;
                hits.push(true);
                continue;
            }
            hits.push(false);
            if cached.len() == capacity {
                let victim = match failed {
                    None => cached.iter().min_by_key(|(_, ts)| *ts).unwrap().0,
                    Some(failed) => {
                        let mut best: Option<(u64, u64)> = None;
                        for drive in 0..drives {
                            let bottom = cached.iter().filter(|(b, _)| (b % u64::from(drives)) as u32 == drive).min_by_key(|(_, ts)| *ts);
                            if let Some(&(b, ts)) = bottom {
                                let weight = if drive == failed { gts - ts } else { (gts - ts) * u64::from(drives - 1) };
                                if best.is_none_or(|(w, _)| weight > w) {
                                    best = Some((weight, b));
                                }
                            }
                        }
                        best.unwrap().1
                    }
                };
                cached.retain(|(b, _)| *b != victim);
            }
            cached.push((block, gts));
        }
        hits
    }

    #[test]
    fn matches_algorithm_1_on_random_traces_with_failures_and_rebuilds() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for round in 0..60 {
            let capacity = 1 + next(12) as usize;
            let footprint = capacity as u64 + 1 + next(30);
            let failed = next(5) as u32;
            let (fail_at, repair_at) = (next(400) as usize, 400 + next(400) as usize);
            let trace: Vec<(u64, Option<u32>)> = (0..1000)
                .map(|i| {
                    // Skewed: low block numbers are hot.
                    let block = next(footprint).min(next(footprint));
                    (block, (fail_at..repair_at).contains(&i).then_some(failed))
                })
                .collect();
            // Odd rounds weigh each candidate block by block, even rounds by its drive.
            let mut cache = vdf_lru(capacity);
            let hits: Vec<bool> = trace
                .iter()
                .map(|&(block, failed)| {
                    let view = Failed { drives: 5, failed };
                    if round % 2 == 1 {
                        cache.access(block, &FailedPerBlock(view))
                    } else {
                        cache.access(block, &view)
                    }
                })
                .collect();
            assert_eq!(hits, reference(&trace, capacity, 5), "round {round}: capacity {capacity}, drive {failed}");
        }
    }
}
