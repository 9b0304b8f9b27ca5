//! Synthetic request generators: address distribution, size distribution, read share.

use rand_distr::{Distribution, Zipf};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::WorkloadConfig;
use crate::error::{Error, Result};
use crate::sim::{gcd, RngStream};

/// Where synthetic requests start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(tag = "distribution", rename_all = "snake_case", deny_unknown_fields)]
pub enum AddressConfig {
    /// Uniform over the whole array.
    #[default]
    Uniform,
    /// `hot_request_fraction` of requests go to a hot region of `hot_space_fraction` of the
    /// space starting at `hot_start_fraction`; the rest uniformly to the remainder.
    HotCold {
        /// Share of requests sent to the hot region, in [0, 1].
        hot_request_fraction: f64,
        /// Size of the hot region as a share of the array, in (0, 1).
        hot_space_fraction: f64,
        /// Where the hot region starts, as a share of the array, in [0, 1).
        #[serde(default)]
        hot_start_fraction: f64,
    },
    /// Zipf popularity over aligned blocks: block of rank k is chosen with probability
    /// proportional to 1/k^exponent.
    Zipf {
        /// Zipf exponent (> 0; 1 is classic Zipf).
        exponent: f64,
        /// Spread the ranks over the space by a fixed permutation (true) or put the most
        /// popular blocks at the start of the array (false).
        #[serde(default = "yes")]
        scatter: bool,
    },
}

fn yes() -> bool {
    true
}

/// Request size distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "distribution", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeConfig {
    /// Every request is `kib` KiB.
    Fixed {
        /// Size, KiB.
        kib: f64,
    },
    /// Uniform over the multiples of `step_kib` from `min_kib` to `max_kib` inclusive.
    Uniform {
        /// Smallest size, KiB.
        min_kib: f64,
        /// Largest size, KiB.
        max_kib: f64,
        /// Sizes are `min_kib` plus multiples of this, KiB.
        #[serde(default = "four")]
        step_kib: f64,
    },
    /// One of `kib` with the given relative `weights`.
    Choice {
        /// The sizes, KiB.
        kib: Vec<f64>,
        /// Relative weight of each size (non-negative, positive sum).
        weights: Vec<f64>,
    },
}

fn four() -> f64 {
    4.0
}

/// KiB to sectors; must be a positive whole number of sectors.
fn kib_to_sectors(kib: f64, key: &str) -> Result<u64> {
    let sectors = kib * 2.0;
    if !(sectors.is_finite() && sectors >= 1.0 && sectors.fract() == 0.0) {
        return Err(Error::config(key, format!("{kib} KiB is not a positive multiple of 0.5 KiB (one sector)")));
    }
    Ok(sectors as u64)
}

#[derive(Debug, Clone)]
enum Sizes {
    Fixed(u64),
    Uniform { min: u64, step: u64, count: u64 },
    Choice { sectors: Vec<u64>, cumulative: Vec<f64> },
}

#[derive(Debug, Clone)]
enum Addresses {
    Uniform,
    HotCold { hot_p: f64, hot_start: u64, hot_slots: u64 },
    Zipf { zipf: Zipf<f64>, multiplier: u64 },
}

/// Generates (lba, sectors, is_write) triples.
#[derive(Debug, Clone)]
pub struct SyntheticGenerator {
    align: u64,
    /// Aligned start positions at which the largest request still fits.
    slots: u64,
    read_fraction: f64,
    sizes: Sizes,
    addresses: Addresses,
    rng: RngStream,
}

