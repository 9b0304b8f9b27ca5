//! Division by a fixed divisor without a hardware division.

/// A divisor fixed when a model is built, divided by with a precomputed reciprocal
/// (multiply and shift) instead of a hardware division: a drive's address mapping and
/// rotational position divide by sectors per track and by the spindle speed on every access,
/// several times in a chain, and hardware 64-bit division is the slowest arithmetic
/// instruction there. (Where a division is single and its operands fit 32 bits, as the
/// controller's by the stripe size, the hardware's is as fast: measured.)
///
/// The method is Granlund and Montgomery's ("Division by invariant integers using
/// multiplication", PLDI 1994) with the shift chosen so that one 64 × 64 → 128-bit multiply
/// serves every numerator below 2⁶³: with L = ⌊log₂ d⌋, s = 64 + L and m = ⌈2ˢ / d⌉ (which
/// fits 64 bits when d is not a power of two), n / d = ⌊n · m / 2ˢ⌋ whenever n · (m·d − 2ˢ)
/// < 2ˢ, and m·d − 2ˢ < d ≤ 2ˢ / 2⁶³ makes that hold for all n < 2⁶³. Times (below 2⁶² ns),
/// platter phases and LBAs all are; larger numerators, and d = 1, divide in hardware.
#[derive(Debug, Clone, Copy)]
pub struct Divisor {
    divisor: u64,
    /// m above (2⁶³ for a power of two, whose quotient is then a shift).
    multiplier: u64,
    /// Right shift of the product's high 64 bits: s − 64.
    shift: u32,
    /// Numerators below this take the multiply (2⁶³; 0 for d = 1).
    fast_below: u64,
}

impl Divisor {
    /// A divisor of `d` (> 0).
    pub fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        let log2 = 63 - d.leading_zeros();
        let (multiplier, shift, fast_below) = if d == 1 {
            (0, 0, 0)
        } else if d.is_power_of_two() {
            // (n · 2⁶³) >> (64 + L − 1) = n >> L.
            (1 << 63, log2 - 1, 1 << 63)
        } else {
            let s = 64 + log2;
            (((1u128 << s).div_ceil(d as u128)) as u64, log2, 1 << 63)
        };
        Divisor { divisor: d, multiplier, shift, fast_below }
    }
    /// The divisor's value.
    #[inline]
    pub fn get(&self) -> u64 {
        self.divisor
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
        if n < self.fast_below {
            let q = (((n as u128 * self.multiplier as u128) >> 64) as u64) >> self.shift;
            (q, n - q * self.divisor)
        } else {
            (n / self.divisor, n % self.divisor)
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

    /// The reciprocal divisor agrees with hardware division: numerators below 2⁶³ (the
    /// multiply, tested up to its bound) and above (hardware); divisors of every width, edge
    /// divisors 1, 2³² ± 1, 2⁶³ ± 1, u64::MAX and powers of two.
    #[test]
    fn divisor_matches_hardware_division() {
        let mut rng = RngStream::new(7, StreamId::Policy(0));
        let mut divisors: Vec<u64> =
            vec![1, 2, 3, 7, 48, 63, 64, 1000, 4_316_000, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 32) + 1];
        divisors.extend([(1 << 63) - 1, 1 << 63, (1 << 63) + 1, u64::MAX - 1, u64::MAX]);
        divisors.extend((1..64).map(|bits| 1u64 << bits));
        // Divisors of every width: the multiplier's error m·d − 2ˢ is largest relative to the
        // bound for some of them.
        for bits in 2..=64u32 {
            let top = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            divisors.extend((0..8).map(|_| (top >> 1) + 1 + rng.below(top >> 1)));
        }
        for d in divisors {
            let divisor = Divisor::new(d);
            let last_fast = (1u64 << 63) - 1;
            let mut numerators: Vec<u64> =
                vec![0, 1, d - 1, d, d.saturating_add(1), (1 << 32) - 1, 1 << 32, last_fast, 1 << 63, u64::MAX];
            // Just below multiples of d near the top of the multiply's range, where its
            // rounding error is largest.
            let top_multiple = last_fast / d * d;
            numerators.extend([top_multiple, top_multiple.wrapping_sub(1), top_multiple.saturating_sub(d).wrapping_sub(1)]);
            numerators.extend((0..100).map(|_| rng.below(1 << 32)));
            numerators.extend((0..100).map(|_| rng.below(1 << 63)));
            numerators.extend((0..20).map(|_| rng.below(u64::MAX)));
            for n in numerators {
                assert_eq!(divisor.div_rem(n), (n / d, n % d), "{n} / {d}");
                assert_eq!(divisor.div_ceil(n), n.div_ceil(d), "⌈{n} / {d}⌉");
            }
        }
    }
}
