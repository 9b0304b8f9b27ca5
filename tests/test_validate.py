"""raidlab.validate: drive validation against DiskSim's real-drive traces."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from raidlab import _core
from raidlab.exceptions import ConfigError, RaidlabIOError, TraceError
from raidlab.validate import (
    DISKSIM_PUBLISHED,
    Validation,
    disksim_bucket_starts,
    disksim_rms,
    drive_table,
    plot_validation,
    render_validation_report,
    run_validation_report,
    validate,
    write_validation_report,
)

from conftest import SHARED

DISKSPECS = SHARED / "diskspecs"
IBM18ES_TRACE = DISKSPECS / "ibm18es.trace"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def wrong_drive() -> Validation:
    """The ibm18es trace on the ibm0661 preset: the wrong drive, but a complete validation."""
    return validate("ibm0661", IBM18ES_TRACE)


# -- published figures --------------------------------------------------------------------------


def test_published_figures_cover_the_ten_drives_of_the_shared_directory():
    assert len(DISKSIM_PUBLISHED) == 10
    for name, published in DISKSIM_PUBLISHED.items():
        assert (DISKSPECS / f"{name}.trace").is_file(), name
        assert (DISKSPECS / f"{name}.parv").is_file(), name
        assert 0 < published.disksim_demerit_ms < 0.5
    assert DISKSIM_PUBLISHED["ibm18es"].measured_mean_ms == 5.26


# -- the drive argument ---------------------------------------------------------------------------


def test_an_existing_file_is_a_diskspec_anything_else_a_preset(tmp_path):
    spec = tmp_path / "x.parv"
    spec.write_text("disksim_global Global { }\n")
    assert drive_table(spec) == {"diskspec": str(spec.resolve())}
    assert drive_table(str(spec)) == {"diskspec": str(spec.resolve())}
    assert drive_table("ibm0661") == {"preset": "ibm0661"}
    assert drive_table(tmp_path / "absent.parv") == {"preset": str(tmp_path / "absent.parv")}
    assert drive_table({"preset": "hc550", "scheduler": "sptf"}) == {"preset": "hc550", "scheduler": "sptf"}


# -- a validation run -----------------------------------------------------------------------------


def test_validation_of_the_ibm18es_trace_has_every_request_and_consistent_figures(wrong_drive):
    v = wrong_drive
    assert v.request_count == 10_000
    assert v.summary["reads"] + v.summary["writes"] == 10_000
    assert v.measured_mean_ms == pytest.approx(5.2605174, abs=1e-9)
    assert v.demerit_percent == pytest.approx(100 * v.demerit_ms / v.measured_mean_ms)
    assert v.summary["beyond_capacity"] > 0  # the 18ES is far larger than the IBM 0661
    requests = v.requests
    assert list(requests.columns) == ["line", "is_write", "buffer", "lbn", "blocks", "measured_ms", "simulated_ms"]
    # Line 1: "R Hit   17317516   4  13661.00000  26658.00000".
    first = requests.iloc[0]
    assert (first["line"], first["is_write"], first["buffer"], first["lbn"], first["blocks"]) == (1, 0, "Hit", 17317516, 4)
    assert first["measured_ms"] == 13.661
    assert requests["simulated_ms"].mean() == pytest.approx(v.simulated_mean_ms)
    # The demerit is the RMS difference of the sorted samples (equal sizes).
    sorted_difference = np.sort(requests["measured_ms"].to_numpy()) - np.sort(requests["simulated_ms"].to_numpy())
    assert v.demerit_ms == pytest.approx(math.sqrt(np.mean(sorted_difference**2)), rel=1e-12)
    for cdf in (v.measured_cdf, v.simulated_cdf):
        assert list(cdf.columns) == ["response_ms", "fraction"]
        assert cdf["response_ms"].is_monotonic_increasing and cdf["fraction"].iloc[-1] == 1.0


def test_validation_is_deterministic(wrong_drive):
    again = validate({"preset": "ibm0661"}, str(IBM18ES_TRACE))
    assert again.summary == wrong_drive.summary
    pd.testing.assert_frame_equal(again.requests, wrong_drive.requests)


def test_a_malformed_trace_line_is_a_trace_error_with_file_and_line(tmp_path):
    trace = tmp_path / "bad.trace"
    trace.write_text("R Hit 1 4 100.0 5\nQ Hit 2 4 100.0 5\n")
    with pytest.raises(TraceError) as caught:
        validate("ibm0661", trace)
    assert (caught.value.file, caught.value.line) == (str(trace), 2)
    assert 'unknown operation "Q"' in str(caught.value)


@pytest.mark.parametrize("name", ["absent.parv", "specs/absent", "."])
def test_a_drive_named_like_a_file_that_is_not_one_is_an_io_error(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RaidlabIOError) as caught:
        validate(name, IBM18ES_TRACE)
    assert caught.value.filename == name
    assert "preset" not in str(caught.value)


def test_the_report_of_a_missing_diskspecs_directory_is_an_error_and_writes_nothing(tmp_path):
    report = tmp_path / "validation.md"
    with pytest.raises(RaidlabIOError) as caught:
        write_validation_report(tmp_path / "absent", report)
    assert caught.value.filename == str(tmp_path / "absent")
    assert not report.exists()


def test_an_unknown_preset_is_a_config_error_naming_the_key():
    with pytest.raises(ConfigError) as caught:
        validate("ibm9999", IBM18ES_TRACE)
    assert caught.value.key == "drive.preset"


def test_the_plot_is_a_png(wrong_drive, tmp_path):
    path = plot_validation(wrong_drive, tmp_path / "sub" / "cdf.png", title="ibm0661 on ibm18es")
    assert path.read_bytes().startswith(PNG_SIGNATURE)


# -- DiskSim's construction of the demerit ----------------------------------------------------------


def test_disksim_buckets_grow_by_one_microsecond_and_one_percent():
    starts = disksim_bucket_starts()
    assert len(starts) == 1750
    assert list(starts[:5]) == [0, 1, 2, 3, 4]
    # From 100 µs on, each bucket is 1 µs + 1 % (truncated) wider: 100 → 102 → 104 → 106.
    index = list(starts).index(100)
    assert list(starts[index:index + 4]) == [100, 102, 104, 106]


def test_disksim_rms_agrees_with_the_exact_demerit_on_analytic_cases(wrong_drive):
    measured = wrong_drive.requests["measured_ms"].to_numpy()
    assert disksim_rms(measured, measured) == 0.0
    for shift in (0.1, 0.3, 1.0):
        assert disksim_rms(measured, measured + shift) == pytest.approx(shift, rel=0.01)
    # The exact demerit of a sample scaled by a is |a − 1|·RMS(x); the binned one is close.
    exact = 0.05 * math.sqrt(np.mean(measured**2))
    assert disksim_rms(measured, measured * 1.05) == pytest.approx(exact, rel=0.01)
    simulated = wrong_drive.requests["simulated_ms"].to_numpy()
    assert disksim_rms(measured, simulated) == pytest.approx(wrong_drive.demerit_ms, rel=0.01)


# -- the report -----------------------------------------------------------------------------------


def test_the_report_lists_every_drive_with_a_result_or_its_error(tmp_path):
    # ibm18es on a preset standing in for its spec; the other nine from their specs (which
    # need the DiskSim spec import; without it they are listed with the error).
    output = tmp_path / "docs" / "validation.md"
    entries = write_validation_report(DISKSPECS, output, drives={"ibm18es": {"preset": "ibm0661"}})
    assert [entry.name for entry in entries] == list(DISKSIM_PUBLISHED)
    text = output.read_text()
    for name in DISKSIM_PUBLISHED:
        assert f"| `{name}` |" in text
    ibm = entries[list(DISKSIM_PUBLISHED).index("ibm18es")]
    assert ibm.validation is not None and ibm.image == "validation/ibm18es.png"
    assert (tmp_path / "docs" / "validation" / "ibm18es.png").read_bytes().startswith(PNG_SIGNATURE)
    assert f"({ibm.image})" in text
    ratio = ibm.validation.demerit_ms / 0.135
    assert f"| {ibm.validation.demerit_ms:.3f} |" in text and f"| {ratio:.1f} |" in text
    assert "Requests served in under 1.5 ms" in text
    assert "DiskSim's construction" in text and f"| `ibm18es` | {ibm.validation.demerit_ms:.4f} |" in text
    for entry in entries:
        assert (entry.validation is None) == (entry.error is not None)
        if entry.error is not None:
            assert entry.error.splitlines()[0] in text
            assert entry.image is None


def test_report_rendering_marks_drives_that_did_not_run():
    entries = run_validation_report(DISKSPECS, drives={name: {"preset": "no_such_drive"} for name in DISKSIM_PUBLISHED})
    text = render_validation_report(entries, command="raidlab docs validation")
    assert text.count("| not run |") == 10
    assert "## Drives not validated" in text and "10 of 10 drives could not be run" in text
    assert "unknown drive preset" in text
    assert "Response-time distributions" not in text
