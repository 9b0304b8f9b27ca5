//! The drive's side of the bus protocol: disconnecting while the medium works and
//! reconnecting ("reselecting") to move data or report completion (DiskSim's `disksim_disk`
//! bus parameters, manual §3.4.5).
//!
//! Without this table (`drive.model.interface` absent) a drive keeps the bus from command to
//! completion: a read miss's sectors go to the host as soon as each is read, a write's data
//! arrives from the end of the command processing. With it, a drive that goes to the medium
//! disconnects after the command processing and pays for coming back:
//!
//! ```text
//! read miss:  command ─ overheads ─┬─ positioning ─ medium ───────────────────────▶
//!                                  └─ disconnect … k sectors in ─ reselect ─ data prep ─ sectors to host ─ completion
//!                                     k = ⌈high water mark × request (or segment) size⌉
//! write:      command ─ overheads ─┬─ positioning ─ medium (each sector once its data is in) ─▶ done
//!                                  └─ data from host ─ disconnect … medium done ─ reselect ─ completion
//! extra write disconnect (HP C2247A):
//!             command ─ extradisc command ─┬─ seek delta ─ positioning ─ medium ─▶ done
//!                                          └─ disconnect ─ inter-disconnect delay ─ reselect ─ data prep
//!                                             ─ data from host ─ 2nd disconnect … medium done ─ reselect (other) ─ completion
//! ```
//!
//! The overheads of disconnecting run in parallel with the medium: they only delay a
//! reconnection that would otherwise come before them. A full read hit and a partial hit
//! (whose cached sectors go out at once) keep the bus; so does a write acknowledged from
//! the write-back cache.
//!
//! Simplifications (stated in `docs/drives.md`): once reconnected for a read, the drive keeps
//! the bus to the end of the transfer (DiskSim's "Hold bus entire read xfer" = 1; with 0,
//! DiskSim would disconnect again whenever the buffer runs dry — the same timing when a
//! reselection costs nothing, as on every shipped drive that does not hold the bus); the bus
//! is the drive's alone (no arbitration, no other device).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{readable, Error, Result};
use crate::sim::{ms_to_ns, Nanos};

/// What a read miss's reconnection water mark is a fraction of (DiskSim's "Set watermark by
/// reqsize").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WatermarkBase {
    /// The request's size in sectors (1).
    #[default]
    Request,
    /// The cache's segment size (0); needs `drive.model.cache`.
    Segment,
}

/// DiskSim's "Extra write disconnect": a write-through write disconnects after its command,
/// before any data has moved, and reconnects for the data later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtraWriteDisconnectConfig {
    /// Command processing before the first disconnection and before any positioning, ms;
    /// replaces the write overheads (`write_after_*_overhead_ms`) of a write that goes to the
    /// medium ("Extradisc command overhead").
    pub command_overhead_ms: f64,
    /// Processing before the first disconnection completes, ms, in parallel with the
    /// positioning ("Extradisc disconnect overhead").
    pub disconnect_ms: f64,
    /// From the first disconnection to the decision to reconnect for the data, ms
    /// ("Extradisc inter-disconnect delay").
    pub inter_disconnect_delay_ms: f64,
    /// Processing of the disconnection after the data has come, ms; replaces
    /// `write_disconnect_ms` ("Extradisc 2nd disconnect overhead").
    pub second_disconnect_ms: f64,
    /// From the end of the command processing to the start of positioning, ms ("Extradisc
    /// seek delta").
    pub seek_delta_ms: f64,
}

/// The drive's bus connection protocol (`drive.model.interface`). Times in ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostInterfaceConfig {
    /// Fraction of the read's sectors (or of a segment, `read_watermark_of`) that must be in
    /// the buffer before a read miss reconnects to send them (DiskSim's "High (read) water
    /// mark"); 0: at once. Sectors needed: ⌈fraction × size⌉, at most the request's.
    #[serde(default)]
    pub read_watermark: f64,
    /// What `read_watermark` is a fraction of.
    #[serde(default)]
    pub read_watermark_of: WatermarkBase,
    /// Processing of a read's disconnection after a read, ms ("Read disconnect afterread").
    #[serde(default)]
    pub read_disconnect_after_read_ms: f64,
    /// Processing of a read's disconnection after a write, ms ("Read disconnect afterwrite").
    #[serde(default)]
    pub read_disconnect_after_write_ms: f64,
    /// Processing of a write's disconnection once its data is in, ms ("Write disconnect
    /// overhead").
    #[serde(default)]
    pub write_disconnect_ms: f64,
    /// Processing of the first reconnection of a command, ms ("First reselect overhead").
    #[serde(default)]
    pub first_reselect_ms: f64,
    /// Processing of a later reconnection of the same command, ms ("Other reselect
    /// overhead").
    #[serde(default)]
    pub other_reselect_ms: f64,
    /// Processing after a reconnection before data moves, ms ("Data preparation overhead").
    #[serde(default)]
    pub data_preparation_ms: f64,
    /// The HP C2247A's extra disconnection of writes; absent: writes receive their data right
    /// after the command processing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_write_disconnect: Option<ExtraWriteDisconnectConfig>,
}

