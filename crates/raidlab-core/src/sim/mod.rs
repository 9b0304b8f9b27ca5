//! Simulation primitives: integer time, the deterministic event queue, seeded RNG streams,
//! division by a fixed divisor.

pub mod divisor;
pub mod queue;
pub mod rng;
pub mod time;

pub use divisor::Divisor;
pub use queue::EventQueue;
pub use rng::{RngStream, StreamId};
pub use time::{ms_to_ns, ns_to_ms, ns_to_s, round_ns, s_to_ns, Nanos, MAX_SIM_TIME_NS};
