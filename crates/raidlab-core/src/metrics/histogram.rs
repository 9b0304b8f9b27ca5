//! A log-linear histogram of durations (ns): 128 linear sub-buckets per power of two, so any
//! recorded value is known to within 0.8 %; the mean, minimum and maximum are exact.

use crate::sim::Nanos;

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// Response-time histogram.
#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: Nanos,
    max: Nanos,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Vec::new(), count: 0, sum: 0, min: Nanos::MAX, max: 0 }
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let exponent = 63 - v.leading_zeros();
        let shift = exponent - SUB_BITS;
        let sub = (v >> shift) - SUB;
        ((shift as u64 + 1) * SUB + sub) as usize
    }
}

/// Smallest value that falls in bucket `i`.
fn lower_bound(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        i
    } else {
        let shift = i / SUB - 1;
        (SUB + i % SUB) << shift
    }
}

impl Histogram {
    /// Record one value, ns.
    #[inline]
    pub fn record(&mut self, v: Nanos) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Add everything `other` recorded, as if each of its values had been recorded here.
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.is_empty() {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact mean, ns (NaN when empty).
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Exact maximum, ns (0 when empty).
    pub fn max(&self) -> Nanos {
        self.max
    }

    /// The q-quantile (q in [0, 1]), ns: the midpoint of the bucket holding it, clamped to
    /// the exact min and max (NaN when empty).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let mid = (lower_bound(i) as f64 + lower_bound(i + 1) as f64 - 1.0) / 2.0;
                return mid.clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }

    /// Non-empty buckets as (upper bound exclusive, ns, count), in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().enumerate().filter(|(_, c)| **c > 0).map(|(i, c)| (lower_bound(i + 1), *c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        for v in [0u64, 1, 127, 128, 129, 255, 256, 1000, 123_456_789, u64::MAX / 3] {
            let i = index(v);
            assert!(lower_bound(i) <= v && v < lower_bound(i + 1).max(v + 1), "{v}");
        }
        let mut prev = 0;
        for i in 1..BUCKETS - 1 {
            assert!(lower_bound(i) > prev);
            prev = lower_bound(i);
        }
    }

    #[test]
    fn quantiles_are_within_bucket_precision() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for q in [0.5, 0.9, 0.99] {
            let exact = q * 100_000.0 * 1000.0;
            assert!((h.quantile(q) - exact).abs() / exact < 0.008, "q{q}: {}", h.quantile(q));
        }
        assert_eq!(h.mean(), 50_000.5 * 1000.0);
        assert_eq!(h.max(), 100_000_000);
    }

    /// Merging two histograms gives the one that recorded both sets of values, also when
    /// either is empty.
    #[test]
    fn a_merge_is_the_histogram_of_both_sets_of_values() {
        let mut rng = crate::sim::RngStream::new(5, crate::sim::StreamId::Policy(0));
        let values: Vec<u64> = (0..10_000)
            .map(|_| {
                let bits = 1 + rng.below(40);
                rng.below(1 << bits)
            })
            .collect();
        let (first, second) = values.split_at(3_000);
        for (a, b) in [(first, second), (&values[..0], second), (first, &values[..0]), (&values[..0], &values[..0])] {
            let (mut merged, mut other, mut both) = (Histogram::default(), Histogram::default(), Histogram::default());
            a.iter().for_each(|&v| merged.record(v));
            b.iter().for_each(|&v| other.record(v));
            a.iter().chain(b).for_each(|&v| both.record(v));
            merged.merge(&other);
            assert_eq!((merged.count, merged.sum, merged.min, merged.max), (both.count, both.sum, both.min, both.max));
            assert!(merged.buckets().eq(both.buckets()));
            for q in [0.0, 0.5, 0.99, 1.0] {
                assert_eq!(merged.quantile(q).to_bits(), both.quantile(q).to_bits(), "q{q}");
            }
        }
    }
}
