"""``python -m gobblin_py.cli``: the same as ``gpy``."""

from gobblin_py.cli import entry

entry()
