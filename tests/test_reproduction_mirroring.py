"""``raidlab reproduce mirroring`` (raidlab.reproductions.mirroring): the thesis's comparison
of mirroring schemes in normal, degraded and rebuild modes. A quick reproduction (only the
points of the numbers the thesis states, 100,000-request normal and degraded runs, one seed)
reports every stated number beside raidlab's, computed from its own runs, and keeps the
thesis's orderings of interleaved declustering against traditional mirroring."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from raidlab.reproductions import Context, entry, run_reproduction
from raidlab.reproductions import mirroring

REPO_ROOT = Path(__file__).resolve().parent.parent
BASE = REPO_ROOT / "experiments" / mirroring.CONFIG
QUICK = {"quick": True}


def _number(cell: str) -> float:
    """The number of a report cell ("43.91 ms", "1,234.50 min", "+12.3 %")."""
    return float(cell.split()[0].replace(",", ""))


def test_the_grids_hold_every_point_the_published_numbers_and_the_figures_need():
    full, quick = set(mirroring.grid()), set(mirroring.grid(quick=True))
    needed = {s.point for s in mirroring.PUBLISHED} | {s.over[0] for s in mirroring.PUBLISHED if s.over}
    assert quick == needed and quick <= full
    assert len(full) == len(mirroring.grid())  # each point once
    for _, _, panels in mirroring.FIGURES:
        for panel in panels:
            if panel.rate is None:
                wanted = {mirroring.Point(panel.mode, panel.unit, panel.share, rate) for rate in mirroring.RATES}
            else:
                wanted = {mirroring.Point(panel.mode, panel.unit, share, panel.rate) for share in (0.0, 0.5, 0.75, 1.0)}
            assert wanted <= full, (panel.title, wanted - full)
    # Every stated number names schemes of the table, and each scheme's array lines are TOML.
    assert all(set(s.values) <= set(mirroring.SCHEMES) for s in mirroring.PUBLISHED)
    assert all(mirroring._array_keys(scheme)["array.layout"] for scheme in mirroring.SCHEMES)


def test_a_rebuild_unfinished_when_the_load_stopped_is_shown_as_a_lower_bound():
    """A rebuild that ends after the arrivals stopped did not finish under load: its time is
    a lower bound ("> 240 min"), never a number compared with the thesis."""
    point = next(s.point for s in mirroring.PUBLISHED if s.metric == "rebuild_min")
    cases = [("TM", point), ("ID", point)]
    cap = mirroring.REBUILD_CAP_S
    table = pd.DataFrame([
        {"status": "done", "case": 0, "seed": 4, "overloaded": False, "rebuild.outcome": "complete",
         "rebuild.ended_at_s": cap + 30.0, "rebuild_time_s": cap + 20.0},
        {"status": "done", "case": 1, "seed": 4, "overloaded": False, "rebuild.outcome": "complete",
         "rebuild.ended_at_s": 1210.0, "rebuild_time_s": 1200.0},
    ])
    runs = mirroring._runs_frame(table, cases)
    assert runs["finished"].tolist() == [False, True]
    published = mirroring._published_table(mirroring._Means(runs), ["TM", "ID"], [4])
    rows = {row[2]: row for row in published.rows if row[0] == "Fig. 27"}
    assert rows["TM"][4] == f"> {(cap - mirroring.REBUILD_FAILURE_S) / 60:.0f} min" and rows["TM"][6] == "—"
    assert rows["ID"][4] == "20.00 min" and rows["ID"][6] == f"{(20.0 - 29.21) / 29.21 * 100:+.1f} %"


@pytest.mark.engine
def test_a_scheme_runs_exactly_where_the_core_accepts_it():
    """A scheme whose layout the core lacks runs nowhere, and one whose rebuild it lacks runs
    in normal and degraded mode only; TM and ID run everywhere."""
    from raidlab.catalogue import catalogue

    layouts = next(f.names for f in catalogue() if f.name == "layouts")
    points = mirroring.grid()
    accepted, refused = mirroring.available_schemes(BASE, list(mirroring.SCHEMES), points)
    assert set(accepted) == {mirroring._group(p) for p in points}
    for scheme in mirroring.SCHEMES:
        known = mirroring._array_keys(scheme)["array.layout"] in layouts
        assert (scheme in accepted["normal"]) == known, scheme
        for group, schemes in accepted.items():
            assert (scheme in schemes) != (group in refused.get(scheme, {})), (scheme, group)
    assert all({"TM", "ID"} <= set(schemes) for schemes in accepted.values())
    # The refusal is the core's own message, and a scheme run by none is named in it.
    assert all(reason for groups in refused.values() for reason in groups.values())


@pytest.mark.engine
def test_a_quick_reproduction_reports_every_published_number_from_its_runs(tmp_path):
    output = tmp_path / "mirroring"
    report = run_reproduction(entry("mirroring"), Context(output=output, seeds=1, jobs=2, options=QUICK))
    assert report.error is None, report.error
    quick = mirroring.grid(quick=True)
    accepted, _ = mirroring.available_schemes(BASE, list(mirroring.SCHEMES), quick)

    def ran(scheme: str, point: mirroring.Point) -> bool:
        return scheme in accepted[mirroring._group(point)]

    # Every run finished; every rebuild ended while the load lasted.
    sweeps = {mode: pd.read_parquet(output / mode / "summary.parquet") for mode in mirroring.MODES}
    for mode, runs in sweeps.items():
        assert set(runs["status"]) == {"done"}, mode
        assert len(runs) == sum(len(accepted[mirroring._group(p)]) for p in quick if p.mode == mode), mode
    rebuilds = sweeps["rebuild"]
    assert set(rebuilds["rebuild.outcome"]) == {"complete"}
    assert (rebuilds["rebuild.ended_at_s"] < mirroring.REBUILD_CAP_S).all()
    # The whole drive is rebuilt: 949 cylinders × 14 tracks × 6 blocks of 4 KB.
    whole = {"sectors": 949 * 14 * 6, "tracks": 949 * 14, "cylinders": 949}
    for unit, units in zip(rebuilds["rebuild.unit"].astype(str), rebuilds["rebuild.units"]):
        assert [units] == [count for name, count in whole.items() if name in unit], unit

    # One row per stated number and scheme; the thesis's column as stated, raidlab's from the runs.
    published, table3 = report.tables[0], report.tables[1]
    assert len(published.rows) == sum(len(s.values) for s in mirroring.PUBLISHED)
    rows = {(row[0], row[2]): row for row in published.rows}
    for stated in mirroring.PUBLISHED:
        for scheme, value in stated.values.items():
            row = rows[(stated.source, scheme)]
            assert _number(row[3]) == pytest.approx(value)
            needed = [stated.point] + ([stated.over[0]] if stated.over else [])
            assert (row[4] == "not run") == (not all(ran(scheme, point) for point in needed)), (stated.source, scheme)
    normal = sweeps["normal"]
    for scheme in accepted["normal"]:
        layout = mirroring._array_keys(scheme)["array.layout"]
        run = normal[(normal["array.layout"] == layout) & (normal["workload.read_fraction"] == 0.75)
                     & (normal["workload.arrival.rate_per_s"] == 250)]
        assert len(run) == 1
        assert _number(rows[("Fig. 6", scheme)][4]) == pytest.approx(float(run["response_ms.read.p90"].iloc[0]), abs=0.005)
        assert _number(rows[("Fig. 7", scheme)][4]) == pytest.approx(
            float(run["drives.mean_utilization"].iloc[0]) * 100, abs=0.005)

    # The thesis's orderings: the failed set's reads slow down far less with ID than with TM
    # (degraded, Fig. 11; block rebuild, Figs. 14-15; cylinder rebuild, Table 3), and ID's
    # reads are faster than TM's in normal mode (Fig. 6) and degraded at 100 % reads (§3.3).
    def ours(source: str, scheme: str) -> float:
        return _number(rows[(source, scheme)][4])

    for source in ("Fig. 11", "Figs. 14-15", "Table 3"):
        assert ours(source, "ID") < ours(source, "TM") / 3, source
    assert ours("Fig. 6", "ID") < 0.9 * ours("Fig. 6", "TM")
    assert ours("§3.3", "ID") < 0.9 * ours("§3.3", "TM")
    # Table 3's body is missing: only its three cylinder-unit ratios are the thesis's.
    assert {row[0] for row in table3.rows} == {"cylinder"}  # the quick grid ran the cylinder point only
    assert all(row[5] != "missing" for row in table3.rows)
    assert any("lacks the bodies of Tables 3 and 4" in fact for fact in report.facts)
    assert report.figures and all(figure.path.is_file() and figure.path.suffix == ".png" for figure in report.figures)

    # A second run reuses every finished run and reports the same numbers.
    again = run_reproduction(entry("mirroring"), Context(output=output, seeds=1, jobs=2, options=QUICK))
    assert "0 run now" in again.facts[0] and again.error is None
    assert [t.rows for t in again.tables] == [t.rows for t in report.tables]
    assert all(row[4] not in ("—", "nan") for row in published.rows)
    # The schemes' array lines and the points' rates and read shares are the runs' own.
    for scheme in accepted["normal"]:
        layout = mirroring._array_keys(scheme)["array.layout"]
        assert (normal["array.layout"] == layout).sum() == sum(1 for p in quick if p.mode == "normal")
