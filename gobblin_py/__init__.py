"""gobblin_py: Gobblin-style batch ingestion jobs on Apache Spark."""

from gobblin_py import _moved

__version__ = "0.1.0"

_moved.install()  # old module paths keep working (with a DeprecationWarning) for one release
