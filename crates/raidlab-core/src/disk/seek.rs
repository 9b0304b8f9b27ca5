//! Seek curves: seek time as a function of distance in cylinders.
//!
//! A curve is evaluated once per distance when the drive model is built and stored as a table
//! of whole nanoseconds, so [`SeekCurve::time`] is one array lookup in the hot loop.
//!
//! Three forms (see [`SeekConfig`]):
//! - `formula`: a + b·d + c·√d ms for d ≥ 1 (the thesis's form, seed 004 Table 2);
//! - `piecewise`: several such formulas, each up to its `max_distance`;
//! - `table`: measured (distance, ms) points, linearly interpolated; beyond the last point the
//!   line through the last two points is followed, below the first point the line through the
//!   first two.
//!
//! A seek of 0 cylinders always takes 0.

use super::{SeekConfig, SeekSegment};
use crate::error::{readable, Error, Result};
use crate::sim::{ms_to_ns, Nanos};

/// A seek curve precomputed for every distance of one drive.
#[derive(Debug, Clone)]
pub struct SeekCurve {
    /// Seek time in ns for each distance 0..cylinders (u32 keeps the table small: seek times
    /// are far below the 4.29 s a u32 of ns can hold).
    times: Vec<u32>,
}

fn check_coefficient(value: f64, key: String) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::config(key, format!("must be a finite number, got {}", readable(value))));
    }
    if value < 0.0 {
        return Err(Error::config(key, format!("must not be negative, got {}", readable(value))));
    }
    Ok(())
}

fn check_segment(segment: &SeekSegment, key: &str) -> Result<()> {
    check_coefficient(segment.a_ms, format!("{key}.a_ms"))?;
    check_coefficient(segment.b_ms, format!("{key}.b_ms"))?;
    check_coefficient(segment.c_ms, format!("{key}.c_ms"))
}

#[inline]
fn formula_ms(a: f64, b: f64, c: f64, distance: u32) -> f64 {
    let d = distance as f64;
    a + b * d + c * d.sqrt()
}

impl SeekCurve {
    /// Build for a drive of `cylinders` cylinders. `key` names the config key for errors.
    pub fn new(cfg: &SeekConfig, cylinders: u32, key: &str) -> Result<Self> {
        if cylinders == 0 {
            return Err(Error::config(key, "a seek curve needs a drive of at least one cylinder"));
        }
        let max_distance = cylinders - 1;
        let ms: Vec<f64> = match cfg {
            SeekConfig::Formula { a_ms, b_ms, c_ms } => {
                check_coefficient(*a_ms, format!("{key}.a_ms"))?;
                check_coefficient(*b_ms, format!("{key}.b_ms"))?;
                check_coefficient(*c_ms, format!("{key}.c_ms"))?;
                (1..=max_distance).map(|d| formula_ms(*a_ms, *b_ms, *c_ms, d)).collect()
            }
            SeekConfig::Piecewise { segments } => {
                Self::piecewise(segments, max_distance, &format!("{key}.segments"))?
            }
            SeekConfig::Table { points } => {
                Self::table(points, max_distance, &format!("{key}.points"))?
            }
        };
        let mut times = Vec::with_capacity(cylinders as usize);
        times.push(0u32);
        for (i, value) in ms.into_iter().enumerate() {
            let distance = i + 1;
            if !value.is_finite() || value < 0.0 {
                return Err(Error::config(
                    key,
                    format!("seek time at distance {distance} is {} ms; it must be finite and not negative", readable(value)),
                ));
            }
            let ns = ms_to_ns(value);
            let ns = u32::try_from(ns).map_err(|_| {
                Error::config(
                    key,
                    format!("seek time at distance {distance} is {} ms, above 4294 ms", readable(value)),
                )
            })?;
            times.push(ns);
        }
        Ok(SeekCurve { times })
    }

