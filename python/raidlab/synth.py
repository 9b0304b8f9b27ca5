"""Synthetic look-alikes of the SPC web-search traces the PRO paper replays, and of the SPC
OLTP traces (Financial1, Financial2) the SWO paper replays.

``raidlab trace synth websearch1|websearch2|websearch3 -o FILE`` writes an SPC ASCII trace
(``ASU,LBA,Size,Opcode,Timestamp``: LBA in 512-byte sectors, Size in bytes, ``r``, seconds)
with the characteristics the PRO paper publishes for the prefixes it used (seed 000 §4.2,
Table 2): the request count, reads only (the paper filtered the 0.02 % of writes out), the
share of requests that fall in the hottest 20 % of the area, and the mean inter-arrival time.
What the paper does not publish — request sizes and the spatial shape of the hot area — is
raidlab's choice, documented in ``docs/traces.md``:

* **sizes**: 8, 16, 24 and 32 KiB reads with probabilities 0.50, 0.25, 0.10 and 0.15
  (mean 15.2 KiB), starting on 4 KiB boundaries;
* **hot area**: ``hot_regions`` contiguous regions (8 by default) at random places in the
  area, of random sizes (each 0.5–1.5 × the mean), each with its own popularity per block
  (uniform in [1, 3]); a hot request falls entirely inside one region;
* **cold requests**: uniformly anywhere in the area;
* **arrivals**: a Poisson process, its gaps scaled so the mean inter-arrival time is the
  published one exactly.

"The hottest 20 % of the area" is measured as ``raidlab trace info`` measures it
(:func:`hot_share`): the 4 KiB blocks the trace touches are ranked by how many requests touch
them, and the share of all block accesses that fall in the top fifth of the *touched* blocks
is taken. The hot area's total size is chosen so that, in expectation, the hot regions are
that top fifth: ``H = A·q / (4 + q)`` blocks for an area of ``A`` blocks, where
``q = 1 − exp(−n_cold·L̄ / A)`` is the expected share of the cold space that cold requests
touch (``L̄`` the mean size in blocks), and the share of hot requests is set so that hot
requests plus the cold ones that land in the hot regions make the published share.

``raidlab trace synth financial1|financial2 -o FILE`` writes a look-alike of the OLTP traces
as the SWO paper characterizes them (seed 002 Table I): the write share, the mean request
size and the mean rate, over one hour (the paper replays each trace "for an hour"). Reads and
writes both. What the paper does not publish is raidlab's choice (``docs/traces.md``):

* **sizes**: a geometric number of 512-byte sectors (1, 2, 3, …) whose mean is the published
  mean size (1 KB read as 1,024 bytes); every request starts on a 4 KiB boundary;
* **rewrite locality**: :data:`OLTP_HOT_REQUEST_SHARE` of the requests (80 %) go to
  ``hot_regions`` contiguous hot regions (16 by default) that together hold
  :data:`OLTP_HOT_AREA_SHARE` of the area (2 %), sized and weighted as the web-search
  regions are; the others go uniformly anywhere in the area (60 GiB by default: the SWO
  paper's 60 GB volume); reads and writes alike;
* **writes**: exactly the published share of the requests (rounded to a whole request), at
  random places in the sequence;
* **arrivals**: a Poisson process scaled so the mean rate is the published one exactly.

``raidlab trace synth --like NAME`` (:func:`like_plan`, :func:`generate_like`) draws the
look-alike whose parameters come from the published facts in :mod:`raidlab.trace_facts`, each
with its citation, and labels every other parameter as raidlab's choice
(``docs/trace-lookalikes.md``). For the web-search traces it adds two facts to the ones
above: 99.98 % reads (PRO §4.2; the writes are kept) and the 60 GB span of SPC-1-web (VDF
§6.2). For the Financial traces no further fact was found, so it draws the same trace as
``financial1|financial2``. No parameter comes from a result of the PRO, VDF or SWO paper.

Everything is drawn from one seeded numpy generator: the same profile, seed, request count
and area give a byte-identical file.
"""

from __future__ import annotations

import bz2
import gzip
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Union

import numpy as np

from raidlab import trace_facts

