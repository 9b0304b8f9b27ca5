//! From a parsed DiskSim tree to raidlab's [`DriveModelConfig`], the cache parameters kept
//! for later, and a warning for every parameter raidlab does not model.
//!
//! Which drive: the only `disksim_disk` block (or the only instantiated one), whose `Model` is
//! a `dm_disk` block (nested, sourced, or named); a file with no `disksim_disk` but one
//! `dm_disk` block (a `.model` file) gives the mechanism and layout alone. The
//! buses and controllers on the drive's path in the `topology` contribute their block
//! transfer times to the host-interface time. Every other block (global, stats, driver,
//! logical organisation, process flow, synthetic workload) describes the host or the
//! workload: each gets one warning naming it.
//!
//! Parameter by parameter, the mapping and its DiskSim definitions are in `docs/drives.md`.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::Path;

use super::parser::{parse_seek_file, Block, Location, Node, SpecTree, TopologyNode, Value};
use super::{DiskCacheSpec, DiskSpec};
use crate::disk::geometry::{MAX_CYLINDERS, MAX_SURFACES};
use crate::disk::mechanics::MAX_DURATION_MS;
use crate::disk::{
    DriveCacheConfig, DriveModelConfig, ExtraWriteDisconnectConfig, HostInterfaceConfig, PrefetchMode, WatermarkBase, Geometry, RotationModel, SeekConfig, SeekSegment, SparingConfig, TrackOrder, ZoneConfig,
};
use crate::error::{readable, Error, Result};

/// Note attached to the warnings of cache parameters.
const CACHE_NOTE: &str = "kept in DiskSpec.cache: not modelled by raidlab's drive cache";

/// How a parameter was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Unused,
    Modelled,
    Kept(&'static str),
}

/// A block's parameters with a record of which ones the conversion used, so that every
/// parameter left over can be reported.
struct Fields<'a> {
    block: &'a Block,
    uses: Vec<Cell<Use>>,
}

impl<'a> Fields<'a> {
    fn new(block: &'a Block) -> Result<Self> {
        let mut first: HashMap<&str, &Location> = HashMap::new();
        for p in &block.params {
            if let Some(earlier) = first.insert(p.key.as_str(), &p.location) {
                return Err(p.location.error(format!(
                    "`{}` is given twice in `{}` (first at line {})",
                    p.key,
                    block.title(),
                    earlier.line
                )));
            }
        }
        Ok(Fields { block, uses: block.params.iter().map(|_| Cell::new(Use::Unused)).collect() })
    }

    /// The value of `key`, without recording a use (for [`Origins`]).
    fn find(&self, key: &str) -> Option<&'a Node> {
        self.block.params.iter().find(|p| p.key == key).map(|p| &p.value)
    }

    fn mark(&self, key: &str, how: Use) -> Option<&'a Node> {
        let i = self.block.params.iter().position(|p| p.key == key)?;
        self.uses[i].set(how);
        Some(&self.block.params[i].value)
    }

    /// The value of `key`, which raidlab models.
    fn get(&self, key: &str) -> Option<&'a Node> {
        self.mark(key, Use::Modelled)
    }

    /// The value of `key`, kept but not modelled: reported with `note`.
    fn keep(&self, key: &str, note: &'static str) -> Option<&'a Node> {
        self.mark(key, Use::Kept(note))
    }

    fn missing(&self, key: &str) -> Error {
        self.block.location.error(format!("`{}` lacks the required parameter `{key}`", self.block.title()))
    }

    fn require(&self, key: &str) -> Result<&'a Node> {
        self.get(key).ok_or_else(|| self.missing(key))
    }

    fn number_of(node: &Node, key: &str) -> Result<f64> {
        node.as_f64().ok_or_else(|| node.location.error(format!("bad number `{}` for `{key}`", node.brief())))
    }

    fn require_number(&self, key: &str) -> Result<f64> {
        Self::number_of(self.require(key)?, key)
    }

    /// A number that must be finite and not negative (a time, a count).
    fn non_negative(node: &Node, key: &str) -> Result<f64> {
        let x = Self::number_of(node, key)?;
        if x < 0.0 {
            return Err(node.location.error(format!("`{key}` must not be negative, got {}", readable(x))));
        }
        Ok(x)
    }

    /// A whole number ≥ 0.
    fn whole(node: &Node, key: &str) -> Result<u64> {
        let x = Self::non_negative(node, key)?;
        if x.fract() != 0.0 || x > 9.0e15 {
            return Err(node.location.error(format!("bad number `{}` for `{key}`: expected a whole number", node.brief())));
        }
        Ok(x as u64)
    }

    fn require_whole(&self, key: &str) -> Result<u64> {
        Self::whole(self.require(key)?, key)
    }

    fn require_u32(&self, key: &str) -> Result<u32> {
        let node = self.require(key)?;
        u32::try_from(Self::whole(node, key)?)
            .map_err(|_| node.location.error(format!("`{key}` = {} is too large", node.brief())))
    }

    /// A non-negative time in ms, 0 when absent.
    fn ms(&self, key: &str) -> Result<f64> {
        self.scaled_ms(key, 1.0)
    }

    /// A non-negative time in ms multiplied by `scale` ("Time scale for overheads"), 0 when
    /// absent; above raidlab's bound is an error at the parameter.
    fn scaled_ms(&self, key: &str, scale: f64) -> Result<f64> {
        match self.get(key) {
            None => Ok(0.0),
            Some(node) => Self::duration(node, key, Self::non_negative(node, key)? * scale),
        }
    }

    /// `ms`, the time `node` gives (after any time scale), if it is within
    /// [`MAX_DURATION_MS`]. The drive model rejects longer ones too, and the conversion's
    /// origins would put that error at this line; checked here, the message can say that a
    /// time scale multiplied the value given.
    fn duration(node: &Node, key: &str, ms: f64) -> Result<f64> {
        if ms <= MAX_DURATION_MS {
            return Ok(ms);
        }
        Err(node.location.error(format!(
            "`{key}` gives {ms:e} ms (after any time scale); raidlab accepts at most {MAX_DURATION_MS} ms"
        )))
    }

    fn text(&self, key: &str) -> Result<Option<(&'a str, &'a Location)>> {
        match self.get(key) {
            None => Ok(None),
            Some(Node { value: Value::Text(t), location }) => Ok(Some((t.as_str(), location))),
            Some(n) => Err(n.location.error(format!("`{key}` must be a word, got `{}`", n.brief()))),
        }
    }

    fn require_text(&self, key: &str) -> Result<(&'a str, &'a Location)> {
        self.text(key)?.ok_or_else(|| self.missing(key))
    }

    fn require_block(&self, key: &str, type_name: &str) -> Result<&'a Block> {
        match self.require(key)? {
            Node { value: Value::Block(b), .. } if b.type_name == type_name => Ok(b),
            Node { value: Value::Block(b), location } => Err(location.error(format!(
                "`{key}` is a `{}` block; raidlab imports `{type_name}`",
                b.type_name
            ))),
            n => Err(n.location.error(format!("`{key}` must be a `{type_name}` block, got `{}`", n.brief()))),
        }
    }

    fn list(node: &'a Node, key: &str) -> Result<&'a [Node]> {
        match &node.value {
            Value::List(items) => Ok(items),
            _ => Err(node.location.error(format!("`{key}` must be a list `[ … ]`, got `{}`", node.brief()))),
        }
    }

    fn require_list(&self, key: &str) -> Result<&'a [Node]> {
        Self::list(self.require(key)?, key)
    }

    /// Kept cache flag (0/1) or count.
    fn kept_u32(&self, key: &str) -> Result<u32> {
        match self.keep(key, CACHE_NOTE) {
            None => Ok(0),
            Some(n) => u32::try_from(Self::whole(n, key)?).map_err(|_| n.location.error(format!("`{key}` is too large"))),
        }
    }

    /// A cache parameter the cache model uses when `modelled(value)` holds; otherwise it
    /// is kept and reported.
    fn cache_u32(&self, key: &str, modelled: impl Fn(u32) -> bool) -> Result<u32> {
        let value = self.kept_u32(key)?;
        if modelled(value) {
            self.mark(key, Use::Modelled);
        }
        Ok(value)
    }

    /// A cache time in ms the cache model uses, multiplied by `scale`.
    fn cache_ms(&self, key: &str, scale: f64) -> Result<f64> {
        let value = self.kept_number(key)? * scale;
        match self.mark(key, Use::Modelled) {
            Some(node) => Self::duration(node, key, value),
            None => Ok(value),
        }
    }

    fn kept_flag(&self, key: &str) -> Result<bool> {
        Ok(self.kept_u32(key)? != 0)
    }

    fn kept_number(&self, key: &str) -> Result<f64> {
        self.keep(key, CACHE_NOTE).map(|n| Self::non_negative(n, key)).transpose().map(|x| x.unwrap_or(0.0))
    }

    /// A warning for every parameter not modelled; `note` explains leftovers by key.
    fn report(&self, note: impl Fn(&str) -> &'static str, warnings: &mut Vec<String>) {
        for (p, used) in self.block.params.iter().zip(&self.uses) {
            let why = match used.get() {
                Use::Modelled => continue,
                Use::Kept(why) => why,
                Use::Unused => note(&p.key),
            };
            warnings.push(format!("{}: {}: `{} = {}` {why}", p.location, self.block.title(), p.key, p.value.brief()));
        }
    }
}

/// The config key under which the converted drive is validated, and which its errors name.
const MODEL_KEY: &str = "drive.model";

/// A DiskSim parameter or block a converted config key came from.
struct Origin {
    location: Location,
    /// For messages: "`Rotation speed (in rpms)`", "the `dm_layout_g1_zone` block".
    what: String,
}

/// Where each converted config key came from (`drive.model.rpm` from `Rotation speed (in
/// rpms)`, `drive.model.zones[2]` from the third zone block). Some mistakes show only when
/// the converted drive is validated, and those errors name a config key: this table maps
/// the key back to the file and line of the DiskSim parameter that set it.
#[derive(Default)]
struct Origins {
    entries: Vec<(String, Origin)>,
}

impl Origins {
    /// `key` (relative to [`MODEL_KEY`]) came from `what`, written at `location`.
    fn set(&mut self, key: &str, what: String, location: &Location) {
        self.entries.push((format!("{MODEL_KEY}.{key}"), Origin { location: location.clone(), what }));
    }

    /// `key` (relative to [`MODEL_KEY`]) came from `block` as a whole.
    fn block(&mut self, key: &str, block: &Block) {
        self.set(key, format!("the `{}` block", block.title()), &block.location);
    }

    /// Each `(config key, DiskSim parameter)` pair whose parameter `f` holds: the key (under
    /// `prefix`, relative to [`MODEL_KEY`]) came from that parameter's value.
    fn params(&mut self, prefix: &str, f: &Fields, pairs: &[(&str, &str)]) {
        for &(key, parameter) in pairs {
            if let Some(node) = f.find(parameter) {
                let key = if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") };
                self.set(&key, format!("`{parameter}`"), &node.location);
            }
        }
    }

