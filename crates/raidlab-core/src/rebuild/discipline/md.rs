//! Linux md's resync throttle (`rebuild-controls.md` §2.1; `drivers/md/md.c` `md_do_sync`,
//! `is_mddev_idle`; mdadm `md.4` "RECOVERY"): "the md driver will monitor accesses to the
//! array and will slow down the rate of recovery if other activity is happening".
//!
//! Before each sync read enters a member, the discipline does what `md_do_sync` does before
//! each sync request:
//!
//! 1. **Speed.** Sectors of sync I/O completed are sampled in ten marks three seconds apart
//!    (`SYNC_MARKS 10`, `SYNC_MARK_STEP 3*HZ`): the speed is the sectors done since the oldest
//!    mark, in KiB, over the whole seconds since it plus one, plus one (md's integer formula),
//!    so it is averaged over at most 30 s.
//! 2. At or below `speed_limit_min` (KiB/s per device, default 1000): issue.
//! 3. Above `speed_limit_max` (default 200000): sleep 500 ms (`msleep(500)`), then check again.
//! 4. Between the two: issue if the array is idle; else wait for sync I/O in flight:
//!    * `idle_rule = "pre2025"` (every kernel until the 2025 rewrite, ~6.16 **[inference]**):
//!      a member is busy when its completed sectors less its sync sectors grew by more than 64
//!      since the last time it was found busy (`curr_events − last_events > 64`); when busy, md
//!      waits until *all* sync I/O in flight has completed: depth 1 (commit ac8fa4196d20).
//!    * `idle_rule = "2025"` (commit e5797ae7033f, "md: fix is_mddev_idle()"): busy when
//!      any normal I/O completed or was in flight since the last check; when busy, sync I/O
//!      in flight is capped at `sync_io_depth` (default 32) I/Os of 8 sectors (one 4 KiB
//!      stripe) for parity layouts, 128 sectors (64 KiB `RESYNC_PAGES`) for mirrors (patch
//!      "md: add a new api sync_io_depth", Yu Kuai, 2025-04-18, merged as 03720d82d730).
//!
//! raidlab's reading: the speed and the in-flight count are kept per member (each survivor's
//! sync stream; md's limits are "per-device"), counting the rebuild reads issued to it; the
//! idle test looks at every member of the array, source or target, as md's loop over the
//! array's devices does, and is made once per instant, however many members ask then. Sync
//! reads queue with user I/O at user priority, as md's do in the block layer. The default
//! rule is `pre2025`, what the kernels most arrays run (every LTS kernel before the rewrite)
//! do.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{non_negative, Admit, Discipline};
use crate::disk::Priority;
use crate::error::{Error, Result};
use crate::rebuild::{DriveState, RebuildConfig};
use crate::sim::Nanos;

pub const DOC: &str = "Linux md resync throttle: speed_limit_min/max KiB/s per device over 30 s of marks, the pre-2025 or 2025 idle test, sync_io_depth";

/// Linux md's resync throttle (`[rebuild.md]`; `rebuild-controls.md` §2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MdConfig {
    /// `/proc/sys/dev/raid/speed_limit_min`: the rebuild speed per device md keeps up however
    /// busy the array is, KiB/s (md's default 1000).
    #[serde(default = "default_min")]
    pub speed_limit_min_kib_s: f64,
    /// `/proc/sys/dev/raid/speed_limit_max`: the most rebuild speed per device, KiB/s (md's
    /// default 200000).
    #[serde(default = "default_max")]
    pub speed_limit_max_kib_s: f64,
    /// The idle test: `"pre2025"` (completed sectors grew by more than 64 since the last busy
    /// verdict; when busy, all sync I/O drains first: depth 1) or `"2025"` (any normal I/O
    /// completed or in flight since the last check; when busy, up to `sync_io_depth` I/Os).
    /// The number 2025 is taken for `"2025"`.
    #[serde(default = "default_rule", deserialize_with = "rule_name")]
    pub idle_rule: String,
    /// `sync_io_depth` (2025 rule): sync I/O in flight per member while the array is busy, in
    /// md's I/Os of 8 sectors (RAID-5) or 128 sectors (RAID-1). Default 32.
    #[serde(default = "default_depth")]
    pub sync_io_depth: i64,
}

