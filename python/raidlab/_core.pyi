# Type stub of the compiled extension (crates/raidlab-py/src/lib.rs).
# tests/test_core_stub.py checks that every public name here exists in the binary with the
# same kind and parameters, and that the binary has no public name missing here.
# Names starting with "_" are typing helpers that exist only in this stub.

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypedDict, Union

# A numeric column is a read-only memoryview of format "d" (float64) or "q" (int64), native
# byte order; text is a list of str.
_Column = Union[memoryview, List[str]]

class _RunOutput(TypedDict):
    summary: str
    """The run summary as JSON text."""
    resolved_config: str
    """The configuration with every default filled in, as TOML."""
    config_hash: str
    """Hex digest of the resolved configuration."""
    tables: Dict[str, Dict[str, _Column]]
    """Result tables: table name -> column name -> values."""

class _BenchResult(TypedDict):
    case: str
    requests: int
    disk_ops: int
    wall_seconds: float
    requests_per_second: float
    disk_ops_per_second: float
    cancelled: bool
    """Always false from ``bench``: a Ctrl-C raises ``KeyboardInterrupt`` instead."""
    simulated_seconds: float
    rebuild_time_s: Optional[float]
    """The rebuild time a rebuild case simulated, s (None for the other cases)."""

def run(
    config_toml: str,
    base_dir: str,
    progress: Optional[Callable[[float, int], Optional[bool]]] = None,
) -> _RunOutput:
    """Run a simulation (GIL released). ``progress(fraction, completed_requests)`` returning
    ``False`` cancels the run; an exception in it (or Ctrl-C) stops the run and propagates."""

def resolve_config(config_toml: str, base_dir: str) -> Tuple[str, str]:
    """Validate a configuration: ``(resolved TOML, config hash)``."""

def config_schema() -> str:
    """The JSON Schema of the configuration."""

def bench(case: str, requests: int) -> _BenchResult:
    """Run a built-in benchmark case (GIL released); Ctrl-C stops it with
    ``KeyboardInterrupt``."""

def long_bench_cases() -> List[str]:
    """Benchmark cases left out of the default set because they run for minutes."""

def bench_cases() -> List[str]:
    """Names of the built-in benchmark cases."""

def trace_info(trace_toml: str, base_dir: str) -> str:
    """Statistics of a trace (TOML with the keys of ``workload.trace``), as JSON (GIL
    released); Ctrl-C stops the pass with ``KeyboardInterrupt``."""

def validate(drive_toml: str, trace_path: str, base_dir: str) -> _RunOutput:
    """Replay a DiskSim ``validate`` trace on one drive (``drive_toml``: the keys of a
    ``[drive]`` table) and compare with the measured response times (GIL released). Tables:
    ``measured_cdf``, ``simulated_cdf``, ``requests``."""

class _MemberExposure(TypedDict):
    member: int
    """The failed member's slot."""
    count: int
    """How many members share a redundancy set with it: those whose failure, while it is
    failed, takes the data closer to loss (none when its failure alone loses data)."""
    members: List[int]
    """Their slots, lowest first, at most 64 of them."""

class _DriveZone(TypedDict):
    cylinders: int
    sectors_per_track: int
    """512-byte sectors on every track of the zone."""
    track_skew_sectors: int
    """Skew at a switch to the next track of a cylinder, sectors."""

class _LayoutFacts(TypedDict):
    layout: str
    """Registry name of the layout (``raid5``)."""
    drives: int
    """Members of the array (hot spares are not members)."""
    capacity_sectors: int
    """Logical capacity, 512-byte sectors."""
    capacity_bytes: int
    member_sectors: int
    """Sectors of each member that hold stripe units: what a rebuild restores."""
    member_bytes: int
    """``member_sectors`` × 512."""
    fault_tolerance: int
    """Failures of one redundancy set the data survives."""
    exposure: List[_MemberExposure]
    """Every member for arrays of at most 64 drives, else member 0 and the members the
    configuration's failures name; in slot order."""
    every_member_examined: bool
    same_exposure_count: bool
    """Whether every member in ``exposure`` has the same count."""
    stripe_width: int
    """Units of one stripe (data and parity, or every copy): the drives one stripe spans."""
    member_stripe_fraction: float
    """The fraction of the stripes with a unit on one member: 1 for RAID-5 and RAID-6, G/C for
    parity declustering."""
    distributed_spares: int
    """dRAID's S (the layout's own parse of ``array.draid``); 0 for every other layout."""
    drive_rpm: float
    drive_surfaces: int
    drive_zones: List[_DriveZone]
    """The drive's zones, outermost first, over the whole drive (whatever
    ``drive.capacity_sectors`` leaves of it)."""

def layout_facts(config_toml: str, base_dir: str) -> _LayoutFacts:
    """The configured array's layout as the simulation builds it, from the layout's own
    answers (GIL released); ``ConfigError`` naming the key for a configuration the core
    refuses."""

class _CatalogueEntry(TypedDict):
    name: str
    """The name a configuration uses."""
    doc: str
    """One line: what it is."""

class _CatalogueFamily(TypedDict):
    family: str
    """Identifier of the registry (``layouts``, ``rebuild_orders``)."""
    title: str
    config_key: Optional[str]
    """The configuration key that names an entry, or None if none does (yet)."""
    entries: List[_CatalogueEntry]

def policy_catalogue() -> List[_CatalogueFamily]:
    """Every registry of named alternatives (presets, layouts, queue disciplines, trace
    formats, rebuild policies), read from the core's registry tables."""

def cache_simulate(
    config_toml: str,
    base_dir: str,
    progress: Optional[Callable[[float, int], Optional[bool]]] = None,
) -> Optional[str]:
    """Stream a trace through buffer caches (GIL released): the report as JSON, or ``None``
    when ``progress`` returned ``False``. An exception in ``progress`` (or Ctrl-C) stops the
    pass and propagates."""

def write_parquet(
    path: str,
    columns: List[Tuple[str, str, Union[bytes, Sequence[Any]]]],
    nullable: bool = False,
) -> None:
    """Write a table as a Parquet file (GIL released): one row group, plain uncompressed
    pages, each with its CRC-32. ``columns``: ``(name, kind, values)`` in order, ``kind``
    ``"int64"``, ``"float64"``, ``"bool"`` or ``"string"``; ``values`` a list (``None`` for
    a null where ``nullable``: every column nullable), or for ``int64`` and ``float64``
    without ``nullable``, ``bytes`` of 8-byte numbers in native byte order. Raises
    ``RaidlabIOError`` naming ``path`` on failure."""

def version() -> str:
    """Version of the core and binding."""

def _raise_for_test(kind: str) -> None:
    """Test hook: raise the exception that core error ``kind`` maps to (``config``, ``trace``,
    ``spec``, ``io``, ``io_no_errno``, ``invariant`` or ``panic``)."""
