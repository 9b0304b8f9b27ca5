"""``raidlab reproduce swo`` (raidlab.reproductions.swo): the SWO paper's log-assisted RAID-5
schemes against plain RAID-5. The published numbers are transcribed as printed (and the
paper's own arithmetic checked); a quick reproduction (5 minutes of each Financial
look-alike, short IOmeter-like streams, one seed) runs, every cell comes from its runs, and
the properties a faithful simulation must have hold: the proven pre-read identities, SWO
never pre-reading more than Data Logging, every logged row recovered right through the log,
the same re-sync work for every scheme after the same trace."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from raidlab.cli import main
from raidlab.exceptions import ConfigError
from raidlab.reproductions import Context, entry, run_reproduction
from raidlab.reproductions import swo

QUICK = {"quick": True}


def _number(cell: str) -> float:
    return float(cell.split()[0].replace(",", ""))


# -- the published numbers ----------------------------------------------------------------------


def test_table_ii_improvements_follow_from_its_values_for_financial1_only():
    """Financial1's "Improved by" column is (other − SWO) / other of the printed counts; the
    Financial2 row's is not (notes A.15), which the report footnotes."""
    for trace, misprinted in (("financial1", False), ("financial2", True)):
        values, printed = swo.TABLE2[trace], swo.TABLE2_IMPROVED[trace]
        for scheme, percent in printed.items():
            computed = 100 * (values[scheme] - values["SWO"]) / values[scheme]
            assert (abs(computed - percent) > 1) == (misprinted and scheme != "RAID5L_O"), (trace, scheme, computed)
    # The identities Table II prints: RAID5L_S = RAID5L and RAID5L_O = SWO.
    for values in swo.TABLE2.values():
        assert values["RAID5L_S"] == values["RAID5L"] and values["RAID5L_O"] == values["SWO"]


def test_fig11_combined_reproduces_swo_against_raid5l_as_the_notes_derive():
    """S and O combined multiplicatively give SWO's own reduction of RAID5L's response time
    (Fig. 8) and re-sync time (Fig. 10) within a few tenths of a point (notes A.15)."""
    for trace in swo.TRACES:
        s, o = swo.FIG11[(trace, "RAID5L_S")], swo.FIG11[(trace, "RAID5L_O")]
        combined = [100 * (1 - (1 - a / 100) * (1 - b / 100)) for a, b in zip(s, o)]
        assert abs(combined[0] - swo.FIG8[trace]["RAID5L"]) < 0.3
        assert abs(combined[2] - swo.FIG10[trace]["RAID5L"]) < 0.3


def test_the_cases_cover_every_figure():
    full, quick = swo.cases(), swo.cases(quick=True)
    assert len(set(full)) == len(full) and set(quick) <= set(full)
    for trace in swo.TRACES:
        for chunk in swo.TRACE_CHUNKS_KIB:
            assert {c.scheme for c in full if c.workload == trace and c.chunk_kib == chunk} == set(swo.SCHEMES)
    iometer = [c for c in full if c.study == "iometer"]
    for pattern in swo.IOMETER_PATTERNS:
        for size in swo.IOMETER_SIZES_KIB:
            for depth in swo.IOMETER_DEPTHS:
                at = [c for c in iometer if (c.workload, c.size_kib, c.depth) == (pattern, size, depth)]
                assert {c.scheme for c in at if c.chunk_kib == swo.PAPER_CHUNK_KIB} == set(swo.SCHEMES)  # Fig. 6
                for chunk in swo.CHUNKS_KIB:  # Fig. 7: SWO and RAID5 at every chunk
                    assert {"RAID5", "SWO"} <= {c.scheme for c in at if c.chunk_kib == chunk}
    assert len(swo.FIG7["random"]) == len(swo.CHUNKS_KIB) == 5


