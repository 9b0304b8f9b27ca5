//! A cap on rebuild bandwidth per drive (`rebuild.rate_mb_s`), kept by a timer: after a
//! rebuild op of S bytes enters a drive at time t, the next may enter no earlier than
//! t + S / rate. The ops queue at user priority, as a throttled resync does in Linux md.

use super::Discipline;
use crate::disk::{Priority, SECTOR_BYTES};
use crate::rebuild::RebuildConfig;
use crate::sim::Nanos;

pub const DOC: &str = "rate limit: rebuild ops at user priority, at most `rate_mb_s` MB/s per drive";

/// Per-drive bandwidth cap.
pub struct Rate {
    bytes_per_s: f64,
    /// Per drive slot, the earliest time the next op may enter.
    next: Vec<Nanos>,
}

impl Rate {
    pub fn boxed(config: &RebuildConfig, slots: u32) -> Box<dyn Discipline> {
        Box::new(Rate { bytes_per_s: config.rate_mb_s.unwrap_or(1.0) * 1e6, next: vec![0; slots as usize] })
    }
}

impl Discipline for Rate {
    fn priority(&self) -> Priority {
        Priority::Foreground
    }
    fn ready_at(&self, drive: u32, now: Nanos) -> Nanos {
        self.next.get(drive as usize).copied().unwrap_or(0).max(now)
    }
    fn issued(&mut self, drive: u32, now: Nanos, sectors: u64) {
        let gap = (sectors * SECTOR_BYTES) as f64 / self.bytes_per_s * 1e9;
        if let Some(n) = self.next.get_mut(drive as usize) {
            *n = (*n).max(now) + gap.ceil() as Nanos;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_spaces_ops_by_their_bytes_over_the_rate() {
        let config: RebuildConfig =
            toml::from_str("discipline = \"rate\"\nrate_mb_s = 1.024").unwrap();
        let mut r = Rate::boxed(&config, 2);
        assert_eq!(r.ready_at(0, 0), 0);
        // 2,000 sectors = 1.024 MB: one second at 1.024 MB/s.
        r.issued(0, 0, 2_000);
        assert_eq!(r.ready_at(0, 10), 1_000_000_000);
        assert_eq!(r.ready_at(1, 10), 10, "drives are capped separately");
        // Issued late, the next gap counts from then.
        r.issued(0, 3_000_000_000, 2_000);
        assert_eq!(r.ready_at(0, 3_000_000_000), 4_000_000_000);
    }
}
