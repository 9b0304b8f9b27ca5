"""Compatibility path: the module is :mod:`raidlab.experiments.sweep`; its names are read there."""

from raidlab.experiments import sweep as _module


def __getattr__(name: str):
    return getattr(_module, name)
