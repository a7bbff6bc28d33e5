"""Which Spark errors a retry can help, for :func:`gobblin_py.sdk.failures.classify` (registered as an entry point
of group ``gobblin_py.failures``): an analysis, parse or cast error fails the same way every time; a lost executor
does not. Recognised by their types' module and name, then their message: PySpark is not imported.
"""

from __future__ import annotations

from gobblin_py.io.failures import PERMANENT_WORDS as STORAGE_PERMANENT_WORDS
from gobblin_py.io.failures import TRANSIENT_WORDS as STORAGE_TRANSIENT_WORDS
from gobblin_py.sdk.failures import PERMANENT, Failure, by_message, module_of, type_names

_SPARK_PERMANENT_TYPES = {"AnalysisException", "ParseException", "NumberFormatException", "ArithmeticException",
                          "SparkNumberFormatException", "SparkArithmeticException", "IllegalArgumentException"}
_TRANSIENT_WORDS = ("ExecutorLostFailure", "executor lost", *STORAGE_TRANSIENT_WORDS)
_PERMANENT_WORDS = ("Path does not exist", *STORAGE_PERMANENT_WORDS)


def classify_spark_error(exc: BaseException) -> Failure | None:
    """The kind of an error of PySpark or py4j (a JVM error on the driver), or None for another's."""
    module = module_of(exc)
    if not module.startswith(("pyspark", "py4j")):
        return None
    names = type_names(exc)
    if names & _SPARK_PERMANENT_TYPES:
        return Failure(PERMANENT, sorted(names & _SPARK_PERMANENT_TYPES)[0])
    return by_message(exc, _TRANSIENT_WORDS, _PERMANENT_WORDS)
