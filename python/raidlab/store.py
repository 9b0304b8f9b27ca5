"""Compatibility path: the module is :mod:`raidlab.results.store`; its names are read there."""

from raidlab.results import store as _module


def __getattr__(name: str):
    return getattr(_module, name)