def test_md_page_count_of_plain_raid5_by_hand(tmp_path):
    """md's rule on 4 KiB rows of 6 data blocks: one block → rmw, 2 pages (data and parity);
    three → 3 either way; four → rcw, 2; a full row → 0. At 512 KiB chunks every block of a
    small write is in its own row."""
    path = tmp_path / "t.spc"
    path.write_text("0,0,24576,w,0.0\n0,0,4096,w,0.1\n0,0,12288,w,0.2\n0,0,16384,w,0.3\n0,0,4096,r,0.4\n")
    assert swo.md_raid5_pages(path, 4, 10) == pytest.approx((0 + 2 + 3 + 2) / 4)
    assert swo.md_raid5_pages(path, 512, 10) == pytest.approx((6 * 2 + 2 + 3 * 2 + 4 * 2) / 4)
    # A 512-byte write covers a page in part: md reads the whole page, and the parity's.
    path.write_text("0,8,512,w,0.0\n")
    assert swo.md_raid5_pages(path, 4, 10) == 2


@pytest.mark.parametrize("options, key", [
    ({"colour": "blue"}, "swo"),
    ({"duration_s": 0}, "duration_s"),
    ({"iometer_requests": 1.5}, "iometer_requests"),
    ({"traces": {"financial3": "x.spc"}}, "traces"),
    ({"traces": {"financial1": "no-such-trace.spc"}}, "traces.financial1"),
])
def test_bad_options_are_refused_naming_the_option(options, key, tmp_path):
    with pytest.raises(ConfigError) as raised:
        run_reproduction(entry("swo"), Context(output=tmp_path / "swo", options=options))
    assert raised.value.key == key


@pytest.mark.parametrize("argv, words", [
    (["reproduce", "swo", "--trace", "missing.spc"], "--trace: swo takes financial1=FILE or financial2=FILE"),
    (["reproduce", "swo", "--trace", "financial1=missing.spc"], "--trace: no such trace file: missing.spc"),
    (["reproduce", "swo", "--studies", "nope"], "studies: expected some of ['iometer', 'traces']"),
])
def test_the_command_line_names_the_bad_option(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "-o", str(tmp_path / "out")]) == 2
    assert words in capsys.readouterr().err


# -- a quick reproduction -----------------------------------------------------------------------


def _sweeps(output: Path) -> pd.DataFrame:
    """Every case's run (the Fig. 9 recovery runs, the trace cases again, left out)."""
    return pd.concat([pd.read_parquet(path) for path in sorted(output.glob("*-seed*/summary.parquet"))
                      if not path.parent.name.startswith("recovery")], ignore_index=True)


@pytest.fixture(scope="module")
def quick_reproduction(tmp_path_factory):
    """The quick grid, run once for the tests that read it: (output folder, report)."""
    output = tmp_path_factory.mktemp("quick") / "swo"
    return output, run_reproduction(entry("swo"), Context(output=output, seeds=1, jobs=2, options=QUICK))


