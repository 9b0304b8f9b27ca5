"""Configurations as the core wants them: TOML text plus the directory relative paths start from.

The core owns the configuration (its Rust types are the single source of truth: validation,
defaults, the JSON Schema). This module only gets TOML text to it:

* :func:`load_config` accepts a path to a ``.toml`` file, a TOML string or a mapping;
* :func:`apply_overrides` applies ``--set key=value`` overrides (``array.drives=6``,
  ``failures[0].at_s=2.5``); values are TOML literals, and a value that is not valid TOML
  (``raid6``) is taken as a string;
* :func:`to_toml` writes a mapping as TOML (via ``tomli_w``);
* :func:`toml_literal` writes one value as the TOML literal of a ``key=value`` override.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import tomli_w

from raidlab.exceptions import ConfigError, RaidlabIOError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = [
    "ConfigSource",
    "LoadedConfig",
    "load_config",
    "parse_toml",
    "to_toml",
    "parse_override",
    "apply_overrides",
    "toml_literal",
]

#: What :func:`raidlab.run` and :func:`load_config` accept.
ConfigSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


#: Keys whose values are file paths. A relative path in a configuration file starts from the
#: file's directory; one given with ``--set`` starts from the current directory, where the
#: user typed it.
PATH_KEYS = ("workload.trace.path", "drive.diskspec")

#: "TOML parse error at line 3, column 10" at the start of a core message.
_TOML_POSITION = re.compile(r"^TOML parse error at line (\d+), column (\d+)\n")


@dataclass(frozen=True)
class LoadedConfig:
    """A configuration ready for the core."""

    #: The configuration as TOML text.
    text: str
    #: Directory that relative paths in the configuration (traces, drive specs) start from.
    base_dir: Path
    #: Stem of the file it came from (``demo`` for ``experiments/demo.toml``), else ``None``.
    name: Optional[str] = None
    #: The file it came from, else ``None``.
    path: Optional[Path] = None
    #: The ``key=value`` overrides applied to it.
    overrides: "tuple[str, ...]" = ()
    #: Whether it came from a mapping: its TOML text is raidlab's, which the user never saw.
    from_mapping: bool = False

    def explain(self, error: ConfigError) -> ConfigError:
        """``error`` from the core said in the user's terms: a key set by an override names
        the override, not a line of the TOML text written with it (which the user never
        saw); a mistake in the file names the file, its line and column."""
        message = error.message
        position = _TOML_POSITION.match(message)
        for override in self.overrides:
            key = override.partition("=")[0].strip()
            if error.key and _same_or_nested(error.key, key):
                return ConfigError(f"{without_excerpt(message)} (from --set {override})", key=error.key)
        if position is not None and self.from_mapping:
            # The line is one of the text written from the mapping: the key says where.
            return ConfigError(without_excerpt(message), key=error.key)
        if position is None or self.path is None:
            return error
        if self.overrides:
            # The line is one of the text rewritten with the overrides: name the file only.
            return ConfigError(f"{without_excerpt(message)} (in {self.path}, with the --set overrides applied)",
                               key=error.key)
        line, column = position.groups()
        where = f"{self.path}:{line}:{column}"
        rest = message[position.end():]
        return ConfigError(f"{where}: {rest}" if error.key in ("", "config") else f"{where}: {rest}",
                           key="" if error.key == "config" else error.key)


def _same_or_nested(error_key: str, override_key: str) -> bool:
    """Whether the core's ``error_key`` is the override's key or inside it (an override of a
    table), or the override sets a key inside the one in error."""
    normalise = lambda key: re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", key)  # noqa: E731 - failures.0.at_s
    error_key, override_key = normalise(error_key), normalise(override_key)
    return (error_key == override_key or error_key.startswith(override_key + ".")
            or error_key.startswith(override_key + "[") or override_key.startswith(error_key + "."))


def without_excerpt(message: str) -> str:
    """A core message without its TOML position and excerpt: the last line, which says what
    is wrong."""
    if not _TOML_POSITION.match(message):
        return message
    lines = [line for line in message.splitlines() if line.strip()]
    return lines[-1].strip() if lines else message


def load_config(
    config: ConfigSource,
    *,
    base_dir: Union[str, "os.PathLike[str]", None] = None,
    overrides: Sequence[str] = (),
) -> LoadedConfig:
    """Turn a path, a TOML string or a mapping into TOML text for the core.

    A ``str`` is a path when it has no line break and no ``=`` and names an existing file or
    directory, ends in ``.toml`` or has a directory part; otherwise it is TOML text.
    ``base_dir`` defaults to the file's directory for a path and to the current directory
    otherwise.
    """
    name: Optional[str] = None
    source: Optional[Path] = None
    if isinstance(config, Mapping):
        text = to_toml(config)
        default_base = Path.cwd()
    elif isinstance(config, os.PathLike) or (isinstance(config, str) and _looks_like_path(config)):
        path = Path(os.fspath(config))
        text = _read_text(path)
        name = path.stem
        source = path
        default_base = path.resolve().parent
    elif isinstance(config, str):
        text = config
        default_base = Path.cwd()
    else:
        raise TypeError(
            f"config must be a path, a TOML string or a mapping, not {type(config).__name__}"
        )
    if isinstance(overrides, (str, bytes)):
        # Iterating it would make one override of each character ("s: override 's' is not ...").
        raise TypeError(f"overrides must be a sequence of 'key=value' strings, not a single "
                        f"{type(overrides).__name__}: use [{overrides!r}]")
    for override in overrides or ():
        if not isinstance(override, str):
            raise TypeError(f"an override is a 'key=value' string, not {type(override).__name__} {override!r}")
    if overrides:
        text = apply_overrides(text, [_path_from_here(override) for override in overrides], source=source)
    resolved_base = Path(base_dir).resolve() if base_dir is not None else default_base
    return LoadedConfig(text=text, base_dir=resolved_base, name=name, path=source, overrides=tuple(overrides),
                        from_mapping=isinstance(config, Mapping))


def _path_from_here(override: str) -> str:
    """An override of a :data:`PATH_KEYS` key with a relative path, made absolute from the
    current directory (where the user typed it); any other override as it is."""
    key, separator, raw = override.partition("=")
    if not separator or _show_key(_parse_key(key.strip())) not in PATH_KEYS:
        return override
    _, value = parse_override(override)
    if not isinstance(value, str) or not value or os.path.isabs(value):
        return override
    return f"{key.strip()}={json.dumps(str(Path.cwd() / value))}"


def _looks_like_path(text: str) -> bool:
    if "\n" in text or ("=" in text and not text.endswith(".toml")):
        return False
    # One line without "=" is no configuration; with a directory part it is a path (so a
    # missing file or a directory is reported as such, not as a TOML syntax error).
    return text.endswith(".toml") or Path(text).exists() or "/" in text or os.sep in text


def _read_text(path: Path) -> str:
    return read_utf8(path)


def undecodable_place(error: UnicodeDecodeError) -> Tuple[int, int]:
    """Line and column (from 1) of the first byte ``error`` could not decode."""
    before = error.object[: error.start]
    return before.count(b"\n") + 1, error.start - (before.rfind(b"\n") + 1) + 1


def read_utf8(path: Path) -> str:
    """The text of the file ``path`` (a configuration, a specification): an unreadable file
    is a :class:`RaidlabIOError`, bytes that are not UTF-8 a :class:`ConfigError` naming the
    file, line and column."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise RaidlabIOError(
            error.strerror or str(error), file=str(path), errno=error.errno
        ) from None
    except UnicodeDecodeError as error:
        line, column = undecodable_place(error)
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text (byte 0x{error.object[error.start]:02x} at column {column})"
        ) from None