__all__ = [
    "Profile",
    "PROFILES",
    "OltpProfile",
    "OLTP_PROFILES",
    "TRACE_NAMES",
    "OLTP_HOT_REQUEST_SHARE",
    "OLTP_HOT_AREA_SHARE",
    "OLTP_DEFAULT_HOT_REGIONS",
    "OLTP_DEFAULT_AREA_GIB",
    "default_area_gib",
    "default_hot_regions",
    "SIZES_KIB",
    "SIZE_WEIGHTS",
    "DEFAULT_AREA_GIB",
    "MAX_AREA_GIB",
    "MAX_REQUESTS",
    "DEFAULT_HOT_REGIONS",
    "SyntheticTrace",
    "generate",
    "write",
    "compression_for",
    "check_area",
    "check_requests",
    "read_spc",
    "hot_share",
    "characteristics",
    "LikePlan",
    "like_plan",
    "generate_like",
]

#: Bytes per 512-byte sector and per 4 KiB block (the unit of alignment and of locality).
SECTOR_BYTES = 512
BLOCK_BYTES = 4096
SECTORS_PER_BLOCK = BLOCK_BYTES // SECTOR_BYTES


@dataclass(frozen=True)
class Profile:
    """What the PRO paper publishes of one trace prefix (seed 000 §4.2, Table 2)."""

    name: str
    requests: int
    hot_share: float
    mean_interarrival_ms: float
    source: str


def _web_profile(name: str, label: str) -> Profile:
    """A web-search profile read from :mod:`raidlab.trace_facts` (PRO Table 2)."""
    return Profile(name, int(trace_facts.fact(name, "requests").value), trace_facts.fact(name, "hot20_share").value,
                   trace_facts.fact(name, "mean_interarrival_ms").value, f"PRO paper (seed 000) Table 2, {label}")


#: The three web-search traces as the PRO paper used them (seed 000 Table 2, kept in
#: :mod:`raidlab.trace_facts` with their citation).
PROFILES: Dict[str, Profile] = {
    "websearch1": _web_profile("websearch1", "Web Trace 1"),
    "websearch2": _web_profile("websearch2", "Web Trace 2"),
    "websearch3": _web_profile("websearch3", "Web Trace 3"),
}

@dataclass(frozen=True)
class OltpProfile:
    """What the SWO paper publishes of one OLTP trace (seed 002 Table I): the share of
    requests that are writes, the mean request size (KB, as printed; read as 1,024 bytes) and
    the mean rate (I/O per second); plus the length raidlab writes by default (the paper
    replays each trace for an hour, §IV-B-2)."""

    name: str
    write_fraction: float
    mean_size_kb: float
    iops: float
    source: str
    duration_s: float = 3600.0

    @property
    def requests(self) -> int:
        """Requests in ``duration_s`` at the published rate."""
        return int(round(self.iops * self.duration_s))

    @property
    def mean_interarrival_ms(self) -> float:
        return 1000.0 / self.iops

    @property
    def mean_size_sectors(self) -> float:
        return self.mean_size_kb * 1024.0 / SECTOR_BYTES


def _oltp_profile(name: str, label: str) -> OltpProfile:
    """An OLTP profile read from :mod:`raidlab.trace_facts` (SWO Table I)."""
    return OltpProfile(name, trace_facts.fact(name, "write_fraction").value, trace_facts.fact(name, "mean_size_kb").value,
                       trace_facts.fact(name, "iops").value, f"SWO paper (seed 002) Table I, {label}")


#: The two OLTP traces as the SWO paper characterizes them (seed 002 Table I, kept in
#: :mod:`raidlab.trace_facts` with their citation).
OLTP_PROFILES: Dict[str, OltpProfile] = {
    "financial1": _oltp_profile("financial1", "Financial1.spc"),
    "financial2": _oltp_profile("financial2", "Financial2.spc"),
}
#: Every trace ``raidlab trace synth`` writes.
TRACE_NAMES = (*PROFILES, *OLTP_PROFILES)