    fn piecewise(segments: &[SeekSegment], max_distance: u32, key: &str) -> Result<Vec<f64>> {
        if segments.is_empty() {
            return Err(Error::config(key, "at least one segment is required"));
        }
        for (i, segment) in segments.iter().enumerate() {
            check_segment(segment, &format!("{key}[{i}]"))?;
            if segment.max_distance == 0 {
                return Err(Error::config(
                    format!("{key}[{i}].max_distance"),
                    "must be at least 1 (distance 0 always takes no time)",
                ));
            }
            if i > 0 && segment.max_distance <= segments[i - 1].max_distance {
                return Err(Error::config(
                    format!("{key}[{i}].max_distance"),
                    format!(
                        "must be greater than the previous segment's ({}); segments go in increasing distance order",
                        segments[i - 1].max_distance
                    ),
                ));
            }
        }
        let last = segments[segments.len() - 1].max_distance;
        if last < max_distance {
            return Err(Error::config(
                key,
                format!("the segments end at distance {last} but the full stroke is {max_distance} cylinders"),
            ));
        }
        let mut out = Vec::with_capacity(max_distance as usize);
        let mut index = 0;
        for d in 1..=max_distance {
            while segments[index].max_distance < d {
                index += 1;
            }
            let s = &segments[index];
            out.push(formula_ms(s.a_ms, s.b_ms, s.c_ms, d));
        }
        Ok(out)
    }

    fn table(points: &[(u32, f64)], max_distance: u32, key: &str) -> Result<Vec<f64>> {
        if points.len() < 2 {
            return Err(Error::config(key, "at least two points are required"));
        }
        for (i, &(distance, ms)) in points.iter().enumerate() {
            if !ms.is_finite() || ms < 0.0 {
                return Err(Error::config(
                    format!("{key}[{i}]"),
                    format!("seek time must be finite and not negative, got {}", readable(ms)),
                ));
            }
            if i > 0 && distance <= points[i - 1].0 {
                return Err(Error::config(
                    format!("{key}[{i}]"),
                    format!(
                        "distance {distance} must be greater than the previous point's {}; points go in strictly increasing distance order",
                        points[i - 1].0
                    ),
                ));
            }
        }
        let line = |p: (u32, f64), q: (u32, f64), d: u32| {
            let slope = (q.1 - p.1) / (q.0 as f64 - p.0 as f64);
            p.1 + slope * (d as f64 - p.0 as f64)
        };
        let mut out = Vec::with_capacity(max_distance as usize);
        // `segment` is the index of the left point of the pair used for distance d.
        let mut segment = 0;
        for d in 1..=max_distance {
            while segment + 2 < points.len() && points[segment + 1].0 < d {
                segment += 1;
            }
            out.push(line(points[segment], points[segment + 1], d));
        }
        Ok(out)
    }

    /// Seek time for a distance in cylinders (0 for distance 0). Distances beyond the full
    /// stroke cost a full-stroke seek.
    #[inline]
    pub fn time(&self, distance: u32) -> Nanos {
        let index = (distance as usize).min(self.times.len() - 1);
        self.times[index] as Nanos
    }

    /// The longest distance in the table (cylinders − 1).
    pub fn max_distance(&self) -> u32 {
        (self.times.len() - 1) as u32
    }

