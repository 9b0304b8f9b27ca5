//! The drive mechanism: one access = overhead + seek + rotational latency + transfer.
//!
//! ```text
//!  now ──overhead──▶ ──seek / head switch──▶ positioned ──rotational wait──▶ first sector
//!      ──transfer (track by track: head switch or 1-cylinder seek, wait, transfer)──▶ done
//! ```
//!
//! **Exact rotation.** The platter angle is a pure function of absolute simulated time. Time
//! is an integer count of ns and the spindle speed is held in milli-rpm, so one revolution is
//! [`PHASE_UNITS_PER_REVOLUTION`] phase units and the platter advances `rpm × 1000` units per
//! ns. The phase at time t is `t · rpm_milli mod 60·10¹²`, computed in integers: there is no
//! drift however long the run. Sector k of a track starts at angle
//! `((k + skew) mod spt) / spt`, with `skew = (cylinder · cylinder_skew + track · track_skew)
//! mod spt` and `track = cylinder · surfaces + surface`. A wait ends at the first whole ns at
//! or after the wanted angle passes under the head.
//!
//! **Uniform rotation** (the thesis's "uniform latency cost function", seed 004 Table 2): at
//! the moment the head is positioned, the platter angle is drawn uniformly from the drive's
//! random stream, so the first rotational wait is uniform in [0, one revolution); everything
//! after it (transfer, track switches) is computed exactly from that angle.
//!
//! **Zero latency.** On each track the drive may start reading at whichever wanted sector
//! comes under the head first; the track's part ends once every wanted sector has passed. A
//! sector the head is in the middle of when it arrives is read on the next pass, so a
//! whole-track transfer takes one revolution from the next sector boundary.
//!
//! **Reads and writes** differ by the write settle (added to every seek or head switch of a
//! write), by the per-kind command overheads (which also depend on the previous command's
//! kind, as DiskSim's "miss overheads" do), by the completion overheads, by zero latency
//! (which may be set for reads and writes separately) and by the host interface: a read
//! sends each sector once it is read, so the last one leaves `bus_sector_ms` after the medium
//! is done (or later, when the interface is slower than the medium); a write cannot put a
//! sector on the medium before it has arrived over the interface.
//!
//! **Slips and remaps.** A transfer goes run by run: consecutive LBAs on consecutive sectors
//! of one track ([`super::geometry::Run`]). A run ends at the end of a track, before a
//! slipped or spare sector, or before a remapped LBA; the next run may be on the same track
//! (after a slipped sector: wait for the next sector to come round), on another track of the
//! cylinder (head switch), or elsewhere (seek).

use std::sync::Arc;

use super::cache::{CacheParams, CacheState, Dirty, Prefetch, PrefetchMode};
use super::geometry::Run;
use super::interface::Interface;
use super::{DriveModelConfig, Geometry, OpKind, RotationModel, SeekCurve};
use crate::error::{readable, Error, Result};
use crate::sim::{gcd, ms_to_ns, Divisor, Nanos, RngStream};

/// Phase units in one revolution: 60 s in ns × 1000, so that a spindle of `rpm` turns
/// `rpm × 1000` units per ns exactly (speeds are held to 0.001 rpm).
pub const PHASE_UNITS_PER_REVOLUTION: u64 = 60_000_000_000_000;
const P: u64 = PHASE_UNITS_PER_REVOLUTION;

/// Highest spindle speed accepted, rpm (keeps every phase product inside 64 bits).
const MAX_RPM: f64 = 1.0e6;

/// The spindle: exact platter phase from absolute time.
#[derive(Debug, Clone, Copy)]
struct Spindle {
    /// Phase units the platter turns per ns (the speed in milli-rpm).
    units_per_ns: u64,
    /// `units_per_ns` as a precomputed divisor.
    units_divisor: Divisor,
    /// The phase pattern repeats exactly every `period_ns`; reducing time by it first keeps
    /// the product in 64 bits when `period_ns · units_per_ns` fits.
    period: Divisor,
    /// Whether `period_ns · units_per_ns` fits in a u64.
    fits_u64: bool,
}

impl Spindle {
    fn new(rpm_milli: u64) -> Self {
        let period_ns = P / gcd(P, rpm_milli);
        let fits_u64 = (period_ns as u128) * (rpm_milli as u128) <= u64::MAX as u128;
        Spindle {
            units_per_ns: rpm_milli,
            units_divisor: Divisor::new(rpm_milli),
            period: Divisor::new(period_ns),
            fits_u64,
        }
    }

    /// Platter phase at absolute time `t`, in [0, P).
    #[inline]
    fn phase(&self, t: Nanos) -> u64 {
        let t = self.period.rem(t);
        if self.fits_u64 {
            (t * self.units_per_ns) % P
        } else {
            ((t as u128 * self.units_per_ns as u128) % P as u128) as u64
        }
    }

    /// Whole ns until the platter has turned by `units` phase units (rounded up).
    #[inline]
    fn ns_for(&self, units: u64) -> Nanos {
        self.units_divisor.div_ceil(units)
    }
}

/// Phase of the start of physical slot `slot` (may be up to 2·spt) on a track of `spt` slots.
#[inline]
fn slot_phase(slot: u64, spt: &Divisor) -> u64 {
    // slot ≤ 2·spt ≤ 2·MAX_SECTORS_PER_TRACK, so slot · P < 1.2·10¹⁹ fits in a u64.
    spt.div(slot * P)
}

/// `phase · spt mod P`: how far `phase` lies past the start of its slot on a track of `spt`
/// slots, in units of 1 / spt phase unit (see [`track_portion`]).
#[inline(always)]
fn into_slot_scaled(phase: u64, spt: u64) -> u64 {
    let scaled = phase * spt;
    scaled - scaled / P * P
}

/// Longest track whose slot phases are tabulated (a 32 KiB table per zone); longer tracks,
/// which no drive has yet, compute them.
const MAX_TABULATED_SECTORS_PER_TRACK: u64 = 2048;

/// The rotational timing of the tracks of one zone, precomputed: where every slot starts.
/// A transfer needs the start phases of three slots per track; a table lookup replaces
/// three 128-bit reciprocal divisions on the busiest path of the simulator.
#[derive(Debug, Clone)]
struct TrackTiming {
    /// Sectors per track as a divisor.
    spt: Divisor,
    /// `slot_phase(k)` for k in 0..=2·spt (a slot index past the track's end wraps round).
    slot_phases: Box<[u64]>,
    /// Time one sector takes to pass, ns (rounded up).
    sector_pass_ns: Nanos,
}

impl TrackTiming {
    fn new(spt: Divisor, spindle: &Spindle) -> Self {
        let slot_phases: Box<[u64]> = if spt.get() <= MAX_TABULATED_SECTORS_PER_TRACK {
            (0..=2 * spt.get()).map(|k| slot_phase(k, &spt)).collect()
        } else {
            Box::default()
        };
        let sector_pass_ns = spindle.ns_for(slot_phase(1, &spt));
        TrackTiming { spt, slot_phases, sector_pass_ns }
    }

    /// Phase of the start of slot `slot` (at most 2·spt).
    #[inline(always)]
    fn phase_of(&self, slot: u64) -> u64 {
        match self.slot_phases.get(slot as usize) {
            Some(&phase) => phase,
            None => slot_phase(slot, &self.spt),
        }
    }
}

/// Rotational wait and end of transfer, in phase units from the head's arrival, to pass
/// `count` consecutive logical sectors from logical sector `first` of one track, arriving at
/// platter phase `phase`. `skew` is the track's slot offset of logical sector 0 (already
/// reduced mod `spt`).
///
/// Times are whole ns, so a head that is due exactly at a sector boundary (say, the previous
/// command ended there) arrives up to one ns late. Arriving less than one ns
/// (`units_per_ns` phase units) past a boundary therefore counts as arriving at it: a
/// back-to-back sequential stream does not lose a revolution to rounding.
#[inline(always)]
fn track_portion(
    phase: u64,
    timing: &TrackTiming,
    skew: u32,
    first: u32,
    count: u32,
    zero_latency: bool,
    units_per_ns: u64,
) -> (u64, u64) {
    let spt_divisor = &timing.spt;
    let spt = spt_divisor.get() as u32;
    debug_assert!(count >= 1 && first + count <= spt && skew < spt);
    let spt64 = spt as u64;
    // How far the head is past the start of the slot it is in: phase − phase_of(previous),
    // with previous = ⌊phase · spt / P⌋ and phase_of(k) = ⌊k · P / spt⌋. As the phase is
    // whole, that is ⌈r / spt⌉ with r = phase · spt mod P: worked out from the product
    // already formed, not loaded from the slot table, whose load (at a place that depends
    // on the time) every access's wait would otherwise sit behind. It is under one ns
    // (`units_per_ns`) exactly when r ≤ (units_per_ns − 1) · spt.
    let into_slot = into_slot_scaled(phase, spt64);
    let (phase, late) = if into_slot <= (units_per_ns - 1) * spt64 {
        let lateness = spt_divisor.div_ceil(into_slot);
        (phase - lateness, lateness)
    } else {
        (phase, 0)
    };
    // first < spt and skew < spt: one conditional subtraction reduces mod spt.
    let first_slot = if first + skew >= spt { first + skew - spt } else { first + skew } as u64;
    let (wait, media) = 'portion: {
        if zero_latency {
            // Next slot boundary at or after the head: reading can start there.
            let next = (phase * spt64).div_ceil(P);
            let relative = spt_divisor.rem(spt_divisor.rem(next) + spt64 - first_slot);
            if count == spt || (relative > 0 && relative < count as u64) {
                // The head lands inside the wanted arc: read to its end, come round, and
                // finish when the sectors before `next` have passed again — one revolution
                // after `next`.
                break 'portion (timing.phase_of(next) - phase, P);
            }
        }
        let start = timing.phase_of(first_slot);
        let wait = if start >= phase { start - phase } else { start + P - phase };
        (wait, timing.phase_of(first_slot + count as u64) - start)
    };
    // A non-zero wait is at least one sector, longer than `late` (checked at model build).
    (wait.saturating_sub(late), wait + media - late)
}

