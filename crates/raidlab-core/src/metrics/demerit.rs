//! The demerit figure of Ruemmler & Wilkes (1994, "An introduction to disk drive modeling",
//! IEEE Computer 27(3)): the root-mean-square *horizontal* distance between two
//! response-time CDFs — how far, in ms, the simulated curve lies left or right of the
//! measured one, averaged (RMS) over the fraction of requests.
//!
//! ```text
//!  fraction ▲    measured       simulated
//!         1 ┤       ┌────────      ┌────────
//!           │    ┌──┘           ┌──┘
//!         p ┤····│◀────────────▶│          the horizontal distance at p is
//!           │ ┌──┘           ┌──┘           Q_sim(p) − Q_meas(p)
//!         0 └─┴──────────────┴──────────────▶ response time
//!
//!  demerit = sqrt( ∫₀¹ (Q_meas(p) − Q_sim(p))² dp )
//! ```
//!
//! `Q` is a sample's quantile function, the inverse of its CDF. This module computes the
//! integral **exactly** for the two empirical (step) CDFs rather than on a grid: the
//! empirical quantile function of a sorted sample x₁ ≤ … ≤ xₙ is the step function
//! `Q(p) = x_i` for `p ∈ ((i−1)/n, i/n]`, so the integrand is constant between consecutive
//! breakpoints of the merged set {i/n} ∪ {j/m}, and the integral is a finite sum. For equal
//! sizes it is simply the RMS difference of the sorted samples. (The quantity is the
//! 2-Wasserstein distance between the two empirical distributions.)
//!
//! Why exact: the value is then a property of the two samples alone — no bin width, no grid,
//! no interpolation rule — and the analytic cases hold to rounding: identical samples give 0,
//! a sample shifted by c gives exactly c, and a sample scaled by a gives |a − 1|·RMS(x).
//!
//! DiskSim's own `rms` tool (the numbers its `runvalid` script prints) differs in two
//! details: it reads both CDFs from binned distributions (bins of 1 µs growing by 1 %, i.e.
//! about 1 % of the value) and joins bin edges linearly, then averages the squared horizontal
//! distance at the 10,000 probabilities 0.0001, 0.0002, …, 1. With 10,000 requests per trace
//! the two constructions differ by far less than the model differences they measure.

/// The demerit of a simulated response-time sample against a measured one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demerit {
    /// RMS horizontal distance between the two CDFs, in the samples' unit.
    pub rms_distance: f64,
    /// Mean of the measured sample, in the samples' unit.
    pub measured_mean: f64,
    /// Mean of the simulated sample, in the samples' unit.
    pub simulated_mean: f64,
}

impl Demerit {
    /// Compare two samples (any order, any units, the same unit for both). Both must be
    /// non-empty; their sizes may differ.
    pub fn of(measured: &[f64], simulated: &[f64]) -> Option<Demerit> {
        if measured.is_empty() || simulated.is_empty() {
            return None;
        }
        let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
        Some(Demerit {
            rms_distance: rms_horizontal_distance(&sorted(measured), &sorted(simulated)),
            measured_mean: mean(measured),
            simulated_mean: mean(simulated),
        })
    }

    /// The demerit as a percentage of the measured mean (how DiskSim's papers quote it).
    pub fn percent_of_measured_mean(&self) -> f64 {
        100.0 * self.rms_distance / self.measured_mean
    }
}

/// A sorted copy (total order: NaNs last, though response times have none).
pub fn sorted(sample: &[f64]) -> Vec<f64> {
    let mut copy = sample.to_vec();
    copy.sort_by(f64::total_cmp);
    copy
}

/// The exact RMS horizontal distance between the empirical CDFs of two **sorted**, non-empty
/// samples (module docs). Walks the merged breakpoints {i/n} ∪ {j/m}, counted in units of
/// 1/(n·m) so that no breakpoint is lost to rounding.
pub fn rms_horizontal_distance(a: &[f64], b: &[f64]) -> f64 {
    let (n, m) = (a.len() as u128, b.len() as u128);
    assert!(n > 0 && m > 0, "the demerit needs two non-empty samples");
    debug_assert!(a.windows(2).all(|w| w[0] <= w[1]) && b.windows(2).all(|w| w[0] <= w[1]));
    if n == m {
        let sum: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
        return (sum / n as f64).sqrt();
    }
    let (mut i, mut j) = (0usize, 0usize);
    // a[i] holds on (i·m, (i+1)·m] and b[j] on (j·n, (j+1)·n], in units of 1/(n·m).
    let mut position: u128 = 0;
    let mut sum = 0.0;
    while position < n * m {
        let end_a = (i as u128 + 1) * m;
        let end_b = (j as u128 + 1) * n;
        let end = end_a.min(end_b);
        let difference = a[i] - b[j];
        sum += (end - position) as f64 * difference * difference;
        position = end;
        if end == end_a {
            i += 1;
        }
        if end == end_b {
            j += 1;
        }
    }
    (sum / (n * m) as f64).sqrt()
}

