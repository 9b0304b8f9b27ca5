//! VDF on CLOCK (beyond the paper: its §7 future work): CLOCK whose victim, while a drive is
//! failed, is chosen among the drives' own hands by age / miss penalty ([`super::vdf`],
//! [`super::clock`]).

/// One line for the docs.
pub const DOC: &str = "VDF over CLOCK (the paper's future work): while a drive is failed, each drive's hand offers a block; the largest age / miss penalty goes";

/// VDF-CLOCK.
pub type VdfClock = super::vdf::Vdf<super::clock::ClockCache>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::placement::Placement;
    use crate::cache::tests::pattern;
    use crate::cache::vdf::tests::Failed;
    use crate::cache::Cache;

    fn replay(trace: &[u64], fail_at: usize, repair_at: usize) -> (String, Vec<u64>) {
        // Five drives, block b on drive b mod 5; drive 0 fails.
        let placement = Placement::raid5(5, 1, Default::default(), "cache").unwrap();
        let mut cache = Cache::new("vdf-clock", VdfClock::new(3, 5), 3, Some(placement));
        let hits: Vec<bool> = trace
            .iter()
            .enumerate()
            .map(|(i, &block)| {
                let faulty = (fail_at..repair_at).contains(&i);
                cache.access(block, &Failed { drives: 5, failed: faulty.then_some(0) })
            })
            .collect();
        (pattern(&hits), cache.policy().base().ring())
    }

    #[test]
    fn fault_free_then_faulty_then_rebuilt() {
        // Capacity 3; drive 0 (block 5) fails before access 3, rebuilt before access 7. The
        // ring (head → hand) is 2 1 5 after the loads.
        //  3  3: the hands offer 5 (age 3, weighs 3/4), 1 (2), 2 (1): 1 goes (CLOCK: 5).
        //  4  5 hits: its bit is set.
        //  5  4: drive 0's hand gives 5 its second chance (to the head) and offers it again
        //     (age 1: 1/4); 2 (age 3) and 3 (age 2) are the others: 2 goes.
        //  6  6: 5 (2/4), 3 (3), 4 (1): 3 goes.
        //  7  7 (rebuilt: CLOCK again): the hand is at 5, its bit clear: 5 goes.
        assert_eq!(replay(&[5, 1, 2, 3, 5, 4, 6, 7], 3, 7), ("mmmmHmmm".to_string(), vec![7, 6, 4]));
        // CLOCK throughout: 5 goes at access 3 and misses at 4.
        assert_eq!(replay(&[5, 1, 2, 3, 5, 4, 6, 7], usize::MAX, usize::MAX), ("mmmmmmmm".to_string(), vec![7, 6, 4]));
    }
}
