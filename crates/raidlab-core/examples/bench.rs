//! `cargo run --release --example bench -- [requests] [case]`: the bench cases (or one), one line each.
fn main() {
    let requests = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let only = std::env::args().nth(2);
    // The long cases (a whole rebuild) run only when named.
    let named = |c: &&&str| only.as_deref() == Some(**c);
    let cases = raidlab_core::api::bench_cases().iter().filter(|c| only.as_deref().is_none_or(|o| o == **c));
    for case in cases.chain(raidlab_core::api::long_bench_cases().iter().filter(named)) {
        let r = raidlab_core::api::bench(case, requests, None).expect("bench case runs");
        println!("{case}: {} requests, {} disk ops in {:.3} s: {:.0} req/s, {:.0} ops/s", r.requests, r.disk_ops, r.wall_seconds, r.requests_per_second, r.disk_ops_per_second);
        if let Some(t) = r.rebuild_time_s {
            println!("{case}: a rebuild of {t:.0} s ({:.1} h) simulated, {:.0} s in all", t / 3600.0, r.simulated_seconds);
        }
    }
}
