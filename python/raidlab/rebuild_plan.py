"""Compatibility path: the module is :mod:`raidlab.cli.rebuild_plan`; its names are read there."""

from raidlab.cli import rebuild_plan as _module


def __getattr__(name: str):
    return getattr(_module, name)
