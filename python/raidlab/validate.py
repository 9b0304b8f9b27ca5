"""Compatibility path: the module is :mod:`raidlab.experiments.validate`; its names are read there."""

from raidlab.experiments import validate as _module


def __getattr__(name: str):
    return getattr(_module, name)
