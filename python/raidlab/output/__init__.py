"""What raidlab writes for people to read: a run's figures (:mod:`raidlab.output.plots`), the
reproduction report (:mod:`raidlab.output.report`) and the configuration reference
(:mod:`raidlab.output.config_reference`).

Importing this package imports none of its modules.
"""
