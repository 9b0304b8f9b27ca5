"""Compatibility path: the module is :mod:`raidlab.experiments.compare`; its names are read there."""

from raidlab.experiments import compare as _module


def __getattr__(name: str):
    return getattr(_module, name)
