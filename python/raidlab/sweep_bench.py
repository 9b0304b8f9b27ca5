"""Compatibility path: the module is :mod:`raidlab.experiments.sweep_bench`; its names are read there."""

from raidlab.experiments import sweep_bench as _module


def __getattr__(name: str):
    return getattr(_module, name)


if __name__ == "__main__":
    raise SystemExit(_module.main())