    /// The origin of `key`: that of the longest recorded key equal to it or enclosing it
    /// (`drive.model.zones[1]` encloses `drive.model.zones[1].slips[3]`).
    fn of(&self, key: &str) -> Option<&Origin> {
        let encloses = |recorded: &str| match key.strip_prefix(recorded) {
            Some(rest) => rest.is_empty() || rest.starts_with('.') || rest.starts_with('['),
            None => false,
        };
        self.entries
            .iter()
            .filter(|(recorded, _)| encloses(recorded))
            .max_by_key(|(recorded, _)| recorded.len())
            .map(|(_, origin)| origin)
    }

    /// An error from validating the converted drive as an `Error::Spec` at the parameter its
    /// key came from, keeping the key; at `fallback` (the `dm_disk` block) when no recorded
    /// key encloses it.
    fn spec_error(&self, error: Error, fallback: &Location) -> Error {
        match error {
            Error::Config { key, message } => match self.of(&key) {
                Some(origin) => origin
                    .location
                    .error(format!("the converted drive is invalid: {key} (from {}): {message}", origin.what)),
                None => fallback.error(format!("the converted drive is invalid: {key}: {message}")),
            },
            other => fallback.error(format!("the converted drive is invalid: {other}")),
        }
    }
}

/// Why a `disksim_disk` parameter raidlab does not read is not modelled (`never_disconnect`:
/// the drive's "Never disconnect" is 1, so its bus protocol parameters do not apply).
fn disk_note(key: &str, never_disconnect: bool) -> &'static str {
    const NEVER: &str = "not used: the drive never disconnects (`Never disconnect` = 1)";
    match key {
        "Scheduler" => "not modelled: raidlab's `drive.scheduler` orders the drive's queue",
        "Max queue length" => "not modelled: raidlab's drive queues are unbounded",
        "Print stats" => "not modelled: statistics output",
        "Avg sectors per cylinder" => "not modelled: a hint for DiskSim's external schedulers",
        "Hold bus entire write xfer" => "not modelled: a write's data never waits for buffer space",
        "Hold bus entire read xfer"
        | "Disconnect write if seek"
        | "Data preparation overhead"
        | "First reselect overhead"
        | "Other reselect overhead"
        | "Read disconnect afterread"
        | "Read disconnect afterwrite"
        | "Write disconnect overhead"
        | "Extra write disconnect"
            if never_disconnect =>
        {
            NEVER
        }
        "Hold bus entire read xfer" => {
            "not modelled: once reconnected for a read, raidlab's drive keeps the bus to the end of the transfer"
        }
        "Disconnect write if seek" => "not modelled: a write disconnects once its data is in, seeking or not",
        "Extradisc command overhead"
        | "Extradisc disconnect overhead"
        | "Extradisc inter-disconnect delay"
        | "Extradisc 2nd disconnect overhead"
        | "Extradisc seek delta" => {
            if never_disconnect {
                NEVER
            } else {
                "not used: `Extra write disconnect` = 0"
            }
        }
        "Preseeking level" => "not modelled: the arm does not move before a command completes",
        "Minimum seek delay" => "not modelled: no minimum media delay for writes",
        _ => "not modelled by raidlab",
    }
}

fn mech_note(key: &str) -> &'static str {
    match key {
        "Single cylinder seek time" | "Full strobe seek time" | "Average seek time" | "Constant seek time"
        | "HPL seek equation values" | "First ten seek times" | "Full seek curve" => "not used by this drive's seek type",
        "Percent error in rpms" => "not modelled: every drive turns at exactly the given speed",
        _ => "not modelled by raidlab",
    }
}

fn plain_note(_: &str) -> &'static str {
    "not modelled by raidlab"
}

/// Convert a parsed parameter file (read from `path`) into a drive.
pub fn convert(tree: &SpecTree, path: &Path) -> Result<DiskSpec> {
    let mut warnings = Vec::new();
    let disks: Vec<&Block> = tree.blocks.iter().filter(|b| b.type_name == "disksim_disk").collect();
    let disk = match disks.len() {
        0 => None,
        1 => Some(disks[0]),
        _ => {
            let instantiated: Vec<&Block> = disks
                .iter()
                .copied()
                .filter(|b| tree.instantiations.iter().any(|i| Some(&i.block) == b.name.as_ref()))
                .collect();
            if instantiated.len() != 1 {
                let names: Vec<String> = disks.iter().map(|b| b.title()).collect();
                return Err(Error::Spec {
                    file: path.to_path_buf(),
                    line: 1,
                    message: format!(
                        "{} drives are defined ({}); raidlab imports one: give a file with one `disksim_disk`, or instantiate one",
                        disks.len(),
                        names.join(", ")
                    ),
                });
            }
            Some(instantiated[0])
        }
    };
    // The drive's fields, and its `dm_disk` block: nested in `Model`, a top-level block that
    // `Model` names, or a model file's only block.
    let disk_fields = disk.map(Fields::new).transpose()?;
    let model_block: &Block = match &disk_fields {
        Some(f) => match f.require("Model")? {
            Node { value: Value::Text(name), location } => tree
                .blocks
                .iter()
                .find(|b| b.type_name == "dm_disk" && b.name.as_deref() == Some(name.as_str()))
                .ok_or_else(|| location.error(format!("`Model = {name}` names no `dm_disk` block")))?,
            _ => f.require_block("Model", "dm_disk")?,
        },
        None => {
            let models: Vec<&Block> = tree.blocks.iter().filter(|b| b.type_name == "dm_disk").collect();
            if models.len() != 1 {
                return Err(Error::Spec {
                    file: path.to_path_buf(),
                    line: 1,
                    message: format!(
                        "expected one `disksim_disk` block, or one `dm_disk` block in a model file; found {} `dm_disk` blocks",
                        models.len()
                    ),
                });
            }
            models[0]
        }
    };
    let path_blocks = match disk {
        Some(d) => components_on_path(tree, d, &mut warnings),
        None => Vec::new(),
    };
    // Blocks that are neither the drive nor on its path.
    for b in &tree.blocks {
        let is_drive = disk.is_some_and(|d| std::ptr::eq(d, b)) || std::ptr::eq(model_block, b);
        if is_drive || path_blocks.iter().any(|p| std::ptr::eq(*p, b)) {
            continue;
        }
        let what = match b.type_name.as_str() {
            "disksim_disk" | "dm_disk" | "disksim_simpledisk" => "is another device, not the imported drive",
            "disksim_bus" | "disksim_ctlr" => "is not on the imported drive's path in the topology",
            _ => "describes the host, the workload or the output, not the drive",
        };
        warnings.push(format!("{}: `{}` ({} parameters) {what}: not imported", b.location, b.title(), b.params.len()));
    }

    let mut origins = Origins::default();
    let (mut model, block_count, block_count_at) = convert_model(model_block, &mut origins, &mut warnings)?;
    let name = disk.unwrap_or(model_block).name.clone().unwrap_or_default();

    // Host interface: the slowest of the drive, controllers and buses on the path, each way.
    let mut bus_ms = 0.0f64;
    let mut bus_write_ms = 0.0f64;
    let mut cache = None;
    if let Some(f) = &disk_fields {
        let scale = match f.get("Time scale for overheads") {
            Some(n) => Fields::non_negative(n, "Time scale for overheads")?,
            None => 1.0,
        };
        model.command_overhead_ms = f.scaled_ms("Per-request overhead time", scale)?;
        model.read_after_read_overhead_ms = f.scaled_ms("Read miss over. after read", scale)?;
        model.read_after_write_overhead_ms = f.scaled_ms("Read miss over. after write", scale)?;
        model.write_after_read_overhead_ms = f.scaled_ms("Write miss over. after read", scale)?;
        model.write_after_write_overhead_ms = f.scaled_ms("Write miss over. after write", scale)?;
        model.read_completion_overhead_ms = f.scaled_ms("Read completion overhead", scale)?;
        model.write_completion_overhead_ms = f.scaled_ms("Write completion overhead", scale)?;
        bus_ms = bus_ms.max(f.ms("Bulk sector transfer time")?);
        bus_write_ms = bus_ms;
        let flag = |key: &str| -> Result<Option<bool>> {
            f.get(key).map(|n| Fields::whole(n, key).map(|v| v != 0)).transpose()
        };
        let immediate_read = flag("Immediate buffer read")?.unwrap_or(false);
        let immediate_write = flag("Immediate buffer write")?.unwrap_or(false);
        model.zero_latency = immediate_read;
        model.zero_latency_writes = (immediate_write != immediate_read).then_some(immediate_write);
        let all = |_: u32| true;
        let spec = DiskCacheSpec {
            enabled: f.cache_u32("Enable caching in buffer", |v| v != 0)? != 0,
            segments: f.cache_u32("Number of buffer segments", all)?,
            segment_sectors: f.cache_u32("Segment size (in blks)", all)?,
            write_segments: f.cache_u32("Maximum number of write segments", all)?,
            separate_write_segment: f.cache_u32("Use separate write segment", all)? != 0,
            fast_write_level: f.cache_u32("Fast write level", |v| v <= 2)?,
            combine_sequential_writes: f.cache_u32("Combine seq writes", all)? != 0,
            buffer_continuous_read: f.cache_u32("Buffer continuous read", |v| v <= 4)?,
            // Only no minimum read-ahead is modelled (every shipped drive has 0).
            read_ahead_min_sectors: f.cache_u32("Minimum read-ahead (blks)", |v| v == 0)?,
            read_ahead_max_sectors: f.cache_u32("Maximum read-ahead (blks)", all)?,
            read_ahead_over_requested: f.cache_u32("Read-ahead over requested", all)? != 0,
            read_ahead_on_idle_hit: f.cache_u32("Read-ahead on idle hit", all)? != 0,
            read_any_free_blocks: f.cache_u32("Read any free blocks", all)? != 0,
            stop_prefetch_in_sector: f.cache_u32("Stop prefetch in sector", all)? != 0,
            // raidlab's write-back always stops a read-ahead.
            write_hit_stop_prefetch: f.cache_u32("Write hit stop prefetch", |v| v != 0)? != 0,
            read_directly_to_buffer: f.kept_flag("Read directly to buffer")?,
            // raidlab always sends a partial hit's cached sectors at once.
            immediate_transfer_partial_hit: f.cache_u32("Immed transfer partial hit", |v| v != 0)? != 0,
            low_water_mark: f.kept_number("Low (write) water mark")?,
            high_water_mark: f.kept_number("High (read) water mark")?,
            watermark_by_request_size: f.kept_flag("Set watermark by reqsize")?,
            calc_sector_by_sector: f.kept_flag("Calc sector by sector")?,
            allow_almost_read_hits: f.kept_flag("Allow almost read hits")?,
            allow_sneaky_full_read_hits: f.kept_flag("Allow sneaky full read hits")?,
            allow_sneaky_partial_read_hits: f.kept_flag("Allow sneaky partial read hits")?,
            allow_sneaky_intermediate_read_hits: f.kept_flag("Allow sneaky intermediate read hits")?,
            allow_read_hits_on_write_data: f.cache_u32("Allow read hits on write data", all)? != 0,
            allow_write_prebuffering: f.kept_flag("Allow write prebuffering")?,
            read_hit_after_read_ms: f.cache_ms("Read hit over. after read", scale)?,
            read_hit_after_write_ms: f.cache_ms("Read hit over. after write", scale)?,
            write_hit_after_read_ms: f.cache_ms("Write hit over. after read", scale)?,
            write_hit_after_write_ms: f.cache_ms("Write hit over. after write", scale)?,
        };
        if spec.enabled {
            // A caching buffer without a segment, or with empty ones, converted silently to
            // a drive without a cache; DiskSim rejects both, caching or not
            // (`disk_postpass_perdisk`: numsegs and segsize must be at least 1).
            for (key, value) in [("Number of buffer segments", spec.segments), ("Segment size (in blks)", spec.segment_sectors)] {
                if value == 0 {
                    return Err(match f.find(key) {
                        Some(node) => node.location.error(format!(
                            "`{key} = {}` with `Enable caching in buffer` on: a caching buffer needs at least one segment of at least one block",
                            node.brief()
                        )),
                        None => f.missing(key),
                    });
                }
            }
        }
        model.cache = drive_cache(&spec);
        model.interface = host_interface(f, &spec, scale)?;
        cache = Some(spec);
        record_disk_origins(f, &mut origins);
        let never_disconnect = f.get("Never disconnect").is_some_and(|n| n.as_f64().is_some_and(|v| v != 0.0));
        f.report(|key| disk_note(key, never_disconnect), &mut warnings);
    }
    for b in &path_blocks {
        let f = Fields::new(b)?;
        match b.type_name.as_str() {
            "disksim_bus" => {
                bus_ms = bus_ms.max(f.ms("Read block transfer time")?);
                bus_write_ms = bus_write_ms.max(f.ms("Write block transfer time")?);
            }
            _ => {
                let both = f.ms("Bulk sector transfer time")?;
                bus_ms = bus_ms.max(both);
                bus_write_ms = bus_write_ms.max(both);
            }
        }
        f.report(
            |key| match key {
                "Arbitration type" | "Arbitration time" => "not modelled: bus arbitration",
                "Print stats" => "not modelled: statistics output",
                "Scale for delays" => "not modelled: controller processing delays",
                _ => "not modelled by raidlab",
            },
            &mut warnings,
        );
    }
    model.bus_sector_ms = bus_ms;
    model.bus_sector_write_ms = (bus_write_ms != bus_ms).then_some(bus_write_ms);
    let mapped = Geometry::new(&model, MODEL_KEY)
        .map_err(|e| origins.spec_error(e, &model_block.location))?
        .capacity_sectors();
    if block_count < mapped {
        model.capacity_sectors = Some(block_count);
        warnings.push(format!(
            "{block_count_at}: `Block count = {block_count}` is {} below the {mapped} sectors the zones map (DiskSim's own count); raidlab exports the block count and leaves the rest unused",
            mapped - block_count
        ));
    } else if block_count > mapped {
        warnings.push(format!(
            "{block_count_at}: `Block count = {block_count}` is more than the {mapped} sectors the zones map; raidlab exports {mapped}, as DiskSim does"
        ));
    }
    crate::disk::DriveModel::new(&model, MODEL_KEY).map_err(|e| origins.spec_error(e, &model_block.location))?;
    Ok(DiskSpec { name, model, cache, block_count, mapped_sectors: mapped, warnings, files: tree.files.clone() })
}