/// What [`Drive::prefetch_progress`] found.
struct PrefetchProgress {
    /// Sectors read.
    read: u64,
    /// When the mechanism is free.
    free: Nanos,
    /// Where the arm is.
    cylinder: u32,
    surface: u32,
    /// The read-ahead from the start of the track it is on, and the arm before moving there.
    resume: (Prefetch, u32, u32),
}

/// The immutable description of a drive type, shared by all drives of that type.
#[derive(Debug, Clone)]
pub struct DriveModel {
    pub geometry: Geometry,
    pub seek: SeekCurve,
    pub config: DriveModelConfig,
    spindle: Spindle,
    /// Rotational timing of each zone's tracks, indexed like `geometry.zones()`.
    track_timing: Box<[TrackTiming]>,
    head_switch_ns: Nanos,
    command_overhead_ns: Nanos,
    /// Overhead before positioning, indexed by [this command is a write][previous was a write].
    overhead_ns: [[Nanos; 2]; 2],
    /// Completion overhead, indexed by [this command is a write].
    completion_ns: [Nanos; 2],
    /// Added to every non-zero positioning of a write (may be negative).
    write_settle_ns: i64,
    /// Host-interface time per sector, indexed by [this command is a write] (0: not
    /// modelled).
    bus_sector_ns: [Nanos; 2],
    /// Disconnection and reselection on the bus (`None`: the drive keeps the bus).
    interface: Option<Interface>,
    /// Zero-latency access, indexed by [this command is a write].
    zero_latency: [bool; 2],
    /// The on-drive cache, when the drive has one.
    pub(crate) cache: Option<CacheParams>,
}

/// The longest head switch, overhead, per-sector bus time or cache hit time accepted, ms
/// (the bus protocol's times are checked by the same function). Far above any drive's; far
/// enough below 2⁶⁴ ns that sums of them cannot overflow simulated time, which a value such
/// as 1e300 ms (saturated to 2⁶⁴ − 1 ns) did.
pub const MAX_DURATION_MS: f64 = 1000.0;

/// `value` is a duration in [0, MAX_DURATION_MS] ms.
pub(crate) fn check_duration_ms(value: f64, key: String) -> Result<()> {
    if !value.is_finite() || !(0.0..=MAX_DURATION_MS).contains(&value) {
        return Err(Error::config(
            key,
            format!("must be a finite number of ms within [0, {MAX_DURATION_MS}], got {}", readable(value)),
        ));
    }
    Ok(())
}

impl DriveModel {
    /// Validate and precompute. `key` names the config key for errors (`drive.model`).
    pub fn new(cfg: &DriveModelConfig, key: &str) -> Result<Self> {
        if !cfg.rpm.is_finite() || cfg.rpm <= 0.0 {
            return Err(Error::config(
                format!("{key}.rpm"),
                format!("must be a positive number, got {}", readable(cfg.rpm)),
            ));
        }
        if cfg.rpm > MAX_RPM {
            return Err(Error::config(
                format!("{key}.rpm"),
                format!("{} is above the supported {MAX_RPM}", readable(cfg.rpm)),
            ));
        }
        let rpm_milli = (cfg.rpm * 1000.0).round() as u64;
        if rpm_milli == 0 {
            return Err(Error::config(format!("{key}.rpm"), "must be at least 0.001"));
        }
        for (value, name) in [
            (cfg.head_switch_ms, "head_switch_ms"),
            (cfg.command_overhead_ms, "command_overhead_ms"),
            (cfg.read_after_read_overhead_ms, "read_after_read_overhead_ms"),
            (cfg.read_after_write_overhead_ms, "read_after_write_overhead_ms"),
            (cfg.write_after_read_overhead_ms, "write_after_read_overhead_ms"),
            (cfg.write_after_write_overhead_ms, "write_after_write_overhead_ms"),
            (cfg.read_completion_overhead_ms, "read_completion_overhead_ms"),
            (cfg.write_completion_overhead_ms, "write_completion_overhead_ms"),
            (cfg.bus_sector_ms, "bus_sector_ms"),
            (cfg.bus_sector_write_ms.unwrap_or(0.0), "bus_sector_write_ms"),
        ] {
            check_duration_ms(value, format!("{key}.{name}"))?;
        }
        if !cfg.write_settle_ms.is_finite() || cfg.write_settle_ms.abs() > 1000.0 {
            return Err(Error::config(
                format!("{key}.write_settle_ms"),
                format!("must be a finite number of ms within ±1000, got {}", readable(cfg.write_settle_ms)),
            ));
        }
        let geometry = Geometry::new(cfg, key)?;
        for (i, zone) in geometry.zones().iter().enumerate() {
            // Rotational rounding assumes a sector takes longer than a couple of ns to pass.
            if P / zone.sectors_per_track as u64 <= 2 * rpm_milli {
                return Err(Error::config(
                    format!("{key}.zones[{i}].sectors_per_track"),
                    format!("at {} rpm a sector would pass in under 2 ns", readable(cfg.rpm)),
                ));
            }
        }
        let seek = SeekCurve::new(&cfg.seek, geometry.cylinders(), &format!("{key}.seek"))?;
        let command = ms_to_ns(cfg.command_overhead_ms);
        let interface = cfg
            .interface
            .as_ref()
            .map(|i| Interface::new(i, cfg.cache.as_ref().map(|c| c.segment_sectors), &format!("{key}.interface")))
            .transpose()?;
        let mut overhead_ns = [
            [
                command + ms_to_ns(cfg.read_after_read_overhead_ms),
                command + ms_to_ns(cfg.read_after_write_overhead_ms),
            ],
            [
                command + ms_to_ns(cfg.write_after_read_overhead_ms),
                command + ms_to_ns(cfg.write_after_write_overhead_ms),
            ],
        ];
        if let Some(write) = interface.as_ref().and_then(|i| i.write_overhead_ns) {
            // An extra write disconnect's command processing replaces the write overheads.
            overhead_ns[1] = [command + write; 2];
        }
        let settle = (cfg.write_settle_ms * 1e6).round() as i64;
        let spindle = Spindle::new(rpm_milli);
        let track_timing = geometry.zones().iter().map(|z| TrackTiming::new(z.track_divisor, &spindle)).collect();
        Ok(DriveModel {
            geometry,
            seek,
            config: cfg.clone(),
            spindle,
            track_timing,
            head_switch_ns: ms_to_ns(cfg.head_switch_ms),
            command_overhead_ns: command,
            overhead_ns,
            completion_ns: [
                ms_to_ns(cfg.read_completion_overhead_ms),
                ms_to_ns(cfg.write_completion_overhead_ms),
            ],
            write_settle_ns: settle,
            bus_sector_ns: [ms_to_ns(cfg.bus_sector_ms), ms_to_ns(cfg.bus_sector_write_ms.unwrap_or(cfg.bus_sector_ms))],
            interface,
            zero_latency: [cfg.zero_latency, cfg.zero_latency_writes.unwrap_or(cfg.zero_latency)],
            cache: cfg.cache.as_ref().map(|c| CacheParams::new(c, &format!("{key}.cache"))).transpose()?,
        })
    }

    /// Capacity in sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.geometry.capacity_sectors()
    }

    /// One revolution, in ns (fractional).
    pub fn revolution_ns(&self) -> f64 {
        P as f64 / self.spindle.units_per_ns as f64
    }

    /// Time for one sector to pass under the head on a track of `sectors_per_track`, ns.
    pub fn sector_ns(&self, sectors_per_track: u32) -> f64 {
        self.revolution_ns() / sectors_per_track as f64
    }

    /// Head switch time, ns.
    pub fn head_switch_ns(&self) -> Nanos {
        self.head_switch_ns
    }

    /// Controller overhead per command, ns (`command_overhead_ms`; the per-kind overheads
    /// come on top, see [`DriveModel::overhead_ns`]).
    pub fn command_overhead_ns(&self) -> Nanos {
        self.command_overhead_ns
    }

    /// Overhead before positioning of a `kind` command following a `previous` one, ns.
    pub fn overhead_ns(&self, kind: OpKind, previous: OpKind) -> Nanos {
        self.overhead_ns[(kind == OpKind::Write) as usize][(previous == OpKind::Write) as usize]
    }

    /// Platter phase at absolute time `t`, as a fraction of a revolution in [0, 1) (exact
    /// rotation).
    pub fn platter_angle(&self, t: Nanos) -> f64 {
        self.spindle.phase(t) as f64 / P as f64
    }

    /// Arm movement time from (`from_cylinder`, `from_surface`) to (`to_cylinder`,
    /// `to_surface`) for a read: the seek, a head switch alone, or the longer of the two when
    /// both.
    #[inline]
    pub fn positioning_ns(
        &self,
        from_cylinder: u32,
        from_surface: u32,
        to_cylinder: u32,
        to_surface: u32,
    ) -> Nanos {
        let seek = self.seek.time(from_cylinder.abs_diff(to_cylinder));
        if from_surface != to_surface {
            seek.max(self.head_switch_ns)
        } else {
            seek
        }
    }

    /// Arm movement time for an operation of `kind`: a write adds the write settle to any
    /// movement (DiskSim's `dm_seek_time`), never going below 0.
    #[inline]
    pub fn move_ns(
        &self,
        from_cylinder: u32,
        from_surface: u32,
        to_cylinder: u32,
        to_surface: u32,
        kind: OpKind,
    ) -> Nanos {
        let base = self.positioning_ns(from_cylinder, from_surface, to_cylinder, to_surface);
        if kind == OpKind::Write && base != 0 && self.write_settle_ns != 0 {
            (base as i64 + self.write_settle_ns).max(0) as Nanos
        } else {
            base
        }
    }

    /// Slot offset of logical sector 0 on the track (`cylinder`, `surface`).
    #[inline]
    pub fn skew(&self, cylinder: u32, surface: u32) -> u32 {
        self.geometry.skew(cylinder, surface)
    }

    /// Rotational timing of the tracks of zone `zone_index`.
    #[inline(always)]
    fn track_timing(&self, zone_index: u32) -> &TrackTiming {
        &self.track_timing[zone_index as usize]
    }

    /// Rotational wait and end of transfer, in ns from `t`, for `count` sectors of `run`
    /// (whose zone has `timing`) when the head arrives at `t`.
    #[inline(always)]
    fn portion_ns(
        &self,
        t: Nanos,
        phase_offset: u64,
        timing: &TrackTiming,
        run: &Run,
        count: u32,
        zero_latency: bool,
    ) -> (Nanos, Nanos) {
        let spindle = &self.spindle;
        // Both terms are below P: one conditional subtraction reduces the sum, where `% P`
        // put a multiply, a shift and a second multiply on the chain every access waits on.
        debug_assert!(phase_offset < P);
        let phase = spindle.phase(t) + phase_offset;
        let phase = if phase >= P { phase - P } else { phase };
        let (wait, end) = track_portion(
            phase,
            timing,
            run.skew,
            run.address.sector,
            count,
            zero_latency,
            spindle.units_per_ns,
        );
        (spindle.ns_for(wait), spindle.ns_for(end))
    }
}

