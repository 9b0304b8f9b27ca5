"""Compatibility path: the module is :mod:`raidlab.output.config_reference`; its names are read there."""

from raidlab.output import config_reference as _module


def __getattr__(name: str):
    return getattr(_module, name)