#: raidlab's choices for the OLTP look-alikes (docs/traces.md), not published: the share of
#: requests sent to the hot regions, the share of the area the regions hold together, their
#: number, the default area (the SWO paper's 60 GB volume as 60 GiB: 7 drives of 10 GiB as
#: RAID-5), and the largest request (1 MiB: a geometric size of mean 12.4 sectors passes 2,048
#: sectors with probability e^-170).
OLTP_HOT_REQUEST_SHARE = 0.8
OLTP_HOT_AREA_SHARE = 0.02
OLTP_DEFAULT_HOT_REGIONS = 16
OLTP_DEFAULT_AREA_GIB = 60.0
OLTP_MAX_SECTORS = 2048

#: raidlab's choice of request sizes (KiB) and their probabilities (docs/traces.md).
SIZES_KIB = (8, 16, 24, 32)
SIZE_WEIGHTS = (0.50, 0.25, 0.10, 0.15)
#: The default area: 5 GiB, which every array of the PRO paper holds (its smallest, the
#: RAID-1 pair of 5 GB drives, holds 5 GB; a RAID-5 of n such drives holds (n − 1) × 5 GB).
DEFAULT_AREA_GIB = 5.0
#: The largest area: 2^32 GiB (4 EiB), so every byte address stays well within 64 bits.
MAX_AREA_GIB = float(2**32)
DEFAULT_HOT_REGIONS = 8
#: Peak memory per request of drawing, writing and measuring a trace, bytes (measured with
#: ``raidlab trace synth``: 1 M requests of ``--like websearch1`` peak at 213 MB, 3 M at 575 MB).
PEAK_BYTES_PER_REQUEST = 200
#: The most requests one trace may have. A trace is drawn whole in memory, each column in one
#: call of the generator, and cannot be drawn in pieces without changing every trace's bytes:
#: the arrival times are scaled by the sum of all the gaps, and the writes are the first of a
#: permutation of all the requests. So a count is bounded before anything is drawn (a larger
#: one would fail only once memory ran out): 25 × the longest published prefix, about 5 GB.
MAX_REQUESTS = 25_000_000
#: Per-block popularity of a hot region is uniform in this range (relative).
REGION_WEIGHT_RANGE = (1.0, 3.0)


@dataclass
class SyntheticTrace:
    """A generated trace: per request its first sector, size in bytes and arrival (s), plus
    the hot regions (first block, blocks) it was drawn with."""

    profile: Union[Profile, "OltpProfile"]
    seed: int
    area_sectors: int
    lba: np.ndarray
    size_bytes: np.ndarray
    time_s: np.ndarray
    hot_regions: List[tuple]
    #: Per request, whether it is a write; ``None``: every request is a read (web search).
    is_write: Optional[np.ndarray] = None

    @property
    def requests(self) -> int:
        return int(self.lba.size)


def _hot_plan(target: float, requests: int, area_blocks: int, mean_blocks: float) -> tuple:
    """(hot area in blocks, share of requests sent to it): see the module docstring."""
    hot_fraction = target
    hot_blocks = 0.0
    for _ in range(50):
        cold = (1.0 - hot_fraction) * requests
        q = 1.0 - math.exp(-cold * mean_blocks / area_blocks)
        hot_blocks = area_blocks * q / (4.0 + q)
        h = hot_blocks / area_blocks
        hot_fraction = (target - h) / (1.0 - h)
    return max(1, int(round(hot_blocks))), hot_fraction


def check_area(area_gib: float) -> None:
    """Raise ``ValueError`` unless ``area_gib`` is a number of GiB more than 0 and at most
    :data:`MAX_AREA_GIB` (not infinite, not NaN)."""
    try:
        area = float(area_gib)
    except (TypeError, ValueError):
        raise ValueError(f"area_gib: expected a number of GiB, not {area_gib!r}") from None
    if not math.isfinite(area):
        raise ValueError(f"area_gib: expected a finite number of GiB, not {area_gib}")
    if not area > 0:
        raise ValueError(f"area_gib: must be more than 0, not {area_gib:g}")
    if area > MAX_AREA_GIB:
        raise ValueError(f"area_gib: at most {MAX_AREA_GIB:.0f} GiB (4 EiB), not {area_gib:g}")


