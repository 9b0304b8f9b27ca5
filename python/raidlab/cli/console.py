"""Standard output and error for the ``raidlab`` commands: plain lines written as they are,
and a ``rich`` console made only when something is drawn (a table, JSON, a progress bar);
and :func:`write_or_print`, for the commands that generate a document.

Why: importing ``rich`` takes about a sixth of a short ``raidlab run``, whose quiet output
is one line. At its top, this module imports nothing but the standard library.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["LazyConsole", "rich_console", "write_or_print"]


class LazyConsole:
    """Standard output or error for the commands. Everything but :meth:`print` of one plain
    line goes to the rich console (:attr:`rich`), which wraps at 160 columns when not
    writing to a terminal (rich's 80 make the tables hard to read)."""

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Optional[Console] = None

    @property
    def rich(self) -> Console:
        """The rich console, made on first use."""
        if self._console is None:
            from rich.console import Console

            stream = sys.stderr if self._stderr else sys.stdout
            self._console = Console(stderr=self._stderr, width=None if stream.isatty() else 160)
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        """``rich.console.Console.print``; one string with ``markup``, ``highlight`` False and
        ``soft_wrap`` True (a plain line, not wrapped) is written without rich, unless rich
        already draws (a progress bar may be live)."""
        plain = (
            self._console is None and len(objects) == 1 and isinstance(objects[0], str)
            and options == {"markup": False, "highlight": False, "soft_wrap": True}
        )
        if not plain:
            self.rich.print(*objects, **options)
            return
        stream = sys.stderr if self._stderr else sys.stdout
        stream.write(objects[0] + "\n")
        stream.flush()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # this object's own (or Python's) attributes, never rich's
            raise AttributeError(name)
        return getattr(self.rich, name)


def rich_console(console: Any) -> Console:
    """The rich console behind ``console`` (a :class:`LazyConsole` or a rich ``Console``), for
    rich's own widgets (progress bars), which need the real one."""
    return console.rich if isinstance(console, LazyConsole) else console


def write_or_print(text: str, output: Optional[str], out: Any) -> None:
    """Write ``text`` to the file ``output`` and say so on ``out``, or to standard output when
    ``output`` is None (a generated document, ``-o FILE`` or not)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(output)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        from raidlab.exceptions import RaidlabIOError

        raise RaidlabIOError(error.strerror or str(error), file=str(path), errno=error.errno) from None
    out.print(f"wrote {path}", markup=False, highlight=False, soft_wrap=True)
