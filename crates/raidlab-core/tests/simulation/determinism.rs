//! Same configuration and seed → byte-identical results.

use crate::common::*;

fn text(seed: u64) -> String {
    format!(
        r#"
seed = {seed}
[array]
layout = "raid5"
drives = 6
stripe_unit_kib = 16
[drive]
preset = "ibm0661"
rotation = "exact"
[workload]
requests = 20000
read_fraction = 0.7
size = {{ distribution = "uniform", min_kib = 4, max_kib = 64 }}
address = {{ distribution = "zipf", exponent = 0.9 }}
[workload.arrival]
process = "poisson"
rate_per_s = 150
[[failures]]
drive = 3
at_s = 40
"#
    )
}

#[test]
fn same_seed_gives_identical_summary_and_tables() {
    let a = run(&text(11));
    let b = run(&text(11));
    assert_eq!(serde_json::to_string(&a.summary).unwrap(), serde_json::to_string(&b.summary).unwrap());
    // Debug output spells every f64 exactly (NaN included, which `==` would reject).
    assert_eq!(format!("{:?}", a.tables), format!("{:?}", b.tables));
    assert_eq!(a.config_hash, b.config_hash);
}

#[test]
fn another_seed_gives_other_results() {
    let a = run(&text(11));
    let c = run(&text(12));
    assert_ne!(a.summary["response_ms"], c.summary["response_ms"]);
    assert_ne!(a.config_hash, c.config_hash);
}
