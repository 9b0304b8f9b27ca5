//! A hardware RAID controller's rebuild rate (`rebuild-controls.md` §2.4): Broadcom/LSI
//! MegaRAID and Dell PERC `storcli /cX set rebuildrate=<0-100>` (MegaCLI `-AdpSetProp
//! RebuildRate`), "% of controller resources for rebuild", default **30 %**; Dell
//! OpenManage: "At 0% … lowest priority … does not mean that the background initialization
//! is stopped".
//!
//! raidlab reads the rate as a work-conserving time share at each drive **[inference]**: when
//! user and rebuild work both wait, the rebuild gets `rebuild_rate_percent` % of the drive's
//! time and the user the rest; when either is alone it has the whole drive (so at 0 % the
//! rebuild still runs, at the lowest priority). This discipline hands the engine a
//! [`TimeShare`] class discipline for every drive and lets every rebuild op into the queue at
//! once, at the background class; the executor decides how many wait there.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Discipline;
use crate::disk::scheduler::classes::TimeShare;
use crate::disk::scheduler::{ClassDiscipline, MakeScheduler};
use crate::disk::Priority;
use crate::error::{Error, Result};
use crate::rebuild::RebuildConfig;

pub const DOC: &str = "hardware RAID rebuild rate: the rebuild's share of drive time (%) when user work waits too; the whole drive when alone";

/// A hardware controller's rebuild rate (`[rebuild.hw_rate]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HwRateConfig {
    /// The rebuild's share of each drive's time while user work waits too, % (0–100;
    /// MegaRAID's default 30).
    #[serde(default = "default_percent")]
    pub rebuild_rate_percent: f64,
}

fn default_percent() -> f64 {
    30.0
}

impl Default for HwRateConfig {
    fn default() -> Self {
        HwRateConfig {
            rebuild_rate_percent: default_percent(),
        }
    }
}

impl HwRateConfig {
    /// Errors name the key.
    pub fn validate(&self) -> Result<()> {
        let p = self.rebuild_rate_percent;
        if !(p.is_finite() && (0.0..=100.0).contains(&p)) {
            return Err(Error::config(
                "rebuild.hw_rate.rebuild_rate_percent",
                format!("must be a percentage from 0 to 100, not {p}"),
            ));
        }
        Ok(())
    }
}

/// The rebuild rate as a time share.
pub struct HwRate {
    percent: f64,
}

impl HwRate {
    pub fn boxed(config: &RebuildConfig, _slots: u32) -> Box<dyn Discipline> {
        Box::new(HwRate {
            percent: config
                .hw_rate
                .clone()
                .unwrap_or_default()
                .rebuild_rate_percent,
        })
    }
}

impl Discipline for HwRate {
    fn priority(&self) -> Priority {
        Priority::Background
    }

    fn class_discipline(&self, scheduler: MakeScheduler) -> Option<Box<dyn ClassDiscipline>> {
        Some(Box::new(TimeShare::new(scheduler, self.percent)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_rates_name_their_key() {
        for text in ["rebuild_rate_percent = -1", "rebuild_rate_percent = 101"] {
            let config: RebuildConfig =
                toml::from_str(&format!("discipline = \"hw_rate\"\n[hw_rate]\n{text}")).unwrap();
            let e = config.validate().unwrap_err().to_string();
            assert!(
                e.starts_with("rebuild.hw_rate.rebuild_rate_percent"),
                "{text}: {e}"
            );
        }
        let config: RebuildConfig = toml::from_str("discipline = \"md\"\n[hw_rate]\n").unwrap();
        assert!(config
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("rebuild.hw_rate:"));
    }
}
