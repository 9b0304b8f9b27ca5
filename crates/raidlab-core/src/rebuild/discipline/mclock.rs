//! Ceph's mClock scheduler between client I/O and background recovery
//! (`rebuild-controls.md` §2.3; Ceph `doc/rados/configuration/mclock-config-ref.rst`,
//! `src/common/options/osd.yaml.in`). Each class has a reservation (a floor), a weight (a
//! share of the rest) and a limit (a ceiling), the first and last as fractions of the OSD's
//! capacity `osd_mclock_max_capacity_iops` (HDD default 315). The built-in profiles:
//!
//! | profile | client R / W / L | background recovery R / W / L |
//! |---|---|---|
//! | `balanced` (default) | 50 % / 1 / MAX | 50 % / 1 / MAX |
//! | `high_client_ops` | 60 % / 2 / MAX | 40 % / 1 / MAX |
//! | `high_recovery_ops` | 30 % / 1 / MAX | 70 % / 2 / MAX |
//! | `custom` | `osd_mclock_scheduler_client_{res,wgt,lim}` (defaults 0 / 1 / 0) | `…_background_recovery_{res,wgt,lim}` |
//!
//! (0 reservation: none; 0 limit: unlimited.) The sharing happens at each drive (an OSD is
//! one drive): this discipline hands the engine an mClock class discipline
//! ([`MclockClasses`]) for every drive queue, with the user class as the client and the
//! rebuild class as background recovery, and lets every rebuild op into the queue at once,
//! at the background class. How many recovery ops wait there is the executor's: Ceph keeps
//! `osd_recovery_max_active_hdd = 3` per OSD, which `executor = "sor"` with
//! `parallel_units = 3` stands for. Best-effort work (backfill, scrub) and the WPQ-era sleeps
//! are not modelled.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{non_negative, Discipline};
use crate::disk::scheduler::classes::mclock::{ClassQos, MclockClasses, MclockParams};
use crate::disk::scheduler::{ClassDiscipline, MakeScheduler};
use crate::disk::Priority;
use crate::error::{Error, Result};
use crate::rebuild::RebuildConfig;

pub const DOC: &str = "Ceph mClock: client vs recovery reservation, weight and limit at each drive (profiles balanced, high_client_ops, high_recovery_ops, custom)";

/// Ceph's mClock (`[rebuild.mclock]`; `rebuild-controls.md` §2.3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MclockConfig {
    /// `osd_mclock_profile`: `balanced` (Ceph's default), `high_client_ops`,
    /// `high_recovery_ops` or `custom` (the six keys below).
    #[serde(default = "default_profile")]
    pub profile: String,
    /// `osd_mclock_max_capacity_iops_hdd`: the drive's capacity in 4 KiB I/Os per second that
    /// reservations and limits are fractions of (Ceph's HDD default 315; SSD 21500).
    #[serde(default = "default_capacity")]
    pub capacity_iops: f64,
    /// `osd_mclock_max_sequential_bandwidth_hdd`, MiB/s (default 150): with the capacity, the
    /// bytes one I/O unit covers; a larger op costs proportionally more.
    #[serde(default = "default_bandwidth")]
    pub sequential_bandwidth_mib_s: f64,
    /// `custom`: the client's reservation, a fraction 0–1 of the capacity (0: none; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_reservation: Option<f64>,
    /// `custom`: the client's weight (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_weight: Option<f64>,
    /// `custom`: the client's limit, a fraction 0–1 of the capacity (0: unlimited; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_limit: Option<f64>,
    /// `custom`: background recovery's reservation (fraction; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_reservation: Option<f64>,
    /// `custom`: background recovery's weight (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_weight: Option<f64>,
    /// `custom`: background recovery's limit (fraction; 0: unlimited; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_limit: Option<f64>,
}

fn default_profile() -> String {
    "balanced".into()
}
fn default_capacity() -> f64 {
    315.0
}
fn default_bandwidth() -> f64 {
    150.0
}

impl Default for MclockConfig {
    fn default() -> Self {
        toml::from_str("").expect("every key has a default")
    }
}

/// One class's reservation, weight and limit as fractions of the capacity (limit `None`:
/// MAX).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    pub reservation: f64,
    pub weight: f64,
    pub limit: Option<f64>,
}

const fn share(reservation: f64, weight: f64) -> Share {
    Share {
        reservation,
        weight,
        limit: None,
    }
}

/// The built-in profiles: (name, client, background recovery), §2.3's table.
pub const PROFILES: &[(&str, Share, Share)] = &[
    ("balanced", share(0.5, 1.0), share(0.5, 1.0)),
    ("high_client_ops", share(0.6, 2.0), share(0.4, 1.0)),
    ("high_recovery_ops", share(0.3, 1.0), share(0.7, 2.0)),
];

