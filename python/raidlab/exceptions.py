"""The exceptions raidlab raises.

Each variant of the core's Rust ``Error`` enum has its own class here; the binding
(``crates/raidlab-py``) imports this module and instantiates the class with the variant's
fields as keyword arguments. Everything derives from :class:`RaidlabError`, so callers (and
the CLI) can catch one class.

* ``Config``     → :class:`ConfigError`: ``key`` (dotted path), ``message``
* ``Trace``      → :class:`TraceError`: ``file``, ``line`` (1-based), ``message``
* ``Spec``       → :class:`SpecError`: ``file``, ``line`` (1-based), ``message``
* ``Io``         → :class:`RaidlabIOError` (an ``OSError``): ``filename``, ``errno``, ``strerror``
* ``Invariant`` and panics → :class:`SimulationError`: ``message``, ``panicked``,
  ``rust_backtrace``

Data loss in a simulated array is *not* an exception: it is an outcome in the results.
"""

from __future__ import annotations

import os
from typing import Any, Optional

__all__ = [
    "RaidlabError",
    "ConfigError",
    "TraceError",
    "SpecError",
    "RaidlabIOError",
    "SimulationError",
]


class RaidlabError(Exception):
    """Base class of every error raidlab raises."""


class ConfigError(RaidlabError, ValueError):
    """A configuration value is missing, malformed or impossible.

    ``key`` is the dotted path of the offending key (``array.stripe_unit_kib``); it is empty
    when the problem is not tied to one key (for example a TOML syntax error).
    """

    def __init__(self, message: str, *, key: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.key = key

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), (self.message,), {"key": self.key}))


class _FileLineError(RaidlabError, ValueError):
    """An error at a line of a file."""

    def __init__(self, message: str, *, file: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.file = str(file)
        self.line = int(line)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"

    def __reduce__(self) -> Any:
        return (
            _rebuild,
            (type(self), (self.message,), {"file": self.file, "line": self.line}),
        )


class TraceError(_FileLineError):
    """A line of a trace file could not be understood (``file``, 1-based ``line``)."""


class SpecError(_FileLineError):
    """A drive specification file is malformed (``file``, 1-based ``line``)."""


class RaidlabIOError(RaidlabError, OSError):
    """Reading or writing a file failed at the operating-system level.

    An :class:`OSError`, so ``filename``, ``errno`` (``None`` when the failure has no OS error
    number, such as a corrupt gzip stream) and ``strerror`` are set as usual.
    """

    def __init__(self, message: str, *, file: str, errno: Optional[int] = None) -> None:
        if errno is not None:
            super().__init__(errno, os.strerror(errno), str(file))
        else:
            super().__init__(message)
            self.strerror = message
            self.filename = str(file)

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"

    def __reduce__(self) -> Any:
        return (
            _rebuild,
            (type(self), (self.strerror,), {"file": self.filename, "errno": self.errno}),
        )


class SimulationError(RaidlabError, RuntimeError):
    """The simulation reached a state the model forbids, or the core panicked.

    Either way it is a bug in raidlab, not in the configuration. ``panicked`` tells which;
    ``rust_backtrace`` holds the Rust backtrace of a panic when ``RUST_BACKTRACE`` was set.
    """

    def __init__(
        self, message: str, *, panicked: bool = False, rust_backtrace: Optional[str] = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.panicked = panicked
        self.rust_backtrace = rust_backtrace

    def __reduce__(self) -> Any:
        return (
            _rebuild,
            (
                type(self),
                (self.message,),
                {"panicked": self.panicked, "rust_backtrace": self.rust_backtrace},
            ),
        )


def _rebuild(cls: type, args: tuple, kwargs: dict) -> BaseException:
    """Unpickle an exception whose constructor takes keyword-only arguments."""
    return cls(*args, **kwargs)
