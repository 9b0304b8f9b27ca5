"""Experiments at scale: sweeps over configuration axes (:mod:`raidlab.experiments.sweep`), run
on a local process pool or Dask; comparisons of runs with confidence intervals
(:mod:`~raidlab.experiments.compare`, :mod:`~raidlab.experiments.stats`); figures of many runs
(:mod:`~raidlab.experiments.sweep_plots`); the sweep machinery's benchmark
(:mod:`~raidlab.experiments.sweep_bench`); and the validation of the drive models against
real drives' traces (:mod:`~raidlab.experiments.validate`).

The store of run and sweep directories they write is :mod:`raidlab.results.store`. Importing
this package imports none of its modules.
"""