def check_requests(requests: int) -> None:
    """Raise ``ValueError`` unless ``requests`` is a whole number from 1 to
    :data:`MAX_REQUESTS`: before anything is drawn, so a huge count costs no memory."""
    count = int(requests)
    if count < 1:
        raise ValueError(f"requests: at least 1, not {count}")
    if count > MAX_REQUESTS:
        raise ValueError(f"requests: at most {MAX_REQUESTS:,} requests, not {count:,}: a trace is drawn whole in "
                         f"memory (about {PEAK_BYTES_PER_REQUEST} bytes a request, "
                         f"{MAX_REQUESTS * PEAK_BYTES_PER_REQUEST / 1e9:.0f} GB at the limit)")


def default_area_gib(name: str) -> float:
    """The area a trace named ``name`` covers by default: 5 GiB for the web-search traces,
    the SWO paper's 60 GB volume (60 GiB) for the OLTP ones."""
    return OLTP_DEFAULT_AREA_GIB if name in OLTP_PROFILES else DEFAULT_AREA_GIB


def default_hot_regions(name: str) -> int:
    return OLTP_DEFAULT_HOT_REGIONS if name in OLTP_PROFILES else DEFAULT_HOT_REGIONS


def generate(profile: Union[str, Profile, OltpProfile], *, seed: int = 1, requests: Optional[int] = None,
             area_gib: Optional[float] = None, hot_regions: Optional[int] = None,
             read_fraction: Optional[float] = None) -> SyntheticTrace:
    """Draw a look-alike of ``profile`` (a name of :data:`TRACE_NAMES`, a :class:`Profile` or
    an :class:`OltpProfile`): ``requests`` requests (default: the published count, or an
    hour at the published rate) over an area of ``area_gib`` GiB (default
    :func:`default_area_gib`) with ``hot_regions`` hot regions (default
    :func:`default_hot_regions`).

    ``read_fraction`` (web search only): the share of requests that are reads; the others,
    ``round((1 - read_fraction) * requests)`` of them, become writes at random places in the
    sequence, drawn after everything else. ``None`` (the default) writes reads only, as the
    PRO paper replayed its prefixes, and leaves the file byte-identical to before."""
    if isinstance(profile, str):
        if profile in OLTP_PROFILES:
            profile = OLTP_PROFILES[profile]
        elif profile in PROFILES:
            profile = PROFILES[profile]
        else:
            raise ValueError(f"unknown trace {profile!r}; known: {', '.join(TRACE_NAMES)}")
    if area_gib is None:
        area_gib = default_area_gib(profile.name)
    if hot_regions is None:
        hot_regions = default_hot_regions(profile.name)
    count = profile.requests if requests is None else int(requests)
    check_requests(count)
    if hot_regions < 1:
        raise ValueError(f"hot regions: at least 1, not {hot_regions}")
    check_area(area_gib)
    if isinstance(profile, OltpProfile):
        if read_fraction is not None:
            raise ValueError("read_fraction: the OLTP look-alikes take their write share from their profile")
        return _generate_oltp(profile, seed=seed, count=count, area_gib=area_gib, hot_regions=hot_regions)
    if read_fraction is not None and not 0.0 <= float(read_fraction) <= 1.0:
        raise ValueError(f"read_fraction: between 0 and 1, not {read_fraction}")
    area_blocks = int(area_gib * 2**30) // BLOCK_BYTES
    largest_blocks = max(SIZES_KIB) * 1024 // BLOCK_BYTES
    if area_blocks < 64 * largest_blocks * hot_regions:
        raise ValueError(f"area: {area_gib} GiB is too small for {hot_regions} hot regions of "
                         f"{max(SIZES_KIB)} KiB requests")
    rng = np.random.default_rng([0x5EA7C4, int(seed)])
    sizes_blocks = np.array(SIZES_KIB) * 1024 // BLOCK_BYTES
    weights = np.array(SIZE_WEIGHTS) / sum(SIZE_WEIGHTS)
    mean_blocks = float(sizes_blocks @ weights)
    hot_total, hot_fraction = _hot_plan(profile.hot_share, count, area_blocks, mean_blocks)
    hot_total = max(hot_total, hot_regions * 2 * largest_blocks)

    # The hot regions: sizes 0.5–1.5 × the mean, placed with random gaps between them.
    region_start, region_blocks, region_p = _place_regions(rng, area_blocks, hot_total, hot_regions,
                                                           2 * largest_blocks)

    # Each request: size, hot or cold, where.
    size_index = rng.choice(len(SIZES_KIB), size=count, p=weights)
    length = sizes_blocks[size_index]
    first = _place_requests(rng, length, hot_fraction, region_start, region_blocks, region_p, area_blocks)

    # Arrivals: exponential gaps scaled to the published mean exactly, rounded to 1 µs.
    time_s = _poisson_times(rng, count, profile.mean_interarrival_ms)

    # Writes, only when asked for: drawn last, so a reads-only trace is unchanged.
    is_write = None
    if read_fraction is not None:
        is_write = np.zeros(count, dtype=bool)
        is_write[rng.permutation(count)[:int(round((1.0 - float(read_fraction)) * count))]] = True

    return SyntheticTrace(profile=profile, seed=int(seed), area_sectors=area_blocks * SECTORS_PER_BLOCK,
                          lba=first * SECTORS_PER_BLOCK, size_bytes=length * BLOCK_BYTES, time_s=time_s,
                          hot_regions=[(int(s), int(b)) for s, b in zip(region_start, region_blocks)],
                          is_write=is_write)


