//! Trace generators and file writing shared by the cache tests.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Whether the long randomized runs are asked for.
pub fn long_tests() -> bool {
    std::env::var("RAIDLAB_LONG_TESTS").is_ok_and(|v| v == "1")
}

/// A small deterministic generator (xorshift64*), so that traces do not depend on a crate's
/// stream.
pub struct Draws(u64);

impl Draws {
    pub fn new(seed: u64) -> Self {
        Draws(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(bound)) >> 64) as u64
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Independent references with a hot set: `hot_share` of the requests go to the first
/// `hot_fraction` of `footprint` blocks, the rest to the others, uniformly within each;
/// block numbers are scattered over `footprint` so that hot blocks lie on every drive.
pub fn hot_cold(requests: usize, footprint: u64, hot_fraction: f64, hot_share: f64, seed: u64) -> Vec<u64> {
    let mut draws = Draws::new(seed);
    let hot = ((footprint as f64 * hot_fraction) as u64).max(1);
    (0..requests)
        .map(|_| {
            let rank = if draws.unit() < hot_share { draws.below(hot) } else { hot + draws.below(footprint - hot) };
            scatter(rank, footprint)
        })
        .collect()
}

/// Zipf(`alpha`) over `footprint` blocks by inverse transform on the cumulative weights.
pub fn zipf(requests: usize, footprint: u64, alpha: f64, seed: u64) -> Vec<u64> {
    let mut cumulative = Vec::with_capacity(footprint as usize);
    let mut total = 0.0;
    for rank in 1..=footprint {
        total += (rank as f64).powf(-alpha);
        cumulative.push(total);
    }
    let mut draws = Draws::new(seed);
    (0..requests)
        .map(|_| {
            let target = draws.unit() * total;
            let rank = cumulative.partition_point(|&c| c <= target) as u64;
            scatter(rank.min(footprint - 1), footprint)
        })
        .collect()
}

/// A fixed permutation of `0..footprint` (multiplication by an odd number modulo a power of
/// two, restricted by cycle-walking).
fn scatter(rank: u64, footprint: u64) -> u64 {
    let bits = 64 - (footprint - 1).max(1).leading_zeros();
    let mask = (1u64 << bits) - 1;
    let mut x = rank;
    loop {
        x = (x.wrapping_mul(0x5851_f42d_4c95_7f2d) ^ (x >> 7)).wrapping_add(1) & mask;
        if x < footprint {
            return x;
        }
    }
}

/// `blocks` as an `oracleGeneral` file in the temp directory (one request a second), removed
/// on drop.
pub struct OracleFile(pub PathBuf);

impl OracleFile {
    pub fn new(name: &str, blocks: &[u64]) -> Self {
        let path = std::env::temp_dir().join(format!("raidlab-cache-test-{}-{name}.oracleGeneral", std::process::id()));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for (i, &block) in blocks.iter().enumerate() {
            out.write_all(&(i as u32).to_le_bytes()).unwrap();
            out.write_all(&block.to_le_bytes()).unwrap();
            out.write_all(&4096u32.to_le_bytes()).unwrap();
            out.write_all(&(-1i64).to_le_bytes()).unwrap();
        }
        out.flush().unwrap();
        OracleFile(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for OracleFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