/// The `disksim_disk` parameters behind the converted overheads, cache and bus protocol.
fn record_disk_origins(f: &Fields, origins: &mut Origins) {
    origins.params(
        "",
        f,
        &[
            ("command_overhead_ms", "Per-request overhead time"),
            ("read_after_read_overhead_ms", "Read miss over. after read"),
            ("read_after_write_overhead_ms", "Read miss over. after write"),
            ("write_after_read_overhead_ms", "Write miss over. after read"),
            ("write_after_write_overhead_ms", "Write miss over. after write"),
            ("read_completion_overhead_ms", "Read completion overhead"),
            ("write_completion_overhead_ms", "Write completion overhead"),
        ],
    );
    // A cache or interface key with no parameter of its own is blamed on the drive's block.
    origins.block("cache", f.block);
    origins.block("interface", f.block);
    origins.params(
        "cache",
        f,
        &[
            ("segments", "Number of buffer segments"),
            ("segment_sectors", "Segment size (in blks)"),
            ("write_segments", "Maximum number of write segments"),
            ("fast_write_level", "Fast write level"),
            ("read_hit_after_read_ms", "Read hit over. after read"),
            ("read_hit_after_write_ms", "Read hit over. after write"),
            ("write_hit_after_read_ms", "Write hit over. after read"),
            ("write_hit_after_write_ms", "Write hit over. after write"),
        ],
    );
    origins.params(
        "interface",
        f,
        &[
            ("read_watermark", "High (read) water mark"),
            ("read_watermark_of", "Set watermark by reqsize"),
            ("read_disconnect_after_read_ms", "Read disconnect afterread"),
            ("read_disconnect_after_write_ms", "Read disconnect afterwrite"),
            ("write_disconnect_ms", "Write disconnect overhead"),
            ("first_reselect_ms", "First reselect overhead"),
            ("other_reselect_ms", "Other reselect overhead"),
            ("data_preparation_ms", "Data preparation overhead"),
            ("extra_write_disconnect", "Extra write disconnect"),
        ],
    );
    origins.params(
        "interface.extra_write_disconnect",
        f,
        &[
            ("command_overhead_ms", "Extradisc command overhead"),
            ("disconnect_ms", "Extradisc disconnect overhead"),
            ("inter_disconnect_delay_ms", "Extradisc inter-disconnect delay"),
            ("second_disconnect_ms", "Extradisc 2nd disconnect overhead"),
            ("seek_delta_ms", "Extradisc seek delta"),
        ],
    );
}

/// The drive's bus protocol from DiskSim's disconnect, reselect and water-mark parameters
/// (`None` when the drive never disconnects, or when disconnecting changes no timing: a read
/// water mark of 0 and no overheads). Processing times are multiplied by `scale` ("Time scale
/// for overheads").
fn host_interface(f: &Fields, spec: &DiskCacheSpec, scale: f64) -> Result<Option<HostInterfaceConfig>> {
    let flag = |key: &str| -> Result<bool> { Ok(f.get(key).map(|n| Fields::whole(n, key)).transpose()?.unwrap_or(0) != 0) };
    if flag("Never disconnect")? {
        return Ok(None);
    }
    let ms = |key: &str| f.scaled_ms(key, scale);
    let extra_write_disconnect = if flag("Extra write disconnect")? {
        Some(ExtraWriteDisconnectConfig {
            command_overhead_ms: ms("Extradisc command overhead")?,
            disconnect_ms: ms("Extradisc disconnect overhead")?,
            inter_disconnect_delay_ms: ms("Extradisc inter-disconnect delay")?,
            second_disconnect_ms: ms("Extradisc 2nd disconnect overhead")?,
            seek_delta_ms: ms("Extradisc seek delta")?,
        })
    } else {
        None
    };
    let interface = HostInterfaceConfig {
        read_watermark: spec.high_water_mark,
        read_watermark_of: if spec.watermark_by_request_size { WatermarkBase::Request } else { WatermarkBase::Segment },
        read_disconnect_after_read_ms: ms("Read disconnect afterread")?,
        read_disconnect_after_write_ms: ms("Read disconnect afterwrite")?,
        write_disconnect_ms: ms("Write disconnect overhead")?,
        first_reselect_ms: ms("First reselect overhead")?,
        other_reselect_ms: ms("Other reselect overhead")?,
        data_preparation_ms: ms("Data preparation overhead")?,
        extra_write_disconnect,
    };
    if !(0.0..=1.0).contains(&interface.read_watermark) {
        let node = f.keep("High (read) water mark", CACHE_NOTE).expect("a water mark other than 0 was given");
        return Err(node.location.error(format!(
            "`High (read) water mark` must be a fraction in [0, 1], got {}",
            readable(interface.read_watermark)
        )));
    }
    f.mark("High (read) water mark", Use::Modelled);
    f.mark("Set watermark by reqsize", Use::Modelled);
    let reconnecting_costs = interface.read_watermark > 0.0
        || interface.first_reselect_ms > 0.0
        || interface.other_reselect_ms > 0.0
        || interface.data_preparation_ms > 0.0;
    // Keeping the bus once reconnected is DiskSim's behaviour with "Hold bus entire read
    // xfer" = 1, and the same timing without it when reconnecting costs nothing.
    if flag("Hold bus entire read xfer")? || !reconnecting_costs {
        f.mark("Hold bus entire read xfer", Use::Modelled);
    }
    let changes_timing = reconnecting_costs
        || interface.read_disconnect_after_read_ms > 0.0
        || interface.read_disconnect_after_write_ms > 0.0
        || interface.write_disconnect_ms > 0.0
        || interface.extra_write_disconnect.is_some();
    Ok(changes_timing.then_some(interface))
}

/// The cache model's parameters from DiskSim's (`None` when the buffer does not cache or
/// has no segment).
fn drive_cache(spec: &DiskCacheSpec) -> Option<DriveCacheConfig> {
    if !spec.enabled || spec.segments == 0 || spec.segment_sectors == 0 {
        return None;
    }
    Some(DriveCacheConfig {
        segments: spec.segments,
        segment_sectors: spec.segment_sectors,
        separate_write_segment: spec.separate_write_segment,
        write_segments: spec.write_segments,
        fast_write_level: spec.fast_write_level.min(2),
        combine_sequential_writes: spec.combine_sequential_writes,
        read_hits_on_write_data: spec.allow_read_hits_on_write_data,
        prefetch: match spec.buffer_continuous_read {
            0 => PrefetchMode::None,
            1 => PrefetchMode::Track,
            2 => PrefetchMode::Cylinder,
            3 => PrefetchMode::Segment,
            _ => PrefetchMode::NextTrack,
        },
        read_ahead_max_sectors: spec.read_ahead_max_sectors,
        read_ahead_over_requested: spec.read_ahead_over_requested,
        read_ahead_on_idle_hit: spec.read_ahead_on_idle_hit,
        read_any_free_blocks: spec.read_any_free_blocks,
        stop_prefetch_in_sector: spec.stop_prefetch_in_sector,
        read_hit_after_read_ms: spec.read_hit_after_read_ms,
        read_hit_after_write_ms: spec.read_hit_after_write_ms,
        write_hit_after_read_ms: spec.write_hit_after_read_ms,
        write_hit_after_write_ms: spec.write_hit_after_write_ms,
    })
}