def _place_regions(rng: np.random.Generator, area_blocks: int, hot_total: int, hot_regions: int,
                   smallest: int) -> tuple:
    """``hot_regions`` regions holding about ``hot_total`` blocks (each 0.5–1.5 × the mean, at
    least ``smallest``), placed in order with random gaps; and each one's share of the hot
    requests (its size × a popularity per block uniform in :data:`REGION_WEIGHT_RANGE`)."""
    relative = rng.uniform(0.5, 1.5, hot_regions)
    region_blocks = np.maximum(np.floor(relative / relative.sum() * hot_total).astype(np.int64), smallest)
    free = area_blocks - int(region_blocks.sum())
    cuts = np.sort(rng.integers(0, free + 1, hot_regions))
    gaps = np.diff(np.concatenate(([0], cuts)))
    region_start = np.cumsum(gaps) + np.concatenate(([0], np.cumsum(region_blocks)[:-1]))
    per_block = rng.uniform(*REGION_WEIGHT_RANGE, hot_regions)
    region_p = per_block * region_blocks
    return region_start, region_blocks, region_p / region_p.sum()


def _place_requests(rng: np.random.Generator, length: np.ndarray, hot_fraction: float, region_start: np.ndarray,
                    region_blocks: np.ndarray, region_p: np.ndarray, area_blocks: int) -> np.ndarray:
    """Each request's first block: ``hot_fraction`` of them fall wholly inside a hot region
    (chosen by ``region_p``), the others anywhere in the area; ``length`` is each one's
    length in blocks."""
    count = len(length)
    hot = rng.random(count) < hot_fraction
    region = rng.choice(len(region_p), size=count, p=region_p)
    position = rng.random(count)
    first = np.empty(count, dtype=np.int64)
    room = region_blocks[region] - length + 1
    first[hot] = region_start[region[hot]] + np.floor(position[hot] * room[hot]).astype(np.int64)
    cold = ~hot
    first[cold] = np.floor(position[cold] * (area_blocks - length[cold] + 1)).astype(np.int64)
    return first


def _poisson_times(rng: np.random.Generator, count: int, mean_interarrival_ms: float) -> np.ndarray:
    """Arrival times from 0: exponential gaps scaled to the mean exactly, rounded to 1 µs."""
    gaps_s = rng.exponential(1.0, count)
    gaps_s[0] = 0.0
    if count > 1:
        gaps_s *= mean_interarrival_ms / 1000.0 * (count - 1) / gaps_s[1:].sum()
    return np.round(np.cumsum(gaps_s), 6)