@pytest.mark.engine
def test_a_quick_reproduction_runs_and_its_properties_hold(quick_reproduction):
    output, report = quick_reproduction
    assert report.error is None, report.error
    runs = _sweeps(output)
    assert len(runs) == len(swo.cases(quick=True)) and set(runs["status"]) == {"done"}
    logged = runs[runs["log.scheme"].notna()]
    traces = runs[runs["workload.trace.path"].str.contains("financial")]

    # Every request of every run completed: 5 minutes of each look-alike at its rate.
    for trace, rate in (("financial1", 69), ("financial2", 125)):
        rows = traces[traces["workload.trace.path"].str.contains(trace)]
        assert (rows["requests_completed"] == int(round(rate * 300))).all(), trace
    # Content checks (trace runs): no stale read, and every row written recovered right at the
    # end of every run with a log: through the log (Fig. 5's rule), or plainly under md's
    # schemes, whose parity is current.
    checked = traces[traces["log.scheme"].notna()]
    assert (traces["content.stale_reads"] == 0).all()
    assert (checked["log.recovery_sectors_checked"] > 0).all()
    assert (checked["log.recovery_sectors_wrong"] == 0).all()
    # Fig. 10's setting (the schemes that re-sync): one re-sync, when the log drive fails, after
    # the replay; no log-full rows; the same rows re-synchronized whatever the scheme (same
    # trace, same dirty rows).
    checked = checked[checked["log.scheme"].isin([swo.SCHEMES[s] for s in swo.LOG_SCHEMES])]
    assert (checked["log.resyncs"] == 1).all() and (checked["log.log_full_rows"] == 0).all()
    assert (checked["log.logged_rows_at_end"] == 0).all()
    for _, group in checked.groupby(["workload.trace.path", "array.stripe_unit_kib"]):
        assert group["log.resync_rows"].nunique() == 1, group[["log.scheme", "log.resync_rows"]]

    # The proven identities (notes A.8), run by run: RAID5L_S pre-reads as RAID5L and
    # RAID5L_O as SWO (and respond alike: look-ups cost no time); SWO never pre-reads more than
    # Data Logging, nor more than plain RAID-5 counted in md's pages.
    def by_scheme(frame: pd.DataFrame) -> dict:
        return {scheme: row for scheme, row in frame.set_index("log.scheme", drop=False).iterrows()}

    keys = ["workload.trace.path", "array.stripe_unit_kib", "workload.arrival"]
    compared = 0
    for key, group in logged.groupby([k for k in keys if k in logged], dropna=False):
        schemes = by_scheme(group)
        if "raid5l_s" in schemes:
            for left, right in (("raid5l_s", "raid5l"), ("raid5l_o", "swo")):
                assert schemes[left]["log.pre_read_blocks"] == schemes[right]["log.pre_read_blocks"], key
                assert schemes[left]["response_ms.all.mean"] == pytest.approx(
                    schemes[right]["response_ms.all.mean"], rel=0.01), key
            assert schemes["swo"]["log.pre_read_blocks"] <= schemes["data_logging"]["log.pre_read_blocks"], key
            compared += 1
    assert compared == 4 + 2  # 2 traces × 2 chunks, and the two IOmeter patterns at 512 KiB

    # Table II: the paper's column as printed, raidlab's from the runs.
    table2 = next(t for t in report.tables if t.title.startswith("Table II"))
    for row in table2.rows:
        trace = {"Financial1": "financial1", "Financial2": "financial2"}[row[0]]
        scheme = next(s for s, name in swo.SCHEME_NAMES.items() if name == row[2])
        chunk = int(row[1].split()[0])
        if chunk == swo.PAPER_CHUNK_KIB and scheme in swo.TABLE2[trace]:
            assert _number(row[3]) == swo.TABLE2[trace][scheme]
        run = traces[traces["workload.trace.path"].str.contains(trace) & (traces["array.stripe_unit_kib"] == chunk)]
        if scheme == "RAID5" or scheme in swo.MD_SCHEMES:  # md plans its writes as plain RAID-5
            run = run[run["log.scheme"].isna()] if scheme == "RAID5" else run[run["log.scheme"] == swo.SCHEMES[scheme]]
            value = float(run["writes.pre_read_sectors"].iloc[0]) / 8 / float(run["response_ms.write.count"].iloc[0])
            pages = _number(row[6])
            assert _number(row[4]) <= pages + 1e-9  # raidlab reads sectors, md whole pages
            swo_row = next(r for r in table2.rows if r[:3] == [row[0], row[1], "SWO"])
            assert _number(swo_row[4]) <= pages  # SWO ≤ RAID5 (parity included), in md's pages
            assert scheme == "RAID5" or row[3] == "—"  # no published count for md
        else:
            run = run[run["log.scheme"] == swo.SCHEMES[scheme]]
            value = float(run["log.pre_read_blocks_per_write_request"].iloc[0])
        assert _number(row[4]) == pytest.approx(value, abs=0.0005), (trace, chunk, scheme)

    # Fig. 8's reductions are the runs' own arithmetic.
    fig8 = next(t for t in report.tables if t.title.startswith("Fig. 8:"))
    for row in fig8.rows:
        trace = row[0].lower()
        chunk = int(row[1].split()[0])
        versus = next(s for s, name in swo.SCHEME_NAMES.items() if row[2] == f"SWO vs {name}")
        at = traces[traces["workload.trace.path"].str.contains(trace) & (traces["array.stripe_unit_kib"] == chunk)]
        mine = float(at[at["log.scheme"] == "swo"]["response_ms.all.mean"].iloc[0])
        other = at[at["log.scheme"].isna()] if versus == "RAID5" else at[at["log.scheme"] == swo.SCHEMES[versus]]
        other = float(other["response_ms.all.mean"].iloc[0])
        assert _number(row[4]) == pytest.approx(100 * (other - mine) / other, abs=0.005)
        if chunk == swo.PAPER_CHUNK_KIB:
            assert _number(row[3]) == swo.FIG8[trace][versus]

    # Fig. 9: every recovery ran, and SWO's reductions are the runs' own arithmetic.
    recovery = pd.read_parquet(output / "recovery-seed1" / "summary.parquet")
    assert (recovery["status"] == "done").all() and recovery["rebuild_time_s"].notna().all()
    assert (recovery["array.stripe_unit_kib"] == swo.PAPER_CHUNK_KIB).all()
    fig9 = next(t for t in report.tables if t.title.startswith("Fig. 9"))
    for row in fig9.rows:
        if not row[1].startswith("SWO vs"):
            continue
        trace = row[0].lower()
        versus = next(s for s, name in swo.SCHEME_NAMES.items() if row[1] == f"SWO vs {name}")
        at = recovery[recovery["workload.trace.path"].str.contains(trace)]
        mine = float(at[at["log.scheme"] == "swo"]["rebuild_time_s"].iloc[0])
        other = float(at[at["log.scheme"] == swo.SCHEMES[versus]]["rebuild_time_s"].iloc[0])
        assert _number(row[3]) == pytest.approx(100 * (other - mine) / other, abs=0.005)
        assert _number(row[2]) == swo.FIG9[trace][versus]
    claim = next(row for row in report.tables[-1].rows if row[0] == "Fig. 9")
    assert claim[3] != "—" and "of 2" in claim[2]
    assert report.figures and all(f.path.is_file() and f.path.suffix == ".png" for f in report.figures)

    # A second run reuses every finished run and reports the same numbers.
    again = run_reproduction(entry("swo"), Context(output=output, seeds=1, jobs=2, options=QUICK))
    assert "0 run now" in again.facts[0] and again.error is None
    assert [t.rows for t in again.tables] == [t.rows for t in report.tables]


