"""Published facts about the SPC traces WebSearch1-3 and Financial1-2, each with its source.

The look-alikes of ``raidlab trace synth`` (:mod:`raidlab.synth`) take every parameter that a
fact here sets from this table, and nothing else. What no fact sets stays raidlab's choice,
and :func:`raidlab.synth.like_plan` says which is which.

Rules for this table:

* A fact is recorded only as a source states it. Nothing is estimated or filled in.
* A paper under test (PRO, VDF, SWO) may give trace characteristics (a read share, a mean
  size, a rate). They are recorded and marked with ``paper_under_test``. Its *results* (rebuild
  times, response times, hit ratios or RGRs it reports as outcomes) are never recorded here,
  so they cannot be fitted to.
* Numbers from sources that are not publications (a file that gives no primary source) are
  kept apart as ``secondary``. They are never used
  to set a parameter; a test may use one as a cross-check of a raidlab choice.

:data:`NOT_FOUND` lists what was looked for and not found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

__all__ = [
    "Citation",
    "Fact",
    "CITATIONS",
    "FACTS",
    "NOT_FOUND",
    "TRACES",
    "fact",
    "facts_for",
]

#: The five traces of the UMass trace repository's SPC collection this table covers.
TRACES = ("websearch1", "websearch2", "websearch3", "financial1", "financial2")


@dataclass(frozen=True)
class Citation:
    """Where a fact is stated."""

    key: str
    authors: str
    title: str
    venue: str
    #: None where the source gives no date.
    year: Optional[int]
    #: Which paper under test this is ("PRO", "VDF", "SWO"), or None.
    paper_under_test: Optional[str] = None
    #: True for a publication; False for a source that is not one (see the module docstring).
    publication: bool = True


CITATIONS: Dict[str, Citation] = {c.key: c for c in (
    Citation("pro", "L. Tian, D. Feng, H. Jiang, K. Zhou, L. Zeng, J. Chen, Z. Wang, Z. Song",
             "PRO: A Popularity-based Multi-threaded Reconstruction Optimization for RAID-Structured "
             "Storage Systems", "5th USENIX Conference on File and Storage Technologies (FAST '07)", 2007,
             paper_under_test="PRO"),
    Citation("vdf", "S. Wan, Q. Cao, J. Huang, S. Li, X. Li, S. Zhan, L. Yu, C. Xie, X. He",
             "Victim Disk First: An Asymmetric Cache to Boost the Performance of Disk Arrays under Faulty "
             "Conditions", "USENIX Annual Technical Conference (USENIX ATC '11)", 2011, paper_under_test="VDF"),
    Citation("swo", "L. Mei, D. Feng, L. Zeng, J. Chen, J. Liu",
             "A Stripe-Oriented Write Performance Optimization for RAID-Structured Storage Systems",
             "IEEE International Conference on Networking, Architecture and Storage (NAS)", 2016,
             paper_under_test="SWO"),
    Citation("traces-readme", "raidlab's shared trace notes (no primary source given)",
             "Real block-trace samples: README, section 'Published characteristics'", "project notes", None,
             publication=False),
)}


@dataclass(frozen=True)
class Fact:
    """One stated number about one trace.

    ``quantity`` is one of: ``requests`` (count), ``read_fraction``, ``write_fraction``,
    ``hot20_share`` (share of requests in the hottest 20 % of the area), ``mean_interarrival_ms``,
    ``mean_size_kb`` (as printed; KB unit not defined by the source), ``iops``, ``span_gb``
    (address range of the data set, GB as printed), ``sector_accesses`` and
    ``distinct_sectors`` (512-byte sectors), ``distinct_blocks`` (block size not stated).
    """

    id: str
    trace: str
    quantity: str
    value: float
    citation: str
    where: str
    #: What part of the trace the number describes: "whole trace", "PRO prefix", "one hour", ...
    scope: str
    note: str = ""

    @property
    def source(self) -> Citation:
        return CITATIONS[self.citation]

    @property
    def secondary(self) -> bool:
        """True when the source is not a publication: never used to set a parameter."""
        return not self.source.publication

    @property
    def paper_under_test(self) -> Optional[str]:
        return self.source.paper_under_test


_PRO_T2 = "§4.2, Table 2 \"The characteristics of three web traces\""
_PRO_PREFIX = "PRO prefix (the beginning of the trace the paper replayed)"
_READ_NOTE = ("§4.2: \"absolute read-domination (99.98%) in all of the web-search-engine I/O traces\"; §2.2 "
              "gives the same figure for the web search workload, citing Sikalinda, Walters and Kritzinger, "
              "A Storage System Workload Analyzer, University of Cape Town technical report CS06-02-00, 2006")
_VDF_SPAN = ("§6.2: SPC-1-web \"spans a 60GB dataset\". The paper does not say which WebSearch file SPC-1-web "
             "is, so the figure is recorded for each of the three")

FACTS: Tuple[Fact, ...] = (
    # --- PRO (paper under test for seed 000): trace characteristics of the prefixes it replayed.
    Fact("pro-ws1-requests", "websearch1", "requests", 842_535, "pro", _PRO_T2, _PRO_PREFIX, "Web Trace 1"),
    Fact("pro-ws2-requests", "websearch2", "requests", 999_999, "pro", _PRO_T2, _PRO_PREFIX, "Web Trace 2"),
    Fact("pro-ws3-requests", "websearch3", "requests", 999_999, "pro", _PRO_T2, _PRO_PREFIX, "Web Trace 3"),
    Fact("pro-ws1-hot20", "websearch1", "hot20_share", 0.6999, "pro", _PRO_T2, _PRO_PREFIX,
         "\"20% most active area by size handles so much of total requests\"; the area is not defined further"),
    Fact("pro-ws2-hot20", "websearch2", "hot20_share", 0.7012, "pro", _PRO_T2, _PRO_PREFIX),
    Fact("pro-ws3-hot20", "websearch3", "hot20_share", 0.6989, "pro", _PRO_T2, _PRO_PREFIX),
    Fact("pro-ws1-interarrival", "websearch1", "mean_interarrival_ms", 3.74, "pro", _PRO_T2, _PRO_PREFIX),
    Fact("pro-ws2-interarrival", "websearch2", "mean_interarrival_ms", 3.73, "pro", _PRO_T2, _PRO_PREFIX),
    Fact("pro-ws3-interarrival", "websearch3", "mean_interarrival_ms", 5.71, "pro", _PRO_T2, _PRO_PREFIX),
    Fact("pro-ws1-reads", "websearch1", "read_fraction", 0.9998, "pro", "§4.2 and §2.2", "whole trace", _READ_NOTE),
    Fact("pro-ws2-reads", "websearch2", "read_fraction", 0.9998, "pro", "§4.2 and §2.2", "whole trace", _READ_NOTE),
    Fact("pro-ws3-reads", "websearch3", "read_fraction", 0.9998, "pro", "§4.2 and §2.2", "whole trace", _READ_NOTE),
    # --- VDF (paper under test for seed 003): the data set's span, a trace characteristic.
    Fact("vdf-ws1-span", "websearch1", "span_gb", 60.0, "vdf", "§6.2", "SPC-1-web (file not named)", _VDF_SPAN),
    Fact("vdf-ws2-span", "websearch2", "span_gb", 60.0, "vdf", "§6.2", "SPC-1-web (file not named)", _VDF_SPAN),
    Fact("vdf-ws3-span", "websearch3", "span_gb", 60.0, "vdf", "§6.2", "SPC-1-web (file not named)", _VDF_SPAN),
    # --- SWO (paper under test for seed 002): Table I's trace characteristics.
    Fact("swo-f1-writes", "financial1", "write_fraction", 0.672, "swo", "§IV, Table I", "as characterized by the paper"),
    Fact("swo-f1-size", "financial1", "mean_size_kb", 6.2, "swo", "§IV, Table I", "as characterized by the paper"),
    Fact("swo-f1-iops", "financial1", "iops", 69.0, "swo", "§IV, Table I", "as characterized by the paper"),
    Fact("swo-f2-writes", "financial2", "write_fraction", 0.176, "swo", "§IV, Table I", "as characterized by the paper"),
    Fact("swo-f2-size", "financial2", "mean_size_kb", 2.2, "swo", "§IV, Table I", "as characterized by the paper"),
    Fact("swo-f2-iops", "financial2", "iops", 125.0, "swo", "§IV, Table I", "as characterized by the paper"),
    # --- Secondary: never used to set a parameter.
    Fact("readme-ws1-requests", "websearch1", "requests", 1_055_448, "traces-readme", "table row WebSearch1",
         "whole trace"),
    Fact("readme-ws2-requests", "websearch2", "requests", 4_579_809, "traces-readme", "table row WebSearch2",
         "whole trace"),
    Fact("readme-ws3-requests", "websearch3", "requests", 4_261_709, "traces-readme", "table row WebSearch3",
         "whole trace"),
    Fact("readme-f1-requests", "financial1", "requests", 5_334_987, "traces-readme", "table row Financial1",
         "whole trace"),
    Fact("readme-f2-requests", "financial2", "requests", 3_699_194, "traces-readme", "table row Financial2",
         "whole trace"),
    Fact("readme-ws1-distinct", "websearch1", "distinct_blocks", 480_446, "traces-readme", "table row WebSearch1",
         "whole trace", "the block size is not stated, so the figure cannot be compared with a footprint"),
    Fact("readme-f1-reads", "financial1", "read_fraction", 0.232, "traces-readme", "table row Financial1",
         "whole trace", "disagrees with the SWO paper's 67.2 % writes (32.8 % reads); the SWO figure is used"),
    Fact("readme-f2-reads", "financial2", "read_fraction", 0.823, "traces-readme", "table row Financial2",
         "whole trace", "agrees with the SWO paper's 17.6 % writes to 0.1 point"),
)

#: What was looked for and not found in any source read (publications or otherwise).
NOT_FOUND: Dict[str, Tuple[str, ...]] = {
    "websearch1": ("request-size distribution or mean size in a publication",
                   "footprint (distinct data touched) in a publication",
                   "hit or miss ratio at a stated cache size"),
    "websearch2": ("request-size distribution or mean size", "footprint (distinct data touched)",
                   "hit or miss ratio at a stated cache size"),
    "websearch3": ("request-size distribution or mean size", "footprint (distinct data touched)",
                   "hit or miss ratio at a stated cache size"),
    "financial1": ("request-size distribution (only the mean)", "footprint or address range",
                   "hit or miss ratio at a stated cache size"),
    "financial2": ("request-size distribution (only the mean)", "footprint or address range",
                   "hit or miss ratio at a stated cache size"),
}

_BY_ID = {f.id: f for f in FACTS}
if len(_BY_ID) != len(FACTS):  # pragma: no cover - a typo in the table
    raise RuntimeError("trace_facts: duplicate fact id")


def facts_for(trace: str, *, include_secondary: bool = True) -> Tuple[Fact, ...]:
    """Every fact about ``trace`` (one of :data:`TRACES`), in table order."""
    if trace not in TRACES:
        raise ValueError(f"unknown trace {trace!r}; known: {', '.join(TRACES)}")
    return tuple(f for f in FACTS if f.trace == trace and (include_secondary or not f.secondary))


def fact(key: str, quantity: Optional[str] = None) -> Fact:
    """The fact with id ``key``; or, given a trace name and a ``quantity``, the one
    publication fact about that trace and quantity."""
    if quantity is None:
        try:
            return _BY_ID[key]
        except KeyError:
            raise KeyError(f"no fact {key!r}") from None
    found = [f for f in facts_for(key, include_secondary=False) if f.quantity == quantity]
    if len(found) != 1:
        raise KeyError(f"{len(found)} publication facts about {key} {quantity}; expected one")
    return found[0]