/// The interface in ns, as the drive uses it.
#[derive(Debug, Clone)]
pub(crate) struct Interface {
    /// Read water mark as a fraction of the request, or a fixed sector count.
    read_watermark: Watermark,
    /// Read disconnection processing, indexed by [previous was a write].
    read_disconnect_ns: [Nanos; 2],
    /// Disconnection after a write's data is in.
    write_disconnect_ns: Nanos,
    first_reselect_ns: Nanos,
    other_reselect_ns: Nanos,
    data_preparation_ns: Nanos,
    /// With an extra write disconnect: from the start of positioning to the start of the
    /// data (may be negative: the data may come first).
    write_data_offset_ns: i64,
    /// With an extra write disconnect: the command processing before positioning
    /// (extradisc command overhead + seek delta), which replaces the write overheads.
    pub(crate) write_overhead_ns: Option<Nanos>,
    /// The reselection before a write's completion is its command's first (false) or a later
    /// one (true: the extra disconnect reselected for the data).
    write_completion_is_other: bool,
}

#[derive(Debug, Clone, Copy)]
enum Watermark {
    Fraction(f64),
    Sectors(u64),
}

/// `value` ms in ns, within the bound every drive time has.
fn check_ms(value: f64, key: String) -> Result<Nanos> {
    super::mechanics::check_duration_ms(value, key)?;
    Ok(ms_to_ns(value))
}

impl Interface {
    /// Validate `cfg` (`key` names it in errors); `segment_sectors` is the cache's segment
    /// size, when the drive has a cache.
    pub fn new(cfg: &HostInterfaceConfig, segment_sectors: Option<u32>, key: &str) -> Result<Self> {
        let w = cfg.read_watermark;
        if !w.is_finite() || !(0.0..=1.0).contains(&w) {
            return Err(Error::config(format!("{key}.read_watermark"), format!("must be a fraction in [0, 1], got {}", readable(w))));
        }
        let read_watermark = match cfg.read_watermark_of {
            WatermarkBase::Request => Watermark::Fraction(w),
            WatermarkBase::Segment => match segment_sectors {
                Some(s) => Watermark::Sectors((w * s as f64).ceil() as u64),
                None => {
                    return Err(Error::config(
                        format!("{key}.read_watermark_of"),
                        "`segment` needs the drive's cache (`drive.model.cache`) for a segment size",
                    ))
                }
            },
        };
        let ms = |value: f64, name: &str| check_ms(value, format!("{key}.{name}"));
        let first_reselect_ns = ms(cfg.first_reselect_ms, "first_reselect_ms")?;
        let data_preparation_ns = ms(cfg.data_preparation_ms, "data_preparation_ms")?;
        let mut interface = Interface {
            read_watermark,
            read_disconnect_ns: [
                ms(cfg.read_disconnect_after_read_ms, "read_disconnect_after_read_ms")?,
                ms(cfg.read_disconnect_after_write_ms, "read_disconnect_after_write_ms")?,
            ],
            write_disconnect_ns: ms(cfg.write_disconnect_ms, "write_disconnect_ms")?,
            first_reselect_ns,
            other_reselect_ns: ms(cfg.other_reselect_ms, "other_reselect_ms")?,
            data_preparation_ns,
            write_data_offset_ns: 0,
            write_overhead_ns: None,
            write_completion_is_other: false,
        };
        if let Some(x) = &cfg.extra_write_disconnect {
            let key = format!("{key}.extra_write_disconnect");
            let ms = |value: f64, name: &str| check_ms(value, format!("{key}.{name}"));
            let command = ms(x.command_overhead_ms, "command_overhead_ms")?;
            let disconnect = ms(x.disconnect_ms, "disconnect_ms")?;
            let delay = ms(x.inter_disconnect_delay_ms, "inter_disconnect_delay_ms")?;
            let seek_delta = ms(x.seek_delta_ms, "seek_delta_ms")?;
            interface.write_disconnect_ns = ms(x.second_disconnect_ms, "second_disconnect_ms")?;
            interface.write_overhead_ns = Some(command + seek_delta);
            // The data starts after the disconnection, the delay, the (first) reselection and
            // the data preparation, all counted from the end of the command processing;
            // positioning starts `seek_delta` after it.
            let data = disconnect + delay + first_reselect_ns + data_preparation_ns;
            interface.write_data_offset_ns = data as i64 - seek_delta as i64;
            interface.write_completion_is_other = true;
        }
        Ok(interface)
    }