/// Breakdown of one access's service time, all in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceTime {
    /// Command processing before positioning, plus completion processing.
    pub overhead: Nanos,
    pub seek: Nanos,
    pub rotation: Nanos,
    pub transfer: Nanos,
    /// Time the host interface adds: a read's data still in flight after the last sector
    /// is read, a write's medium waiting for data (`bus_sector_ms`).
    pub bus: Nanos,
    /// Time the command waited for the drive's background work: a destage in progress, or
    /// the end of the sector a read-ahead was reading (on-drive cache only).
    pub wait: Nanos,
}

impl ServiceTime {
    /// Total service time, ns.
    pub fn total(&self) -> Nanos {
        self.overhead + self.seek + self.rotation + self.transfer + self.bus + self.wait
    }
}

/// What [`Drive::media`] did.
struct MediaAccess {
    /// The service time of the access.
    time: ServiceTime,
    /// When the medium is done (before the completion overhead and a read's host transfer).
    end: Nanos,
    /// The platter phase offset used.
    phase_offset: u64,
    /// The run of the first sector, and when the head reached its track.
    first_run: Run,
    first_arrival: Nanos,
    /// The rotational wait of the first track's portion. For a read without zero latency it
    /// is the wait, from `first_arrival`, for the first sector to come under the head.
    first_wait: Nanos,
}

/// Whom a media access works for: a command (the bus protocol applies) or a destage.
#[derive(Debug, Clone, Copy)]
enum Host {
    Command {
        /// The drive's previous command was a write.
        after_write: bool,
    },
    Destage,
}

/// The on-drive cache of one drive: its contents and background work, and a copy of the
/// model's cache parameters. The copy lets a command read the parameters while it updates the
/// drive; borrowing them from the shared model meant cloning its `Arc` per command, two
/// atomic read-modify-writes that cost the cached drive about 3 % of its speed.
#[derive(Debug, Clone)]
struct DriveCache {
    params: CacheParams,
    state: CacheState,
}

/// One drive mechanism: its arm position and its own random stream.
///
/// `seek` in the returned [`ServiceTime`] includes the head switches and one-cylinder seeks of
/// a transfer that crosses tracks; `rotation` includes the waits on every track.
#[derive(Debug, Clone)]
pub struct Drive {
    pub model: Arc<DriveModel>,
    rotation: RotationModel,
    rng: RngStream,
    cylinder: u32,
    surface: u32,
    /// Kind of the last command served (selects the after-read/after-write overheads).
    last_kind: OpKind,
    /// The on-drive cache (`None`: no cache).
    cache: Option<Box<DriveCache>>,
    /// The last run an access ended in, with the LBA it was located at: the next access
    /// that starts inside it (a read-ahead, the next sequential command) needs no search.
    last_run: Option<(u64, Run)>,
}

impl Drive {
    /// A drive with the arm at cylinder 0, surface 0, as if its last command was a read.
    pub fn new(model: Arc<DriveModel>, rotation: RotationModel, rng: RngStream) -> Self {
        let cache =
            model.cache.as_ref().map(|params| Box::new(DriveCache { params: params.clone(), state: CacheState::new() }));
        Drive { model, rotation, rng, cylinder: 0, surface: 0, last_kind: OpKind::Read, cache, last_run: None }
    }

    /// The run at `lba`: from the last run an access ended in when `lba` lies inside it,
    /// else located afresh.
    #[inline]
    fn locate(&self, lba: u64) -> Run {
        if let Some((known_lba, known)) = &self.last_run {
            if let Some(run) = Geometry::run_within(*known_lba, known, lba) {
                return run;
            }
        }
        self.model.geometry.locate_run(lba)
    }

    /// Serve an access starting at `now`; moves the arm and returns the time taken.
    ///
    /// `lba + sectors` must not exceed the capacity. A zero-sector access only positions the
    /// arm.
    pub fn service(&mut self, now: Nanos, lba: u64, sectors: u32, kind: OpKind) -> ServiceTime {
        let capacity = self.model.geometry.capacity_sectors();
        assert!(
            lba.checked_add(sectors as u64).is_some_and(|end| end <= capacity) && lba < capacity,
            "access [{lba}, +{sectors}) beyond the drive's {capacity} sectors",
        );
        if self.cache.is_some() {
            return self.service_cached(now, lba, sectors, kind);
        }
        let overhead = self.model.overhead_ns(kind, self.last_kind);
        let after_write = self.last_kind == OpKind::Write;
        self.last_kind = kind;
        let bus = self.model.bus_sector_ns[(kind == OpKind::Write) as usize];
        self.media::<false>(now, lba, sectors, kind, overhead, 0, bus, Host::Command { after_write }).time
    }

    /// [`Drive::service`] without the rotational wait before the first sector: the transfer
    /// starts when the head arrives (what `rebuild.rotational_latency = "none"` charges rebuild
    /// I/O). Only for a drive without a cache (the configuration refuses the pair).
    pub fn service_without_first_wait(&mut self, now: Nanos, lba: u64, sectors: u32, kind: OpKind) -> ServiceTime {
        assert!(self.cache.is_none(), "a drive with a cache charges its own latency");
        let capacity = self.model.geometry.capacity_sectors();
        assert!(
            lba.checked_add(sectors as u64).is_some_and(|end| end <= capacity) && lba < capacity,
            "access [{lba}, +{sectors}) beyond the drive's {capacity} sectors",
        );
        let overhead = self.model.overhead_ns(kind, self.last_kind);
        let after_write = self.last_kind == OpKind::Write;
        self.last_kind = kind;
        let bus = self.model.bus_sector_ns[(kind == OpKind::Write) as usize];
        let access = self.media::<false>(now, lba, sectors, kind, overhead, 0, bus, Host::Command { after_write });
        let mut time = access.time;
        time.rotation -= access.first_wait.min(time.rotation);
        time
    }

