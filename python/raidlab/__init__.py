"""raidlab: a simulator of RAID storage under drive failure.

The simulation runs in a Rust core (``raidlab._core``); this package gets configurations to
it, turns its output into pandas tables, saves and loads run directories, draws plots and
provides the ``raidlab`` command.

>>> import raidlab
>>> result = raidlab.run("experiments/demo.toml")          # doctest: +SKIP
>>> result.summary["response_ms"]["read"]["p99"]             # doctest: +SKIP
>>> result.save("runs/demo")                                  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Union

from raidlab import _core
from raidlab import exceptions
from raidlab.exceptions import (
    ConfigError,
    RaidlabError,
    RaidlabIOError,
    SimulationError,
    SpecError,
    TraceError,
)

# What this module imports must load quickly: the ``raidlab`` command imports it before it can
# catch a Ctrl-C. The configuration and results modules (tomllib, dataclasses; pandas, pyarrow)
# are imported where they are used.
if TYPE_CHECKING:
    from raidlab.config import ConfigSource
    from raidlab.results import Result

__version__: str = _core.version()

__all__ = [
    "__version__",
    "run",
    "resolve_config",
    "load_result",
    "Result",
    *exceptions.__all__,
]

#: ``progress(fraction_done, completed_requests) -> bool``; return ``False`` to cancel the run.
ProgressCallback = Callable[[float, int], Optional[bool]]


def run(
    config: ConfigSource,
    *,
    base_dir: Union[str, "os.PathLike[str]", None] = None,
    overrides: Sequence[str] = (),
    progress: Optional[ProgressCallback] = None,
) -> Result:
    """Run one simulation and return its :class:`Result`.

    ``config`` is a path to a TOML file, a TOML string or a mapping. Relative paths inside it
    start from ``base_dir`` (default: the file's directory, else the current directory).
    ``overrides`` are ``key=value`` strings applied on top (as ``raidlab run --set``).
    ``progress`` is called now and then with the fraction done and the requests completed;
    returning ``False`` cancels the run (``result.cancelled`` is then true). The GIL is
    released while the simulation runs.
    """
    from raidlab.config import load_config
    from raidlab.results import Result

    loaded = load_config(config, base_dir=base_dir, overrides=overrides)
    try:
        output = _core.run(loaded.text, str(loaded.base_dir), progress)
    except ConfigError as error:
        raise loaded.explain(error) from None
    return Result.from_core(output)


def resolve_config(
    config: ConfigSource,
    *,
    base_dir: Union[str, "os.PathLike[str]", None] = None,
    overrides: Sequence[str] = (),
) -> "tuple[str, str]":
    """Validate a configuration without running it: ``(resolved TOML, config hash)``."""
    from raidlab.config import load_config

    loaded = load_config(config, base_dir=base_dir, overrides=overrides)
    try:
        return _core.resolve_config(loaded.text, str(loaded.base_dir))
    except ConfigError as error:
        raise loaded.explain(error) from None


def load_result(run_dir: Union[str, "os.PathLike[str]"]) -> Result:
    """Load a run directory written by :meth:`Result.save` (or ``raidlab run``)."""
    from raidlab.results import Result

    return Result.load(run_dir)


def __getattr__(name: str) -> Any:
    # ``raidlab.Result`` loads pandas and pyarrow (about half a second) on first use, not on
    # ``import raidlab``.
    if name == "Result":
        from raidlab.results import Result

        return Result
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | {"Result"})