fn default_min() -> f64 {
    1000.0
}
fn default_max() -> f64 {
    200000.0
}
fn default_rule() -> String {
    "pre2025".into()
}
fn default_depth() -> i64 {
    32
}

/// A rule's name, or the year as a number (`--set rebuild.md.idle_rule=2025`).
fn rule_name<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum NameOrYear {
        Name(String),
        Year(i64),
    }
    Ok(match NameOrYear::deserialize(deserializer)? {
        NameOrYear::Name(name) => name,
        NameOrYear::Year(year) => year.to_string(),
    })
}

impl Default for MdConfig {
    fn default() -> Self {
        MdConfig {
            speed_limit_min_kib_s: default_min(),
            speed_limit_max_kib_s: default_max(),
            idle_rule: default_rule(),
            sync_io_depth: default_depth(),
        }
    }
}

/// The idle tests md has had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdleRule {
    Pre2025,
    Y2025,
}

const RULES: &[(&str, IdleRule)] = &[("pre2025", IdleRule::Pre2025), ("2025", IdleRule::Y2025)];

impl MdConfig {
    /// Errors name the key under `rebuild.md.`.
    pub fn validate(&self) -> Result<()> {
        non_negative(
            "rebuild.md.speed_limit_min_kib_s",
            self.speed_limit_min_kib_s,
            "KiB/s",
        )?;
        non_negative(
            "rebuild.md.speed_limit_max_kib_s",
            self.speed_limit_max_kib_s,
            "KiB/s",
        )?;
        if self.speed_limit_max_kib_s == 0.0 {
            return Err(Error::config(
                "rebuild.md.speed_limit_max_kib_s",
                "must be more than 0 KiB/s",
            ));
        }
        if self.speed_limit_min_kib_s > self.speed_limit_max_kib_s {
            return Err(Error::config(
                "rebuild.md.speed_limit_min_kib_s",
                format!(
                    "{} KiB/s is more than speed_limit_max_kib_s = {} KiB/s",
                    self.speed_limit_min_kib_s, self.speed_limit_max_kib_s
                ),
            ));
        }
        self.rule()?;
        if self.sync_io_depth < 1 {
            return Err(Error::config(
                "rebuild.md.sync_io_depth",
                format!("must be at least 1, not {}", self.sync_io_depth),
            ));
        }
        Ok(())
    }

    fn rule(&self) -> Result<IdleRule> {
        RULES
            .iter()
            .find(|(name, _)| *name == self.idle_rule)
            .map(|&(_, rule)| rule)
            .ok_or_else(|| {
                Error::config(
                    "rebuild.md.idle_rule",
                    format!(
                        "unknown idle rule {:?}; known rules: pre2025, 2025",
                        self.idle_rule
                    ),
                )
            })
    }
}

/// md's marks: `SYNC_MARKS` samples `SYNC_MARK_STEP` apart.
const SYNC_MARKS: usize = 10;
const SYNC_MARK_STEP_NS: Nanos = 3_000_000_000;
/// `msleep(500)` when above the maximum.
const SLEEP_NS: Nanos = 500_000_000;
/// Growth of a member's non-sync sectors that makes it busy (pre-2025 rule).
const BUSY_SECTORS: u64 = 64;

/// One member's sync stream.
#[derive(Debug, Clone, Default)]
struct Member {
    /// Whether the marks are set (at the member's first check).
    started: bool,
    /// Sync sectors completed, and in flight.
    done: u64,
    in_flight: u64,
    mark: [Nanos; SYNC_MARKS],
    mark_count: [u64; SYNC_MARKS],
    last_mark: usize,
    resync_mark: Nanos,
    resync_mark_count: u64,
    /// Idle test state: the non-sync sectors at the last busy verdict (pre-2025) and the
    /// user ops done at the last check (2025).
    last_events: u64,
    last_ops: u64,
}

