//! The policy catalogue: every registry of named alternatives in one listing.
//!
//! Each policy family (drive presets, layouts, queue disciplines, trace formats, rebuild
//! executors, …) keeps its own registry table next to its code, one line per policy. This
//! module reads those tables — it never repeats a name — so that `raidlab list` and the
//! generated `docs/catalogue.md` show exactly what a configuration can name.
//!
//! ```text
//!  disk/presets.rs PRESETS ───────────┐
//!  layout/mod.rs LAYOUTS ─────────────┤
//!  disk/scheduler SCHEDULERS, …  ─────┼──▶ catalogue() ──▶ binding policy_catalogue()
//!  workload/trace TRACE_FORMATS ──────┤                       ├─▶ raidlab list
//!  rebuild/{executor,order,           │                       └─▶ make docs: docs/catalogue.md
//!          discipline} registries ────┘
//! ```
//!
//! Adding a *family* (caches, log-RAID variants) is one line in [`catalogue`]; adding a
//! policy to a family needs nothing here.

use crate::cache;
use crate::disk::presets;
use crate::disk::scheduler::{self, classes};
use crate::layout;
use crate::rebuild::{discipline, executor, order};
use crate::workload::trace;

/// One named alternative of a family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueEntry {
    /// The name a configuration uses.
    pub name: &'static str,
    /// One line: what it is.
    pub doc: &'static str,
}

/// One registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// Identifier of the family (`layouts`, `rebuild_orders`), for `raidlab list FAMILY`.
    pub name: &'static str,
    /// Heading for people (`Layouts`).
    pub title: &'static str,
    /// The configuration key that names one of its entries (`array.layout`), or `None` when
    /// the family is not chosen in a configuration (yet).
    pub config_key: Option<&'static str>,
    /// Its entries, in the registry's (documentation) order.
    pub entries: Vec<CatalogueEntry>,
}

fn family(
    name: &'static str,
    title: &'static str,
    config_key: Option<&'static str>,
    entries: impl IntoIterator<Item = (&'static str, &'static str)>,
) -> Family {
    Family {
        name,
        title,
        config_key,
        entries: entries.into_iter().map(|(name, doc)| CatalogueEntry { name, doc }).collect(),
    }
}

/// Every registry, each read from its table, in the order the docs list them.
pub fn catalogue() -> Vec<Family> {
    vec![
        family(
            "presets",
            "Drive presets",
            Some("drive.preset"),
            presets::PRESETS.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "layouts",
            "Layouts",
            Some("array.layout"),
            layout::LAYOUTS.iter().map(|e| (e.name, e.doc)),
        ),
        family(
            "schedulers",
            "Drive queue disciplines",
            Some("drive.scheduler"),
            scheduler::SCHEDULERS.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "class_disciplines",
            "Priority-class disciplines (user vs background work in a drive queue)",
            Some("drive.classes"),
            classes::CLASS_DISCIPLINES.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "trace_formats",
            "Trace formats",
            Some("workload.trace.format"),
            trace::trace_formats(),
        ),
        family(
            "rebuild_executors",
            "Rebuild executors",
            Some("rebuild.executor"),
            executor::EXECUTORS.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "rebuild_orders",
            "Rebuild orders",
            Some("rebuild.order"),
            order::ORDERS.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "rebuild_disciplines",
            "Rebuild disciplines",
            Some("rebuild.discipline"),
            discipline::DISCIPLINES.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "caches",
            "Buffer cache policies (also raidlab cache --policy)",
            Some("cache.policy"),
            cache::CACHES.iter().map(|entry| (entry.name, entry.doc)),
        ),
        family(
            "log_schemes",
            "Log-assisted RAID-5 write schemes (a `[log]` table)",
            Some("log.scheme"),
            crate::log::SCHEMES.iter().map(|entry| (entry.name, entry.doc)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_family_has_unique_names_and_one_line_docs() {
        let families = catalogue();
        let mut family_names = HashSet::new();
        for family in &families {
            assert!(family_names.insert(family.name), "family {} listed twice", family.name);
            assert!(!family.entries.is_empty(), "family {} is empty", family.name);
            let mut names = HashSet::new();
            for entry in &family.entries {
                assert!(names.insert(entry.name), "{}: {} listed twice", family.name, entry.name);
                assert!(!entry.doc.trim().is_empty(), "{}: {} has no doc", family.name, entry.name);
                assert!(!entry.doc.contains('\n'), "{}: {}'s doc is not one line", family.name, entry.name);
            }
        }
    }

    #[test]
    fn the_catalogue_lists_what_each_registry_resolves() {
        let families = catalogue();
        let names = |family: &str| -> Vec<&'static str> {
            let found = families.iter().find(|f| f.name == family).expect(family);
            found.entries.iter().map(|entry| entry.name).collect()
        };
        assert_eq!(names("presets"), presets::names().to_vec());
        assert_eq!(names("schedulers"), scheduler::names());
        assert_eq!(names("class_disciplines"), classes::names());
        assert_eq!(names("rebuild_executors"), executor::names());
        assert_eq!(names("rebuild_orders"), order::names());
        assert_eq!(names("rebuild_disciplines"), discipline::names());
        assert_eq!(names("caches"), cache::names());
        for name in names("presets") {
            assert!(presets::preset(name).is_some(), "preset {name} does not build");
        }
        for name in names("schedulers") {
            assert!(scheduler::make(name).is_some(), "scheduler {name} does not build");
        }
        for name in names("rebuild_orders") {
            assert!(order::entry(name).is_some());
        }
        let formats: Vec<&str> = trace::trace_formats().map(|(name, _)| name).collect();
        assert_eq!(names("trace_formats"), formats);
        let layouts: Vec<&str> = layout::LAYOUTS.iter().map(|e| e.name).collect();
        assert_eq!(names("layouts"), layouts);
    }
}
