//! Seeded random-number streams, one per component.
//!
//! Every component (each drive's rotational position, the workload's addresses, the mirror
//! tie-breaker, ...) draws from its own stream derived from the run seed and a stable stream
//! id. Adding draws to one component therefore never shifts the numbers another component
//! sees, which keeps experiments comparable when only one policy changes.

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Stable identity of a random stream: a component kind and an index within it
/// (for example the drive number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamId {
    /// Rotational position / latency draws of drive `n`.
    Drive(u32),
    /// Arrival times of the workload.
    Arrivals,
    /// Addresses, sizes and read/write choice of the workload.
    Requests,
    /// Tie-breaking among mirror copies (seed 004 §2.2.1).
    MirrorChoice,
    /// Anything a policy needs, numbered by the policy.
    Policy(u32),
}

impl StreamId {
    fn code(self) -> u64 {
        match self {
            StreamId::Drive(n) => (1 << 32) | n as u64,
            StreamId::Arrivals => 2 << 32,
            StreamId::Requests => 3 << 32,
            StreamId::MirrorChoice => 4 << 32,
            StreamId::Policy(n) => (5 << 32) | n as u64,
        }
    }
}

/// A deterministic random stream (PCG-64 MCG, fast and statistically sound for simulation).
#[derive(Debug, Clone)]
pub struct RngStream(Pcg64Mcg);

impl RngStream {
    /// The stream `id` of a run seeded with `seed`.
    pub fn new(seed: u64, id: StreamId) -> Self {
        // SplitMix64 finaliser decorrelates neighbouring (seed, id) pairs.
        let mut z = seed ^ id.code().wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        RngStream(Pcg64Mcg::seed_from_u64(z))
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// Uniform integer in [0, n). `n` must be positive.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n)
    }

    /// Exponentially distributed with the given mean (ziggurat sampling: no logarithm on
    /// the common path, which matters once per simulated arrival).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        let standard: f64 = rand_distr::Distribution::sample(&rand_distr::Exp1, &mut self.0);
        mean * standard
    }

    /// The underlying generator, for `rand_distr` distributions.
    pub fn generator(&mut self) -> &mut Pcg64Mcg {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = RngStream::new(7, StreamId::Drive(0));
        let mut b = RngStream::new(7, StreamId::Drive(0));
        let mut c = RngStream::new(7, StreamId::Drive(1));
        let xa: Vec<u64> = (0..8).map(|_| a.below(1 << 40)).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.below(1 << 40)).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.below(1 << 40)).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn exponential_mean_is_close_to_requested() {
        let mut r = RngStream::new(1, StreamId::Arrivals);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.exponential(4.0)).sum::<f64>() / n as f64;
        assert!((mean - 4.0).abs() < 0.05, "mean {mean}");
    }
}
