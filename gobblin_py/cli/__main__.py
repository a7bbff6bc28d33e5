"""``python -m gobblin_py.cli``: the same as ``gpy``."""

from gobblin_py.cli import entry

if __name__ == "__main__":  # not when a worker process of the run imports it again
    entry()