    /// Mean seek time in ms over uniformly random pairs of distinct cylinders: the weighted
    /// average of drive data sheets, Σ (C − d)·t(d) / Σ (C − d) over d = 1 … C − 1.
    pub fn datasheet_average_ms(&self) -> f64 {
        let c = self.times.len() as f64;
        let (mut weighted, mut weights) = (0.0, 0.0);
        for (d, &t) in self.times.iter().enumerate().skip(1) {
            let w = c - d as f64;
            weighted += w * t as f64;
            weights += w;
        }
        if weights == 0.0 {
            0.0
        } else {
            weighted / weights / 1e6
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(result: Result<SeekCurve>) -> String {
        match result {
            Err(Error::Config { key, .. }) => key,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn formula_matches_the_thesis_curve_and_zero_distance_is_free() {
        let cfg = SeekConfig::Formula { a_ms: 2.0, b_ms: 0.01, c_ms: 0.46 };
        let curve = SeekCurve::new(&cfg, 949, "drive.model.seek").unwrap();
        assert_eq!(curve.time(0), 0);
        assert_eq!(curve.time(1), 2_470_000);
        // 2 + 9.48 + 0.46·√948 = 25.64316... ms
        let expected = 2.0 + 0.01 * 948.0 + 0.46 * 948f64.sqrt();
        assert_eq!(curve.time(948), ms_to_ns(expected));
        assert_eq!(curve.time(5000), curve.time(948));
        assert_eq!(curve.max_distance(), 948);
    }

    #[test]
    fn piecewise_segments_apply_up_to_their_max_distance() {
        let cfg = SeekConfig::Piecewise {
            segments: vec![
                SeekSegment { max_distance: 10, a_ms: 1.0, b_ms: 0.0, c_ms: 1.0 },
                SeekSegment { max_distance: 99, a_ms: 4.0, b_ms: 0.1, c_ms: 0.0 },
            ],
        };
        let curve = SeekCurve::new(&cfg, 100, "s").unwrap();
        assert_eq!(curve.time(4), ms_to_ns(3.0));
        assert_eq!(curve.time(10), ms_to_ns(1.0 + 10f64.sqrt()));
        assert_eq!(curve.time(11), ms_to_ns(5.1));
        assert_eq!(curve.time(99), ms_to_ns(13.9));
    }

    #[test]
    fn table_interpolates_and_extrapolates_from_the_last_two_points() {
        let cfg = SeekConfig::Table { points: vec![(1, 1.0), (11, 3.0), (51, 7.0)] };
        let curve = SeekCurve::new(&cfg, 101, "s").unwrap();
        assert_eq!(curve.time(1), ms_to_ns(1.0));
        assert_eq!(curve.time(6), ms_to_ns(2.0));
        assert_eq!(curve.time(11), ms_to_ns(3.0));
        assert_eq!(curve.time(31), ms_to_ns(5.0));
        assert_eq!(curve.time(51), ms_to_ns(7.0));
        // Beyond the last point: slope 0.1 ms per cylinder from (51, 7).
        assert_eq!(curve.time(100), ms_to_ns(11.9));
    }

    #[test]
    fn invalid_curves_name_the_offending_key() {
        let k = "drive.model.seek";
        let f = |a, b, c| SeekConfig::Formula { a_ms: a, b_ms: b, c_ms: c };
        assert_eq!(key_of(SeekCurve::new(&f(-1.0, 0.0, 0.0), 10, k)), "drive.model.seek.a_ms");
        assert_eq!(key_of(SeekCurve::new(&f(1.0, f64::NAN, 0.0), 10, k)), "drive.model.seek.b_ms");
        assert_eq!(
            key_of(SeekCurve::new(&f(1.0, 0.0, f64::INFINITY), 10, k)),
            "drive.model.seek.c_ms"
        );

        let non_monotone = SeekConfig::Table { points: vec![(1, 1.0), (10, 2.0), (10, 3.0)] };
        assert_eq!(key_of(SeekCurve::new(&non_monotone, 100, k)), "drive.model.seek.points[2]");
        let one_point = SeekConfig::Table { points: vec![(1, 1.0)] };
        assert_eq!(key_of(SeekCurve::new(&one_point, 100, k)), "drive.model.seek.points");
        let falling = SeekConfig::Table { points: vec![(1, 5.0), (10, 1.0)] };
        assert_eq!(key_of(SeekCurve::new(&falling, 100, k)), "drive.model.seek");

        let seg = |max_distance| SeekSegment { max_distance, a_ms: 1.0, b_ms: 0.0, c_ms: 0.1 };
        let short = SeekConfig::Piecewise { segments: vec![seg(10), seg(50)] };
        assert_eq!(key_of(SeekCurve::new(&short, 100, k)), "drive.model.seek.segments");
        let unordered = SeekConfig::Piecewise { segments: vec![seg(60), seg(50), seg(99)] };
        assert_eq!(
            key_of(SeekCurve::new(&unordered, 100, k)),
            "drive.model.seek.segments[1].max_distance"
        );
        let mut negative = seg(99);
        negative.c_ms = -0.1;
        let bad = SeekConfig::Piecewise { segments: vec![seg(10), negative] };
        assert_eq!(key_of(SeekCurve::new(&bad, 100, k)), "drive.model.seek.segments[1].c_ms");
        let none = SeekConfig::Piecewise { segments: vec![] };
        assert_eq!(key_of(SeekCurve::new(&none, 100, k)), "drive.model.seek.segments");
    }

    #[test]
    fn datasheet_average_weights_distances_by_pair_count() {
        // Linear curve t(d) = d ms on C = 4 cylinders: pairs at distance 1, 2, 3 number 3, 2, 1.
        let cfg = SeekConfig::Formula { a_ms: 0.0, b_ms: 1.0, c_ms: 0.0 };
        let curve = SeekCurve::new(&cfg, 4, "s").unwrap();
        let expected = (3.0 * 1.0 + 2.0 * 2.0 + 1.0 * 3.0) / 6.0;
        assert!((curve.datasheet_average_ms() - expected).abs() < 1e-9);
    }
}
