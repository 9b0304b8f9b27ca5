"""Compatibility path: the module is :mod:`raidlab.experiments.stats`; its names are read there."""

from raidlab.experiments import stats as _module


def __getattr__(name: str):
    return getattr(_module, name)