    /// Sectors of an `n`-sector read miss that must be in the buffer before the drive
    /// reconnects: ⌈water mark⌉, at most `n` (0: at once).
    #[inline]
    pub fn read_reconnect_sectors(&self, n: u64) -> u64 {
        match self.read_watermark {
            Watermark::Fraction(f) => ((f * n as f64).ceil() as u64).min(n),
            Watermark::Sectors(s) => s.min(n),
        }
    }

    /// When a read miss's first sector can go to the host: the drive disconnected at the end
    /// of the command processing (`command_done`), the water mark was reached at
    /// `watermark_at`; it reselects, then prepares the data.
    #[inline]
    pub fn read_transfer_start(&self, command_done: Nanos, watermark_at: Nanos, after_write: bool) -> Nanos {
        let disconnected = command_done + self.read_disconnect_ns[after_write as usize];
        watermark_at.max(disconnected) + self.first_reselect_ns + self.data_preparation_ns
    }

    /// When a write's data starts to arrive, positioning having started at `positioning`.
    #[inline]
    pub fn write_data_start(&self, positioning: Nanos) -> Nanos {
        positioning.saturating_add_signed(self.write_data_offset_ns)
    }

    /// When a write that went to the medium may report completion (before the completion
    /// overhead): its data was all in at `data_done`, the medium was done at `media_done`;
    /// the drive disconnected after the data and reselects once the medium is done.
    #[inline]
    pub fn write_reconnect(&self, data_done: Nanos, media_done: Nanos) -> Nanos {
        let reselect = if self.write_completion_is_other { self.other_reselect_ns } else { self.first_reselect_ns };
        media_done.max(data_done + self.write_disconnect_ns) + reselect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> HostInterfaceConfig {
        HostInterfaceConfig {
            read_watermark: 0.75,
            read_watermark_of: WatermarkBase::Request,
            read_disconnect_after_read_ms: 0.02,
            read_disconnect_after_write_ms: 0.04,
            write_disconnect_ms: 0.15,
            first_reselect_ms: 0.16,
            other_reselect_ms: 0.12,
            data_preparation_ms: 0.03,
            extra_write_disconnect: None,
        }
    }

    #[test]
    fn the_water_mark_rounds_up_and_never_exceeds_the_request() {
        let i = Interface::new(&config(), None, "i").unwrap();
        let got: Vec<u64> = [1, 2, 3, 4, 8, 9].iter().map(|&n| i.read_reconnect_sectors(n)).collect();
        // ⌈0.75·n⌉: 0.75 → 1, 1.5 → 2, 2.25 → 3, 3 → 3, 6 → 6, 6.75 → 7.
        assert_eq!(got, [1, 2, 3, 3, 6, 7]);
        let zero = Interface::new(&HostInterfaceConfig { read_watermark: 0.0, ..config() }, None, "i").unwrap();
        assert_eq!(zero.read_reconnect_sectors(8), 0);
        let whole = Interface::new(&HostInterfaceConfig { read_watermark: 1.0, ..config() }, None, "i").unwrap();
        assert_eq!(whole.read_reconnect_sectors(8), 8);
        let segment = HostInterfaceConfig { read_watermark: 0.5, read_watermark_of: WatermarkBase::Segment, ..config() };
        let by_segment = Interface::new(&segment, Some(100), "i").unwrap();
        assert_eq!((by_segment.read_reconnect_sectors(20), by_segment.read_reconnect_sectors(80)), (20, 50));
    }

    #[test]
    fn reselection_and_data_preparation_follow_the_later_of_water_mark_and_disconnection() {
        let i = Interface::new(&config(), None, "i").unwrap();
        // Water mark long after the disconnection: reselect 0.16 + prepare 0.03 after it.
        assert_eq!(i.read_transfer_start(1_000_000, 5_000_000, false), 5_190_000);
        // Water mark at once (0): the disconnection (0.04 after a write) comes first.
        assert_eq!(i.read_transfer_start(1_000_000, 1_000_000, true), 1_230_000);
        // A write reselects (first reselection) once the medium is done, but not before its
        // disconnection after the data has completed.
        assert_eq!(i.write_reconnect(2_000_000, 9_000_000), 9_160_000);
        assert_eq!(i.write_reconnect(2_000_000, 2_100_000), 2_310_000);
        assert_eq!(i.write_data_start(3_000_000), 3_000_000);
    }

    /// An extra write disconnect with distinct, round timings.
    fn extra_write_disconnect() -> ExtraWriteDisconnectConfig {
        ExtraWriteDisconnectConfig {
            command_overhead_ms: 0.6,
            disconnect_ms: 0.05,
            inter_disconnect_delay_ms: 0.4,
            second_disconnect_ms: 0.13,
            seek_delta_ms: 0.25,
        }
    }

    #[test]
    fn an_extra_write_disconnect_delays_the_data_and_reselects_twice() {
        let extra = extra_write_disconnect();
        let i = Interface::new(&HostInterfaceConfig { extra_write_disconnect: Some(extra), ..config() }, None, "i").unwrap();
        // Positioning starts 0.6 + 0.25 after the command arrives …
        assert_eq!(i.write_overhead_ns, Some(850_000));
        // … the data 0.05 + 0.4 + 0.16 + 0.03 = 0.64 after the command processing, i.e.
        // 0.39 after positioning starts.
        assert_eq!(i.write_data_start(10_000_000), 10_390_000);
        // Completion: the second reselection ("other", 0.12) after the medium, not before the
        // second disconnection (0.13 after the data).
        assert_eq!(i.write_reconnect(11_000_000, 20_000_000), 20_120_000);
        assert_eq!(i.write_reconnect(11_000_000, 11_050_000), 11_250_000);
    }

    use std::sync::Arc;

    use crate::disk::{presets, Drive, DriveModel, DriveModelConfig, OpKind, RotationModel, SeekConfig, ZoneConfig};
    use crate::sim::{RngStream, StreamId};

    /// 6000 rpm (10 ms a revolution), 100 sectors a track (0.1 ms a sector), host interface
    /// 0.3 ms a sector: slower than the medium.
    const SECTOR: u64 = 100_000;
    const BUS: u64 = 300_000;
    const REV: u64 = 100 * SECTOR;

    fn drive(interface: Option<HostInterfaceConfig>) -> Drive {
        let mut cfg = DriveModelConfig::basic(
            6000.0,
            2,
            vec![ZoneConfig::new(50, 100)],
            SeekConfig::Formula { a_ms: 1.0, b_ms: 0.01, c_ms: 0.1 },
        );
        cfg.bus_sector_ms = 0.3;
        cfg.interface = interface;
        let model = Arc::new(DriveModel::new(&cfg, "drive.model").unwrap());
        Drive::new(model, RotationModel::Exact, RngStream::new(1, StreamId::Drive(0)))
    }

    fn free_reconnection(read_watermark: f64) -> HostInterfaceConfig {
        HostInterfaceConfig {
            read_watermark,
            read_disconnect_after_read_ms: 0.0,
            read_disconnect_after_write_ms: 0.0,
            write_disconnect_ms: 0.0,
            first_reselect_ms: 0.0,
            other_reselect_ms: 0.0,
            data_preparation_ms: 0.0,
            ..config()
        }
    }

    #[test]
    fn a_read_miss_sends_its_data_only_from_the_water_mark() {
        // Kept bus: the host gets sector j one bus time after it is read or after sector
        // j − 1, so the last leaves 10 bus times after the first is read.
        let kept = drive(None).service(0, 0, 10, OpKind::Read);
        assert_eq!((kept.rotation, kept.transfer, kept.bus), (0, 10 * SECTOR, SECTOR + 10 * BUS - 10 * SECTOR));
        // Water mark 0 and free reconnection: the same timing.
        assert_eq!(drive(Some(free_reconnection(0.0))).service(0, 0, 10, OpKind::Read), kept);
        // Water mark 1: nothing moves before the last sector is read, 9 sectors later.
        let whole = drive(Some(free_reconnection(1.0))).service(0, 0, 10, OpKind::Read);
        assert_eq!((whole.rotation, whole.transfer, whole.bus), (0, 10 * SECTOR, 10 * BUS));
        assert_eq!(whole.total() - kept.total(), 9 * SECTOR);
        // Water mark 0.45 (⌈4.5⌉ = 5 sectors), reselection 0.16 and data preparation 0.03:
        // the transfer starts 0.19 ms after the 5th sector is read, 4 sectors after the first.
        let cfg = HostInterfaceConfig { read_watermark: 0.45, read_disconnect_after_read_ms: 0.02, ..config() };
        let partial = drive(Some(cfg)).service(0, 0, 10, OpKind::Read);
        assert_eq!(partial.total() - kept.total(), 4 * SECTOR + 190_000);
        // The mechanical parts are the same in every case.
        for s in [whole, partial] {
            assert_eq!((s.overhead, s.seek, s.rotation, s.transfer), (kept.overhead, kept.seek, kept.rotation, kept.transfer));
        }
    }

    #[test]
    fn a_write_reselects_once_the_medium_is_done() {
        // Plenty of rotational wait (sector 50 from phase 0): the data is in long before.
        let kept = drive(None).service(0, 50, 1, OpKind::Write);
        let cfg = HostInterfaceConfig { write_disconnect_ms: 0.1, first_reselect_ms: 0.16, ..config() };
        let reselected = drive(Some(cfg)).service(0, 50, 1, OpKind::Write);
        assert_eq!((kept.rotation, kept.bus), (50 * SECTOR, 0));
        assert_eq!(reselected.total() - kept.total(), 160_000);
        assert_eq!(reselected.bus, 160_000);
    }

    #[test]
    fn an_extra_write_disconnect_moves_positioning_and_data() {
        let extra = extra_write_disconnect();
        let cfg = HostInterfaceConfig { extra_write_disconnect: Some(extra), ..config() };
        let mut d = drive(Some(cfg));
        // Sector 20 on the first track: positioning starts at 0.85 ms (no movement), the
        // data starts 0.39 ms later (1.24 ms) and sector 20's data is in at 1.54 ms, before
        // the sector comes under the head (2.0 ms); done at 2.1 ms, the second reselection
        // ("other", 0.12) follows.
        let s = d.service(0, 20, 1, OpKind::Write);
        assert_eq!((s.overhead, s.seek, s.rotation, s.transfer, s.bus), (850_000, 0, 1_150_000, SECTOR, 120_000));
        // Reads keep the read-miss overheads (0 here) and the first reselection.
        let r = d.service(10 * REV, 0, 1, OpKind::Read);
        assert_eq!(r.overhead, 0);
    }

    #[test]
    fn reads_and_writes_cross_the_bus_at_their_own_speeds() {
        let mut cfg = presets::preset("ibm18es").unwrap();
        cfg.bus_sector_ms = 0.1;
        cfg.bus_sector_write_ms = Some(0.2);
        let cache = cfg.cache.clone().unwrap();
        let model = Arc::new(DriveModel::new(&cfg, "drive.model").unwrap());
        let mut d = Drive::new(model, RotationModel::Exact, RngStream::new(1, StreamId::Drive(0)));
        // A write-back write: the write-hit overhead and 8 sectors at 0.2 ms.
        let w = d.service(0, 1000, 8, OpKind::Write);
        assert_eq!((w.bus, w.overhead), (1_600_000, crate::sim::ms_to_ns(cache.write_hit_after_read_ms)));
        // A read, then the next sectors after it and its read-ahead are done: a hit, 8
        // sectors at 0.1 ms.
        let miss = d.service(100_000_000, 500_000, 8, OpKind::Read);
        assert!(miss.seek + miss.rotation > 0);
        let hit = d.service(200_000_000, 500_008, 8, OpKind::Read);
        assert_eq!((hit.seek, hit.rotation, hit.transfer, hit.bus), (0, 0, 0, 800_000));
    }

    #[test]
    fn bad_values_name_their_key() {
        let err = |cfg: HostInterfaceConfig, segment: Option<u32>| match Interface::new(&cfg, segment, "drive.model.interface") {
            Err(Error::Config { key, .. }) => key,
            other => panic!("expected a config error, got {other:?}"),
        };
        assert_eq!(err(HostInterfaceConfig { read_watermark: 1.5, ..config() }, None), "drive.model.interface.read_watermark");
        assert_eq!(
            err(HostInterfaceConfig { first_reselect_ms: -0.1, ..config() }, None),
            "drive.model.interface.first_reselect_ms"
        );
        assert_eq!(
            err(HostInterfaceConfig { read_watermark_of: WatermarkBase::Segment, ..config() }, None),
            "drive.model.interface.read_watermark_of"
        );
    }
}
