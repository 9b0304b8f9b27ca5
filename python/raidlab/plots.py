"""Compatibility path: the module is :mod:`raidlab.output.plots`; its names are read there."""

from raidlab.output import plots as _module


def __getattr__(name: str):
    return getattr(_module, name)