@pytest.mark.engine
def test_md_schemes_pre_read_as_raid5_and_pay_for_their_log(quick_reproduction):
    """md's journal and PPL plan every write as plain RAID-5, so on the same workload they
    pre-read exactly what RAID-5 does; each puts a log write before the home writes of every
    write, so their writes respond no faster than RAID-5's. The journal logs the data besides
    what PPL logs (a header and a parity-sized range), so more bytes per write. Neither has
    anything to re-sync, and PPL's area lies beyond the volume, which every run shares."""
    output, report = quick_reproduction
    runs = _sweeps(output)
    assert (runs["capacity_bytes"] == swo.VOLUME_BYTES).all()
    journal, ppl = swo.SCHEMES["MDJ"], swo.SCHEMES["PPL"]
    md = runs[runs["log.scheme"].isin([journal, ppl])]
    assert len(md) == 2 * sum(1 for c in swo.cases(quick=True) if c.scheme == "MDJ")
    # Nothing to re-sync; and at one write outstanding or a trace's rate no log fills, so every
    # write is logged.
    assert (md["log.resyncs"] == 0).all() and (md["log.unprotected_writes"] == 0).all()
    resync = pd.read_parquet(output / "resync-seed1" / "summary.parquet")
    assert not resync["log.scheme"].isin([journal, ppl]).any()  # no log drive to fail (Fig. 10)

    compared = 0
    for key, group in runs.groupby(["workload.trace.path", "array.stripe_unit_kib"]):
        if not group["log.scheme"].isin([journal, ppl]).any():
            continue
        raid5 = group[group["log.scheme"].isna()].iloc[0]
        by_scheme = group.set_index("log.scheme")
        for scheme in (journal, ppl):
            assert by_scheme.loc[scheme, "writes.pre_read_sectors"] == raid5["writes.pre_read_sectors"], key
            assert by_scheme.loc[scheme, "response_ms.write.mean"] >= raid5["response_ms.write.mean"], (key, scheme)
        assert by_scheme.loc[journal, "log.md_log_bytes_per_write"] > by_scheme.loc[ppl, "log.md_log_bytes_per_write"]
        assert by_scheme.loc[ppl, "log.md_log_bytes_per_write"] >= 4096  # md's 4 KiB header at least
        compared += 1
    assert compared == 4 + 2  # 2 traces × 2 chunks, and the two IOmeter patterns at 512 KiB

    # Table II counts md as RAID5 and so gives it RAID5's number; the md table has a row for
    # each md run.
    table2 = next(t for t in report.tables if t.title.startswith("Table II"))
    for row in table2.rows:
        if row[2] in (swo.SCHEME_NAMES["MDJ"], swo.SCHEME_NAMES["PPL"]):
            raid5 = next(r for r in table2.rows if r[:3] == [row[0], row[1], "RAID5"])
            assert row[4] == raid5[4] and row[3] == "—"
    md_table = next(t for t in report.tables if t.title.startswith("md's journal and PPL"))
    assert len(md_table.rows) == len(md)