impl SyntheticGenerator {
    /// Validate and build. `key` is the workload's config path.
    pub fn new(cfg: &WorkloadConfig, capacity: u64, rng: RngStream, key: &str) -> Result<Self> {
        if !(0.0..=1.0).contains(&cfg.read_fraction) {
            return Err(Error::config(format!("{key}.read_fraction"), "must be in [0, 1]"));
        }
        let align = kib_to_sectors(cfg.align_kib, &format!("{key}.align_kib"))?;
        let size = match (&cfg.size, cfg.size_kib) {
            (Some(_), Some(_)) => {
                return Err(Error::config(format!("{key}.size_kib"), "give either `size_kib` or `size`, not both"))
            }
            (Some(s), None) => s.clone(),
            (None, Some(kib)) => SizeConfig::Fixed { kib },
            (None, None) => SizeConfig::Fixed { kib: 4.0 },
        };
        let sizes = match &size {
            SizeConfig::Fixed { kib } => Sizes::Fixed(kib_to_sectors(*kib, &format!("{key}.size"))?),
            SizeConfig::Uniform { min_kib, max_kib, step_kib } => {
                let min = kib_to_sectors(*min_kib, &format!("{key}.size.min_kib"))?;
                let max = kib_to_sectors(*max_kib, &format!("{key}.size.max_kib"))?;
                let step = kib_to_sectors(*step_kib, &format!("{key}.size.step_kib"))?;
                if max < min {
                    return Err(Error::config(format!("{key}.size.max_kib"), "smaller than min_kib"));
                }
                Sizes::Uniform { min, step, count: (max - min) / step + 1 }
            }
            SizeConfig::Choice { kib, weights } => {
                if kib.is_empty() || kib.len() != weights.len() {
                    return Err(Error::config(format!("{key}.size.weights"), "needs one weight per size, and at least one size"));
                }
                let sectors = kib
                    .iter()
                    .enumerate()
                    .map(|(i, k)| kib_to_sectors(*k, &format!("{key}.size.kib[{i}]")))
                    .collect::<Result<Vec<_>>>()?;
                // The sum must be finite too: weights near f64::MAX add up to infinity, which
                // would make every cumulative share 0 and pick the last size every time.
                let sum: f64 = weights.iter().sum();
                if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) || !(sum.is_finite() && sum > 0.0) {
                    return Err(Error::config(format!("{key}.size.weights"), "weights must be non-negative with a positive sum"));
                }
                let total: f64 = weights.iter().sum();
                let mut acc = 0.0;
                let cumulative = weights.iter().map(|w| { acc += w / total; acc }).collect();
                Sizes::Choice { sectors, cumulative }
            }
        };
        let max_size = match &sizes {
            Sizes::Fixed(s) => *s,
            Sizes::Uniform { min, step, count } => min + step * (count - 1),
            Sizes::Choice { sectors, .. } => *sectors.iter().max().unwrap_or(&1),
        };
        if max_size > capacity {
            return Err(Error::config(format!("{key}.size"), format!("requests of {max_size} sectors do not fit the array's {capacity}")));
        }
        // Requests carry their length as u32 sectors; a longer one would be cut short silently.
        if max_size > u64::from(u32::MAX) {
            return Err(Error::config(
                format!("{key}.size"),
                format!("requests of {max_size} sectors are larger than raidlab supports (2^32 − 1 sectors)"),
            ));
        }
        if align > capacity {
            return Err(Error::config(
                format!("{key}.align_kib"),
                format!("an alignment of {align} sectors is larger than the array's {capacity}"),
            ));
        }
        let slots = (capacity - max_size) / align + 1;
        let addresses = match &cfg.address {
            AddressConfig::Uniform => Addresses::Uniform,
            AddressConfig::HotCold { hot_request_fraction, hot_space_fraction, hot_start_fraction } => {
                let k = format!("{key}.address");
                if !(0.0..=1.0).contains(hot_request_fraction) {
                    return Err(Error::config(format!("{k}.hot_request_fraction"), "must be in [0, 1]"));
                }
                if !(*hot_space_fraction > 0.0 && *hot_space_fraction < 1.0) {
                    return Err(Error::config(format!("{k}.hot_space_fraction"), "must be in (0, 1)"));
                }
                if !(0.0..1.0).contains(hot_start_fraction) || hot_start_fraction + hot_space_fraction > 1.0 {
                    return Err(Error::config(format!("{k}.hot_start_fraction"), "the hot region must lie inside [0, 1)"));
                }
                if slots < 2 {
                    return Err(Error::config(
                        k,
                        format!(
                            "a hot and a cold region need at least 2 request start positions; `align_kib` and the largest size leave {slots} on the array"
                        ),
                    ));
                }
                let hot_slots = ((slots as f64 * hot_space_fraction) as u64).clamp(1, slots - 1);
                let hot_start = ((slots as f64 * hot_start_fraction) as u64).min(slots - hot_slots);
                Addresses::HotCold { hot_p: *hot_request_fraction, hot_start, hot_slots }
            }
            AddressConfig::Zipf { exponent, scatter } => {
                // The sampler takes 0 (uniform) and infinity (always the first block) too;
                // the documented range leaves those degenerate cases to other distributions.
                if !(exponent.is_finite() && *exponent > 0.0) {
                    return Err(Error::config(
                        format!("{key}.address.exponent"),
                        format!("must be a finite number above 0, got {exponent}"),
                    ));
                }
                let zipf = Zipf::new(slots as f64, *exponent).map_err(|e| {
                    Error::config(format!("{key}.address.exponent"), format!("invalid Zipf exponent {exponent}: {e}"))
                })?;
                // A multiplier coprime with the slot count permutes ranks over the space.
                let multiplier = if *scatter {
                    let mut m = ((slots as f64 * 0.618_033_988_75) as u64) | 1;
                    while gcd(m, slots) != 1 {
                        m += 2;
                    }
                    m
                } else {
                    1
                };
                Addresses::Zipf { zipf, multiplier }
            }
        };
        Ok(SyntheticGenerator { align, slots, read_fraction: cfg.read_fraction, sizes, addresses, rng })
    }

    /// Start addresses are multiples of this many sectors.
    pub fn align_sectors(&self) -> u64 {
        self.align
    }

    /// Mean request size, sectors.
    pub fn mean_sectors(&self) -> f64 {
        match &self.sizes {
            Sizes::Fixed(s) => *s as f64,
            Sizes::Uniform { min, step, count } => *min as f64 + *step as f64 * (*count - 1) as f64 / 2.0,
            Sizes::Choice { sectors, cumulative } => {
                let mut prev = 0.0;
                sectors.iter().zip(cumulative).map(|(s, c)| { let p = c - prev; prev = *c; *s as f64 * p }).sum()
            }
        }
    }

    /// Next request: (first sector, sectors, is_write).
    #[inline]
    pub fn next_request(&mut self) -> (u64, u32, bool) {
        let slots = self.slots;
        let slot = match &self.addresses {
            Addresses::Uniform => self.rng.below(slots),
            Addresses::HotCold { hot_p, hot_start, hot_slots } => {
                if self.rng.unit() < *hot_p {
                    hot_start + self.rng.below(*hot_slots)
                } else {
                    let cold = self.rng.below(slots - hot_slots);
                    if cold < *hot_start { cold } else { cold + hot_slots }
                }
            }
            Addresses::Zipf { zipf, multiplier } => {
                let rank = (zipf.sample(self.rng.generator()) as u64).clamp(1, slots) - 1;
                ((rank as u128 * *multiplier as u128) % slots as u128) as u64
            }
        };
        let sectors = match &self.sizes {
            Sizes::Fixed(s) => *s,
            Sizes::Uniform { min, step, count } => min + step * self.rng.below(*count),
            Sizes::Choice { sectors, cumulative } => {
                let u = self.rng.unit();
                let i = cumulative.iter().position(|c| u < *c).unwrap_or(sectors.len() - 1);
                sectors[i]
            }
        };
        let is_write = self.rng.unit() >= self.read_fraction;
        (slot * self.align, sectors as u32, is_write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::StreamId;

    fn cfg(toml_text: &str) -> WorkloadConfig {
        toml::from_str(toml_text).unwrap()
    }

    fn generator(c: &WorkloadConfig, capacity: u64) -> SyntheticGenerator {
        SyntheticGenerator::new(c, capacity, RngStream::new(3, StreamId::Requests), "workload").unwrap()
    }

    #[test]
    fn uniform_requests_fit_are_aligned_and_have_the_read_share() {
        let c = cfg("read_fraction = 0.75\nsize = { distribution = \"uniform\", min_kib = 4, max_kib = 64 }");
        let mut g = generator(&c, 1 << 20);
        let n = 100_000;
        let mut reads = 0;
        let mut size_sum = 0u64;
        for _ in 0..n {
            let (lba, sectors, is_write) = g.next_request();
            assert!(lba + sectors as u64 <= 1 << 20);
            assert_eq!(lba % 8, 0);
            assert_eq!(sectors % 8, 0);
            reads += !is_write as u32;
            size_sum += sectors as u64;
        }
        assert!((reads as f64 / n as f64 - 0.75).abs() < 0.01);
        let mean = size_sum as f64 / n as f64;
        assert!((mean - g.mean_sectors()).abs() / g.mean_sectors() < 0.01, "{mean}");
    }

    #[test]
    fn hot_cold_sends_the_configured_share_to_the_hot_region() {
        let c = cfg("address = { distribution = \"hot_cold\", hot_request_fraction = 0.8, hot_space_fraction = 0.2, hot_start_fraction = 0.5 }");
        let capacity = 8 * 10_000;
        let mut g = generator(&c, capacity);
        let n = 100_000;
        let hot = (0..n)
            .filter(|_| {
                let (lba, _, _) = g.next_request();
                lba >= capacity / 2 && lba < capacity / 2 + capacity / 5
            })
            .count();
        assert!((hot as f64 / n as f64 - 0.8).abs() < 0.01, "{hot}");
    }

    #[test]
    fn zipf_exponents_outside_the_documented_range_name_the_key() {
        for exponent in ["0.0", "-1.0", "inf", "nan"] {
            let c = cfg(&format!("address = {{ distribution = \"zipf\", exponent = {exponent} }}"));
            let e = SyntheticGenerator::new(&c, 8 * 100_000, RngStream::new(3, StreamId::Requests), "workload").err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.starts_with("workload.address.exponent: must be a finite number above 0"), "{exponent}: {e}");
        }
    }

    #[test]
    fn zipf_concentrates_on_few_blocks() {
        let c = cfg("address = { distribution = \"zipf\", exponent = 1.2 }");
        let mut g = generator(&c, 8 * 100_000);
        let mut counts = rustc_hash::FxHashMap::default();
        for _ in 0..50_000 {
            *counts.entry(g.next_request().0).or_insert(0u32) += 1;
        }
        let mut v: Vec<u32> = counts.values().copied().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = v.iter().take(100).sum();
        assert!(top as f64 / 50_000.0 > 0.5, "top-100 share {}", top as f64 / 50_000.0);
    }

    #[test]
    fn bad_values_name_their_key() {
        let c = cfg("read_fraction = 1.5");
        let err = SyntheticGenerator::new(&c, 1000, RngStream::new(1, StreamId::Requests), "workload").unwrap_err();
        assert_eq!(err.to_string(), "workload.read_fraction: must be in [0, 1]");
        let c = cfg("size_kib = 0.3");
        let err = SyntheticGenerator::new(&c, 1000, RngStream::new(1, StreamId::Requests), "workload").unwrap_err();
        assert!(err.to_string().starts_with("workload.size:"), "{err}");
    }

    fn error(toml_text: &str, capacity: u64) -> String {
        let c = cfg(toml_text);
        SyntheticGenerator::new(&c, capacity, RngStream::new(1, StreamId::Requests), "workload").unwrap_err().to_string()
    }

    #[test]
    fn sizes_beyond_u32_sectors_are_rejected_not_truncated() {
        // 2^31 KiB + 0.5 KiB = 2^32 + 1 sectors: as u32 that would be a 1-sector request.
        let e = error("size_kib = 2147483648.5", 1 << 40);
        assert!(e.starts_with("workload.size: requests of 4294967297 sectors are larger than raidlab supports"), "{e}");
        let c = cfg("size_kib = 2147483647.5"); // 2^32 − 1 sectors is the largest allowed
        assert_eq!(generator(&c, 1 << 40).next_request().1, u32::MAX);
    }

    #[test]
    fn choice_weights_whose_sum_overflows_are_rejected() {
        let e = error("size = { distribution = \"choice\", kib = [4, 8], weights = [1e308, 1e308] }", 1000);
        assert!(e.starts_with("workload.size.weights:"), "{e}");
    }

    #[test]
    fn an_alignment_or_hot_cold_split_the_array_cannot_hold_is_a_config_error() {
        let e = error("align_kib = 1000", 1000);
        assert!(e.starts_with("workload.align_kib: an alignment of 2000 sectors is larger than the array's 1000"), "{e}");
        // One start position only (4 KiB requests, 4 KiB alignment, 12 sectors): no cold region.
        let hot_cold = "address = { distribution = \"hot_cold\", hot_request_fraction = 0.5, hot_space_fraction = 0.2 }";
        let e = error(hot_cold, 12);
        assert!(e.starts_with("workload.address: a hot and a cold region need at least 2"), "{e}");
        let mut g = generator(&cfg(hot_cold), 16);
        assert!((0..100).all(|_| g.next_request().0 <= 8));
    }
}