/// The buses and controllers between the host and the drive in the topology.
fn components_on_path<'t>(tree: &'t SpecTree, disk: &Block, warnings: &mut Vec<String>) -> Vec<&'t Block> {
    let disk_name = disk.name.as_deref().unwrap_or("");
    let instance_of: HashMap<&str, &str> = tree
        .instantiations
        .iter()
        .flat_map(|i| i.names.iter().map(move |n| (n.as_str(), i.block.as_str())))
        .collect();
    fn find<'n>(node: &'n TopologyNode, is_disk: &dyn Fn(&TopologyNode) -> bool, path: &mut Vec<&'n TopologyNode>) -> bool {
        if is_disk(node) {
            return true;
        }
        path.push(node);
        for child in &node.children {
            if find(child, is_disk, path) {
                return true;
            }
        }
        path.pop();
        false
    }
    let is_disk = |n: &TopologyNode| n.type_name == "disksim_disk" && instance_of.get(n.name.as_str()) == Some(&disk_name);
    let mut path = Vec::new();
    if !tree.topologies.iter().any(|t| find(t, &is_disk, &mut path)) {
        if !tree.topologies.is_empty() || !tree.instantiations.is_empty() {
            warnings.push(format!(
                "{}: `{}` is not in the topology: only its own bulk sector transfer time sets the host-interface time",
                disk.location,
                disk.title()
            ));
        }
        return Vec::new();
    }
    path.iter()
        .filter(|n| n.type_name == "disksim_bus" || n.type_name == "disksim_ctlr")
        .filter_map(|n| {
            let block = instance_of.get(n.name.as_str())?;
            tree.blocks.iter().find(|b| b.type_name == n.type_name && b.name.as_deref() == Some(*block))
        })
        .collect()
}

/// A `dm_disk` block: geometry, layout and mechanics, with the declared block count and
/// where it is written (the caller compares it with the zones).
fn convert_model(
    block: &Block,
    origins: &mut Origins,
    warnings: &mut Vec<String>,
) -> Result<(DriveModelConfig, u64, Location)> {
    let f = Fields::new(block)?;
    origins.params("", &f, &[("surfaces", "Number of data surfaces"), ("capacity_sectors", "Block count")]);
    let surfaces = f.require_u32("Number of data surfaces")?;
    if surfaces == 0 {
        return Err(f.require("Number of data surfaces")?.location.error("a drive needs at least one data surface"));
    }
    if surfaces > MAX_SURFACES {
        return Err(f
            .require("Number of data surfaces")?
            .location
            .error(format!("{surfaces} data surfaces are more than the {MAX_SURFACES} raidlab supports")));
    }
    let declared_cylinders = f.require_u32("Number of cylinders")?;
    let block_count = f.require_whole("Block count")?;
    let layout = f.require_block("Layout Model", "dm_layout_g1")?;
    let mech = f.require_block("Mechanical Model", "dm_mech_g1")?;
    let (zones, sparing, track_order) = convert_layout(layout, origins, warnings)?;
    let cylinders = zones.iter().map(|z| z.first_cylinder.unwrap_or(0) + z.cylinders).max().unwrap_or(0);
    if cylinders > declared_cylinders {
        warnings.push(format!(
            "{}: `Number of cylinders = {declared_cylinders}` but the zones reach cylinder {}: raidlab counts {cylinders} cylinders",
            f.require("Number of cylinders")?.location,
            cylinders - 1
        ));
    }
    let mut model = convert_mech(mech, surfaces, zones, cylinders, origins, warnings)?;
    model.sparing = sparing;
    model.track_order = track_order;
    f.report(plain_note, warnings);
    Ok((model, block_count, f.require("Block count")?.location.clone()))
}

/// Skew units of a layout or zone block: sectors (the default) or revolutions.
fn skew_units(f: &Fields, inherited: bool) -> Result<bool> {
    match f.text("Skew units")? {
        None => Ok(inherited),
        Some((units, location)) => match units {
            "sectors" | "Sectors" => Ok(false),
            "revolutions" | "Revolutions" => Ok(true),
            other => Err(location.error(format!("`Skew units` must be `sectors` or `revolutions`, got `{other}`"))),
        },
    }
}

fn convert_layout(
    block: &Block,
    origins: &mut Origins,
    warnings: &mut Vec<String>,
) -> Result<(Vec<ZoneConfig>, SparingConfig, TrackOrder)> {
    let f = Fields::new(block)?;
    origins.params(
        "",
        &f,
        &[
            ("track_order", "LBN-to-PBN mapping scheme"),
            ("sparing", "Sparing scheme used"),
            ("sparing.range_cylinders", "Rangesize for sparing"),
            ("zones", "Zones"),
        ],
    );
    let mapping = f.require("LBN-to-PBN mapping scheme")?;
    let track_order = match Fields::whole(mapping, "LBN-to-PBN mapping scheme")? {
        0 => TrackOrder::Ascending,
        1 => TrackOrder::SerpentineZone,
        2 => TrackOrder::Serpentine,
        n => return Err(mapping.location.error(format!("unknown LBN-to-PBN mapping scheme {n}; DiskSim's are 0, 1 and 2"))),
    };
    let scheme_node = f.require("Sparing scheme used")?;
    let scheme = Fields::whole(scheme_node, "Sparing scheme used")?;
    let sparing = match scheme {
        0 => SparingConfig::None,
        1 => SparingConfig::TracksPerZone,
        2 => SparingConfig::SectorsPerCylinder,
        3 => SparingConfig::SectorsPerTrack,
        7 => SparingConfig::SectorsAtEnd,
        8 => {
            let node = f.require("Rangesize for sparing")?;
            let range = Fields::whole(node, "Rangesize for sparing")?;
            let range_cylinders = u32::try_from(range)
                .ok()
                .filter(|&r| r > 0)
                .ok_or_else(|| node.location.error(format!("`Rangesize for sparing` must be at least 1, got {range}")))?;
            SparingConfig::SectorsPerRange { range_cylinders }
        }
        9 => SparingConfig::SectorsPerZone,
        10 => SparingConfig::SectorsPerZoneSlipToEnd,
        4..=6 => {
            return Err(scheme_node.location.error(format!(
                "sparing scheme {scheme} (spares per cylinder {}) is not supported by raidlab; none of DiskSim's validated drives uses it",
                ["with slips to the end of the disk", "at the front of each cylinder", "at the front, slips to the end"][scheme as usize - 4]
            )))
        }
        n => return Err(scheme_node.location.error(format!("unknown sparing scheme {n}; DiskSim's are 0 to 10"))),
    };
    let revolutions = skew_units(&f, false)?;
    let zone_nodes = f.require_list("Zones")?;
    if zone_nodes.is_empty() {
        return Err(f.require("Zones")?.location.error("`Zones` lists no zone"));
    }
    let mut zones = Vec::with_capacity(zone_nodes.len());
    for (i, node) in zone_nodes.iter().enumerate() {
        let zone = match &node.value {
            Value::Block(b) if b.type_name == "dm_layout_g1_zone" => b,
            _ => return Err(node.location.error(format!("a zone must be a `dm_layout_g1_zone` block, got `{}`", node.brief()))),
        };
        zones.push(convert_zone(zone, &format!("zones[{i}]"), sparing, revolutions, origins, warnings)?);
    }
    f.report(
        |key| match key {
            "Rangesize for sparing" => "not used by this drive's sparing scheme",
            _ => "not modelled by raidlab",
        },
        warnings,
    );
    Ok((zones, sparing, track_order))
}

/// A skew or offset in sectors: converted from revolutions if need be, rounded to whole
/// sectors (with a warning when that changes it).
fn sectors_of(node: &Node, key: &str, revolutions: bool, spt: u32, warnings: &mut Vec<String>) -> Result<u32> {
    let x = Fields::non_negative(node, key)?;
    let sectors = if revolutions { x * spt as f64 } else { x };
    let rounded = sectors.round();
    if (rounded - sectors).abs() > 1e-9 {
        warnings.push(format!(
            "{}: `{key} = {}` is {} sectors, rounded to {}",
            node.location,
            node.brief(),
            readable(sectors),
            readable(rounded)
        ));
    }
    u32::try_from(rounded as u64).map_err(|_| node.location.error(format!("`{key}` is too large")))
}

/// One zone block, converted to the config zone `key` (`zones[3]`).
fn convert_zone(
    block: &Block,
    key: &str,
    sparing: SparingConfig,
    revolutions: bool,
    origins: &mut Origins,
    warnings: &mut Vec<String>,
) -> Result<ZoneConfig> {
    let f = Fields::new(block)?;
    // Keys without a parameter of their own (`zones[3]`: the zone has no room for data) are
    // blamed on the zone block.
    origins.block(key, block);
    origins.params(
        key,
        &f,
        &[
            ("first_cylinder", "First cylinder number"),
            ("cylinders", "Last cylinder number"),
            ("sectors_per_track", "Blocks per track"),
            ("first_sector_offset", "Offset of first block"),
            ("track_switch_skew_sectors", "Skew for track switch"),
            ("cylinder_switch_skew_sectors", "Skew for cylinder switch"),
            ("reserved_sectors", "Empty space at zone front"),
            ("spares", "Number of spares"),
            ("slips", "slips"),
            ("remaps", "defects"),
        ],
    );
    let first = f.require_u32("First cylinder number")?;
    let last_node = f.require("Last cylinder number")?;
    let last = Fields::whole(last_node, "Last cylinder number")?;
    if last < first as u64 {
        return Err(last_node.location.error(format!("`Last cylinder number` {last} is before the first, {first}")));
    }
    if last >= MAX_CYLINDERS as u64 {
        return Err(last_node.location.error(format!(
            "`Last cylinder number` {last} is beyond the {MAX_CYLINDERS} cylinders raidlab supports"
        )));
    }
    let spt_node = f.require("Blocks per track")?;
    let spt = f.require_u32("Blocks per track")?;
    if spt == 0 {
        return Err(spt_node.location.error("`Blocks per track` must be at least 1"));
    }
    let revolutions = skew_units(&f, revolutions)?;
    let offset = sectors_of(f.require("Offset of first block")?, "Offset of first block", revolutions, spt, warnings)?;
    let mut skew = |key: &str| -> Result<u32> {
        match f.get(key) {
            None => Ok(0),
            Some(n) => sectors_of(n, key, revolutions, spt, warnings),
        }
    };
    let track_skew = skew("Skew for track switch")?;
    let cylinder_skew = skew("Skew for cylinder switch")?;
    let reserved = f.require_whole("Empty space at zone front")?;
    let spares_node = f.require("Number of spares")?;
    let spares = f.require_u32("Number of spares")?;
    if sparing == SparingConfig::SectorsAtEnd && spares != 0 {
        return Err(spares_node.location.error(
            "sparing scheme 7 keeps its spares at the end of the disk, so a zone's `Number of spares` must be 0 \
             (DiskSim's capacity ignores them while its mapping uses them)",
        ));
    }
    let slip_nodes = f.require_list("slips")?;
    let mut slips = slip_nodes.iter().map(|n| Fields::whole(n, "slips")).collect::<Result<Vec<u64>>>()?;
    if slips.windows(2).any(|w| w[1] < w[0]) {
        warnings.push(format!(
            "{}: {}: `slips` are not in increasing order; raidlab sorts them (DiskSim's per-unit loops give the same mapping for sorted lists)",
            f.require("slips")?.location,
            block.title()
        ));
        slips.sort_unstable();
    }
    if let Some(w) = slips.windows(2).find(|w| w[0] == w[1]) {
        return Err(f.require("slips")?.location.error(format!("slip {} is listed twice", w[0])));
    }
    if sparing == SparingConfig::None && !slips.is_empty() {
        warnings.push(format!(
            "{}: {}: {} slips ignored: with sparing scheme 0 DiskSim's mapping does not use them",
            f.require("slips")?.location,
            block.title(),
            slips.len()
        ));
        slips.clear();
    }
    // Each slip at its own line (a long list spans many), by its index in the sorted list
    // that the geometry checks.
    let slip_at: HashMap<u64, &Location> =
        slip_nodes.iter().filter_map(|n| Some((Fields::whole(n, "slips").ok()?, &n.location))).collect();
    for (j, slip) in slips.iter().enumerate() {
        if let Some(location) = slip_at.get(slip) {
            origins.set(&format!("{key}.slips[{j}]"), format!("slip {slip} in `slips`"), location);
        }
    }
    let defects_node = f.require("defects")?;
    let defect_values = Fields::list(defects_node, "defects")?
        .iter()
        .map(|n| Fields::whole(n, "defects"))
        .collect::<Result<Vec<u64>>>()?;
    if defect_values.len() % 2 != 0 {
        return Err(defects_node.location.error("`defects` must list pairs: defect, replacement"));
    }
    let mut remaps = Vec::new();
    for pair in defect_values.chunks(2) {
        if pair[0] == pair[1] {
            warnings.push(format!(
                "{}: {}: defect {} is remapped to itself, which changes no mapping (DiskSim skips it too)",
                defects_node.location,
                block.title(),
                pair[0]
            ));
        } else {
            remaps.push((pair[0], pair[1]));
        }
    }
    f.report(plain_note, warnings);
    Ok(ZoneConfig {
        cylinders: (last - first as u64 + 1) as u32,
        sectors_per_track: spt,
        first_cylinder: Some(first),
        first_sector_offset: Some(offset),
        track_switch_skew_sectors: Some(track_skew),
        cylinder_switch_skew_sectors: Some(cylinder_skew),
        reserved_sectors: reserved,
        spares,
        slips,
        remaps,
    })
}

