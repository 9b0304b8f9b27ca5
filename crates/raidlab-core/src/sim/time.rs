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

/// Milliseconds (as in the papers and spec files) to nanoseconds, rounded to nearest.
/// Negative and non-finite inputs map to 0; callers validate before converting.
#[inline]
pub fn ms_to_ns(ms: f64) -> Nanos {
    if ms.is_finite() && ms > 0.0 {
        (ms * NS_PER_MS as f64).round() as Nanos
    } else {
        0
    }
}

/// Seconds to nanoseconds, rounded to nearest.
#[inline]
pub fn s_to_ns(s: f64) -> Nanos {
    if s.is_finite() && s > 0.0 {
        (s * NS_PER_S as f64).round() as Nanos
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

    #[test]
    fn conversions_round_trip_at_nanosecond_precision() {
        assert_eq!(ms_to_ns(12.5), 12_500_000);
        assert_eq!(s_to_ns(1.5), 1_500_000_000);
        assert_eq!(ms_to_ns(-1.0), 0);
        assert_eq!(ms_to_ns(f64::NAN), 0);
        assert!((ns_to_ms(ms_to_ns(13.895)) - 13.895).abs() < 1e-9);
    }
}
