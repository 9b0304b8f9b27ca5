"""Compatibility path: the module is :mod:`raidlab.experiments.sweep_plots`; its names are read there."""

from raidlab.experiments import sweep_plots as _module


def __getattr__(name: str):
    return getattr(_module, name)