impl Member {
    /// md's `currspeed` at `now`, KiB/s, after stepping the marks.
    fn speed_kib_s(&mut self, now: Nanos) -> u64 {
        if !self.started {
            self.started = true;
            // md starts its marks at the sync position it starts from: nothing done yet.
            self.mark = [now; SYNC_MARKS];
            self.mark_count = [0; SYNC_MARKS];
            self.resync_mark = now;
            self.resync_mark_count = 0;
        }
        if now >= self.mark[self.last_mark] + SYNC_MARK_STEP_NS {
            let next = (self.last_mark + 1) % SYNC_MARKS;
            self.resync_mark = self.mark[next];
            self.resync_mark_count = self.mark_count[next];
            self.mark[next] = now;
            self.mark_count[next] = self.done;
            self.last_mark = next;
        }
        let seconds = (now - self.resync_mark) / 1_000_000_000;
        (self.done - self.resync_mark_count) / 2 / (seconds + 1) + 1
    }
}

/// Linux md's resync throttle.
pub struct Md {
    min_kib_s: f64,
    max_kib_s: f64,
    rule: IdleRule,
    depth: u64,
    /// Sectors of one md sync I/O: 8 for parity layouts, 128 for mirrors.
    io_sectors: u64,
    /// Per drive slot.
    members: Vec<Member>,
    /// The slots of the array being rebuilt: sources and target.
    array: Vec<u32>,
    /// The idle verdict, and the instant it was made.
    verdict: Option<(Nanos, bool)>,
    /// Whether the members' idle-test counters were set at the rebuild's first check (md's
    /// `is_mddev_idle(mddev, 1)`: "this initializes IO event counters").
    counters_set: bool,
}

impl Md {
    pub fn boxed(config: &RebuildConfig, slots: u32) -> Box<dyn Discipline> {
        let md = config.md.clone().unwrap_or_default();
        Box::new(Md {
            min_kib_s: md.speed_limit_min_kib_s,
            max_kib_s: md.speed_limit_max_kib_s,
            rule: md.rule().unwrap_or(IdleRule::Pre2025),
            depth: md.sync_io_depth.max(1) as u64,
            io_sectors: 8,
            members: vec![Member::default(); slots as usize],
            array: Vec::new(),
            verdict: None,
            counters_set: false,
        })
    }

    /// `is_mddev_idle`: whether no member of the array saw user I/O (by the rule), decided
    /// once per instant.
    fn idle(&mut self, now: Nanos, drives: &dyn DriveState) -> bool {
        if let Some((at, idle)) = self.verdict {
            if at == now {
                return idle;
            }
        }
        if !self.counters_set {
            self.counters_set = true;
            for &slot in &self.array {
                let m = &mut self.members[slot as usize];
                m.last_events = drives.user_sectors_done(slot);
                m.last_ops = drives.user_ops_done(slot);
            }
        }
        let mut idle = true;
        for &slot in &self.array {
            let m = &mut self.members[slot as usize];
            match self.rule {
                IdleRule::Pre2025 => {
                    let events = drives.user_sectors_done(slot);
                    if events.saturating_sub(m.last_events) > BUSY_SECTORS {
                        m.last_events = events;
                        idle = false;
                    }
                }
                IdleRule::Y2025 => {
                    let ops = drives.user_ops_done(slot);
                    if ops != m.last_ops || drives.user_ops_in_flight(slot) > 0 {
                        idle = false;
                    }
                    m.last_ops = ops;
                }
            }
        }
        self.verdict = Some((now, idle));
        idle
    }
}

impl Discipline for Md {
    fn priority(&self) -> Priority {
        Priority::Foreground
    }

    fn admit(&mut self, drive: u32, now: Nanos, drives: &dyn DriveState) -> Admit {
        let Some(member) = self.members.get_mut(drive as usize) else {
            return Admit::Now;
        };
        let speed = member.speed_kib_s(now) as f64;
        if speed <= self.min_kib_s {
            return Admit::Now;
        }
        if speed > self.max_kib_s {
            return Admit::At(now + SLEEP_NS);
        }
        if self.idle(now, drives) {
            return Admit::Now;
        }
        let in_flight = self.members[drive as usize].in_flight;
        let cap = match self.rule {
            IdleRule::Pre2025 => 1,
            IdleRule::Y2025 => self.depth * self.io_sectors,
        };
        // Pre-2025: wait until nothing is in flight; 2025: until fewer sectors than the cap.
        let room = match self.rule {
            IdleRule::Pre2025 => in_flight == 0,
            IdleRule::Y2025 => in_flight < cap,
        };
        if room {
            Admit::Now
        } else {
            Admit::Later
        }
    }

