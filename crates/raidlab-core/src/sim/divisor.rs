//! Division by a fixed divisor without a hardware division.

/// A divisor fixed when a model is built, divided by with a precomputed reciprocal
/// (multiply and shift) instead of a hardware division: a drive's address mapping and
/// rotational position divide by sectors per track on every access, several times in a
/// chain, and hardware 64-bit division is the slowest arithmetic instruction there. (Where a
/// division is single and its operands fit 32 bits, as the controller's by the stripe size,
/// the hardware's is as fast: measured.)
///
/// Numerators below 2³² (LBAs within a zone, sectors within a cylinder: nearly every one)
/// take a shorter path, one 64 × 64 → 128-bit multiply by ⌈2⁶⁴ / d⌉ (Lemire, Kaser & Kurz,
/// "Faster remainder by direct computation", 2019: exact for 32-bit numerators and
/// divisors); larger ones the general 64-bit reciprocal.
#[derive(Debug, Clone, Copy)]
pub struct Divisor {
    /// ⌈2⁶⁴ / d⌉ when 2 ≤ d < 2³², else 0 (no short path).
    narrow: u64,
    wide: strength_reduce::StrengthReducedU64,
}

impl Divisor {
    /// A divisor of `d` (> 0).
    pub fn new(d: u64) -> Self {
        let narrow = if (2..1 << 32).contains(&d) { u64::MAX / d + 1 } else { 0 };
        Divisor { narrow, wide: strength_reduce::StrengthReducedU64::new(d) }
    }
    /// The divisor's value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.wide.get()
    }
    /// `n / d`.
    #[inline]
    pub fn div(&self, n: u64) -> u64 {
        self.div_rem(n).0
    }
    /// `n % d`.
    #[inline]
    pub fn rem(&self, n: u64) -> u64 {
        self.div_rem(n).1
    }
    /// `(n / d, n % d)`.
    #[inline]
    pub fn div_rem(&self, n: u64) -> (u64, u64) {
        if n >> 32 == 0 && self.narrow != 0 {
            let q = ((self.narrow as u128 * n as u128) >> 64) as u64;
            (q, n - q * self.wide.get())
        } else {
            strength_reduce::StrengthReducedU64::div_rem(n, self.wide)
        }
    }
    /// `⌈n / d⌉`.
    #[inline]
    pub fn div_ceil(&self, n: u64) -> u64 {
        let (q, r) = self.div_rem(n);
        q + (r != 0) as u64
    }
}

impl PartialEq for Divisor {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}
impl Eq for Divisor {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{RngStream, StreamId};

    /// The reciprocal divisor agrees with hardware division on both of its paths: numerators
    /// below 2³² (short path, divisors below 2³²) and above; edge divisors 1, 2³² − 1, 2³²
    /// and powers of two.
    #[test]
    fn divisor_matches_hardware_division() {
        let mut rng = RngStream::new(7, StreamId::Policy(0));
        let mut divisors: Vec<u64> = vec![1, 2, 3, 7, 48, 63, 64, 1000, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, u64::MAX];
        divisors.extend((0..200).map(|_| 1 + rng.below(1 << 32)));
        divisors.extend((0..50).map(|_| 1 + rng.below(u64::MAX - 1)));
        for d in divisors {
            let divisor = Divisor::new(d);
            let mut numerators: Vec<u64> = vec![0, 1, d - 1, d, d.saturating_add(1), (1 << 32) - 1, 1 << 32, u64::MAX];
            numerators.extend((0..200).map(|_| rng.below(1 << 32)));
            numerators.extend((0..50).map(|_| rng.below(u64::MAX)));
            for n in numerators {
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
                assert_eq!(divisor.div_ceil(n), n.div_ceil(d), "⌈{n} / {d}⌉");
            }
        }
    }
}