    /// The mechanical part of an access starting at `now` with `overhead` before positioning:
    /// moves the arm; returns the service time, the time the medium is done, the platter
    /// phase offset used and where and when the access reached its first track.
    /// `prefix` sectors before `lba` come from the cache: the host gets them first. `bus` is
    /// the host interface's time per sector (0 for a destage, whose data is in the buffer);
    /// `host` says whether a command waits for it (the drive's bus protocol applies) or a
    /// destage. `REMEMBER_RUN`: start from, and leave behind, the run the access ends in
    /// (worth it on a drive with a cache, whose read-ahead goes on where the read ended; not
    /// on one without, whose random accesses rarely start inside the last run).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn media<const REMEMBER_RUN: bool>(
        &mut self,
        now: Nanos,
        lba: u64,
        sectors: u32,
        kind: OpKind,
        overhead: Nanos,
        prefix: u32,
        bus: Nanos,
        host: Host,
    ) -> MediaAccess {
        let model: &DriveModel = &self.model;
        let geometry = &model.geometry;
        let write = kind == OpKind::Write;
        let mut run = if REMEMBER_RUN { self.locate(lba) } else { geometry.locate_run(lba) };
        let mut run_lba = lba;
        let mut seek =
            model.move_ns(self.cylinder, self.surface, run.address.cylinder, run.address.surface, kind);
        let mut result = ServiceTime { overhead, ..ServiceTime::default() };
        let (first_run, first_arrival) = (run, now + overhead + seek);
        if sectors == 0 {
            result.seek = seek;
            self.cylinder = run.address.cylinder;
            self.surface = run.address.surface;
            return MediaAccess { time: result, end: first_arrival, phase_offset: 0, first_run, first_arrival, first_wait: 0 };
        }
        let phase_offset = match self.rotation {
            RotationModel::Exact => 0,
            RotationModel::Uniform => self.rng.below(P),
        };
        let zero_latency = model.zero_latency[write as usize];
        let total = sectors as u64;
        let command_done = now + overhead;
        let mut t = command_done + seek;
        let mut done = 0u64;
        let mut next_lba = lba;
        // The latest time the host has a read's last sector (pipelined behind the medium);
        // cached prefix sectors go first, from the end of the command processing.
        let mut host_done = if prefix == 0 { 0 } else { command_done + (prefix as u64 + total) * bus };
        // The bus protocol (interface.rs): a read miss reconnects once `reconnect_after`
        // sectors are in (at `watermark_at`); a write's data may start after positioning does.
        let (interface, after_write) = match host {
            Host::Command { after_write } => (model.interface.as_ref(), after_write),
            Host::Destage => (None, false),
        };
        let reconnect_after = match interface {
            Some(i) if !write && prefix == 0 => i.read_reconnect_sectors(total),
            _ => 0,
        };
        let mut watermark_at = command_done;
        let data_start = interface.map_or(command_done, |i| i.write_data_start(command_done));
        let mut first_wait = 0;
        loop {
            let timing = model.track_timing(run.zone_index);
            let count = (total - done).min(run.sectors as u64) as u32;
            let portion = |t: Nanos| model.portion_ns(t, phase_offset, timing, &run, count, zero_latency);
            let (mut wait_ns, mut end_ns) = portion(t);
            if write && (bus != 0 || data_start != command_done) {
                // Sector j arrives (j + 1) bus times after the data starts; the medium may not
                // reach a sector before its data: wait a pass if it would.
                let sector_ns = timing.sector_pass_ns;
                let ready = data_start
                    + (done + 1) * bus
                    + (count as u64 - 1) * bus.saturating_sub(sector_ns);
                if t + wait_ns < ready {
                    result.bus += ready - t;
                    t = ready;
                    (wait_ns, end_ns) = portion(t);
                }
            }
            if done == 0 {
                first_wait = wait_ns;
            }
            result.rotation += wait_ns;
            result.transfer += end_ns - wait_ns;
            t += end_ns;
            if reconnect_after > done && reconnect_after <= done + count as u64 {
                // The water mark's sector is read (in LBA order; zero latency: at the run's end).
                let behind = if zero_latency { 0 } else { done + count as u64 - reconnect_after };
                watermark_at = t - behind * timing.sector_pass_ns;
            }
            if bus != 0 && !write {
                // Sector j leaves at max over i ≤ j of (read end of i + (j − i + 1)·bus); over
                // one track's run the maximum is at its first or last sector.
                let sector_ns = timing.sector_pass_ns;
                let first_read = t.saturating_sub((count as u64 - 1) * sector_ns);
                let last = done + count as u64 - 1;
                host_done = host_done
                    .max(t + (total - last) * bus)
                    .max(first_read + (total - done) * bus);
            }
            done += count as u64;
            if done == total {
                break;
            }
            // Continue with the next LBA: on the same track past a slipped sector, the next
            // surface, or the next cylinder inward.
            next_lba += count as u64;
            // Overwrite `run` in place (copying a fresh struct over it costs a store-forwarding
            // stall per track on this, the busiest loop).
            let (from_cylinder, from_surface) = (run.address.cylinder, run.address.surface);
            run = geometry.next_run(&run, next_lba);
            run_lba = next_lba;
            let switch = model.move_ns(from_cylinder, from_surface, run.address.cylinder, run.address.surface, kind);
            seek += switch;
            t += switch;
        }
        if let Some(i) = interface {
            if write {
                host_done = i.write_reconnect(data_start + total * bus, t);
            } else if prefix == 0 {
                host_done = host_done.max(i.read_transfer_start(command_done, watermark_at, after_write) + total * bus);
            }
        }
        if host_done > t {
            result.bus += host_done - t;
        }
        result.overhead += model.completion_ns[write as usize];
        result.seek = seek;
        if REMEMBER_RUN {
            self.last_run = Some((run_lba, run));
        }
        self.cylinder = run.address.cylinder;
        self.surface = run.address.surface;
        MediaAccess { time: result, end: t, phase_offset, first_run, first_arrival, first_wait }
    }

    /// [`Drive::service`] on a drive with a cache (see [`super::cache`]). Kept out of line
    /// so that the path without cache stays as it was.
    #[inline(never)]
    fn service_cached(&mut self, now: Nanos, lba: u64, sectors: u32, kind: OpKind) -> ServiceTime {
        let mut cache = self.cache.take().expect("cached service needs the cache state");
        let DriveCache { params, state: st } = &mut *cache;
        let params: &CacheParams = params;
        let completion_ns = self.model.completion_ns;
        let n = sectors as u64;
        let end = lba + n;
        let after_write = (self.last_kind == OpKind::Write) as usize;
        let host = Host::Command { after_write: after_write == 1 };
        let [bus, write_bus] = self.model.bus_sector_ns;
        // The segment holding a read's first sector, once looked up (nothing after the
        // read-ahead's progress below changes the segments before the read is served).
        let mut read_found = None;
        // The read-ahead up to now: it goes on through a read hit, anything else stops it.
        if let Some(p) = st.prefetch {
            // Its fields are read where they are used, not moved out together: a move copied
            // the result with 16-byte loads over the 8-byte stores that had just written it,
            // and waited for them.
            let progress = self.prefetch_progress(&p, now, params.stop_in_sector);
            let read = progress.read;
            let seg = &mut st.segments[p.segment];
            seg.end = p.lba + read;
            seg.start = seg.start.max(seg.end.saturating_sub(params.segment_sectors));
            let lookup = if kind == OpKind::Read && n > 0 { st.lookup(lba, params.read_segments) } else { Err(0) };
            let found = lookup.ok();
            read_found = Some(lookup);
            let full_hit = found.is_some_and(|i| end <= st.segments[i].end);
            // A read that starts in the segment being filled goes with the read-ahead: a full
            // hit, or one that ends past what is read so far and is served by the read-ahead
            // as it goes (DiskSim's `disk_buffer_attempt_access_swap`): no stop, no
            // repositioning.
            let in_filling = found == Some(p.segment);
            if read == p.limit || !(full_hit || in_filling) {
                st.prefetch = None;
                st.mechanism_free = progress.free;
                self.cylinder = progress.cylinder;
                self.surface = progress.surface;
            } else {
                // It goes on. A read in the segment being filled raises its target to the one
                // computed for the read (DiskSim's `disk_buffer_attempt_seg_ownership`), so a
                // sequential stream keeps it going; a hit in another segment leaves it as it
                // is. It is taken up again from the start of the track it is on, so that
                // playing it out never goes back further than that however long it runs.
                let target = if in_filling {
                    self.prefetch_target(params, lba, end, st.segments[p.segment].start).max(end)
                } else {
                    0
                };
                let (mut from, arm_cylinder, arm_surface) = progress.resume;
                from.limit = from.limit.max(target.saturating_sub(from.lba));
                st.prefetch = Some(from);
                self.cylinder = arm_cylinder;
                self.surface = arm_surface;
            }
        }
        self.destage_until(st, now);
        let mut result;
        if kind == OpKind::Read && n > 0 {
            let lookup = read_found.unwrap_or_else(|| st.lookup(lba, params.read_segments));
            debug_assert_eq!(lookup, st.lookup(lba, params.read_segments));
            let found = lookup.ok();
            let joined = st.prefetch.filter(|p| found == Some(p.segment) && end > st.segments[p.segment].end);
            if let (Some(p), Some(i)) = (joined, found) {
                // The read-ahead reads the rest: the host transfer starts after the hit
                // overhead and ends one bus time after the last sector is read, if that is
                // later than the bus alone allows.
                st.touch(i);
                let last_read = self.prefetch_progress(&Prefetch { limit: end - p.lba, ..p }, Nanos::MAX, true).free;
                let command_done = now + params.read_hit_ns[after_write];
                let bus_done = command_done + n * bus;
                result = ServiceTime {
                    overhead: params.read_hit_ns[after_write] + completion_ns[0],
                    bus: n * bus,
                    transfer: (last_read + bus).saturating_sub(bus_done),
                    ..ServiceTime::default()
                };
            } else if let Some(i) = found.filter(|&i| end <= st.segments[i].end) {
                // Full hit: from the buffer, no mechanics.
                st.touch(i);
                result = ServiceTime {
                    overhead: params.read_hit_ns[after_write] + completion_ns[0],
                    bus: n * bus,
                    ..ServiceTime::default()
                };
                if params.on_idle_hit && st.prefetch.is_none() && st.dirty.is_empty() {
                    // DiskSim computes the target for the hit's end and prefetches from the
                    // segment's end up to it.
                    let seg = st.segments[i];
                    let limit = self.prefetch_target(params, lba, end, seg.start).saturating_sub(seg.end);
                    if limit > 0 {
                        let phase_offset = self.phase_offset();
                        st.prefetch = Some(Prefetch {
                            segment: i,
                            start: now.max(st.mechanism_free),
                            lba: seg.end,
                            limit,
                            phase_offset,
                        });
                    }
                }
            } else {
                // Miss, or a partial hit whose cached prefix is sent at once.
                let prefix = found.map_or(0, |i| st.segments[i].end - lba);
                let start = now.max(st.mechanism_free);
                let overhead = self.model.overhead_ns(OpKind::Read, self.last_kind);
                let access =
                    self.media::<true>(start, lba + prefix, (n - prefix) as u32, OpKind::Read, overhead, prefix as u32, bus, host);
                let (media_end, phase_offset) = (access.end, access.phase_offset);
                result = access.time;
                result.wait = start - now;
                st.mechanism_free = media_end;
                let i = match lookup {
                    Ok(i) => i,
                    Err(victim) => st.claim(victim),
                };
                let first_cached = match found {
                    None if params.read_any_free_blocks => self.free_blocks_from(lba, &access).unwrap_or(lba),
                    _ => lba,
                };
                st.segments[i].start = first_cached.max(end.saturating_sub(params.segment_sectors));
                st.segments[i].end = end;
                st.touch(i);
                if st.dirty.is_empty() {
                    let limit = self.prefetch_target(params, lba, end, st.segments[i].start) - end;
                    if limit > 0 {
                        st.prefetch = Some(Prefetch { segment: i, start: media_end, lba: end, limit, phase_offset });
                    }
                }
            }
        } else if kind == OpKind::Write && n > 0 && params.write_segments > 0 && n <= params.segment_sectors {
            // Write-back: acknowledged once its data is in a write segment.
            let overhead = params.write_hit_ns[after_write] + completion_ns[1];
            let appends = params.combine
                && st.dirty.last().is_some_and(|d| d.end == lba && d.end - d.start + n <= params.segment_sectors);
            st.place_write(params, lba, end, appends);
            let mut ready = now;
            if !appends {
                while st.dirty.len() >= params.write_segments {
                    let d = st.dirty.remove(0);
                    ready = ready.max(self.destage(st, d));
                }
            }
            result = ServiceTime { overhead, bus: n * write_bus, wait: ready - now, ..ServiceTime::default() };
            let done = now + result.total();
            if appends {
                let d = st.dirty.last_mut().expect("appending to a dirty segment");
                d.end = end;
                d.ready = done;
            } else {
                st.dirty.push(Dirty { start: lba, end, ready: done });
            }
        } else {
            // Write-through (or a positioning): the mechanism, once it is free.
            if kind == OpKind::Write {
                st.place_write(params, lba, end, false);
            }
            let start = now.max(st.mechanism_free);
            let overhead = self.model.overhead_ns(kind, self.last_kind);
            let kind_bus = self.model.bus_sector_ns[(kind == OpKind::Write) as usize];
            let access = self.media::<true>(start, lba, sectors, kind, overhead, 0, kind_bus, host);
            result = access.time;
            result.wait = start - now;
            st.mechanism_free = access.end;
        }
        self.last_kind = kind;
        self.cache = Some(cache);
        result
    }

    /// DiskSim's "Read any free blocks" for a read miss at `lba` served by `access`: when the
    /// head lands past the sector, it reads on round the track, so the sectors from the
    /// track's first one up to `lba` pass under it before `lba` does and are cached too
    /// (`disk_buffer_seekdone`). Returns the track's first LBA then; `None` when the head
    /// lands before `lba` (it waits, nothing extra is read) or the track's first sector holds
    /// no LBA. The landing is judged for `lba` alone, without zero latency, as DiskSim does.
    fn free_blocks_from(&self, lba: u64, access: &MediaAccess) -> Option<u64> {
        let model: &DriveModel = &self.model;
        let run = &access.first_run;
        let before = run.address.sector as u64;
        if before == 0 {
            return None;
        }
        let timing = model.track_timing(run.zone_index);
        // Without zero latency, the wait for the first sector is what the read itself waited
        // when it reached the track (the wait does not depend on how many sectors follow).
        let wait = if model.zero_latency[0] {
            model.portion_ns(access.first_arrival, access.phase_offset, timing, run, 1, false).0
        } else {
            access.first_wait
        };
        debug_assert_eq!(wait, model.portion_ns(access.first_arrival, access.phase_offset, timing, run, 1, false).0);
        if wait <= before * timing.sector_pass_ns {
            return None;
        }
        model.geometry.track_first_lba(lba, run)
    }

    /// A platter phase offset for a new access (uniform rotation draws one).
    fn phase_offset(&mut self) -> u64 {
        match self.rotation {
            RotationModel::Exact => 0,
            RotationModel::Uniform => self.rng.below(P),
        }
    }

    /// Destage every dirty segment whose destage can begin before `now` (each one, once
    /// begun, runs to its end).
    fn destage_until(&mut self, st: &mut CacheState, now: Nanos) {
        while let Some(&d) = st.dirty.first() {
            if st.mechanism_free.max(d.ready) >= now {
                break;
            }
            st.dirty.remove(0);
            self.destage(st, d);
        }
    }

    /// Write dirty segment `d` to the medium as soon as the mechanism is free and its data
    /// is in; returns when it is done.
    #[inline(never)]
    fn destage(&mut self, st: &mut CacheState, d: Dirty) -> Nanos {
        let start = st.mechanism_free.max(d.ready);
        let done = self.media::<true>(start, d.start, (d.end - d.start) as u32, OpKind::Write, 0, 0, 0, Host::Destage).end;
        st.mechanism_free = done;
        done
    }

    /// Where a read-ahead after a read of `[start, end)` stops (one past its last sector):
    /// DiskSim's target (`disk_buffer_get_max_readahead` and, for track and cylinder
    /// prefetch, the seek it refuses). With a maximum read-ahead M > 0, `end + M`; with
    /// M = 0, a segment's worth past `end`, or — when the read's own data must stay
    /// ("Read-ahead over requested" off) — up to a segment's worth from `start`. Track and
    /// cylinder prefetch also stop at the end of the track or cylinder holding the read's
    /// last sector. Scheme 4 (`next_track`) ignores M and goes to the end of the track
    /// holding `end`, plus one track of the read's zone when the read's segment began
    /// before that track (a sequential stream). The segment keeps only its last
    /// `segment_sectors` sectors, so a target beyond a segment's worth pushes older data out.
    pub(crate) fn prefetch_target(&self, params: &CacheParams, start: u64, end: u64, segment_start: u64) -> u64 {
        let geometry = &self.model.geometry;
        let capacity = geometry.capacity_sectors();
        if end >= capacity {
            return capacity;
        }
        let by_size = if params.read_ahead_max > 0 {
            end + params.read_ahead_max
        } else if params.over_requested {
            end + params.segment_sectors
        } else {
            end.max(start + params.segment_sectors)
        };
        let target = match params.prefetch {
            PrefetchMode::None => end,
            PrefetchMode::Segment => by_size,
            PrefetchMode::Track | PrefetchMode::Cylinder => {
                // Walk the runs from the read's last sector to the end of its track or
                // cylinder (slipped sectors make a track hold fewer LBAs).
                let here = self.locate(end - 1);
                let mut run = here;
                let mut lba = end - 1;
                loop {
                    let next_lba = lba + run.sectors as u64;
                    if next_lba >= capacity || next_lba >= by_size {
                        break next_lba;
                    }
                    let next = geometry.next_run(&run, next_lba);
                    let moved = if params.prefetch == PrefetchMode::Cylinder {
                        next.address.cylinder != here.address.cylinder
                    } else {
                        (next.address.cylinder, next.address.surface) != (run.address.cylinder, run.address.surface)
                    };
                    if moved {
                        break next_lba;
                    }
                    (lba, run) = (next_lba, next);
                }
                .min(by_size)
            }
            PrefetchMode::NextTrack => {
                let run = self.locate(end);
                let track_start = end - run.address.sector as u64;
                let track_end = track_start + run.address.sectors_per_track as u64;
                if segment_start < track_start {
                    track_end + geometry.zones()[geometry.zone_index_of_lba(start)].sectors_per_track as u64
                } else {
                    track_end
                }
            }
        };
        target.min(capacity)
    }

    /// How far read-ahead `p` has got by `until`: sectors read, when the mechanism is free
    /// (`until`, or the end of the sector in progress unless `stop_in_sector`, or earlier if
    /// the read-ahead reached its limit) and where the arm is; and, to go on from, the
    /// read-ahead as it stood when it began the track it is on at `until`.
    fn prefetch_progress(&self, p: &Prefetch, until: Nanos, stop_in_sector: bool) -> PrefetchProgress {
        let model: &DriveModel = &self.model;
        let geometry = &model.geometry;
        let (mut cylinder, mut surface) = (self.cylinder, self.surface);
        if until <= p.start || p.limit == 0 {
            return PrefetchProgress { read: 0, free: p.start, cylinder, surface, resume: (*p, cylinder, surface) };
        }
        let mut run = self.locate(p.lba);
        let mut t = p.start;
        let mut done = 0u64;
        let mut lba = p.lba;
        loop {
            // Everything from here on follows from (t, lba, the arm): the read-ahead can be
            // taken up again from this point with the same result.
            let resume = (Prefetch { start: t, lba, limit: p.limit - done, ..*p }, cylinder, surface);
            let stop = |read: u64, free: Nanos, cylinder: u32, surface: u32| PrefetchProgress { read, free, cylinder, surface, resume };
            let switch =
                model.move_ns(cylinder, surface, run.address.cylinder, run.address.surface, OpKind::Read);
            if t + switch >= until {
                return stop(done, until, cylinder, surface);
            }
            t += switch;
            (cylinder, surface) = (run.address.cylinder, run.address.surface);
            let timing = model.track_timing(run.zone_index);
            let count = (p.limit - done).min(run.sectors as u64) as u32;
            let (wait_ns, end_ns) = model.portion_ns(t, p.phase_offset, timing, &run, count, false);
            if t + end_ns <= until {
                t += end_ns;
                done += count as u64;
                if done == p.limit {
                    return stop(done, t, cylinder, surface);
                }
                lba += count as u64;
                run = geometry.next_run(&run, lba);
                continue;
            }
            if t + wait_ns >= until {
                return stop(done, until, cylinder, surface);
            }
            let sector_ns = timing.sector_pass_ns;
            let into = until - (t + wait_ns);
            let whole = (into / sector_ns).min(count as u64);
            if stop_in_sector || into.is_multiple_of(sector_ns) || whole == count as u64 {
                return stop(done + whole, until, cylinder, surface);
            }
            let free = (t + wait_ns + (whole + 1) * sector_ns).min(t + end_ns);
            return stop(done + whole + 1, free, cylinder, surface);
        }
    }

    /// Estimated time from `now` until the first sector of `lba` is under the head
    /// (command overhead + seek + rotational wait), without moving the arm. Used by SPTF and
    /// by mirror-copy selection. With uniform rotation the wait is taken as half a
    /// revolution. The per-kind overheads and the write settle are left out: they do not
    /// depend on where the arm is.
    pub fn positioning_estimate(&self, now: Nanos, lba: u64) -> Nanos {
        let model: &DriveModel = &self.model;
        let run = self.locate(lba);
        let address = run.address;
        let positioned = model.command_overhead_ns
            + model.positioning_ns(self.cylinder, self.surface, address.cylinder, address.surface);
        let wait = match self.rotation {
            RotationModel::Exact => {
                let phase = model.spindle.phase(now + positioned);
                let (wait, _) = track_portion(
                    phase,
                    model.track_timing(run.zone_index),
                    run.skew,
                    address.sector,
                    1,
                    false,
                    model.spindle.units_per_ns,
                );
                model.spindle.ns_for(wait)
            }
            RotationModel::Uniform => model.spindle.ns_for(P / 2),
        };
        positioned + wait
    }

    /// Estimated time to be transferring `lba` if the arm started from sector `from_lba`
    /// (where an operation queued ahead will leave it): overhead, seek and head switch, and
    /// half a revolution, the mean wait for a platter whose angle then is unknown.
    pub fn positioning_estimate_from(&self, from_lba: u64, lba: u64) -> Nanos {
        let model: &DriveModel = &self.model;
        let (from, to) = (model.geometry.locate(from_lba), model.geometry.locate(lba));
        model.command_overhead_ns
            + model.positioning_ns(from.cylinder, from.surface, to.cylinder, to.surface)
            + model.spindle.ns_for(P / 2)
    }

    /// Current cylinder of the arm.
    pub fn cylinder(&self) -> u32 {
        self.cylinder
    }

    /// Current surface (head) of the arm.
    pub fn surface(&self) -> u32 {
        self.surface
    }

    /// The rotational model this drive uses.
    pub fn rotation(&self) -> RotationModel {
        self.rotation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::{presets, SeekConfig, ZoneConfig};
    use crate::sim::StreamId;

    /// 6000 rpm (10 ms per revolution: every sector boundary falls on a whole ns),
    /// 100 sectors per track, 2 surfaces, 50 cylinders.
    fn round_config() -> DriveModelConfig {
        DriveModelConfig::basic(
            6000.0,
            2,
            vec![ZoneConfig::new(50, 100)],
            SeekConfig::Formula { a_ms: 1.0, b_ms: 0.01, c_ms: 0.1 },
        )
    }

    fn drive(cfg: &DriveModelConfig, rotation: RotationModel) -> Drive {
        let model = Arc::new(DriveModel::new(cfg, "drive.model").unwrap());
        Drive::new(model, rotation, RngStream::new(42, StreamId::Drive(0)))
    }

    /// A read-ahead taken up again from where `prefetch_progress` says it stood (the start
    /// of the track it was on) plays out exactly as the original one: same sectors read,
    /// same free time, same arm — on a zoned, slipped, skewed drive, over track and cylinder
    /// switches, with both rotation models.
    #[test]
    fn a_read_ahead_resumed_from_its_progress_plays_out_the_same() {
        for rotation in [RotationModel::Exact, RotationModel::Uniform] {
            let mut d = drive(&presets::preset("ibm18es").unwrap(), rotation);
            let mut rng = RngStream::new(9, StreamId::Policy(0));
            let capacity = d.model.capacity_sectors();
            for _ in 0..300 {
                let lba = rng.below(capacity - 20_000);
                let start = rng.below(1_000_000_000);
                let p = Prefetch { segment: 0, start, lba, limit: 1 + rng.below(5_000), phase_offset: rng.below(P) };
                let arm = (rng.below(d.model.geometry.cylinders() as u64) as u32, rng.below(5) as u32);
                let t2 = start + rng.below(200_000_000);
                let t1 = start + rng.below(t2 - start + 1);
                let stop_in_sector = rng.below(2) == 0;
                (d.cylinder, d.surface) = arm;
                let whole = d.prefetch_progress(&p, t2, stop_in_sector);
                let (from, cylinder, surface) = d.prefetch_progress(&p, t1, stop_in_sector).resume;
                (d.cylinder, d.surface) = (cylinder, surface);
                let resumed = d.prefetch_progress(&from, t2, stop_in_sector);
                let what = format!("{p:?} t1 {t1} t2 {t2} resumed from {from:?}");
                assert_eq!(from.lba - p.lba + resumed.read, whole.read, "{what}");
                assert_eq!((resumed.free, resumed.cylinder, resumed.surface), (whole.free, whole.cylinder, whole.surface), "{what}");
            }
        }
    }

    fn ibm0661(rotation: RotationModel) -> Drive {
        drive(&presets::preset("ibm0661").unwrap(), rotation)
    }

    const REV: u64 = 10_000_000;
    const SECTOR: u64 = 100_000;

    #[test]
    fn slot_phases_split_the_revolution_evenly_tabulated_or_not() {
        let spindle = Spindle::new(7_200_000);
        for spt in [1, 7, 600, MAX_TABULATED_SECTORS_PER_TRACK, MAX_TABULATED_SECTORS_PER_TRACK + 1, 3001] {
            let timing = TrackTiming::new(Divisor::new(spt), &spindle);
            assert_eq!(timing.slot_phases.is_empty(), spt > MAX_TABULATED_SECTORS_PER_TRACK);
            for k in 0..=2 * spt {
                // floor(k · P / spt): one revolution per spt slots, a second one after it.
                let exact = (k as u128 * P as u128 / spt as u128) as u64;
                assert_eq!(timing.phase_of(k), exact, "spt {spt} slot {k}");
            }
            assert_eq!(timing.phase_of(spt), P);
            // One sector's arc, P / spt phase units, at 7,200,000 units per ns, rounded up.
            assert_eq!(timing.sector_pass_ns, (P / spt).div_ceil(7_200_000));
        }
    }

    /// The head's lateness into its slot, worked out from `phase · spt mod P`, is the
    /// phase less the start of its slot, for phases at, just after and just before every slot
    /// start, on short, 18ES-like and untabulated tracks; and the test against one ns is the
    /// test of the lateness itself.
    #[test]
    fn the_lateness_into_a_slot_is_the_phase_past_the_slot_start() {
        for spt in [1u64, 7, 48, 333, 2048, 5000] {
            let divisor = Divisor::new(spt);
            let mut phases = Vec::new();
            for k in 0..spt.min(600) {
                let start = slot_phase(k, &divisor);
                phases.extend([start, start + 1, start + 9_999_999, start + 10_000_000, start + 10_000_001]);
                phases.push(slot_phase(k + 1, &divisor) - 1);
            }
            for phase in phases.into_iter().filter(|&p| p < P) {
                let previous = phase * spt / P;
                let lateness = phase - slot_phase(previous, &divisor);
                let into_slot = into_slot_scaled(phase, spt);
                assert_eq!(divisor.div_ceil(into_slot), lateness, "spt {spt}, phase {phase}");
                for units_per_ns in [1u64, 5_400_000, 10_000_000, 15_000_000] {
                    assert_eq!(into_slot <= (units_per_ns - 1) * spt, lateness < units_per_ns, "spt {spt}, phase {phase}");
                }
            }
        }
    }

    #[test]
    fn exact_latency_is_always_within_one_revolution() {
        for (cfg, name) in [
            (presets::preset("ibm0661").unwrap(), "ibm0661"),
            (presets::preset("hc550").unwrap(), "hc550"),
        ] {
            let mut d = drive(&cfg, RotationModel::Exact);
            let revolution = d.model.revolution_ns();
            let capacity = d.model.capacity_sectors();
            let mut rng = RngStream::new(9, StreamId::Requests);
            let mut now = 0;
            let mut max_latency = 0;
            for _ in 0..20_000 {
                let lba = rng.below(capacity);
                let s = d.service(now, lba, 1, OpKind::Read);
                // Waits end on the first whole ns at or after the wanted angle.
                assert!((s.rotation as f64) < revolution + 1.0, "{name}: {s:?}");
                max_latency = max_latency.max(s.rotation);
                now += s.total() + rng.below(5_000_000);
            }
            assert!(
                max_latency as f64 > 0.99 * revolution,
                "{name}: waits should cover the revolution"
            );
        }
    }

    #[test]
    fn one_sector_transfer_takes_one_sector_time() {
        let mut d = drive(&round_config(), RotationModel::Exact);
        for lba in [0, 7, 99, 100, 1234, 9_999] {
            let s = d.service(3_141_592 * lba, lba, 1, OpKind::Read);
            assert_eq!(s.transfer, SECTOR);
        }
        let mut d = ibm0661(RotationModel::Exact);
        let sector = d.model.revolution_ns() / 48.0;
        let mut rng = RngStream::new(5, StreamId::Requests);
        for i in 0..1000 {
            let lba = rng.below(d.model.capacity_sectors());
            let s = d.service(i * 17_000_001, lba, 1, OpKind::Read);
            assert!((s.transfer as f64 - sector).abs() <= 1.0, "{s:?} vs {sector}");
        }
    }

    #[test]
    fn zero_latency_whole_track_takes_one_revolution_from_a_sector_boundary() {
        let mut cfg = round_config();
        cfg.zero_latency = true;
        let mut d = drive(&cfg, RotationModel::Exact);
        // Arm already on track (0, 0); arriving at each sector boundary in turn.
        for k in 0..100 {
            let s = d.service(7 * REV + k * SECTOR, 0, 100, OpKind::Read);
            assert_eq!(s.seek, 0);
            assert_eq!(s.rotation + s.transfer, REV, "arrival at boundary {k}");
        }
        // Arriving mid-sector: the partly passed sector is read on the next pass.
        for offset in [1, 50_000, 99_999] {
            let s = d.service(3 * REV + 40 * SECTOR + offset, 0, 100, OpKind::Read);
            assert_eq!(s.rotation + s.transfer, REV + SECTOR - offset);
        }
        // The thesis drive: one revolution (± 1 ns) from a boundary arrival at time 0.
        let mut cfg = presets::preset("ibm0661").unwrap();
        cfg.zero_latency = true;
        let mut d = drive(&cfg, RotationModel::Exact);
        let s = d.service(0, 0, 48, OpKind::Read);
        assert!(
            (s.rotation as f64 + s.transfer as f64 - d.model.revolution_ns()).abs() <= 1.0,
            "{s:?}"
        );
        // From any arrival: between one revolution and one revolution plus a sector.
        let (revolution, sector) = (d.model.revolution_ns(), d.model.revolution_ns() / 48.0);
        let mut rng = RngStream::new(3, StreamId::Requests);
        for i in 0..2000 {
            let track = rng.below(949 * 14);
            let s = d.service(i * 33_333_333 + rng.below(1000), track * 48, 48, OpKind::Read);
            let media = (s.rotation + s.transfer) as f64;
            assert!(media >= revolution - 1.0 && media <= revolution + sector + 1.0, "{s:?}");
        }
    }

    #[test]
    fn zero_latency_partial_track_reads_from_the_first_sector_to_come() {
        let mut cfg = round_config();
        cfg.zero_latency = true;
        let mut d = drive(&cfg, RotationModel::Exact);
        // Sectors 20..60 wanted; head at boundary 30 → read 30..59, wait to 20, read 20..29:
        // done when sector 29 has passed, one revolution after boundary 30.
        let s = d.service(30 * SECTOR, 20, 40, OpKind::Read);
        assert_eq!((s.rotation, s.transfer), (0, REV));
        // Head at boundary 70, outside the wanted arc: wait to 20 (50 sectors), read 40.
        let s = d.service(3 * REV + 70 * SECTOR, 20, 40, OpKind::Read);
        assert_eq!((s.rotation, s.transfer), (50 * SECTOR, 40 * SECTOR));
        // Head exactly at the arc's start: a plain contiguous read.
        let s = d.service(5 * REV + 20 * SECTOR, 20, 40, OpKind::Read);
        assert_eq!((s.rotation, s.transfer), (0, 40 * SECTOR));
    }

    #[test]
    fn whole_track_without_zero_latency_takes_one_to_two_revolutions() {
        let mut d = ibm0661(RotationModel::Exact);
        let revolution = d.model.revolution_ns();
        let mut rng = RngStream::new(4, StreamId::Requests);
        let mut now = 0;
        for _ in 0..2000 {
            let track = rng.below(949 * 14);
            let s = d.service(now, track * 48, 48, OpKind::Read);
            let media = (s.rotation + s.transfer) as f64;
            assert!(media >= revolution - 1.0 && media < 2.0 * revolution + 1.0, "{s:?}");
            assert!((s.transfer as f64 - revolution).abs() <= 1.0);
            now += s.total() + rng.below(10_000_000);
        }
    }

    #[test]
    fn same_sector_whole_revolutions_apart_sees_the_same_latency() {
        let mut d = drive(&round_config(), RotationModel::Exact);
        d.service(0, 512, 1, OpKind::Read); // arm to the track of 512
        let base = 123_456_789;
        let first = d.service(base, 512, 1, OpKind::Read);
        for k in [1, 2, 17, 1000, 123_456] {
            let s = d.service(base + k * REV, 512, 1, OpKind::Read);
            assert_eq!(s, first, "k = {k}");
        }
        // Thesis drive: a revolution is not a whole number of ns, so k revolutions rounded to
        // the ns shift the latency by at most 1 ns; 2159 revolutions are exactly 30 s.
        let mut d = ibm0661(RotationModel::Exact);
        let revolution = d.model.revolution_ns();
        d.service(0, 10_000, 1, OpKind::Read);
        let base = 987_654_321;
        let first = d.service(base, 10_000, 1, OpKind::Read).rotation as i64;
        for k in [1u64, 3, 1000, 54_321] {
            let at = base + (k as f64 * revolution).round() as u64;
            let r = d.service(at, 10_000, 1, OpKind::Read).rotation as i64;
            assert!((r - first).abs() <= 1, "k = {k}: {r} vs {first}");
        }
        let exact = d.service(base + 30_000_000_000, 10_000, 1, OpKind::Read).rotation as i64;
        assert_eq!(exact, first);
    }

    #[test]
    fn phase_is_exact_far_into_a_run() {
        // 10^18 ns is 31.7 years of simulated time; the pattern repeats every 30 s at 4318 rpm.
        let mut d = ibm0661(RotationModel::Exact);
        d.service(0, 77_777, 1, OpKind::Read);
        let near = d.service(1_234_567, 77_777, 1, OpKind::Read);
        let far = d.service(1_234_567 + 30_000_000_000 * 33_333_333, 77_777, 1, OpKind::Read);
        assert_eq!(near, far);
        // A speed whose pattern period overflows 64-bit products takes the 128-bit path.
        let mut cfg = round_config();
        cfg.rpm = 7200.001;
        let model = DriveModel::new(&cfg, "m").unwrap();
        assert!(!model.spindle.fits_u64);
        let angle = model.platter_angle(u64::MAX - 5);
        assert!((0.0..1.0).contains(&angle));
        let mut d = Drive::new(
            Arc::new(model),
            RotationModel::Exact,
            RngStream::new(1, StreamId::Drive(0)),
        );
        let s = d.service(u64::MAX / 2, 0, 1, OpKind::Read);
        assert!((s.rotation as f64) < d.model.revolution_ns() + 1.0);
    }

    #[test]
    fn uniform_latency_averages_half_a_revolution() {
        let mut d = ibm0661(RotationModel::Uniform);
        let revolution = d.model.revolution_ns();
        let n = 200_000;
        let mut sum = 0.0;
        for i in 0..n {
            let s = d.service(i * 1_000, 4_242, 8, OpKind::Read);
            assert!((s.rotation as f64) < revolution + 1.0);
            sum += s.rotation as f64;
        }
        let mean = sum / n as f64;
        assert!((mean / (revolution / 2.0) - 1.0).abs() < 0.01, "mean {mean}");
        assert_eq!(d.positioning_estimate(0, 4_242), (revolution / 2.0).ceil() as u64);
    }

    #[test]
    fn transfers_cross_tracks_with_a_head_switch_and_cylinders_with_a_one_cylinder_seek() {
        let mut cfg = round_config();
        cfg.head_switch_ms = 0.25; // 2.5 sectors
        cfg.track_skew_sectors = 3;
        let mut d = drive(&cfg, RotationModel::Exact);
        // Head arrives at boundary 90 of track (0, 0); reads 90..99 then 0..9 of (0, 1), whose
        // sector 0 sits 3 slots on: after the 2.5-sector switch it waits half a sector.
        let s = d.service(90 * SECTOR, 90, 20, OpKind::Read);
        assert_eq!(
            s,
            ServiceTime { overhead: 0, seek: 250_000, rotation: SECTOR / 2, transfer: 20 * SECTOR, bus: 0, wait: 0 }
        );
        assert_eq!((d.cylinder(), d.surface()), (0, 1));
        // From (0, 1) over the cylinder boundary to (1, 0). Sector 90 of track 1 sits at slot
        // 93; arriving there, 10 sectors end at slot 103 (slot 3 of the next turn). Then a
        // one-cylinder seek (1.11 ms = 11.1 sectors) reaches slot 14.1, and sector 0 of track
        // 2 (skew 6) comes round at slot 206.
        let s = d.service(10 * REV + 93 * SECTOR, 190, 20, OpKind::Read);
        let one_cylinder = d.model.seek.time(1);
        assert_eq!(one_cylinder, 1_110_000);
        let wait = 206 * SECTOR - (103 * SECTOR + one_cylinder);
        assert_eq!(
            s,
            ServiceTime { overhead: 0, seek: one_cylinder, rotation: wait, transfer: 20 * SECTOR, bus: 0, wait: 0 }
        );
        assert_eq!((d.cylinder(), d.surface()), (1, 0));
    }

    #[test]
    fn positioning_takes_the_longer_of_seek_and_head_switch() {
        let mut cfg = round_config();
        cfg.head_switch_ms = 1.5;
        cfg.command_overhead_ms = 0.5;
        let d = drive(&cfg, RotationModel::Exact);
        let m = &d.model;
        assert_eq!(m.positioning_ns(0, 0, 0, 0), 0);
        assert_eq!(m.positioning_ns(0, 0, 0, 1), 1_500_000);
        assert_eq!(m.positioning_ns(0, 0, 1, 0), 1_110_000);
        assert_eq!(m.positioning_ns(0, 0, 1, 1), 1_500_000);
        assert_eq!(m.positioning_ns(0, 1, 40, 0), m.seek.time(40));
        let mut d = d;
        let estimate = d.positioning_estimate(0, 100 * 2 * 40 + 17);
        let s = d.service(0, 100 * 2 * 40 + 17, 1, OpKind::Write);
        assert_eq!(s.overhead, 500_000);
        assert_eq!(s.seek, d.model.seek.time(40));
        assert_eq!(estimate, s.overhead + s.seek + s.rotation);
        assert_eq!((d.cylinder(), d.surface()), (40, 0));
    }

    #[test]
    fn uniform_random_requests_seek_a_third_of_the_stroke_on_average() {
        let mut d = ibm0661(RotationModel::Uniform);
        let cylinders = d.model.geometry.cylinders() as f64;
        let mut rng = RngStream::new(11, StreamId::Requests);
        let n = 200_000;
        let (mut distance, mut seek_ns) = (0.0, 0.0);
        let mut now = 0;
        // 4 KB blocks (8 sectors, aligned: 48 sectors per track), uniform over the drive.
        let blocks = d.model.capacity_sectors() / 8;
        d.service(0, rng.below(blocks) * 8, 8, OpKind::Read);
        for _ in 0..n {
            let from = d.cylinder();
            let s = d.service(now, rng.below(blocks) * 8, 8, OpKind::Read);
            distance += from.abs_diff(d.cylinder()) as f64;
            seek_ns += s.seek as f64;
            now += s.total();
        }
        let mean_distance = distance / n as f64;
        let analytic_distance = (cylinders * cylinders - 1.0) / (3.0 * cylinders);
        assert!(
            (mean_distance / analytic_distance - 1.0).abs() < 0.01,
            "{mean_distance} vs {analytic_distance}"
        );
        // Analytic mean seek: Σ P(d)·seek(d), P(0) = 1/C, P(d) = 2(C − d)/C² for d ≥ 1.
        let seek = |d: f64| 2.0 + 0.01 * d + 0.46 * d.sqrt();
        let analytic_ms: f64 = (1..949)
            .map(|d| 2.0 * (cylinders - d as f64) / (cylinders * cylinders) * seek(d as f64))
            .sum();
        let mean_ms = seek_ns / n as f64 / 1e6;
        assert!((mean_ms / analytic_ms - 1.0).abs() < 0.01, "{mean_ms} vs {analytic_ms}");
    }

    fn key_of(result: Result<DriveModel>) -> String {
        match result {
            Err(Error::Config { key, .. }) => key,
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn invalid_models_name_the_offending_key() {
        let k = "drive.model";
        for rpm in [0.0, -7200.0, f64::NAN, f64::INFINITY, 1e9] {
            let cfg = DriveModelConfig { rpm, ..round_config() };
            assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.rpm");
        }
        let cfg = DriveModelConfig { surfaces: 0, ..round_config() };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.surfaces");
        let cfg = DriveModelConfig { zones: vec![], ..round_config() };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.zones");
        let cfg = DriveModelConfig { head_switch_ms: -1.0, ..round_config() };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.head_switch_ms");
        let cfg = DriveModelConfig { command_overhead_ms: f64::NAN, ..round_config() };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.command_overhead_ms");
        // Finite but beyond a second: 1e300 ms saturated to 2^64 - 1 ns and wrapped sums.
        let cfg = DriveModelConfig { head_switch_ms: 1e300, ..round_config() };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.head_switch_ms");
        let cfg = DriveModelConfig { read_completion_overhead_ms: MAX_DURATION_MS * 1.001, ..round_config() };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.read_completion_overhead_ms");
        let cfg = DriveModelConfig { bus_sector_ms: MAX_DURATION_MS, ..round_config() };
        DriveModel::new(&cfg, k).unwrap();
        let cfg = DriveModelConfig {
            seek: SeekConfig::Table { points: vec![(1, 1.0), (1, 2.0)] },
            ..round_config()
        };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.seek.points[1]");
        let cfg = DriveModelConfig {
            seek: SeekConfig::Piecewise {
                segments: vec![crate::disk::SeekSegment {
                    max_distance: 20,
                    a_ms: 1.0,
                    b_ms: 0.0,
                    c_ms: 0.0,
                }],
            },
            ..round_config()
        };
        assert_eq!(key_of(DriveModel::new(&cfg, k)), "drive.model.seek.segments");
    }

    #[test]
    fn writes_pay_the_settle_after_every_movement_and_never_go_below_zero() {
        let mut cfg = round_config();
        cfg.head_switch_ms = 0.5;
        cfg.write_settle_ms = 0.3;
        let mut d = drive(&cfg, RotationModel::Exact);
        let seek40 = d.model.seek.time(40);
        let s = d.service(0, 100 * 2 * 40, 1, OpKind::Write);
        assert_eq!(s.seek, seek40 + 300_000);
        let s = d.service(REV, 100 * 2 * 40 + 50, 1, OpKind::Write);
        assert_eq!(s.seek, 0, "no movement, no settle");
        let s = d.service(2 * REV, 100 * 2 * 40 + 150, 1, OpKind::Write);
        assert_eq!(s.seek, 500_000 + 300_000, "a head switch settles too");
        let s = d.service(3 * REV, 0, 1, OpKind::Read);
        assert_eq!(s.seek, seek40.max(500_000), "reads do not settle");
        // A write spanning two tracks settles after the head switch as well.
        let s = d.service(4 * REV + 90 * SECTOR, 90, 20, OpKind::Write);
        assert_eq!(s.seek, 500_000 + 300_000);
        cfg.write_settle_ms = -0.7;
        let d = drive(&cfg, RotationModel::Exact);
        assert_eq!(d.model.move_ns(0, 0, 0, 1, OpKind::Write), 0);
        assert_eq!(d.model.move_ns(0, 0, 40, 0, OpKind::Write), seek40 - 700_000);
        assert_eq!(d.model.move_ns(0, 0, 0, 0, OpKind::Write), 0);
    }

    #[test]
    fn overheads_depend_on_the_command_and_the_previous_one() {
        let mut cfg = round_config();
        cfg.command_overhead_ms = 0.01;
        cfg.read_after_read_overhead_ms = 0.1;
        cfg.read_after_write_overhead_ms = 0.2;
        cfg.write_after_read_overhead_ms = 0.3;
        cfg.write_after_write_overhead_ms = 0.4;
        cfg.read_completion_overhead_ms = 0.05;
        cfg.write_completion_overhead_ms = 0.07;
        let mut d = drive(&cfg, RotationModel::Exact);
        let kinds = [OpKind::Read, OpKind::Read, OpKind::Write, OpKind::Write, OpKind::Read, OpKind::Write];
        let expected = [160_000, 160_000, 380_000, 480_000, 260_000, 380_000];
        for (i, (kind, want)) in kinds.into_iter().zip(expected).enumerate() {
            let s = d.service(i as u64 * 3 * REV, 17, 1, kind);
            assert_eq!(s.overhead, want, "command {i}");
        }
        // The overhead comes before positioning: the wait is measured from its end.
        let mut d = drive(&cfg, RotationModel::Exact);
        let s = d.service(0, 0, 1, OpKind::Read);
        assert_eq!(s.rotation, REV - 110_000);
    }

    #[test]
    fn the_host_interface_pipelines_reads_and_holds_back_writes() {
        let mut cfg = round_config();
        cfg.bus_sector_ms = 0.05; // faster than the medium (0.1 ms per sector)
        let mut d = drive(&cfg, RotationModel::Exact);
        let s = d.service(0, 0, 10, OpKind::Read);
        assert_eq!((s.rotation, s.transfer, s.bus), (0, 10 * SECTOR, 50_000));
        cfg.bus_sector_ms = 0.3; // slower: the last sector leaves 10 bus times after the first is read
        let mut d = drive(&cfg, RotationModel::Exact);
        let s = d.service(0, 0, 10, OpKind::Read);
        assert_eq!((s.rotation, s.transfer, s.bus), (0, 10 * SECTOR, SECTOR + 10 * 300_000 - 10 * SECTOR));
        // A write waits for its data: the first sector may go down once sector 10 will have
        // arrived in time, 0.3 + 9 × 0.2 = 2.1 ms after the command; sector 0 is then 79
        // sectors away.
        let s = d.service(7 * REV, 0, 10, OpKind::Write);
        assert_eq!((s.bus, s.rotation, s.transfer), (2_100_000, 79 * SECTOR, 10 * SECTOR));
        // Plenty of rotational wait hides the interface entirely.
        let s = d.service(8 * REV + 50 * SECTOR, 0, 1, OpKind::Write);
        assert_eq!((s.bus, s.rotation), (0, 50 * SECTOR));
    }

    #[test]
    fn a_transfer_passes_over_slipped_sectors_and_serpentine_cylinders_keep_the_head() {
        let mut cfg = round_config();
        cfg.sparing = crate::disk::SparingConfig::SectorsPerZone;
        cfg.zones[0].spares = 10;
        cfg.zones[0].slips = vec![5];
        let mut d = drive(&cfg, RotationModel::Exact);
        let s = d.service(0, 0, 10, OpKind::Read);
        assert_eq!((s.seek, s.rotation, s.transfer), (0, SECTOR, 10 * SECTOR));
        // Ascending order: a cylinder switch also switches heads (2 ms > 1.11 ms seek).
        let mut cfg = round_config();
        cfg.head_switch_ms = 2.0;
        let mut d = drive(&cfg, RotationModel::Exact);
        d.service(0, 199, 1, OpKind::Read);
        let s = d.service(10 * REV + 99 * SECTOR, 199, 2, OpKind::Read);
        assert_eq!(s.seek, 2_000_000);
        assert_eq!((d.cylinder(), d.surface()), (1, 0));
        cfg.track_order = crate::disk::TrackOrder::SerpentineZone;
        let mut d = drive(&cfg, RotationModel::Exact);
        d.service(0, 199, 1, OpKind::Read);
        let s = d.service(10 * REV + 99 * SECTOR, 199, 2, OpKind::Read);
        assert_eq!(s.seek, 1_110_000);
        assert_eq!((d.cylinder(), d.surface()), (1, 1));
    }

    #[test]
    fn zero_latency_can_differ_between_reads_and_writes() {
        let mut cfg = round_config();
        cfg.zero_latency = true;
        cfg.zero_latency_writes = Some(false);
        let mut d = drive(&cfg, RotationModel::Exact);
        let s = d.service(30 * SECTOR, 20, 40, OpKind::Read);
        assert_eq!((s.rotation, s.transfer), (0, REV));
        let s = d.service(3 * REV + 30 * SECTOR, 20, 40, OpKind::Write);
        assert_eq!((s.rotation, s.transfer), (90 * SECTOR, 40 * SECTOR));
    }

    #[test]
    fn skew_follows_cylinder_and_track_counts() {
        let mut cfg = round_config();
        cfg.track_skew_sectors = 7;
        cfg.cylinder_skew_sectors = 3;
        let m = DriveModel::new(&cfg, "m").unwrap();
        for cylinder in 0..50u32 {
            for surface in 0..2u32 {
                let track = cylinder * 2 + surface;
                assert_eq!(m.skew(cylinder, surface), (cylinder * 3 + track * 7) % 100);
            }
        }
    }
}