    fn issued(&mut self, drive: u32, _now: Nanos, sectors: u64) {
        if let Some(m) = self.members.get_mut(drive as usize) {
            m.in_flight += sectors;
        }
    }

    fn completed(&mut self, drive: u32, _now: Nanos, sectors: u64, _drives: &dyn DriveState) {
        if let Some(m) = self.members.get_mut(drive as usize) {
            m.in_flight = m.in_flight.saturating_sub(sectors);
            m.done += sectors;
        }
    }

    fn begin(&mut self, sources: &[u32], target: u32, parity: bool) {
        for m in &mut self.members {
            *m = Member::default();
        }
        self.array = sources.iter().copied().chain([target]).collect();
        self.io_sectors = if parity { 8 } else { 128 };
        self.verdict = None;
        self.counters_set = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives with user sectors done and ops in flight set by hand.
    struct Users {
        sectors: Vec<u64>,
        ops: Vec<u64>,
        in_flight: Vec<u64>,
    }
    impl DriveState for Users {
        fn cylinder(&self, _: u32) -> u32 {
            0
        }
        fn is_idle(&self, _: u32) -> bool {
            true
        }
        fn user_sectors_done(&self, d: u32) -> u64 {
            self.sectors[d as usize]
        }
        fn user_ops_done(&self, d: u32) -> u64 {
            self.ops[d as usize]
        }
        fn user_ops_in_flight(&self, d: u32) -> u64 {
            self.in_flight[d as usize]
        }
    }

    fn md(text: &str) -> Box<dyn Discipline> {
        let config: RebuildConfig =
            toml::from_str(&format!("discipline = \"md\"\n[md]\n{text}")).unwrap();
        config.validate().unwrap();
        let mut d = Md::boxed(&config, 3);
        d.begin(&[0, 1], 2, true);
        d
    }

    const S: Nanos = 1_000_000_000;

    /// Below the minimum md issues whatever the load; above the maximum it sleeps 500 ms.
    #[test]
    fn the_speed_is_measured_over_marks_and_bounded_by_min_and_max() {
        let mut d = md("speed_limit_min_kib_s = 100\nspeed_limit_max_kib_s = 1000");
        let busy = Users {
            sectors: vec![0, 0, 0],
            ops: vec![0; 3],
            in_flight: vec![1; 3],
        };
        assert_eq!(
            d.admit(0, 0, &busy),
            Admit::Now,
            "speed 1 KiB/s at the start"
        );
        // 3,000 sectors (1,500 KiB) done in the first second: (1500 / (1 + 1)) + 1 = 751 KiB/s,
        // between min and max, and the array is busy (2025-style in-flight user work does not
        // count for pre-2025: no sectors grew), so idle: issue.
        d.issued(0, 0, 3000);
        d.completed(0, S, 3000, &busy);
        assert_eq!(d.admit(0, S, &busy), Admit::Now);
        // 6,000 more by 2 s: 4,500 KiB over 3 s = 1,501 KiB/s > max: sleep 500 ms.
        d.issued(0, S, 6000);
        d.completed(0, 2 * S, 6000, &busy);
        assert_eq!(d.admit(0, 2 * S, &busy), Admit::At(2 * S + 500_000_000));
        // Drive 1 is measured apart.
        assert_eq!(d.admit(1, 2 * S, &busy), Admit::Now);
        // Marks step every 3 s: by 40 s the window holds the last 30 s only, which saw
        // nothing: the speed falls back to 1.
        let mut t = 3 * S;
        while t <= 40 * S {
            let _ = d.admit(0, t, &busy);
            t += S;
        }
        assert_eq!(d.admit(0, 40 * S, &busy), Admit::Now);
    }

    /// Between min and max on a busy array: pre-2025 waits until nothing is in flight
    /// (busy = more than 64 user sectors since the last busy verdict); 2025 allows
    /// `sync_io_depth` × 8 sectors (RAID-5) and counts any user op done or in flight.
    #[test]
    fn the_idle_rules_and_the_depth() {
        for rule in ["pre2025", "2025"] {
            let mut d = md(&format!("speed_limit_min_kib_s = 1\nspeed_limit_max_kib_s = 100000\nidle_rule = \"{rule}\"\nsync_io_depth = 2"));
            let mut users = Users {
                sectors: vec![0; 3],
                ops: vec![0; 3],
                in_flight: vec![0; 3],
            };
            d.issued(0, 0, 100);
            d.completed(0, S, 100, &users);
            d.issued(0, S, 8);
            // Idle array: issue even with sync I/O in flight.
            assert_eq!(d.admit(0, S, &users), Admit::Now, "{rule}");
            // 64 user sectors on the target: not yet busy for pre-2025; busy for 2025 (an op).
            users.sectors[2] = 64;
            users.ops[2] = 8;
            // Pre-2025: idle; 2025: busy, but 8 sectors in flight < 2 × 8: issue either way.
            assert_eq!(d.admit(0, S + 1, &users), Admit::Now, "{rule}");
            d.issued(0, S + 1, 8);
            // 65 sectors now: busy under both; in flight 16 sectors.
            users.sectors[2] = 65;
            users.ops[2] = 9;
            assert_eq!(
                d.admit(0, S + 2, &users),
                Admit::Later,
                "{rule}: busy and at the cap"
            );
            // The same instant gives the same verdict.
            assert_eq!(
                d.admit(1, S + 2, &users),
                Admit::Now,
                "{rule}: drive 1 has nothing in flight"
            );
            // One completes: 8 in flight. Pre-2025 still waits for all; 2025 has room, and
            // the array now counts as busy only under 2025 (an op in flight).
            d.completed(0, S + 3, 8, &users);
            users.in_flight[1] = 1;
            let busy_again = d.admit(0, S + 4, &users);
            match rule {
                "pre2025" => assert_eq!(busy_again, Admit::Now, "no sector grew: idle"),
                _ => assert_eq!(busy_again, Admit::Now, "busy, 8 < 16 sectors in flight"),
            }
            users.sectors[1] = 200;
            assert_eq!(
                d.admit(0, S + 5, &users),
                if rule == "pre2025" {
                    Admit::Later
                } else {
                    Admit::Now
                },
                "{rule}"
            );
        }
    }

    /// User work done before the rebuild does not count: the counters start at its first
    /// check, as md's `is_mddev_idle(mddev, 1)` sets them.
    #[test]
    fn the_idle_counters_start_at_the_first_check() {
        for rule in ["pre2025", "2025"] {
            let mut d = md(&format!(
                "speed_limit_min_kib_s = 1\nidle_rule = \"{rule}\"\nsync_io_depth = 1"
            ));
            let before = Users {
                sectors: vec![5000, 5000, 5000],
                ops: vec![600; 3],
                in_flight: vec![0; 3],
            };
            d.issued(0, 0, 100);
            d.completed(0, S, 100, &before);
            d.issued(0, S, 8);
            assert_eq!(
                d.admit(0, S, &before),
                Admit::Now,
                "{rule}: idle, though 8 sectors are in flight"
            );
        }
    }

    #[test]
    fn bad_settings_name_their_key() {
        for (text, key) in [
            (
                "speed_limit_min_kib_s = -1",
                "rebuild.md.speed_limit_min_kib_s",
            ),
            (
                "speed_limit_max_kib_s = -5",
                "rebuild.md.speed_limit_max_kib_s",
            ),
            (
                "speed_limit_min_kib_s = 300000",
                "rebuild.md.speed_limit_min_kib_s",
            ),
            ("idle_rule = \"2024\"", "rebuild.md.idle_rule"),
            ("idle_rule = 2024", "rebuild.md.idle_rule"),
            ("sync_io_depth = 0", "rebuild.md.sync_io_depth"),
        ] {
            let config: RebuildConfig =
                toml::from_str(&format!("discipline = \"md\"\n[md]\n{text}")).unwrap();
            let e = config.validate().unwrap_err().to_string();
            assert!(e.starts_with(key), "{text}: {e}");
        }
        let config: RebuildConfig = toml::from_str("discipline = \"vsm\"\n[md]\n").unwrap();
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("rebuild.md:"));
    }
}
