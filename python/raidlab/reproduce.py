"""Compatibility path: the module is :mod:`raidlab.reproductions.reproduce`; its names are read there."""

from raidlab.reproductions import reproduce as _module


def __getattr__(name: str):
    return getattr(_module, name)
