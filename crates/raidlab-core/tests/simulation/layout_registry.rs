//! The layout registry is open: a layout defined here, outside the crate, plugs in through
//! `layout::register` alone and runs normal, degraded and rebuild modes under the content
//! model, and a second failure in the same redundancy set loses data while one outside it
//! does not. Its copies lie at other sectors than the data they copy, so its rebuild reads
//! each source where the layout says (`Layout::rebuild_source_sectors`), and the content
//! model proves every rebuilt sector.

use raidlab_core::array::plan::{Planner, MIRROR};
use raidlab_core::error::{Error, Result};
use raidlab_core::layout::{self, Layout, LayoutEntry, LayoutParams, LayoutShape, Reconstruction, StripeMap, UnitLocation, UnitRole};

use crate::common::*;

/// A mirror whose pairs are far apart and whose copies are rotated: drive `k` and drive
/// `k + n/2` hold the same units (RAID-1 pairs neighbours instead), stripe `s` at unit `s` of
/// drive `k` and at unit `(s + S/2) mod S` of its partner (`S` stripes, even).
#[derive(Debug)]
struct RotatedMirror {
    shape: LayoutShape,
}

impl RotatedMirror {
    fn build(params: &LayoutParams, key: &str) -> Result<Box<dyn Layout>> {
        if params.drives < 2 || !params.drives.is_multiple_of(2) {
            return Err(Error::config(format!("{key}.drives"), "a rotated mirror needs an even number of drives"));
        }
        let stripes = params.drive_capacity_sectors / params.stripe_unit_sectors / 2 * 2;
        let shape = LayoutShape { drives: params.drives, stripe_unit_sectors: params.stripe_unit_sectors, stripes };
        Ok(Box::new(RotatedMirror { shape }))
    }
    fn half(&self) -> u32 {
        self.shape.drives / 2
    }
    /// The unit half the drive away: rotating by `S/2` units is its own inverse.
    fn rotated(&self, pba: u64) -> u64 {
        let unit = self.shape.stripe_unit_sectors;
        (pba / unit + self.shape.stripes / 2) % self.shape.stripes * unit + pba % unit
    }
}

impl Layout for RotatedMirror {
    fn redundancy_set(&self, member: u32) -> Vec<u32> {
        vec![(member + self.half()) % self.shape.drives]
    }
    fn volatile_state(&self) -> &'static str {
        "nothing of its own (its map is fixed)"
    }
    fn name(&self) -> &'static str {
        "rotated_mirror"
    }
    fn planner(&self) -> &'static dyn Planner {
        &MIRROR
    }
    fn fault_tolerance(&self) -> u32 {
        1
    }
    fn shape(&self) -> &LayoutShape {
        &self.shape
    }
    fn data_units_per_stripe(&self) -> u32 {
        self.half()
    }
    fn map_stripe(&self, stripe: u64, out: &mut StripeMap) {
        out.stripe = stripe;
        out.copies = 2;
        out.data.clear();
        out.parity.clear();
        let pba = stripe * self.shape.stripe_unit_sectors;
        for k in 0..self.half() {
            out.data.push(UnitLocation { drive: k, pba });
            out.data.push(UnitLocation { drive: k + self.half(), pba: self.rotated(pba) });
        }
    }
    fn locate(&self, drive: u32, pba: u64) -> Option<(u64, UnitRole)> {
        let unit = pba / self.shape.stripe_unit_sectors;
        if drive >= self.shape.drives || unit >= self.shape.stripes {
            return None;
        }
        let copy = drive / self.half();
        let stripe = if copy == 0 { unit } else { self.rotated(pba) / self.shape.stripe_unit_sectors };
        Some((stripe, UnitRole::Data { index: drive % self.half(), copy }))
    }
    fn stripes_in(&self, member: u32, start: u64, end: u64, _placement: Option<&dyn raidlab_core::layout::PlacementState>) -> (u64, u64) {
        let unit = self.shape.stripe_unit_sectors;
        let (first, last) = (start / unit, (end - 1) / unit);
        if member < self.half() {
            return (first, last);
        }
        // A copy's units are the stripes half the drive away; a range across the middle holds
        // stripes at both ends (every stripe is named: more locks than needed, none missed).
        let (a, b) = (self.rotated(first * unit) / unit, self.rotated(last * unit) / unit);
        if a <= b {
            (a, b)
        } else {
            (0, self.shape.stripes - 1)
        }
    }
    fn rebuild_source_sectors(&self, _member: u32, _source: u32, start: u64, _end: u64) -> u64 {
        // Either way round, the partner holds the unit half the drive away.
        self.rotated(start)
    }
    fn data_lost(&self, failed: &[u32]) -> bool {
        (0..self.half()).any(|k| failed.contains(&k) && failed.contains(&(k + self.half())))
    }
    fn reconstruction(&self, member: u32) -> Option<Reconstruction> {
        Some(Reconstruction { sources: vec![(member + self.half()) % self.shape.drives], xor: false, erasures: 0 })
    }
}