def test_the_command_line_gives_swo_its_traces_by_name(tmp_path):
    """`--trace financial1=FILE --trace financial2=FILE` become swo's ``traces`` option; a
    plain FILE stays vdf's (with --all both can be given)."""
    from raidlab.cli.experiments import _reproduce_traces

    one, two = tmp_path / "F1.spc", tmp_path / "F2.spc"
    for path in (one, two):
        path.write_text("0,0,4096,w,0.0\n")
    assert _reproduce_traces([f"financial1={one}", f"financial2={two}"], "swo") == {
        "swo": {"traces": {"financial1": str(one.resolve()), "financial2": str(two.resolve())}}}
    assert _reproduce_traces([str(one)], "vdf") == {"vdf": {"trace": str(one.resolve())}}
    assert _reproduce_traces([str(one), f"financial2={two}"], None) == {
        "vdf": {"trace": str(one.resolve())}, "swo": {"traces": {"financial2": str(two.resolve())}}}
    with pytest.raises(ConfigError, match="financial1 given twice"):
        _reproduce_traces([f"financial1={one}", f"financial1={two}"], "swo")


@pytest.mark.engine
def test_a_given_trace_runs_the_same_studies(tmp_path):
    """A given Financial1 file replaces the look-alike. Given the look-alike itself, the trace
    runs give the same numbers (the same file, the same array); the report says the trace was
    given and measures its characteristics."""
    from raidlab import synth

    options = {"quick": True, "duration_s": 60.0}
    first = run_reproduction(entry("swo"), Context(output=tmp_path / "a", seeds=1, jobs=2, studies=["traces"],
                                                   options=options))
    trace = tmp_path / "a" / "traces" / "financial1-60s-seed1.spc.gz"
    assert synth.characteristics(synth.read_spc(trace))["requests"] == 69 * 60
    copy = tmp_path / "Financial1.spc.gz"
    copy.write_bytes(trace.read_bytes())
    given = run_reproduction(entry("swo"), Context(output=tmp_path / "b", seeds=1, jobs=2, studies=["traces"],
                                                   options={**options, "traces": {"financial1": str(copy)}}))
    assert given.error is None and any(f"given traces (Financial1: {copy.resolve()})" in f for f in given.facts)
    assert not (tmp_path / "b" / "traces" / "financial1-60s-seed1.spc.gz").exists()
    table = {t.title: t for t in given.tables}
    ours = {t.title: t for t in first.tables}
    characteristics = next(t for title, t in table.items() if title.startswith("Table I:"))
    assert characteristics.rows[0][1] == "given: Financial1.spc.gz"
    assert characteristics.rows[0][3] == next(t for title, t in ours.items() if title.startswith("Table I:")).rows[0][3]
    for title in (t for t in table if t.startswith(("Table II", "Fig. 8", "Fig. 10"))):
        assert table[title].rows == ours[title].rows, title
    assert math.isfinite(_number(table[next(t for t in table if t.startswith("Table II"))].rows[0][4]))