/// Numbers of a list that must hold exactly `n` of them.
fn numbers(node: &Node, key: &str, n: usize) -> Result<Vec<f64>> {
    let items = Fields::list(node, key)?;
    if items.len() != n {
        return Err(node.location.error(format!("`{key}` must list {n} numbers, got {}", items.len())));
    }
    items.iter().map(|i| Fields::number_of(i, key)).collect()
}

/// The HPL seek equation (manual §B.5.2) as piecewise segments from distance `from`:
/// `V2 + V3·√d` below `V1` cylinders, `V4 + V5·d` from `V1` on.
fn hpl_segments(v: &[f64], from: u32, full_stroke: u32, segments: &mut Vec<SeekSegment>) {
    let v1 = v[0].max(0.0) as u32;
    if v1 > from {
        segments.push(SeekSegment { max_distance: v1 - 1, a_ms: v[1], b_ms: 0.0, c_ms: v[2] });
    }
    let last = segments.last().map_or(from.saturating_sub(1), |s| s.max_distance);
    segments.push(SeekSegment { max_distance: full_stroke.max(last + 1), a_ms: v[3], b_ms: v[4], c_ms: 0.0 });
}

fn convert_mech(
    block: &Block,
    surfaces: u32,
    zones: Vec<ZoneConfig>,
    cylinders: u32,
    origins: &mut Origins,
    warnings: &mut Vec<String>,
) -> Result<DriveModelConfig> {
    let f = Fields::new(block)?;
    origins.params(
        "",
        &f,
        &[
            ("rotation", "Access time type"),
            ("rpm", "Rotation speed (in rpms)"),
            ("head_switch_ms", "Head switch time"),
            ("write_settle_ms", "Add. write settling delay"),
        ],
    );
    let (access, access_at) = f.require_text("Access time type")?;
    let rotation = match access {
        "trackSwitchPlusRotation" => RotationModel::Exact,
        "averageRotation" => {
            warnings.push(format!(
                "{access_at}: `Access time type = averageRotation`: DiskSim takes every rotational wait as exactly half a revolution; raidlab draws it uniformly (`rotation = \"uniform\"`), which has the same mean"
            ));
            RotationModel::Uniform
        }
        other => {
            return Err(access_at.error(format!(
                "`Access time type = {other}` is not supported: raidlab models `trackSwitchPlusRotation` (and `averageRotation`)"
            )))
        }
    };
    let full_stroke = cylinders.saturating_sub(1).max(1);
    let (seek_type, seek_at) = f.require_text("Seek type")?;
    let seek = match seek_type {
        "extracted" => {
            let (file, named_at) = f.require_text("Full seek curve")?;
            let base = named_at.file.parent().unwrap_or(Path::new(""));
            let curve = parse_seek_file(&base.join(file), named_at)?;
            if let Some(note) = curve.note {
                warnings.push(note);
            }
            SeekConfig::Table { points: curve.points }
        }
        "hplplus10" => {
            let hpl = numbers(f.require("HPL seek equation values")?, "HPL seek equation values", 6)?;
            let first_ten = numbers(f.require("First ten seek times")?, "First ten seek times", 10)?;
            let mut segments: Vec<SeekSegment> = first_ten
                .iter()
                .enumerate()
                .map(|(i, &t)| SeekSegment { max_distance: i as u32 + 1, a_ms: t, b_ms: 0.0, c_ms: 0.0 })
                .collect();
            hpl_segments(&hpl, 11, full_stroke, &mut segments);
            SeekConfig::Piecewise { segments }
        }
        "hpl" => {
            let hpl = numbers(f.require("HPL seek equation values")?, "HPL seek equation values", 6)?;
            let mut segments = Vec::new();
            let from = if hpl[5] >= 0.0 {
                segments.push(SeekSegment { max_distance: 1, a_ms: hpl[5], b_ms: 0.0, c_ms: 0.0 });
                2
            } else {
                1
            };
            hpl_segments(&hpl, from, full_stroke, &mut segments);
            SeekConfig::Piecewise { segments }
        }
        "constant" => SeekConfig::Formula { a_ms: f.require_number("Constant seek time")?, b_ms: 0.0, c_ms: 0.0 },
        other => {
            return Err(seek_at.error(format!(
                "`Seek type = {other}` is not supported: raidlab imports `extracted`, `hpl`, `hplplus10` and `constant` (the validated drives use `extracted` and `hplplus10`)"
            )))
        }
    };
    match seek_type {
        "extracted" => origins.params("", &f, &[("seek", "Full seek curve")]),
        "hpl" => origins.params("", &f, &[("seek", "HPL seek equation values")]),
        "hplplus10" => {
            // A seek time out of range at some distance (`seek`) may come from either list;
            // the first ten segments are the ten times, the rest the HPL equation.
            origins.params("", &f, &[("seek", "Seek type"), ("seek.segments", "HPL seek equation values")]);
            let first_ten: Vec<String> = (0..10).map(|i| format!("seek.segments[{i}]")).collect();
            let pairs: Vec<(&str, &str)> = first_ten.iter().map(|k| (k.as_str(), "First ten seek times")).collect();
            origins.params("", &f, &pairs);
        }
        _ => origins.params("", &f, &[("seek", "Constant seek time")]),
    }
    let mut model = DriveModelConfig::basic(f.require_number("Rotation speed (in rpms)")?, surfaces, zones, seek);
    model.rotation = rotation;
    let head_switch = f.require("Head switch time")?;
    model.head_switch_ms = Fields::duration(head_switch, "Head switch time", Fields::non_negative(head_switch, "Head switch time")?)?;
    model.write_settle_ms = f.require_number("Add. write settling delay")?;
    f.report(mech_note, warnings);
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::diskspec::load;
    use crate::disk::geometry::PhysicalAddress;
    use std::path::PathBuf;

    /// The shared DiskSim files (never copied into the project).
    pub(crate) fn shared(name: &str) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/diskspecs")).join(name)
    }

    /// The ten validated drives, by their `.parv`.
    pub(crate) const DRIVES: [&str; 10] = [
        "atlas10k", "atlas_III", "barracuda", "cheetah4LP", "cheetah9LP", "dec_rz26", "hp_c2247a", "hp_c2490a",
        "hp_c3323a", "ibm18es",
    ];

    /// `Geometry::next_run` (the per-track step of a transfer) equals `locate_run` on every
    /// built-in preset and all ten DiskSim drives: runs walked from random LBAs, and across
    /// every zone boundary.
    #[test]
    fn next_run_equals_locate_run_on_every_drive() {
        use crate::disk::{presets, DriveModel};
        use crate::sim::{RngStream, StreamId};
        let mut models: Vec<(String, DriveModelConfig)> =
            presets::names().iter().map(|n| (n.to_string(), presets::preset(n).unwrap())).collect();
        for name in DRIVES {
            models.push((name.to_string(), load(&shared(&format!("{name}.parv"))).unwrap().model));
        }
        let mut rng = RngStream::new(5, StreamId::Policy(0));
        for (name, cfg) in models {
            let geometry = DriveModel::new(&cfg, "drive").unwrap().geometry;
            let capacity = geometry.capacity_sectors();
            let zone_starts = geometry.zones().iter().map(|z| z.first_lba.saturating_sub(3));
            let starts: Vec<u64> = (0..300).map(|_| rng.below(capacity)).chain(zone_starts).collect();
            for start in starts {
                let mut lba = start.min(capacity - 1);
                let mut run = geometry.locate_run(lba);
                for _ in 0..40 {
                    lba += run.sectors as u64;
                    if lba >= capacity {
                        break;
                    }
                    let next = geometry.next_run(&run, lba);
                    assert_eq!(next, geometry.locate_run(lba), "{name}: lba {lba}");
                    run = next;
                }
            }
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("raidlab-convert-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// DiskSim's LBN → (cylinder, head, sector) for one zone, written the way its
    /// `dm_layout_g1` loops do it (slips taken in list order), as an independent check of
    /// the threshold form raidlab uses.
    fn disksim_ltop(cfg: &DriveModelConfig, zone: &ZoneConfig, offset: u64) -> (u64, u64, u64) {
        let s = cfg.surfaces as u64;
        let bpt = zone.sectors_per_track as u64;
        let per_cyl = bpt * s;
        let spare = zone.spares as u64;
        let lbn = offset + zone.reserved_sectors;
        let slips = &zone.slips;
        let (cyl, head, sector) = match cfg.sparing {
            SparingConfig::TracksPerZone => {
                let mut track = lbn / bpt;
                for &sl in slips {
                    if sl <= track {
                        track += 1;
                    }
                }
                for &(d, r) in &zone.remaps {
                    if d == track {
                        track = r;
                    }
                }
                (track / s, track % s, lbn % bpt)
            }
            SparingConfig::SectorsPerTrack => {
                let per_track = bpt - spare;
                let track = lbn / per_track;
                let mut r = lbn % per_track;
                let first = bpt * track;
                for &sl in slips {
                    if sl >= first && sl - first <= r {
                        r += 1;
                    }
                }
                (track / s, track % s, r)
            }
            SparingConfig::SectorsAtEnd | SparingConfig::SectorsPerCylinder => {
                let to_end = cfg.sparing == SparingConfig::SectorsAtEnd;
                let lbns_per_cyl = per_cyl - spare;
                let mut cyl = lbn / lbns_per_cyl;
                let mut r = lbn % lbns_per_cyl;
                let first = cyl * per_cyl;
                let mut n = 0;
                for &sl in slips {
                    if (to_end && sl / per_cyl < cyl) || (sl >= first && sl - first <= r + n) {
                        n += 1;
                    }
                }
                r += n;
                cyl += r / lbns_per_cyl;
                r %= lbns_per_cyl;
                (cyl, r / bpt, r % bpt)
            }
            SparingConfig::SectorsPerRange { range_cylinders } => {
                let per_range = per_cyl * range_cylinders as u64;
                let lbns_per_range = per_range - spare;
                let range = lbn / lbns_per_range;
                let mut r = lbn % lbns_per_range;
                let first = range * per_range;
                let mut n = 0;
                for &sl in slips {
                    if sl >= first && sl - first <= r + n {
                        n += 1;
                    }
                }
                r += n;
                for &(d, m) in &zone.remaps {
                    if d == first + r {
                        r = m % per_range;
                    }
                }
                (range * range_cylinders as u64 + r / per_cyl, (r % per_cyl) / bpt, r % bpt)
            }
            SparingConfig::SectorsPerZone | SparingConfig::SectorsPerZoneSlipToEnd => {
                let mut n = 0;
                for &sl in slips {
                    if sl <= lbn + n {
                        n += 1;
                    }
                }
                let mut p = lbn + n;
                for &(d, m) in &zone.remaps {
                    if d == p {
                        p = m;
                    }
                }
                (p / per_cyl, (p % per_cyl) / bpt, p % bpt)
            }
            SparingConfig::None => (lbn / per_cyl, (lbn % per_cyl) / bpt, lbn % bpt),
        };
        let head = match cfg.track_order {
            TrackOrder::SerpentineZone if cyl % 2 == 1 => s - 1 - head,
            _ => head,
        };
        (zone.first_cylinder.unwrap() as u64 + cyl, head, sector)
    }

    #[test]
    fn the_ten_drives_map_lbas_exactly_as_disksim_does() {
        for name in DRIVES {
            let spec = load(&shared(&format!("{name}.parv"))).unwrap();
            let model = crate::disk::DriveModel::new(&spec.model, name).unwrap();
            let g = &model.geometry;
            let mut checked = 0;
            for (z, zone) in g.zones().iter().enumerate() {
                let cfg_zone = &spec.model.zones[z];
                // Every 97th LBA of the zone, its ends, and the LBAs around every slip.
                let mut offsets: Vec<u64> = (0..zone.lbas).step_by(97).chain([zone.lbas - 1]).collect();
                for &slip in &cfg_zone.slips {
                    let track_units = spec.model.sparing == SparingConfig::TracksPerZone;
                    let around = if track_units { slip * zone.sectors_per_track as u64 } else { slip };
                    let around = around.saturating_sub(cfg_zone.reserved_sectors);
                    offsets.extend(around.saturating_sub(3)..(around + 3 + 2 * cfg_zone.slips.len() as u64));
                }
                // Around every cylinder end of a zone with slips: where slips pushed the last
                // LBAs of a cylinder into the next one (DiskSim stops counting there).
                if !cfg_zone.slips.is_empty() {
                    let k = cfg_zone.slips.len() as u64 + 2;
                    for c in 1..=zone.cylinders as u64 {
                        let end = (c * zone.sectors_per_cylinder).saturating_sub(cfg_zone.reserved_sectors);
                        offsets.extend(end.saturating_sub(k)..end + 2);
                    }
                }
                for offset in offsets {
                    let lba = zone.first_lba + offset;
                    if offset >= zone.lbas || lba >= g.capacity_sectors() {
                        continue;
                    }
                    let a = g.locate(lba);
                    let expected = disksim_ltop(&spec.model, cfg_zone, offset);
                    assert_eq!(
                        (a.cylinder as u64, a.surface as u64, a.sector as u64),
                        expected,
                        "{name}: zone {z}, LBA {lba}"
                    );
                    assert_eq!(g.lba_of(a), Some(lba), "{name}: LBA {lba} round trip");
                    checked += 1;
                }
            }
            assert!(checked > 10_000, "{name}: {checked}");
        }
    }

    #[test]
    fn block_counts_match_disksims_zone_arithmetic() {
        // (drive, declared Block count − DiskSim's Σ blksinband): DiskSim itself uses the
        // zones' count; raidlab exports the smaller of the two.
        let expected_difference: [(&str, i64); 10] = [
            ("atlas10k", -27_967),
            ("atlas_III", -14_694),
            ("barracuda", -107_670),
            ("cheetah4LP", -740),
            ("cheetah9LP", -135_147),
            ("dec_rz26", 0),
            ("hp_c2247a", 0),
            ("hp_c2490a", 0),
            ("hp_c3323a", 0),
            ("ibm18es", -117_513),
        ];
        for (name, difference) in expected_difference {
            let spec = load(&shared(&format!("{name}.parv"))).unwrap();
            let m = &spec.model;
            let s = m.surfaces as u64;
            // blksinband (layout_g1_load.c), from the converted zone table.
            let by_zones: u64 = m
                .zones
                .iter()
                .map(|z| {
                    let (c, spt, spares) = (z.cylinders as u64, z.sectors_per_track as u64, z.spares as u64);
                    let removed = match m.sparing {
                        SparingConfig::None => 0,
                        SparingConfig::TracksPerZone => spares * spt,
                        SparingConfig::SectorsPerTrack => spares * c * s,
                        SparingConfig::SectorsPerCylinder => spares * c,
                        SparingConfig::SectorsAtEnd => z.slips.len() as u64,
                        SparingConfig::SectorsPerRange { range_cylinders } => spares * (c / range_cylinders as u64),
                        SparingConfig::SectorsPerZone => spares,
                        SparingConfig::SectorsPerZoneSlipToEnd => spares + z.slips.len() as u64,
                    };
                    c * s * spt - z.reserved_sectors - removed
                })
                .sum();
            assert_eq!(spec.mapped_sectors, by_zones, "{name}");
            assert_eq!(spec.block_count as i64 - by_zones as i64, difference, "{name}");
            let model = crate::disk::DriveModel::new(m, name).unwrap();
            assert_eq!(model.capacity_sectors(), spec.block_count.min(by_zones), "{name}");
            let zone_lbas: u64 = model.geometry.zones().iter().map(|z| z.lbas).sum();
            assert_eq!(zone_lbas, by_zones, "{name}");
        }
    }

    #[test]
    fn every_drive_converts_and_lists_what_it_leaves_out() {
        for name in DRIVES {
            let spec = load(&shared(&format!("{name}.parv"))).unwrap();
            assert!(!spec.warnings.is_empty());
            for w in &spec.warnings {
                // file:line: …
                let (file, rest) = w.split_once(".parv:").or_else(|| w.split_once(".diskspecs:")).or_else(|| w.split_once(".model:")).unwrap_or_else(|| panic!("{name}: {w}"));
                assert!(file.contains(name.trim_end_matches("_validate")) || file.contains(&name[..4]), "{name}: {w}");
                assert!(rest.split(':').next().unwrap().parse::<u64>().is_ok(), "{name}: {w}");
            }
            // Every parameter of the drive's blocks is either modelled or in a warning.
            let cache = spec.cache.as_ref().unwrap();
            assert!(cache.segments > 0, "{name}");
            // The cache parameters the cache model uses are not reported; the others are.
            assert!(!spec.warnings.iter().any(|w| w.contains("Number of buffer segments")), "{name}");
            assert!(!spec.warnings.iter().any(|w| w.contains("Fast write level")), "{name}");
            assert!(!spec.warnings.iter().any(|w| w.contains("Read hit over. after read")), "{name}");
            assert!(!spec.warnings.iter().any(|w| w.contains("Read any free blocks")), "{name}");
            assert!(spec.warnings.iter().any(|w| w.contains("Read directly to buffer") && w.contains("DiskSpec.cache")));
            let model_cache = spec.model.cache.as_ref().unwrap();
            assert_eq!(model_cache.segments, cache.segments, "{name}");
            assert!(spec.warnings.iter().any(|w| w.contains("Scheduler = disksim_ioqueue")));
            assert!(spec.warnings.iter().any(|w| w.contains("`disksim_synthio Synthio`")));
            assert!(spec.warnings.iter().any(|w| w.contains("Percent error in rpms")));
            assert!(!spec.warnings.iter().any(|w| w.contains("`Blocks per track")), "{name}: zone keys are modelled");
            assert!(!spec.warnings.iter().any(|w| w.contains("`Head switch time")), "{name}");
            assert!(spec.model.rpm > 5000.0 && spec.model.rpm < 10100.0, "{name}");
        }
    }

    #[test]
    fn ibm18es_converts_to_the_published_figures() {
        let spec = load(&shared("ibm18es.parv")).unwrap();
        let m = &spec.model;
        assert_eq!(spec.name, "IBM_DNES-309170W_validate");
        assert_eq!((m.rpm, m.surfaces, m.zones.len()), (7200.0, 5, 55));
        assert_eq!(m.sparing, SparingConfig::SectorsAtEnd);
        assert_eq!(m.track_order, TrackOrder::Ascending);
        assert_eq!((m.head_switch_ms, m.write_settle_ms), (0.062, 0.126));
        assert_eq!(m.read_after_read_overhead_ms, 0.25229);
        assert_eq!(m.write_after_write_overhead_ms, 0.79329);
        assert_eq!(m.bus_sector_ms, 0.101);
        assert!(!m.zero_latency && m.zero_latency_writes.is_none());
        let z0 = &m.zones[0];
        assert_eq!(
            (z0.first_cylinder, z0.cylinders, z0.sectors_per_track, z0.reserved_sectors),
            (Some(0), 257, 390, 1950)
        );
        assert_eq!((z0.track_switch_skew_sectors, z0.cylinder_switch_skew_sectors), (Some(58), Some(101)));
        assert_eq!(z0.slips, [199_078, 346_029, 384_777]);
        assert_eq!(m.zones[1].first_cylinder, Some(258), "cylinder 257 lies between zones");
        match &m.seek {
            SeekConfig::Table { points } => {
                assert_eq!(points.len(), 151);
                assert_eq!((points[0], points[150]), ((1, 1.062), (11377, 12.853)));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(m.capacity_sectors, Some(17_916_240));
        let cache = spec.cache.unwrap();
        assert_eq!((cache.segments, cache.segment_sectors, cache.fast_write_level), (7, 511, 2));
        assert_eq!(cache.read_hit_after_read_ms, 0.082);
    }

    #[test]
    fn hp_c2247a_hplplus10_seek_is_the_first_ten_then_the_hpl_equation() {
        let spec = load(&shared("hp_c2247a.parv")).unwrap();
        let model = crate::disk::DriveModel::new(&spec.model, "d").unwrap();
        let ms = |d: u32| model.seek.time(d) as f64 / 1e6;
        assert!((ms(1) - 2.89).abs() < 1e-6 && (ms(10) - 4.99).abs() < 1e-6);
        // 3.81 + 0.33·√d below 300 cylinders, 7.75 + 0.0059·d from there on.
        assert!((ms(11) - (3.81 + 0.33 * 11f64.sqrt())).abs() < 1e-6);
        assert!((ms(299) - (3.81 + 0.33 * 299f64.sqrt())).abs() < 1e-6);
        assert!((ms(300) - (7.75 + 0.0059 * 300.0)).abs() < 1e-6);
        assert!((ms(2000) - (7.75 + 0.0059 * 2000.0)).abs() < 1e-6);
        assert_eq!(spec.model.sparing, SparingConfig::TracksPerZone);
    }

    #[test]
    fn the_hp_drives_carry_their_bus_protocol_and_the_others_keep_the_bus() {
        // HP C2247A: bus 1 moves a block towards the host in 0.1701 ms, towards the drive in
        // 0.18686; reconnection at 3/4 of a read; the extra write disconnect.
        let spec = load(&shared("hp_c2247a.parv")).unwrap();
        assert_eq!((spec.model.bus_sector_ms, spec.model.bus_sector_write_ms), (0.1701, Some(0.18686)));
        let expected = HostInterfaceConfig {
            read_watermark: 0.75,
            read_watermark_of: WatermarkBase::Request,
            read_disconnect_after_read_ms: 0.02266,
            read_disconnect_after_write_ms: 0.04551,
            write_disconnect_ms: 0.16565,
            first_reselect_ms: 0.16249,
            other_reselect_ms: 0.12883,
            data_preparation_ms: 0.02519,
            extra_write_disconnect: Some(ExtraWriteDisconnectConfig {
                command_overhead_ms: 0.64244,
                disconnect_ms: 0.04551,
                inter_disconnect_delay_ms: 0.42885,
                second_disconnect_ms: 0.13437,
                seek_delta_ms: 0.25,
            }),
        };
        assert_eq!(spec.model.interface, Some(expected));
        assert!(!spec.warnings.iter().any(|w| w.contains("First reselect overhead") || w.contains("High (read) water mark")));
        // HP C3323A: the whole read must be in the buffer first, nothing else costs.
        let spec = load(&shared("hp_c3323a.parv")).unwrap();
        let interface = spec.model.interface.expect("hp_c3323a reconnects at a water mark");
        assert_eq!((interface.read_watermark, interface.first_reselect_ms, interface.extra_write_disconnect), (1.0, 0.0, None));
        // The DEC RZ26 never disconnects; the others reconnect at once for free: no protocol.
        for name in ["dec_rz26", "hp_c2490a", "atlas_III", "atlas10k", "barracuda", "cheetah4LP", "cheetah9LP", "ibm18es"] {
            let spec = load(&shared(&format!("{name}.parv"))).unwrap();
            assert_eq!((spec.model.interface.as_ref(), spec.model.bus_sector_write_ms), (None, None), "{name}");
        }
        let dec = load(&shared("dec_rz26.parv")).unwrap();
        assert!(dec.warnings.iter().any(|w| w.contains("First reselect overhead") && w.contains("never disconnects")));
    }

    #[test]
    fn atlas10k_and_dec_rz26_carry_their_mapping_and_latency_options() {
        let spec = load(&shared("atlas10k.parv")).unwrap();
        assert_eq!(spec.model.track_order, TrackOrder::SerpentineZone);
        assert_eq!(spec.model.sparing, SparingConfig::SectorsPerZone);
        assert!(spec.model.zero_latency && spec.model.zero_latency_writes.is_none());
        let spec = load(&shared("dec_rz26.parv")).unwrap();
        assert_eq!(spec.model.sparing, SparingConfig::SectorsPerTrack);
        assert!(spec.model.zero_latency);
        assert_eq!(spec.model.zero_latency_writes, Some(false));
        assert_eq!(spec.model.write_settle_ms, -0.483);
        assert_eq!(spec.model.write_completion_overhead_ms, 0.113);
        assert!(spec.warnings.iter().any(|w| w.contains("HPL seek equation values") && w.contains("not used")));
        // The .model and .diskspecs files load too, with less in them.
        let model_only = load(&shared("ibm18es.model")).unwrap();
        assert!(model_only.cache.is_none());
        assert_eq!(model_only.model.zones, load(&shared("ibm18es.parv")).unwrap().model.zones);
        let diskspecs = load(&shared("ibm18es.diskspecs")).unwrap();
        assert_eq!(diskspecs.model.bus_sector_ms, 0.101);
    }

    const SMALL: &str = "\
disksim_disk Small {
   Model = source small.model,
   Per-request overhead time = 0.01,
   Time scale for overheads = 2.0,
   Bulk sector transfer time = 0.05,
   Read miss over. after read = 0.1,
   Immediate buffer read = 1,
   Immediate buffer write = 1,
   Number of buffer segments = 4,
   Mystery knob = 3
}
";

    const SMALL_MODEL: &str = "\
dm_disk Small_model {
   Number of data surfaces = 3,
   Number of cylinders = 16,
   Block count = 700,
   Layout Model = dm_layout_g1 {
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 9,
      Rangesize for sparing = 1,
      Zones = [
         dm_layout_g1_zone {
            First cylinder number = 0, Last cylinder number = 5, Blocks per track = 20,
            Offset of first block = 3, Empty space at zone front = 7,
            Skew for track switch = 4, Skew for cylinder switch = 9,
            Number of spares = 5, slips = [ 30, 31, 200 ], defects = [ 50, 358 ]
         },
         dm_layout_g1_zone {
            First cylinder number = 7, Last cylinder number = 15, Blocks per track = 7,
            Offset of first block = 0.5, Skew units = revolutions, Empty space at zone front = 0,
            Skew for track switch = 0.25, Number of spares = 2, slips = [ 4 ], defects = []
         }
      ]
   },
   Mechanical Model = dm_mech_g1 {
      Access time type = trackSwitchPlusRotation,
      Seek type = hpl,
      HPL seek equation values = [ 10, 1.0, 0.2, 1.5, 0.01, 0.9 ],
      Add. write settling delay = 0.05,
      Head switch time = 0.3,
      Rotation speed (in rpms) = 6000,
      Percent error in rpms = 0.0
   }
}
";

    fn small_drive(dir: &Path, model: &str) -> PathBuf {
        std::fs::write(dir.join("small.diskspecs"), SMALL).unwrap();
        std::fs::write(dir.join("small.model"), model).unwrap();
        dir.join("small.diskspecs")
    }

    #[test]
    fn a_small_spec_converts_and_every_lba_round_trips() {
        let dir = scratch("small");
        let spec = load(&small_drive(&dir, SMALL_MODEL)).unwrap_or_else(|e| panic!("{e}"));
        let m = &spec.model;
        assert_eq!((m.command_overhead_ms, m.read_after_read_overhead_ms, m.bus_sector_ms), (0.02, 0.2, 0.05));
        assert!(m.zero_latency && m.zero_latency_writes.is_none());
        assert_eq!(m.zones[0].remaps, [(50, 358)]);
        assert_eq!(m.zones[1].sectors_per_track, 7);
        assert_eq!(m.zones[1].first_sector_offset, Some(4), "0.5 rev of 7 sectors rounds to 4");
        assert!(spec.warnings.iter().any(|w| w.contains("small.model") && w.contains("rounded")));
        assert!(spec.warnings.iter().any(|w| w.contains("`Mystery knob = 3` not modelled by raidlab")));
        // HPL: V6 for one cylinder, V2 + V3·√d below 10, V4 + V5·d from 10.
        let model = crate::disk::DriveModel::new(m, "d").unwrap();
        assert_eq!(model.seek.time(1), 900_000);
        assert_eq!(model.seek.time(4), 1_400_000);
        assert_eq!(model.seek.time(10), 1_600_000);
        assert_eq!(model.seek.time(15), 1_650_000);
        // 6 cylinders × 3 × 20 = 360 positions − 7 reserved − 5 spares = 348; zone 1:
        // 9 × 3 × 7 = 189 − 2 = 187; block count 700 is more than the 535 mapped.
        assert_eq!(spec.mapped_sectors, 348 + 187);
        assert!(spec.warnings.iter().any(|w| w.contains("Block count = 700") && w.contains("raidlab exports 535")));
        let g = &model.geometry;
        let mut seen = std::collections::HashSet::new();
        for lba in 0..g.capacity_sectors() {
            let a = g.locate(lba);
            assert_eq!(g.lba_of(a), Some(lba));
            assert!(seen.insert((a.cylinder, a.surface, a.sector)));
        }
        // Position 50 (LBA 41: 7 reserved, slips 30 and 31 before it) is remapped to the
        // spare position 358 = cylinder 5, track 2, sector 18.
        let a = g.locate(41);
        assert_eq!((a.cylinder, a.surface, a.sector), (5, 2, 18));
        let slot_of = |a: PhysicalAddress| (a.sector + g.skew(a.cylinder, a.surface)) % a.sectors_per_track;
        // Zone 0 track 1 starts 3 + 4 slots on; cylinder 1 starts 3 + 2·4 + 9.
        assert_eq!(g.skew(0, 1), 7);
        assert_eq!(g.skew(1, 0), (3 + 2 * 4 + 9) % 20);
        assert_eq!(slot_of(g.locate(348)), 4, "zone 1's first sector sits at its offset");
    }

    #[test]
    fn a_drive_may_name_its_model_and_be_chosen_by_instantiation() {
        let dir = scratch("named");
        let disk = SMALL.replace("Model = source small.model", "Model = Small_model");
        let other = disk.replace("disksim_disk Small", "disksim_disk Spare");
        let text = format!("{SMALL_MODEL}\n{disk}\n{other}\ninstantiate [ disk0 ] as Small\n");
        std::fs::write(dir.join("two.parv"), text).unwrap();
        let spec = load(&dir.join("two.parv")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.name, "Small");
        assert_eq!(spec.model.surfaces, 3);
        assert!(spec.warnings.iter().any(|w| w.contains("`disksim_disk Spare`") && w.contains("is another device")));
        assert!(!spec.warnings.iter().any(|w| w.contains("`dm_disk Small_model`")));
        // Without the instantiation the choice is ambiguous.
        let text = format!("{SMALL_MODEL}\n{disk}\n{other}\n");
        std::fs::write(dir.join("two.parv"), text).unwrap();
        let (_, _, message) = spec_error(load(&dir.join("two.parv")));
        assert!(message.contains("2 drives are defined"), "{message}");
    }

    fn spec_error(result: Result<DiskSpec>) -> (PathBuf, u64, String) {
        match result {
            Err(Error::Spec { file, line, message }) => (file, line, message),
            other => panic!("expected a spec error, got {other:?}"),
        }
    }

    #[test]
    fn malformed_specs_name_the_file_and_line() {
        let dir = scratch("malformed");
        let model = dir.join("small.model");
        // Missing key: reported at the block that lacks it.
        let text = SMALL_MODEL.replace("      Head switch time = 0.3,\n", "");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (model.clone(), 23));
        assert!(message.contains("lacks the required parameter `Head switch time`"), "{message}");
        // Bad number.
        let text = SMALL_MODEL.replace("Number of cylinders = 16", "Number of cylinders = 1six");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (model.clone(), 3));
        assert!(message.contains("bad number `1six`"), "{message}");
        let text = SMALL_MODEL.replace("Blocks per track = 20", "Blocks per track = twenty");
        let (_, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!(line, 11);
        assert!(message.contains("bad number `twenty`"), "{message}");
        // Unterminated brace: at the line that opened the block.
        let text = SMALL_MODEL.trim_end().trim_end_matches('}');
        let (file, line, message) = spec_error(load(&small_drive(&dir, text)));
        assert_eq!((file, line), (model.clone(), 1));
        assert!(message.contains("never closed"), "{message}");
        // Unknown block.
        let text = format!("{SMALL_MODEL}\ndm_floppy F {{ }}\n");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (model.clone(), 34));
        assert!(message.contains("unknown block `dm_floppy`"), "{message}");
        // Missing source file: at the including file and line.
        std::fs::remove_file(&model).unwrap();
        let (file, line, message) = spec_error(load(&dir.join("small.diskspecs")));
        assert_eq!((file, line), (dir.join("small.diskspecs"), 2));
        assert!(message.contains("small.model"), "{message}");
        // A missing seek curve: at the key naming it.
        let text = SMALL_MODEL
            .replace("Seek type = hpl,", "Seek type = extracted, Full seek curve = nowhere.seek,");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (model.clone(), 25));
        assert!(message.contains("nowhere.seek"), "{message}");
        // Unsupported choices name the parameter.
        let text = SMALL_MODEL.replace("Sparing scheme used = 9", "Sparing scheme used = 5");
        let (_, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!(line, 7);
        assert!(message.contains("sparing scheme 5"), "{message}");
        let text = SMALL_MODEL.replace("Seek type = hpl", "Seek type = curve");
        let (_, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!(line, 25);
        assert!(message.contains("`Seek type = curve` is not supported"), "{message}");
        // More slips than the zone's spares: found by the geometry, reported at the slips.
        let text = SMALL_MODEL.replace("Number of spares = 2", "Number of spares = 0");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (model.clone(), 19));
        assert!(message.contains("zones[1].slips (from `slips`)"), "{message}");
    }

    #[test]
    fn errors_found_by_validating_the_converted_drive_name_the_parameter_and_its_line() {
        // Each was reported at the `dm_disk` block's line (small.model:1), whichever file
        // and line the parameter was on.
        let dir = scratch("origins");
        let model = dir.join("small.model");
        for (from, to, line, expected) in [
            ("First cylinder number = 7", "First cylinder number = 3", 17, "zones[1].first_cylinder (from `First cylinder number`): 3 overlaps"),
            // The slip on its own line of a list that spans two.
            ("slips = [ 30, 31, 200 ]", "slips = [ 30, 31,\n 9999 ]", 15, "zones[0].slips[2] (from slip 9999 in `slips`): 9999 lies beyond"),
            ("defects = [ 50, 358 ]", "defects = [ 50, 9999 ]", 14, "zones[0].remaps (from `defects`): [50, 9999] lies beyond the zone"),
            ("Number of spares = 5", "Number of spares = 400", 10, "zones[0] (from the `dm_layout_g1_zone` block): its reserved sectors"),
            ("Block count = 700", "Block count = 0", 4, "capacity_sectors (from `Block count`): must be at least 1"),
            ("(in rpms) = 6000", "(in rpms) = 0", 29, "rpm (from `Rotation speed (in rpms)`): must be a positive number"),
            ("0.2, 1.5, 0.01, 0.9", "0.2, 1.5, -0.01, 0.9", 26, "seek.segments[2].b_ms (from `HPL seek equation values`): must not be negative"),
            // Extrapolated past its last two points, the curve falls below 0 at distance 4.
            ("Seek type = hpl", "Seek type = extracted, Full seek curve = small.seek", 25, "seek (from `Full seek curve`): seek time at distance 4 is -1 ms"),
        ] {
            std::fs::write(dir.join("small.seek"), "Seek distances measured: 3\n1, 1.0\n2, 2.0\n3, 0.5\n").unwrap();
            let (file, at, message) = spec_error(load(&small_drive(&dir, &SMALL_MODEL.replace(from, to))));
            assert_eq!((&file, at), (&model, line), "{to}: {message}");
            assert!(message.contains(&format!("the converted drive is invalid: drive.model.{expected}")), "{message}");
        }
        // A `.diskspecs` parameter was blamed on the `.model` file: a read water mark taken
        // as a fraction of the segment, on a drive whose buffer does not cache.
        small_drive(&dir, SMALL_MODEL);
        let spec = dir.join("small.diskspecs");
        let text = SMALL.replace("Mystery", "High (read) water mark = 0.5,\n   Set watermark by reqsize = 0,\n   Mystery");
        std::fs::write(&spec, text).unwrap();
        let (file, line, message) = spec_error(load(&spec));
        assert_eq!((&file, line), (&spec, 11), "{message}");
        assert!(message.contains("drive.model.interface.read_watermark_of (from `Set watermark by reqsize`)"), "{message}");
    }

    #[test]
    fn a_caching_buffer_without_segments_is_an_error_at_the_parameter() {
        // Each converted silently to a drive without a cache.
        let dir = scratch("no-segments");
        small_drive(&dir, SMALL_MODEL);
        let spec = dir.join("small.diskspecs");
        let caching = "Enable caching in buffer = 1,\n   Segment size (in blks) = 64,\n   Number of buffer segments = 4";
        for (from, to, line, expected) in [
            ("Number of buffer segments = 4", "Number of buffer segments = 0", 11, "`Number of buffer segments = 0` with `Enable caching in buffer` on"),
            ("Segment size (in blks) = 64", "Segment size (in blks) = 0", 10, "`Segment size (in blks) = 0` with `Enable caching in buffer` on"),
            ("Segment size (in blks) = 64,\n", "", 1, "lacks the required parameter `Segment size (in blks)`"),
        ] {
            std::fs::write(&spec, SMALL.replace("Number of buffer segments = 4", &caching.replace(from, to))).unwrap();
            let (file, at, message) = spec_error(load(&spec));
            assert_eq!((&file, at), (&spec, line), "{to}: {message}");
            assert!(message.contains(expected), "{message}");
        }
        // Not caching, the segments only match speeds and raidlab does not model them.
        std::fs::write(&spec, SMALL.replace("Number of buffer segments = 4", "Enable caching in buffer = 0,\n   Number of buffer segments = 0")).unwrap();
        assert_eq!(load(&spec).unwrap().model.cache, None);
        std::fs::write(&spec, SMALL.replace("Number of buffer segments = 4", caching)).unwrap();
        assert_eq!(load(&spec).unwrap().model.cache.map(|c| (c.segments, c.segment_sectors)), Some((4, 64)));
    }

    #[test]
    fn huge_values_are_echoed_in_scientific_notation() {
        // Each message printed the value's 301 digits in full.
        let dir = scratch("huge");
        for (from, to, line, expected) in [
            ("(in rpms) = 6000", "(in rpms) = 1e300", 29, "rpm (from `Rotation speed (in rpms)`): 1e300 is above"),
            ("settling delay = 0.05", "settling delay = 1e300", 27, "within ±1000, got 1e300"),
            ("Seek type = hpl", "Seek type = constant, Constant seek time = 1e300", 25, "distance 1 is 1e300 ms, above 4294 ms"),
            ("Block count = 700", "Block count = 1e300", 4, "bad number `1e300` for `Block count`"),
            ("Head switch time = 0.3", "Head switch time = -1e300", 28, "`Head switch time` must not be negative, got -1e300"),
        ] {
            let (_, at, message) = spec_error(load(&small_drive(&dir, &SMALL_MODEL.replace(from, to))));
            assert_eq!(at, line, "{to}: {message}");
            assert!(message.contains(expected) && message.len() < 300, "{message}");
        }
        let text = SMALL_MODEL.replace("Percent error in rpms = 0.0", "Percent error in rpms = 1e300");
        let spec = load(&small_drive(&dir, &text)).unwrap();
        let warning = spec.warnings.iter().find(|w| w.contains("Percent error in rpms")).unwrap();
        assert!(warning.contains("`Percent error in rpms = 1e300`") && warning.len() < 300, "{warning}");
    }

    #[test]
    fn cylinders_and_surfaces_beyond_raidlabs_bounds_name_the_parameter() {
        let dir = scratch("bounds");
        let model = dir.join("small.model");
        // u32::MAX overflowed the cylinder count (a panic with overflow checks); 4e9 asked
        // for a 32 GB seek table; first 0 to u32::MAX wrapped to a zone of 0 cylinders.
        for (from, to, line) in [
            ("Last cylinder number = 15", "Last cylinder number = 4294967295", 17),
            ("Last cylinder number = 15", "Last cylinder number = 4000000000", 17),
            ("Last cylinder number = 5", "Last cylinder number = 4294967295", 11),
        ] {
            let (file, at, message) = spec_error(load(&small_drive(&dir, &SMALL_MODEL.replace(from, to))));
            assert_eq!((&file, at), (&model, line), "{to}");
            assert!(message.contains("cylinders raidlab supports"), "{message}");
        }
        let text = SMALL_MODEL.replace("Number of data surfaces = 3", "Number of data surfaces = 4000000000");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (model, 2));
        assert!(message.contains("more than the 1024 raidlab supports"), "{message}");
    }

    #[test]
    fn times_beyond_a_second_are_errors_at_their_parameter() {
        // 1e300 ms saturated to 2^64 - 1 ns and the simulation's sums wrapped: a head switch
        // or overhead that long came out as a shorter response time, or a panic with overflow
        // checks.
        let dir = scratch("durations");
        let text = SMALL_MODEL.replace("Head switch time = 0.3", "Head switch time = 1e300");
        let (file, line, message) = spec_error(load(&small_drive(&dir, &text)));
        assert_eq!((file, line), (dir.join("small.model"), 28));
        assert!(message.contains("`Head switch time` gives 1e300 ms"), "{message}");
        let spec = dir.join("small.diskspecs");
        for (from, to, line, expected) in [
            ("overhead time = 0.01", "overhead time = 1e300", 3, "`Per-request overhead time` gives 2e300 ms"),
            ("overheads = 2.0", "overheads = 1e6", 3, "`Per-request overhead time` gives 1e4 ms"),
            ("Mystery", "Read hit over. after read = 1e15,\n   Mystery", 10, "`Read hit over. after read` gives 2e15 ms"),
        ] {
            small_drive(&dir, SMALL_MODEL);
            std::fs::write(&spec, SMALL.replace(from, to)).unwrap();
            let (file, at, message) = spec_error(load(&spec));
            assert_eq!((&file, at), (&spec, line), "{to}");
            assert!(message.contains(expected), "{message}");
        }
    }
}