impl MclockConfig {
    /// Errors name the key under `rebuild.mclock.`.
    pub fn validate(&self) -> Result<()> {
        let custom = self.profile == "custom";
        if !custom && !PROFILES.iter().any(|(name, _, _)| *name == self.profile) {
            return Err(Error::config(
                "rebuild.mclock.profile",
                format!("unknown profile {:?}; known profiles: balanced, high_client_ops, high_recovery_ops, custom", self.profile),
            ));
        }
        for (key, value) in self.custom_keys() {
            let Some(v) = value else { continue };
            let key = format!("rebuild.mclock.{key}");
            if !custom {
                return Err(Error::config(
                    key,
                    format!("only the `custom` profile takes it, not {:?}", self.profile),
                ));
            }
            if key.ends_with("weight") {
                if !(v.is_finite() && v > 0.0) {
                    return Err(Error::config(
                        key,
                        format!("must be a positive weight, not {v}"),
                    ));
                }
            } else if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(Error::config(
                    key,
                    format!("must be a fraction of the capacity from 0 to 1, not {v}"),
                ));
            }
        }
        if custom {
            let (client, recovery) = self.shares();
            for (class, s) in [("client", client), ("recovery", recovery)] {
                if let Some(limit) = s.limit {
                    if s.reservation > limit {
                        return Err(Error::config(
                            format!("rebuild.mclock.{class}_reservation"),
                            format!("{} is more than {class}_limit = {limit}", s.reservation),
                        ));
                    }
                }
            }
        }
        for (key, value, unit) in [
            ("capacity_iops", self.capacity_iops, "I/Os per second"),
            (
                "sequential_bandwidth_mib_s",
                self.sequential_bandwidth_mib_s,
                "MiB/s",
            ),
        ] {
            non_negative(&format!("rebuild.mclock.{key}"), value, unit)?;
            if value == 0.0 {
                return Err(Error::config(
                    format!("rebuild.mclock.{key}"),
                    format!("must be more than 0 {unit}"),
                ));
            }
        }
        Ok(())
    }

    fn custom_keys(&self) -> [(&'static str, Option<f64>); 6] {
        [
            ("client_reservation", self.client_reservation),
            ("client_weight", self.client_weight),
            ("client_limit", self.client_limit),
            ("recovery_reservation", self.recovery_reservation),
            ("recovery_weight", self.recovery_weight),
            ("recovery_limit", self.recovery_limit),
        ]
    }

    /// The client's and background recovery's shares under the profile.
    pub fn shares(&self) -> (Share, Share) {
        if let Some(&(_, client, recovery)) =
            PROFILES.iter().find(|(name, _, _)| *name == self.profile)
        {
            return (client, recovery);
        }
        let limit = |l: Option<f64>| l.filter(|&l| l > 0.0);
        (
            Share {
                reservation: self.client_reservation.unwrap_or(0.0),
                weight: self.client_weight.unwrap_or(1.0),
                limit: limit(self.client_limit),
            },
            Share {
                reservation: self.recovery_reservation.unwrap_or(0.0),
                weight: self.recovery_weight.unwrap_or(1.0),
                limit: limit(self.recovery_limit),
            },
        )
    }

    /// The drive queue's parameters: fractions turned into I/Os per second.
    pub fn params(&self) -> MclockParams {
        let (client, recovery) = self.shares();
        let qos = |s: Share| ClassQos {
            reservation_per_s: s.reservation * self.capacity_iops,
            weight: s.weight,
            limit_per_s: s.limit.map(|l| l * self.capacity_iops),
        };
        MclockParams {
            client: qos(client),
            recovery: qos(recovery),
            bytes_per_io: self.sequential_bandwidth_mib_s * 1024.0 * 1024.0 / self.capacity_iops,
        }
    }
}

/// Ceph's mClock, as a rebuild discipline.
pub struct Mclock {
    params: MclockParams,
}

impl Mclock {
    pub fn boxed(config: &RebuildConfig, _slots: u32) -> Box<dyn Discipline> {
        Box::new(Mclock {
            params: config.mclock.clone().unwrap_or_default().params(),
        })
    }
}

impl Discipline for Mclock {
    fn priority(&self) -> Priority {
        Priority::Background
    }

    fn class_discipline(&self, scheduler: MakeScheduler) -> Option<Box<dyn ClassDiscipline>> {
        Some(Box::new(MclockClasses::new(scheduler, self.params)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_turn_into_rates_of_the_capacity() {
        let config: MclockConfig =
            toml::from_str("profile = \"high_client_ops\"\ncapacity_iops = 200").unwrap();
        config.validate().unwrap();
        let p = config.params();
        assert_eq!(p.client.reservation_per_s, 120.0);
        assert_eq!(p.client.weight, 2.0);
        assert_eq!(p.recovery.reservation_per_s, 80.0);
        assert_eq!(p.recovery.limit_per_s, None);
        let custom: MclockConfig =
            toml::from_str("profile = \"custom\"\nrecovery_limit = 0.25\nclient_reservation = 0.1")
                .unwrap();
        custom.validate().unwrap();
        let p = custom.params();
        assert_eq!(p.recovery.limit_per_s, Some(78.75));
        assert_eq!(p.client.limit_per_s, None, "0 is unlimited");
        assert_eq!(p.recovery.weight, 1.0);
    }

    #[test]
    fn bad_settings_name_their_key() {
        for (text, key) in [
            ("profile = \"fast\"", "rebuild.mclock.profile"),
            ("recovery_weight = 2", "rebuild.mclock.recovery_weight"),
            (
                "profile = \"custom\"\nclient_limit = -0.5",
                "rebuild.mclock.client_limit",
            ),
            (
                "profile = \"custom\"\nrecovery_reservation = 0.5\nrecovery_limit = 0.2",
                "rebuild.mclock.recovery_reservation",
            ),
            (
                "profile = \"custom\"\nclient_weight = 0",
                "rebuild.mclock.client_weight",
            ),
            ("capacity_iops = -315", "rebuild.mclock.capacity_iops"),
        ] {
            let config: RebuildConfig =
                toml::from_str(&format!("discipline = \"mclock\"\n[mclock]\n{text}")).unwrap();
            let e = config.validate().unwrap_err().to_string();
            assert!(e.starts_with(key), "{text}: {e}");
        }
    }
}
