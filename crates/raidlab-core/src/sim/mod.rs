//! Simulation primitives: integer time, the deterministic event queue, seeded RNG streams,
//! division by a fixed divisor, the greatest common divisor.

pub mod divisor;
pub mod queue;
pub mod rng;
pub mod time;

pub use divisor::Divisor;
pub use queue::EventQueue;
pub use rng::{RngStream, StreamId};
pub use time::{ms_to_ns, ns_to_ms, ns_to_s, round_ns, s_to_ns, Nanos, MAX_SIM_TIME_NS, SECONDS_PER_YEAR};

/// Greatest common divisor (Euclid's algorithm); `gcd(a, 0) = a`. Used for the spindle's
/// period, the sectors a request's start can fall on within a unit, and the stride of a
/// Zipf workload's scatter.
pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Progress of a running simulation (the run's and the cache simulator's progress hooks).
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Fraction done in [0, 1] (by simulated time or by requests, whichever bounds the run).
    pub fraction: f64,
    /// User requests completed so far.
    pub completed_requests: u64,
}

#[cfg(test)]
mod tests {
    use super::gcd;

    /// The result divides both numbers, and what is left of them after dividing by it has
    /// no common factor; zero is divisible by everything.
    #[test]
    fn gcd_is_the_greatest_common_divisor() {
        assert_eq!(gcd(7_200_000, 60_000_000_000), 2_400_000);
        assert_eq!(gcd(12, 0), 12);
        assert_eq!(gcd(0, 12), 12);
        for (a, b) in [(462u64, 1071u64), (1 << 40, 3 << 20), (17, 19), (u64::MAX, u64::MAX - 1)] {
            let g = gcd(a, b);
            assert_eq!((a % g, b % g), (0, 0));
            assert_eq!(gcd(a / g, b / g), 1);
        }
    }
}
