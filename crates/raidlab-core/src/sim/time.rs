//! Simulated time is an integer count of nanoseconds since the start of the run.
//!
//! Integers keep event ordering exact and results byte-identical across machines; 2^64 ns is
//! about 584 years of simulated time.

/// Simulated time or a duration, in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds in one millisecond.
pub const NS_PER_MS: u64 = 1_000_000;
/// Nanoseconds in one second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// A Julian year, s: for spans too long to read in seconds.
pub const SECONDS_PER_YEAR: f64 = 365.25 * 86_400.0;

/// Latest simulated time a run may reach, ns (2^62 ns, about 146 years): far beyond any
/// experiment, and far enough below 2^64 that adding a service or think time (each at most
/// this) to a time before it cannot overflow.
pub const MAX_SIM_TIME_NS: Nanos = 1 << 62;

/// `x` ns rounded to the nearest whole ns, halves away from zero, saturating: exactly
/// `x.round() as Nanos`, without the library call `f64::round` compiles to on x86-64
/// without SSE4.1 (once per simulated arrival). Below 2⁵², `x − ⌊x⌋` is exact; above, every
/// double is already whole.
#[inline]
pub fn round_ns(x: f64) -> Nanos {
    let whole = x as Nanos;
    // Whether to round up is a coin toss for random times (an exponential gap per arrival):
    // added as a 0 or 1, not branched on.
    let up = (x < 4_503_599_627_370_496.0) & (x - whole as f64 >= 0.5);
    whole + up as Nanos
}

/// Milliseconds (as in the papers and spec files) to nanoseconds, rounded to nearest.
/// Negative and non-finite inputs map to 0; callers validate before converting.
#[inline]
pub fn ms_to_ns(ms: f64) -> Nanos {
    if ms.is_finite() && ms > 0.0 {
        round_ns(ms * NS_PER_MS as f64)
    } else {
        0
    }
}

/// Seconds to nanoseconds, rounded to nearest.
#[inline]
pub fn s_to_ns(s: f64) -> Nanos {
    if s.is_finite() && s > 0.0 {
        round_ns(s * NS_PER_S as f64)
    } else {
        0
    }
}

/// Nanoseconds to milliseconds.
#[inline]
pub fn ns_to_ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// Nanoseconds to seconds.
#[inline]
pub fn ns_to_s(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_S as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `round_ns` is `f64::round` then a saturating cast, on halves, near-halves, negatives,
    /// huge values and random ones.
    #[test]
    fn round_ns_is_round() {
        let mut values = vec![
            0.0, -0.0, 0.5, 1.5, 2.5, 0.49999999999999994, -0.5, -0.7, 1e300, f64::NAN, f64::INFINITY,
            4_503_599_627_370_495.5, 4_503_599_627_370_496.0, 9_007_199_254_740_993.0, 1.8446744073709552e19,
        ];
        let mut rng = crate::sim::RngStream::new(5, crate::sim::StreamId::Policy(0));
        for _ in 0..100_000 {
            let scale = [1.0, 1e3, 1e9, 1e15][rng.below(4) as usize];
            values.push(rng.below(1 << 40) as f64 / 1024.0 * scale);
        }
        for x in values {
            assert_eq!(round_ns(x), x.round() as Nanos, "{x:e}");
        }
    }

    #[test]
    fn conversions_round_trip_at_nanosecond_precision() {
        assert_eq!(ms_to_ns(12.5), 12_500_000);
        assert_eq!(s_to_ns(1.5), 1_500_000_000);
        assert_eq!(ms_to_ns(-1.0), 0);
        assert_eq!(ms_to_ns(f64::NAN), 0);
        assert!((ns_to_ms(ms_to_ns(13.895)) - 13.895).abs() < 1e-9);
    }
}
