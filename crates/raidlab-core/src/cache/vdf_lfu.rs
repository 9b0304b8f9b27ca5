//! VDF-LFU (`papers/003_…`, Algorithm 2): in-cache LFU whose victim, while a drive is
//! failed, is the local-stack bottom with the smallest count × miss penalty
//! ([`super::vdf`]).

/// One line for the docs.
pub const DOC: &str = "VDF over LFU (Algorithm 2): while a drive is failed, the local-stack bottom with the smallest count × miss penalty goes";

/// VDF-LFU.
pub type VdfLfu = super::vdf::Vdf<super::lfu::LfuCache>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::placement::Placement;
    use crate::cache::tests::pattern;
    use crate::cache::vdf::tests::Failed;
    use crate::cache::Cache;

    /// Five drives, one block per chunk: block b is on drive b mod 5.
    fn vdf_lfu(capacity: usize) -> Cache<VdfLfu> {
        let placement = Placement::raid5(5, 1, Default::default(), "cache").unwrap();
        Cache::new("vdf-lfu", VdfLfu::new(capacity, 5), capacity, Some(placement))
    }

    fn replay(cache: &mut Cache<VdfLfu>, trace: &[u64], failed: u32, fail_at: usize, repair_at: usize) -> String {
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
        // Capacity 3; drive 0 (block 5) fails before access 4, rebuilt before access 11.
        // Faulty-mode weights: W = F × 4 on drive 0, F elsewhere; the smallest goes.
        //  0-3  5 1 1 2: 5 and 2 at F = 1, 1 at F = 2.
        //  4    3: W(5) = 4, W(1) = 2, W(2) = 1: 2 goes (LFU would take 5, the older F = 1).
        //  5    4: W(5) = 4, W(1) = 2, W(3) = 1: 3 goes.
        //  6    5 hits: F = 2, W = 8.
        //  7    6: W(5) = 8, W(1) = 2, W(4) = 1: 4 goes.
        //  8-9  1 hits twice (F = 4).
        //  10   7: drive 1's bottom is now 6 (F = 1 < 4): W(6) = 1 against W(5) = 8: 6 goes.
        //  11   8 (rebuilt: LFU again): 7 (F = 1) is the minimum and goes.
        //  12   9: 8 goes. Left: 5 (F = 2), 1 (F = 4), 9.
        let trace = [5, 1, 1, 2, 3, 4, 5, 6, 1, 1, 7, 8, 9];
        let mut cache = vdf_lfu(3);
        assert_eq!(replay(&mut cache, &trace, 0, 4, 11), "mmHmmmHmHHmmm");
        let base = cache.policy().base();
        assert_eq!((base.count_of(5), base.count_of(1), base.count_of(9)), (Some(2), Some(4), Some(1)));
        // LFU on the same trace evicts 5 at access 4, and it misses at 6.
        let mut lfu = vdf_lfu(3);
        assert_eq!(replay(&mut lfu, &trace, 0, usize::MAX, usize::MAX), "mmHmmmmmHHmmm");
    }

    #[test]
    fn equal_weights_evict_the_older_access_whichever_drive() {
        // Drive 0 failed from the start. Block 1 reaches F = 4 (W = 4); block 5, on drive 0,
        // has F = 1 (W = 4). The one accessed longer ago goes.
        let mut cache = vdf_lfu(2);
        // 5 at 0, 1 at 1-4: 5 is older and goes for 2.
        assert_eq!(replay(&mut cache, &[5, 1, 1, 1, 1, 2, 1], 0, 0, usize::MAX), "mmHHHmH");
        assert_eq!(cache.policy().base().count_of(5), None);
        // 1 at 0-3, 5 at 4: 1 is older and goes for 2.
        let mut cache = vdf_lfu(2);
        assert_eq!(replay(&mut cache, &[1, 1, 1, 1, 5, 2, 1], 0, 0, usize::MAX), "mHHHmmm");
        // 1 came back at F = 1 (W = 1) and took 2's place (W(5) = 4 > W(2) = 1).
        assert_eq!((cache.policy().base().count_of(5), cache.policy().base().count_of(2)), (Some(1), None));
    }
}