def _generate_oltp(profile: OltpProfile, *, seed: int, count: int, area_gib: float,
                   hot_regions: int) -> SyntheticTrace:
    """An OLTP look-alike (the module docstring) of `count` requests (checked by the caller,
    as the hot regions and the area are): geometric sizes in sectors, 4 KiB-aligned starts,
    80 % of requests in hot regions holding 2 % of the area, the published write share
    exactly, Poisson arrivals at the published rate."""
    area_blocks = int(area_gib * 2**30) // BLOCK_BYTES
    largest_blocks = OLTP_MAX_SECTORS // SECTORS_PER_BLOCK
    hot_total = int(round(area_blocks * OLTP_HOT_AREA_SHARE))
    if hot_total < 2 * largest_blocks * hot_regions or area_blocks < 64 * largest_blocks * hot_regions:
        raise ValueError(f"area: {area_gib} GiB is too small for {hot_regions} hot regions of "
                         f"{OLTP_MAX_SECTORS * SECTOR_BYTES // 1024} KiB requests")
    rng = np.random.default_rng([0x0F1A7C, list(OLTP_PROFILES).index(profile.name) if profile.name in OLTP_PROFILES
                                 else len(OLTP_PROFILES), int(seed)])
    region_start, region_blocks, region_p = _place_regions(rng, area_blocks, hot_total, hot_regions,
                                                           2 * largest_blocks)

    sectors = np.minimum(rng.geometric(1.0 / profile.mean_size_sectors, count), OLTP_MAX_SECTORS).astype(np.int64)
    length = (sectors + SECTORS_PER_BLOCK - 1) // SECTORS_PER_BLOCK  # 4 KiB blocks the request covers
    first = _place_requests(rng, length, OLTP_HOT_REQUEST_SHARE, region_start, region_blocks, region_p, area_blocks)

    is_write = np.zeros(count, dtype=bool)
    is_write[rng.permutation(count)[:int(round(profile.write_fraction * count))]] = True
    time_s = _poisson_times(rng, count, profile.mean_interarrival_ms)

    return SyntheticTrace(profile=profile, seed=int(seed), area_sectors=area_blocks * SECTORS_PER_BLOCK,
                          lba=first * SECTORS_PER_BLOCK, size_bytes=sectors * SECTOR_BYTES, time_s=time_s,
                          hot_regions=[(int(s), int(b)) for s, b in zip(region_start, region_blocks)],
                          is_write=is_write)


# ---------------------------------------------------------------------------------------------
# Look-alikes fitted to published facts (``raidlab trace synth --like NAME``)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LikePlan:
    """How ``raidlab trace synth --like NAME`` draws a look-alike: the profile and area it
    uses, and for every parameter where its value comes from (:attr:`provenance`: pairs of
    a parameter and either ``"fact <id>"``, an entry of :data:`raidlab.trace_facts.FACTS`,
    or ``"choice: <why>"``)."""

    name: str
    profile: Union[Profile, OltpProfile]
    area_gib: float
    hot_regions: int
    #: Web search: the share of reads (the rest are writes). None for the OLTP traces, whose
    #: write share is the profile's.
    read_fraction: Optional[float]
    provenance: tuple

    def facts(self) -> tuple:
        """The :class:`raidlab.trace_facts.Fact` entries the plan is fitted to."""
        return tuple(trace_facts.fact(source.split(" ", 1)[1]) for _, source in self.provenance
                     if source.startswith("fact "))


