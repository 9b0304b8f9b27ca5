"""Compatibility path: the module is :mod:`raidlab.cli.console`; its names are read there."""

from raidlab.cli import console as _module


def __getattr__(name: str):
    return getattr(_module, name)
