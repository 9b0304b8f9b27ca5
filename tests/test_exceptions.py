"""raidlab.exceptions, and the binding's mapping of every core error (and panics) onto it."""

from __future__ import annotations

import errno
import pickle

import pytest

from raidlab import _core
from raidlab.exceptions import (
    ConfigError,
    RaidlabError,
    RaidlabIOError,
    SimulationError,
    SpecError,
    TraceError,
)


def raised_by_core(kind: str) -> BaseException:
    with pytest.raises(RaidlabError) as caught:
        _core._raise_for_test(kind)
    return caught.value


def test_config_error_carries_the_key_path():
    error = raised_by_core("config")
    assert type(error) is ConfigError
    assert error.key == "array.stripe_unit_kib"
    assert error.message == "expected a power of two"
    assert str(error) == "array.stripe_unit_kib: expected a power of two"
    assert isinstance(error, ValueError)


@pytest.mark.parametrize("kind, cls, file, line", [
    ("trace", TraceError, "traces/bad.csv", 17),
    ("spec", SpecError, "drives/odd.diskspecs", 42),
])
def test_file_line_errors_carry_file_and_line(kind, cls, file, line):
    error = raised_by_core(kind)
    assert type(error) is cls
    assert (error.file, error.line) == (file, line)
    assert str(error).startswith(f"{file}:{line}: ")


def test_io_error_is_an_os_error_with_errno_and_filename():
    error = raised_by_core("io")
    assert type(error) is RaidlabIOError
    assert isinstance(error, OSError)
    assert error.errno == errno.ENOENT
    assert error.filename == "traces/missing.csv"
    assert str(error) == "traces/missing.csv: No such file or directory"


def test_io_error_without_os_error_number_keeps_the_message():
    error = raised_by_core("io_no_errno")
    assert error.errno is None
    assert error.filename == "traces/broken.csv.gz"
    assert "corrupt gzip stream" in str(error)


def test_invariant_is_a_simulation_error():
    error = raised_by_core("invariant")
    assert type(error) is SimulationError
    assert not error.panicked
    assert str(error).startswith("simulation invariant violated: ")


def test_panic_becomes_a_simulation_error_and_python_survives():
    error = raised_by_core("panic")
    assert type(error) is SimulationError
    assert error.panicked
    assert "deliberate panic for the test" in str(error)
    assert "lib.rs" in str(error)  # the panic's location
    # The interpreter and the module are still usable, repeatedly.
    assert _core.version()
    assert raised_by_core("panic").panicked


def test_panic_prints_nothing_on_stderr(capfd):
    raised_by_core("panic")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("error", [
    ConfigError("bad", key="a.b"),
    TraceError("bad", file="t.csv", line=3),
    SpecError("bad", file="d.parv", line=9),
    RaidlabIOError("No such file or directory", file="x", errno=errno.ENOENT),
    RaidlabIOError("corrupt", file="y.gz"),
    SimulationError("boom", panicked=True, rust_backtrace="0: main"),
], ids=lambda e: type(e).__name__)
def test_exceptions_survive_pickling(error):
    # Sweeps run in worker processes; their errors must cross back.
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.__dict__ == error.__dict__


def test_config_error_without_key_is_just_the_message():
    assert str(ConfigError("invalid TOML: expected '='")) == "invalid TOML: expected '='"


def test_every_class_derives_from_raidlab_error():
    for cls in (ConfigError, TraceError, SpecError, RaidlabIOError, SimulationError):
        assert issubclass(cls, RaidlabError)