def like_plan(name: str) -> LikePlan:
    """The look-alike of ``name`` (a name of :data:`TRACE_NAMES`) fitted to the published facts
    in :mod:`raidlab.trace_facts`. No parameter is taken from a result of the PRO, VDF or
    SWO paper; every parameter no fact sets is labelled a choice."""
    if name in PROFILES:
        span = trace_facts.fact(name, "span_gb")
        reads = trace_facts.fact(name, "read_fraction")
        provenance = (
            ("requests", f"fact {trace_facts.fact(name, 'requests').id}"),
            ("read share", f"fact {reads.id}"),
            ("share in the hottest 20 %", f"fact {trace_facts.fact(name, 'hot20_share').id}"),
            ("mean inter-arrival", f"fact {trace_facts.fact(name, 'mean_interarrival_ms').id}"),
            ("area", f"fact {span.id}"),
            ("area unit", "choice: the source's GB read as GiB"),
            ("sizes", f"choice: {', '.join(str(k) for k in SIZES_KIB)} KiB with probabilities "
                      f"{', '.join(f'{w:g}' for w in SIZE_WEIGHTS)}; no size is published"),
            ("hot regions", f"choice: {DEFAULT_HOT_REGIONS} contiguous regions, popularity per block uniform "
                            f"in [{REGION_WEIGHT_RANGE[0]:g}, {REGION_WEIGHT_RANGE[1]:g}]"),
            ("cold requests", "choice: uniform over the area"),
            ("writes", "choice: at random places in the sequence, placed as reads are"),
            ("arrivals", "choice: Poisson; no burstiness is published"),
        )
        return LikePlan(name, PROFILES[name], span.value, DEFAULT_HOT_REGIONS, reads.value, provenance)
    if name in OLTP_PROFILES:
        provenance = (
            ("requests", "choice: one hour at the published rate, the length the SWO paper replays"),
            ("write share", f"fact {trace_facts.fact(name, 'write_fraction').id}"),
            ("mean size", f"fact {trace_facts.fact(name, 'mean_size_kb').id}"),
            ("size unit", "choice: the source's KB read as 1,024 bytes"),
            ("mean rate", f"fact {trace_facts.fact(name, 'iops').id}"),
            ("area", f"choice: {OLTP_DEFAULT_AREA_GIB:g} GiB, the SWO paper's volume (an array, not a trace fact)"),
            ("sizes", "choice: geometric number of 512-byte sectors with the published mean"),
            ("hot regions", f"choice: {OLTP_DEFAULT_HOT_REGIONS} regions holding {OLTP_HOT_AREA_SHARE:.0%} of the "
                            f"area get {OLTP_HOT_REQUEST_SHARE:.0%} of the requests"),
            ("arrivals", "choice: Poisson; no burstiness is published"),
        )
        return LikePlan(name, OLTP_PROFILES[name], OLTP_DEFAULT_AREA_GIB, OLTP_DEFAULT_HOT_REGIONS, None, provenance)
    raise ValueError(f"unknown trace {name!r}; known: {', '.join(TRACE_NAMES)}")


def generate_like(name: str, *, seed: int = 1, requests: Optional[int] = None, area_gib: Optional[float] = None,
                  hot_regions: Optional[int] = None) -> SyntheticTrace:
    """Draw the look-alike of :func:`like_plan` ``(name)``; ``requests``, ``area_gib`` and
    ``hot_regions`` override the plan's (an override is the caller's choice, not a fact)."""
    plan = like_plan(name)
    return generate(plan.profile, seed=seed, requests=requests,
                    area_gib=plan.area_gib if area_gib is None else area_gib,
                    hot_regions=plan.hot_regions if hot_regions is None else hot_regions,
                    read_fraction=plan.read_fraction)


#: Lines formatted at once when writing: bounds the memory the text takes.
WRITE_CHUNK = 100_000


def _chunks(trace: SyntheticTrace):
    """The trace's SPC lines, ``WRITE_CHUNK`` at a time, as ASCII bytes."""
    writes = trace.is_write if trace.is_write is not None else np.zeros(trace.requests, dtype=bool)
    for first in range(0, trace.requests, WRITE_CHUNK):
        part = slice(first, first + WRITE_CHUNK)
        yield "".join(f"0,{lba},{size},{'w' if write else 'r'},{t:.6f}\n" for lba, size, write, t in
                      zip(trace.lba[part].tolist(), trace.size_bytes[part].tolist(), writes[part].tolist(),
                          trace.time_s[part].tolist())).encode("ascii")


#: Compression by file name: what ``write`` writes for a name ending so (raidlab's trace
#: readers recognise both by their first bytes).
COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bzip2"}
#: Endings of compressed formats raidlab's trace readers do not read: ``write`` refuses them
#: rather than write plain text under a compressed name.
UNWRITABLE_SUFFIXES = (".xz", ".lzma", ".zst", ".zstd", ".lz4", ".zip", ".7z", ".z", ".br", ".lz")


def compression_for(path: Union[str, Path]) -> Optional[str]:
    """``"gzip"``, ``"bzip2"`` or ``None`` (plain text) for a trace file named ``path``;
    ``ValueError`` for the name of a compressed format raidlab does not read."""
    suffix = Path(path).suffix.lower()
    if suffix in UNWRITABLE_SUFFIXES:
        raise ValueError(f"{Path(path).name}: raidlab writes traces as plain text, gzip (.gz) or bzip2 (.bz2), "
                         f"and its readers read no other compression; {Path(path).suffix} is not one of them")
    return COMPRESSION_SUFFIXES.get(suffix)


