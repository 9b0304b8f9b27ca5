//! VDF on ARC (beyond the paper: its §7 future work): ARC whose REPLACE, while a drive is
//! failed, takes from the chosen list the drive tail with the largest age / miss penalty
//! ([`super::vdf`], [`super::arc`]).

/// One line for the docs.
pub const DOC: &str = "VDF over ARC (the paper's future work): ARC picks the list, and while a drive is failed the drive tail with the largest age / miss penalty goes";

/// VDF-ARC.
pub type VdfArc = super::vdf::Vdf<super::arc::ArcCache>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::placement::Placement;
    use crate::cache::tests::pattern;
    use crate::cache::vdf::tests::Failed;
    use crate::cache::Cache;

    fn replay(trace: &[u64], fail_at: usize, repair_at: usize) -> (String, [Vec<u64>; 4]) {
        // Five drives, block b on drive b mod 5; drive 0 fails.
        let placement = Placement::raid5(5, 1, Default::default(), "cache").unwrap();
        let mut cache = Cache::new("vdf-arc", VdfArc::new(2, 5), 2, Some(placement));
        let hits: Vec<bool> = trace
            .iter()
            .enumerate()
            .map(|(i, &block)| {
                let faulty = (fail_at..repair_at).contains(&i);
                cache.access(block, &Failed { drives: 5, failed: faulty.then_some(0) })
            })
            .collect();
        (pattern(&hits), cache.policy().base().lists())
    }

    #[test]
    fn fault_free_then_faulty_then_rebuilt() {
        // Capacity 2; drive 0 (block 5) fails before access 2, rebuilt before access 6.
        //  0-1  5 1 load into T1.
        //  2    2: |T1| = c, so T1 loses a block without a ghost: of the drives' T1 tails,
        //       5 (age 2, weighs 2/4) and 1 (age 1, 1), 1 goes (ARC: 5).
        //  3    5 hits: to T2.
        //  4    3: REPLACE picks T1 (|T1| = 1 > p = 0); drive 2's T1 tail 2 (age 2, 2) against
        //       drive 0's, which has no T1 block and offers its T2 tail 5 (age 1, 1/4): 2
        //       goes, to B1.
        //  5    2, in B1: p = 1; REPLACE picks T2 (|T1| = 1 is not above p): 5 in T2 (age 2,
        //       2/4) against drive 3's T1 tail 3 (age 1, 1): 3 goes, to B1; 2 into T2.
        //  6    4 (rebuilt: ARC again): |T1| = 0, so T2's tail 5 goes to B2.
        let (hits, lists) = replay(&[5, 1, 2, 5, 3, 2, 4], 2, 6);
        assert_eq!(hits, "mmmHmmm");
        assert_eq!(lists, [vec![4], vec![2], vec![3], vec![5]]);
        // ARC throughout: one block too many for T1 each time, so every access misses.
        assert_eq!(replay(&[5, 1, 2, 5, 3, 2, 4], usize::MAX, usize::MAX).0, "mmmmmmm");
    }
}