def parse_toml(text: str, source: Optional[Path] = None) -> Dict[str, Any]:
    """Parse TOML text; a syntax error becomes a :class:`ConfigError`, naming ``source``
    (the file the text came from) when given."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        where = f"{source}: " if source is not None else ""
        raise ConfigError(f"{where}invalid TOML: {error}") from None


def to_toml(config: Mapping[str, Any]) -> str:
    """Write a mapping as TOML. ``None`` values are left out (TOML has no null; an absent
    key means "use the default"), paths become strings and tuples become arrays."""
    try:
        return tomli_w.dumps(_plain(config))
    except TypeError as error:
        raise ConfigError(f"cannot write the configuration as TOML: {error}") from None


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "item") and callable(value.item):  # NumPy scalars
        return value.item()
    return value


# A key path is dotted names with optional [index] parts: failures[0].at_s, failures.0.at_s.
_KEY_PART = re.compile(r"([A-Za-z0-9_-]+)|\[(\d+)\]")


def _parse_key(key: str) -> List[Union[str, int]]:
    parts: List[Union[str, int]] = []
    for dotted in key.split("."):
        position = 0
        if not dotted:
            raise ConfigError(f"malformed key path {key!r} in override", key=key)
        while position < len(dotted):
            match = _KEY_PART.match(dotted, position)
            if match is None:
                raise ConfigError(f"malformed key path {key!r} in override", key=key)
            name, index = match.groups()
            if index is not None:
                parts.append(int(index))
            elif name.isdigit() and position == 0 and parts:
                parts.append(int(name))
            else:
                parts.append(name)
            position = match.end()
    return parts


def parse_override(override: str) -> "tuple[List[Union[str, int]], Any]":
    """Split ``key=value`` into the key path and the value (a TOML literal, else a string)."""
    if not isinstance(override, str):
        raise TypeError(f"an override is a 'key=value' string, not {type(override).__name__} {override!r}")
    key, separator, raw = override.partition("=")
    key = key.strip()
    if not separator or not key:
        raise ConfigError(f"override {override!r} is not of the form key=value", key=key)
    raw = raw.strip()
    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        value = raw
    return _parse_key(key), value


def apply_overrides(text: str, overrides: Sequence[str], source: Optional[Path] = None) -> str:
    """Apply ``key=value`` overrides to TOML text and return the new text.

    Missing tables are created; list elements are addressed by index (``failures[0].at_s``).
    ``source`` is the file the text came from, for errors.
    """
    document = parse_toml(text, source)
    for override in overrides:
        path, value = parse_override(override)
        _set_path(document, path, value, override.partition("=")[0].strip())
    return to_toml(document)


def _set_path(document: Dict[str, Any], path: List[Union[str, int]], value: Any, key: str) -> None:
    node: Any = document
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        shown = _show_key(path[: depth + 1])
        if isinstance(part, int):
            if not isinstance(node, list):
                raise ConfigError(f"{_show_key(path[:depth]) or 'top level'} is not an array", key=key)
            if part >= len(node):
                raise ConfigError(
                    f"index {part} is out of range: {_show_key(path[:depth])} has {len(node)} element(s)",
                    key=key,
                )
        elif not isinstance(node, dict):
            raise ConfigError(f"{_show_key(path[:depth])} is not a table", key=key)
        if last:
            node[part] = value
        else:
            if isinstance(part, str) and part not in node:
                node[part] = {}
            node = node[part]
            if not isinstance(node, (dict, list)):
                raise ConfigError(f"{shown} is a value, not a table", key=key)


def _show_key(path: Sequence[Union[str, int]]) -> str:
    shown = ""
    for part in path:
        shown += f"[{part}]" if isinstance(part, int) else (f".{part}" if shown else part)
    return shown


def toml_literal(value: Any) -> str:
    """``value`` as a TOML literal for a ``key=value`` override (inline tables on one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_literal(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as a TOML literal")