def write(trace: SyntheticTrace, path: Union[str, Path], *, compress: Union[bool, str, None] = None) -> Path:
    """Write ``trace`` as SPC ASCII, compressed as ``compress`` says: ``"gzip"`` (or ``True``),
    ``"bzip2"``, or ``False`` for plain text; by default as the name says (``.gz`` gzip,
    ``.bz2`` bzip2, :func:`compression_for`). The gzip header holds no time stamp (nor does a
    bzip2 stream), so the bytes stay a function of the trace."""
    path = Path(path)
    if compress is None:
        compression = compression_for(path)
    elif compress is True:
        compression = "gzip"
    elif compress is False:
        compression = None
    elif compress in ("gzip", "bzip2"):
        compression = compress
    else:
        raise ValueError(f"compress: \"gzip\", \"bzip2\", True or False, not {compress!r}")
    with open(path, "wb") as raw:
        if compression == "gzip":
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=3, mtime=0) as out:
                for chunk in _chunks(trace):
                    out.write(chunk)
        elif compression == "bzip2":
            with bz2.BZ2File(raw, mode="wb", compresslevel=9) as out:
                for chunk in _chunks(trace):
                    out.write(chunk)
        else:
            for chunk in _chunks(trace):
                raw.write(chunk)
    return path


def read_spc(path: Union[str, Path]) -> Dict[str, np.ndarray]:
    """The columns of an SPC ASCII trace (plain, gzip or bzip2): ``lba`` (sectors), ``size_bytes``,
    ``is_read``, ``time_s``. For checking generated traces; the simulator reads traces in Rust."""
    import pandas as pd

    path = Path(path)
    with open(path, "rb") as probe:
        head = probe.read(3)
    compression = "gzip" if head[:2] == b"\x1f\x8b" else "bz2" if head == b"BZh" else None
    frame = pd.read_csv(path, header=None, usecols=[1, 2, 3, 4], names=["lba", "size", "op", "time"],
                        dtype={"lba": np.int64, "size": np.int64, "op": str, "time": np.float64},
                        compression=compression)
    return {
        "lba": frame["lba"].to_numpy(),
        "size_bytes": frame["size"].to_numpy(),
        "is_read": frame["op"].str.strip().str.lower().eq("r").to_numpy(),
        "time_s": frame["time"].to_numpy(),
    }


def hot_share(lba: np.ndarray, size_bytes: np.ndarray) -> float:
    """The share of 4 KiB block accesses that fall in the hottest 20 % of the touched blocks,
    as ``raidlab trace info`` defines ``locality_hot20`` (exactly, whatever the trace's size)."""
    first = lba.astype(np.int64) * SECTOR_BYTES // BLOCK_BYTES
    last = (lba.astype(np.int64) * SECTOR_BYTES + size_bytes.astype(np.int64) - 1) // BLOCK_BYTES
    spans = last - first + 1
    offsets = np.arange(int(spans.sum())) - np.repeat(np.cumsum(spans) - spans, spans)
    blocks = np.repeat(first, spans) + offsets
    _, counts = np.unique(blocks, return_counts=True)
    hot = math.ceil(counts.size / 5)
    ranked = np.sort(counts)[::-1]
    return float(ranked[:hot].sum() / counts.sum())


def characteristics(columns: Dict[str, np.ndarray]) -> Dict[str, float]:
    """The published characteristics measured on a trace's columns (:func:`read_spc`)."""
    time_s = columns["time_s"]
    n = int(time_s.size)
    interarrival_ms = float((time_s.max() - time_s.min()) / (n - 1) * 1000.0) if n > 1 else 0.0
    return {
        "requests": n,
        "read_fraction": float(columns["is_read"].mean()) if n else 0.0,
        "write_fraction": float(1.0 - columns["is_read"].mean()) if n else 0.0,
        "iops": 1000.0 / interarrival_ms if interarrival_ms > 0 else 0.0,
        "hot_share": hot_share(columns["lba"], columns["size_bytes"]) if n else 0.0,
        "mean_interarrival_ms": interarrival_ms,
        "mean_size_kib": float(columns["size_bytes"].mean() / 1024.0) if n else 0.0,
        "largest_end_sector": int((columns["lba"] + columns["size_bytes"] // SECTOR_BYTES).max()) if n else 0,
    }
