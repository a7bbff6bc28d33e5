"""The benchmark harness behind ``make bench`` (``scripts/bench/run.py``).

- :mod:`benchkit.model`: benchmarks, cases (rows of the table), contenders, their steps, targets;
- :mod:`benchkit.process`: one step as a whole process, its wall time and its process tree's peak memory;
- :mod:`benchkit.runner`: interleaved rounds, row counts checked, medians, targets evaluated;
- :mod:`benchkit.report`: ``bench/results.md`` and ``results.json``;
- :mod:`benchkit.venvs`, :mod:`benchkit.peers`: the peers' own virtual environments;
- :mod:`benchkit.suites`: one module per benchmark (files, SQL, Kafka, the state store).
"""