/// The empirical CDF of a sorted sample as (value, fraction of the sample ≤ value) at each
/// distinct value: the corners of the step function, for plotting and tables.
pub fn empirical_cdf(sorted_sample: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted_sample.len() as f64;
    let mut points: Vec<(f64, f64)> = Vec::new();
    for (i, &x) in sorted_sample.iter().enumerate() {
        let fraction = (i + 1) as f64 / n;
        match points.last_mut() {
            Some(last) if last.0 == x => last.1 = fraction,
            _ => points.push((x, fraction)),
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
    }

    /// A skewed, response-time-like sample in ms (deterministic).
    fn sample(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| 1.0 + 12.0 * ((i * 7919) % n) as f64 / n as f64 + ((i * 31) % 17) as f64 * 0.3)
            .collect()
    }

    #[test]
    fn identical_samples_have_no_demerit_in_any_order() {
        let x = sample(1000);
        let mut reversed = x.clone();
        reversed.reverse();
        let d = Demerit::of(&x, &reversed).unwrap();
        assert_eq!(d.rms_distance, 0.0);
        assert_eq!(d.percent_of_measured_mean(), 0.0);
    }

    #[test]
    fn a_sample_shifted_by_c_ms_has_demerit_c() {
        let x = sample(1000);
        for c in [0.25, 1.0, 3.5] {
            let shifted: Vec<f64> = x.iter().map(|v| v + c).collect();
            let d = Demerit::of(&x, &shifted).unwrap();
            assert!(close(d.rms_distance, c), "{c}: {}", d.rms_distance);
            assert!(close(d.simulated_mean - d.measured_mean, c));
            // Either way round.
            assert!(close(Demerit::of(&shifted, &x).unwrap().rms_distance, c));
        }
    }

    #[test]
    fn a_scaled_sample_has_demerit_a_minus_one_times_the_rms_of_the_sample() {
        let x = sample(1000);
        let rms = (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64).sqrt();
        for a in [0.5, 1.1, 2.0] {
            let scaled: Vec<f64> = x.iter().map(|v| a * v).collect();
            let d = Demerit::of(&x, &scaled).unwrap();
            assert!(
                close(d.rms_distance, (a - 1.0f64).abs() * rms),
                "{a}: {}",
                d.rms_distance
            );
        }
    }

    #[test]
    fn unequal_sizes_use_the_exact_step_functions() {
        // {0} against {1, 3}: Q is 0 everywhere against 1 on (0, ½] and 3 on (½, 1]:
        // ½·1² + ½·3² = 5.
        assert!(close(
            rms_horizontal_distance(&[0.0], &[1.0, 3.0]),
            5f64.sqrt()
        ));
        // The same distribution sampled at different sizes: {1, 2} and {1, 1, 2, 2}.
        assert_eq!(
            rms_horizontal_distance(&[1.0, 2.0], &[1.0, 1.0, 2.0, 2.0]),
            0.0
        );
        // Thirds against halves: {0, 3, 6} vs {0, 6}: pieces (0,⅓]:0, (⅓,½]:3 vs 0, (½,⅔]:3 vs 6,
        // (⅔,1]:0 → ⅙·9 + ⅙·9 = 3.
        assert!(close(
            rms_horizontal_distance(&[0.0, 3.0, 6.0], &[0.0, 6.0]),
            3f64.sqrt()
        ));
        // Symmetric.
        assert!(close(
            rms_horizontal_distance(&[0.0, 6.0], &[0.0, 3.0, 6.0]),
            3f64.sqrt()
        ));
    }

    #[test]
    fn matches_a_fine_probability_grid() {
        // The grid construction (quantiles at p = (k − ½)/K) converges to the exact integral.
        let x = sorted(&sample(997));
        let y = sorted(
            &sample(1013)
                .iter()
                .map(|v| v * 1.07 + 0.2)
                .collect::<Vec<_>>(),
        );
        let quantile =
            |s: &[f64], p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
        let k = 1_000_000;
        let grid = ((1..=k)
            .map(|i| {
                let p = (i as f64 - 0.5) / k as f64;
                (quantile(&x, p) - quantile(&y, p)).powi(2)
            })
            .sum::<f64>()
            / k as f64)
            .sqrt();
        let exact = rms_horizontal_distance(&x, &y);
        assert!((grid - exact).abs() < 1e-3 * exact, "{grid} vs {exact}");
    }

    #[test]
    fn empty_samples_have_no_demerit() {
        assert_eq!(Demerit::of(&[], &[1.0]), None);
        assert_eq!(Demerit::of(&[1.0], &[]), None);
    }

    #[test]
    fn empirical_cdf_has_one_corner_per_distinct_value() {
        assert_eq!(
            empirical_cdf(&[1.0, 2.0, 2.0, 5.0]),
            [(1.0, 0.25), (2.0, 0.75), (5.0, 1.0)]
        );
        assert!(empirical_cdf(&[]).is_empty());
    }
}
