"""The look-alikes of ``raidlab trace synth --like NAME`` against the published facts they claim
(raidlab.trace_facts, docs/trace-lookalikes.md).

Tolerances, and why:

* Counts the generator sets exactly (writes, requests) are checked exactly: the write count is
  ``round(share x requests)``, so the measured share is within half a request of the fact.
* The mean inter-arrival time is scaled to the fact exactly; the file's timestamps are rounded
  to 1 us, so the check is 1e-6 relative.
* The share of block accesses in the hottest 20 % is drawn. Over 8 seeds at 40,000 requests
  it has a standard deviation of 0.0013 and sits 0.0009 above the fact on average, so the
  bound is 0.0075 (the bias plus 5 standard deviations).
* A mean size drawn from a law is checked within 5 standard errors of that law's mean over
  the requests drawn.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from raidlab import synth, trace_facts
from raidlab.cli import main

WEB = ("websearch1", "websearch2", "websearch3")
OLTP = ("financial1", "financial2")
#: Requests per look-alike in the fast tests.
N = 40_000
HOT_TOLERANCE = 0.0075


def _columns(trace: synth.SyntheticTrace) -> dict:
    is_write = trace.is_write if trace.is_write is not None else np.zeros(trace.requests, dtype=bool)
    return {"lba": trace.lba, "size_bytes": trace.size_bytes, "is_read": ~is_write, "time_s": trace.time_s}


# --- the table itself ------------------------------------------------------------------------


def test_every_fact_has_a_full_citation_and_a_known_quantity():
    quantities = {"requests", "read_fraction", "write_fraction", "hot20_share", "mean_interarrival_ms",
                  "mean_size_kb", "iops", "span_gb", "sector_accesses", "distinct_sectors", "distinct_blocks"}
    for fact in trace_facts.FACTS:
        cited = fact.source
        assert fact.trace in trace_facts.TRACES
        assert fact.quantity in quantities, fact.id  # no hit ratio, rebuild time or response time
        assert cited.authors and cited.title and cited.venue and fact.where and fact.scope
        if cited.publication:
            assert cited.year is not None and 2000 < cited.year < 2030
        assert math.isfinite(fact.value) and fact.value > 0


def test_facts_from_a_paper_under_test_are_marked():
    for fact in trace_facts.FACTS:
        expected = {"pro": "PRO", "vdf": "VDF", "swo": "SWO"}.get(fact.citation)
        assert fact.paper_under_test == expected, fact.id


def test_what_was_not_found_is_recorded_for_every_trace():
    assert set(trace_facts.NOT_FOUND) == set(trace_facts.TRACES)
    for missing in trace_facts.NOT_FOUND.values():
        assert any("hit or miss ratio" in item for item in missing)
    # No hit-ratio fact exists, so no look-alike claims one.
    assert not [f for f in trace_facts.FACTS if "hit" in f.quantity or "miss" in f.quantity]


def test_the_existing_profiles_are_read_from_the_facts():
    for name, profile in synth.PROFILES.items():
        assert profile.requests == trace_facts.fact(name, "requests").value
        assert profile.hot_share == trace_facts.fact(name, "hot20_share").value
        assert profile.mean_interarrival_ms == trace_facts.fact(name, "mean_interarrival_ms").value
    for name, profile in synth.OLTP_PROFILES.items():
        assert profile.write_fraction == trace_facts.fact(name, "write_fraction").value
        assert profile.mean_size_kb == trace_facts.fact(name, "mean_size_kb").value
        assert profile.iops == trace_facts.fact(name, "iops").value


@pytest.mark.parametrize("name", WEB + OLTP)
def test_every_parameter_is_a_publication_fact_or_a_labelled_choice(name):
    plan = synth.like_plan(name)
    for parameter, source in plan.provenance:
        assert source.startswith("fact ") or source.startswith("choice: "), (parameter, source)
    for fact in plan.facts():
        assert fact.trace == name and not fact.secondary
    used = {f.quantity: f.value for f in plan.facts()}
    if name in WEB:
        assert used == {"requests": plan.profile.requests, "read_fraction": plan.read_fraction,
                        "hot20_share": plan.profile.hot_share,
                        "mean_interarrival_ms": plan.profile.mean_interarrival_ms, "span_gb": plan.area_gib}
    else:
        assert used == {"write_fraction": plan.profile.write_fraction, "mean_size_kb": plan.profile.mean_size_kb,
                        "iops": plan.profile.iops}


# --- the web-search look-alikes against their facts --------------------------------------------


@pytest.mark.parametrize("name", WEB)
def test_web_lookalike_matches_each_cited_fact(name):
    plan = synth.like_plan(name)
    trace = synth.generate_like(name, seed=3, requests=N)
    measured = synth.characteristics(_columns(trace))

    # Read share (PRO §4.2): writes are round(0.0002 x N) exactly.
    reads = trace_facts.fact(name, "read_fraction").value
    assert int(trace.is_write.sum()) == round((1 - reads) * N)
    assert abs(measured["read_fraction"] - reads) <= 0.5 / N

    # Share in the hottest 20 % (PRO Table 2): drawn; see the module docstring.
    hot = trace_facts.fact(name, "hot20_share").value
    assert abs(measured["hot_share"] - hot) <= HOT_TOLERANCE, measured["hot_share"]

    # Mean inter-arrival (PRO Table 2): scaled exactly, timestamps rounded to 1 us.
    interarrival = trace_facts.fact(name, "mean_interarrival_ms").value
    assert abs(measured["mean_interarrival_ms"] / interarrival - 1) <= 1e-6

    # Span (VDF §6.2, 60 GB read as 60 GiB): every address within it, and the highest within
    # its last 1 % (the uniform cold requests reach the end; missing that 1 % with the
    # ~12,000 cold requests drawn has probability about e^-120).
    span_sectors = int(trace_facts.fact(name, "span_gb").value * 2**30) // 512
    assert plan.area_gib == 60.0
    assert measured["largest_end_sector"] <= span_sectors
    assert measured["largest_end_sector"] >= 0.99 * span_sectors
    assert int(trace.lba.min()) >= 0


def test_the_pro_prefix_count_is_the_default_length():
    plan = synth.like_plan("websearch3")
    assert plan.profile.requests == trace_facts.fact("pro-ws3-requests").value == 999_999


# --- the Financial look-alikes against their facts ---------------------------------------------


@pytest.mark.parametrize("name", OLTP)
def test_financial_lookalike_matches_each_cited_fact(name):
    trace = synth.generate_like(name, seed=2, requests=N)
    measured = synth.characteristics(_columns(trace))

    writes = trace_facts.fact(name, "write_fraction").value
    assert int(trace.is_write.sum()) == round(writes * N)

    # Mean size (SWO Table I, KB read as 1,024 bytes): a geometric number of sectors with that
    # mean; within 5 standard errors of it (sd of a geometric law of mean m: sqrt(m (m - 1))).
    mean_sectors = trace_facts.fact(name, "mean_size_kb").value * 1024 / 512
    standard_error = math.sqrt(mean_sectors * (mean_sectors - 1)) / math.sqrt(N)
    assert abs(trace.size_bytes.mean() / 512 - mean_sectors) <= 5 * standard_error

    iops = trace_facts.fact(name, "iops").value
    assert abs(measured["iops"] / iops - 1) <= 1e-6


def test_financial_lookalike_is_the_existing_one():
    """For the Financial traces no further fact was found, so --like draws what the TRACE form
    draws, byte for byte."""
    a = synth.generate_like("financial2", seed=4, requests=5_000)
    b = synth.generate("financial2", seed=4, requests=5_000)
    assert np.array_equal(a.lba, b.lba) and np.array_equal(a.size_bytes, b.size_bytes)
    assert np.array_equal(a.is_write, b.is_write) and np.array_equal(a.time_s, b.time_s)


# --- the command --------------------------------------------------------------------------------


def test_the_command_writes_a_fact_fitted_lookalike(tmp_path, capsys):
    path = tmp_path / "ws2.spc"
    assert main(["trace", "synth", "--like", "websearch2", "-o", str(path), "--requests", "20000"]) == 0
    columns = synth.read_spc(path)
    assert columns["is_read"].size == 20_000
    assert int((~columns["is_read"]).sum()) == 4  # round(0.0002 x 20,000)
    assert columns["lba"].max() * 512 < 60 * 2**30
    printed = capsys.readouterr().out
    assert "Tian et al., 2007" in printed and "Wan et al., 2011" in printed and "choice:" in printed


def test_the_default_lookalike_stays_reads_only_and_unchanged():
    """Without --like nothing changes: reads only, no write draw, the same bytes as before."""
    trace = synth.generate("websearch1", seed=7, requests=3_000)
    assert trace.is_write is None
    like = synth.generate_like("websearch1", seed=7, requests=3_000, area_gib=synth.DEFAULT_AREA_GIB)
    assert np.array_equal(trace.lba, like.lba) and np.array_equal(trace.time_s, like.time_s)


@pytest.mark.parametrize("argv", [["websearch1", "--like", "websearch1"], []])
def test_trace_and_like_are_exclusive(argv, tmp_path, capsys):
    assert main(["trace", "synth", *argv, "-o", str(tmp_path / "x.spc")]) == 2
    assert "either a TRACE or --like" in capsys.readouterr().err