fn register() {
    layout::register(LayoutEntry { name: "rotated_mirror", build: RotatedMirror::build, doc: "a test's mirror", own_keys: &[] });
}

fn scenario(failures: &str) -> String {
    format!(
        "seed = 7\n[array]\nlayout = \"rotated_mirror\"\ndrives = 4\nstripe_unit_kib = 4\nspares = 1\n{SMALL_DRIVE}\n\
         [workload]\nrequests = 3000\nread_fraction = 0.5\nalign_kib = 0.5\n\
         size = {{ distribution = \"uniform\", min_kib = 0.5, max_kib = 16, step_kib = 0.5 }}\n\
         [workload.arrival]\nprocess = \"closed\"\noutstanding = 8\nthink_ms = 2\n[content]\ncheck = true\n{failures}[rebuild]\n\
         # Units of 64 sectors: none straddles the middle of a member, where the copies turn.\n\
         unit = {{ sectors = 64 }}\n"
    )
}

/// Normal, degraded and rebuild modes under the content model, through the registry alone.
#[test]
fn a_layout_defined_in_a_test_runs_every_mode_through_the_registry() {
    register();
    // A failure at 0.3 s, rebuilt onto the spare: every read returns the value last written,
    // and every rebuilt sector holds what the lost drive held.
    let s = run(&scenario("[[failures]]\ndrive = 1\nat_s = 0.3\n")).summary;
    assert_eq!(s["layout"], "rotated_mirror");
    assert_eq!(s["requests_completed"], 3000);
    assert_eq!(f(&s, "content.stale_sectors"), 0.0, "{s}");
    assert_eq!(f(&s, "content.rebuilt_sectors_wrong"), 0.0);
    assert!(f(&s, "content.rebuilt_sectors_checked") > 0.0);
    assert_eq!(s["rebuilds"][0]["outcome"], "complete");
    assert!(f(&s, "response_ms.degraded_read.count") > 0.0, "degraded reads happened before the rebuild ended");
    assert_eq!(s["data_loss"], false);
    // A copy's drive is rebuilt from the other way round.
    let copy = run(&scenario("[[failures]]\ndrive = 2\nat_s = 0.3\n")).summary;
    assert_eq!(copy["rebuilds"][0]["outcome"], "complete", "{copy}");
    assert_eq!(f(&copy, "content.stale_sectors"), 0.0, "{copy}");
    assert_eq!(f(&copy, "content.rebuilt_sectors_wrong"), 0.0);
    assert!(f(&copy, "content.rebuilt_sectors_checked") > 0.0);
    // A second failure outside the pair loses nothing; inside the pair (drive 1's partner is
    // drive 3) it loses data.
    let outside = run(&scenario("[[failures]]\ndrive = 1\nat_s = 0.3\n[[failures]]\ndrive = 0\nat_s = 0.31\n")).summary;
    assert_eq!(outside["data_loss"], false, "{outside}");
    assert_eq!(f(&outside, "content.stale_sectors"), 0.0);
    let inside = run(&scenario("[[failures]]\ndrive = 1\nat_s = 0.3\n[[failures]]\ndrive = 3\nat_s = 0.31\n")).summary;
    assert_eq!(inside["data_loss"], true, "{inside}");
    assert_eq!(f(&inside, "content.stale_sectors"), 0.0);
    // Its keys are the registry's: another layout's own key is refused for it.
    let e = raidlab_core::Config::from_toml(&scenario("").replace("drives = 4\n", "drives = 4\ncopies = 2\n"), std::path::Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("array.copies:") && e.contains("raid1"), "{e}");
}
