"""Compatibility path: the module is :mod:`raidlab.output.report`; its names are read there."""

from raidlab.output import report as _module


def __getattr__(name: str):
    return getattr(_module, name)
