"""Whether retrying a failed task can help: :func:`classify` says ``transient``, ``permanent`` or ``unknown``.

A task's failure is *permanent* when the same attempt would fail the same way (a bad value or cast, a missing file,
table or column, a permission denied, a corrupt input, a configuration error), *transient* when it may pass (a
connection refused or reset, a timeout, a Kafka broker or partition leader not available, S3 throttling or a 5xx,
a database busy or locked, a Spark executor lost) and *unknown* otherwise. The task runner fails a task at once on
a permanent failure and retries the others (``task.maxretries``), as Gobblin retries every failure.

In order: an exception's own ``retryable`` attribute (see :mod:`gobblin_py.sdk.errors`), then what the library
that raised it says (Kafka's error codes, S3's error codes and HTTP status, SQLSTATE, SQLite's result codes, ADBC's
status codes, pyarrow's and Spark's error types), then ``errno`` and Python's own types; an unknown error whose
explicit cause (``raise … from cause``) is known takes its cause's kind. No optional library is imported: errors
are recognised by their types' modules and names and the attributes their libraries give them.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Any

TRANSIENT = "transient"
PERMANENT = "permanent"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Failure:
    """The kind of one failure (:data:`TRANSIENT`, :data:`PERMANENT` or :data:`UNKNOWN`) and why."""

    kind: str
    reason: str

    @property
    def retryable(self) -> bool:
        """Whether a retry may help (unknown failures are retried, as in Gobblin)."""
        return self.kind != PERMANENT


_TRANSIENT_ERRNOS = {errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT, errno.EHOSTUNREACH,
                     errno.ENETUNREACH, errno.ENETDOWN, errno.ENETRESET, errno.EPIPE, errno.EAGAIN, errno.EBUSY,
                     errno.EHOSTDOWN, errno.ESTALE}
_PERMANENT_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.EROFS,
                     errno.ENAMETOOLONG, errno.EINVAL, errno.ELOOP}

# Python's errors of a bad value, a bad type or missing code: the same input fails the same way
_PERMANENT_BUILTINS = (ValueError, TypeError, LookupError, ArithmeticError, AttributeError, ImportError,
                       NotImplementedError, UnicodeError)

# pyarrow's errors (module pyarrow.lib) by name; its ArrowIOError is OSError, classified by errno and message
_ARROW_PERMANENT = {"ArrowInvalid", "ArrowTypeError", "ArrowNotImplementedError", "ArrowKeyError",
                    "ArrowIndexError", "ArrowSerializationError"}
# messages of pyarrow's S3 and HDFS errors (plain OSErrors without errno) and of wrapped errors
_TRANSIENT_WORDS = ("NETWORK_CONNECTION", "SLOW_DOWN", "SERVICE_UNAVAILABLE", "THROTTLING", "INTERNAL_FAILURE",
                    "REQUEST_TIMEOUT", "connection refused", "connection reset", "timed out", "temporarily unavailable",
                    "ExecutorLostFailure", "executor lost", "database is locked", "database table is locked")
_PERMANENT_WORDS = ("ACCESS_DENIED", "NO_SUCH_BUCKET", "NO_SUCH_KEY", "RESOURCE_NOT_FOUND", "Path does not exist",
                    "No such file or directory", "Permission denied", "no such table", "no such column",
                    "syntax error", "corrupt", "deserialize thrift")

# Kafka (librdkafka) error codes: brokers or leaders that come back; topics, rights and arguments that do not
_KAFKA_TRANSIENT = {-195, -187, -185, -192, -193, -180, -182, 5, 6, 7, 8, 13, 14, 15, 16, 19, 20, 56, 89}
_KAFKA_PERMANENT = {-188, -190, -186, -169, -181, -199, 3, 29, 30, 31, 58, 2, 10, 87}

# S3 and other AWS error codes (botocore's ClientError), then its connection and credential errors by type name
_AWS_TRANSIENT_CODES = {"SlowDown", "Throttling", "ThrottlingException", "ThrottledException", "RequestLimitExceeded",
                        "TooManyRequestsException", "ProvisionedThroughputExceededException", "RequestTimeout",
                        "RequestTimeoutException", "InternalError", "InternalFailure", "ServiceUnavailable",
                        "ServiceUnavailableException", "PriorRequestNotComplete", "BandwidthLimitExceeded"}
_BOTO_TRANSIENT_TYPES = {"EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError",
                         "HTTPClientError", "ProxyConnectionError", "ResponseStreamingError"}
_BOTO_PERMANENT_TYPES = {"NoCredentialsError", "PartialCredentialsError", "NoRegionError", "ParamValidationError",
                         "UnknownServiceError", "InvalidRegionError", "ProfileNotFound"}

# SQLSTATE classes (PostgreSQL, and any driver giving ``sqlstate``): connection, rollback, resources and shutdown
# pass; syntax, undefined objects, rights, bad data and constraints do not
_SQLSTATE_TRANSIENT_CLASSES = {"08", "40", "53", "58"}
_SQLSTATE_TRANSIENT = {"55P03", "57P01", "57P02", "57P03", "57014"}
_SQLSTATE_PERMANENT_CLASSES = {"0A", "22", "23", "28", "2B", "3D", "3F", "42", "44"}
# DB-API exception types (sqlite3, psycopg, ADBC, …) that always mean the statement or its data are wrong
_DBAPI_PERMANENT = {"ProgrammingError", "DataError", "IntegrityError", "NotSupportedError"}
# SQLite's primary result codes: busy and locked pass; no permission, read-only, corrupt, not a database do not
_SQLITE_TRANSIENT = {5, 6, 15}
_SQLITE_PERMANENT = {3, 8, 11, 14, 18, 19, 20, 23, 26}
# ADBC status codes (adbc_driver_manager.AdbcStatusCode): IO and TIMEOUT pass
_ADBC_TRANSIENT = {10, 12}
_ADBC_PERMANENT = {2, 3, 4, 5, 7, 8, 13, 14}

_SPARK_PERMANENT_TYPES = {"AnalysisException", "ParseException", "NumberFormatException", "ArithmeticException",
                          "SparkNumberFormatException", "SparkArithmeticException", "IllegalArgumentException"}


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def _module(exc: BaseException) -> str:
    return type(exc).__module__ or ""


def _kafka(exc: BaseException) -> Failure | None:
    error: Any = exc.args[0] if exc.args else None
    code = getattr(error, "code", None)
    if not callable(code) or not callable(getattr(error, "retriable", None)):
        return None
    name = f"Kafka {error.name()}" if callable(getattr(error, "name", None)) else "Kafka error"
    if error.retriable() or code() in _KAFKA_TRANSIENT:
        return Failure(TRANSIENT, f"{name} (retriable)")
    if code() in _KAFKA_PERMANENT or (callable(getattr(error, "fatal", None)) and error.fatal()):
        return Failure(PERMANENT, name)
    return None


def _botocore(exc: BaseException, names: set[str]) -> Failure | None:
    response: Any = getattr(exc, "response", None)
    if isinstance(response, dict) and "ClientError" in names:
        code = str((response.get("Error") or {}).get("Code") or "")
        status = int((response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 0)
        if code in _AWS_TRANSIENT_CODES or status == 429 or status >= 500:
            return Failure(TRANSIENT, f"AWS {code or status}")
        if 400 <= status < 500 or code:
            return Failure(PERMANENT, f"AWS {code or status}")
        return None
    if names & _BOTO_TRANSIENT_TYPES:
        return Failure(TRANSIENT, "AWS connection")
    if names & _BOTO_PERMANENT_TYPES:
        return Failure(PERMANENT, "AWS configuration")
    return None


def _database(exc: BaseException, names: set[str]) -> Failure | None:
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and len(sqlstate) == 5:
        if sqlstate in _SQLSTATE_TRANSIENT or sqlstate[:2] in _SQLSTATE_TRANSIENT_CLASSES:
            return Failure(TRANSIENT, f"SQLSTATE {sqlstate}")
        if sqlstate[:2] in _SQLSTATE_PERMANENT_CLASSES:
            return Failure(PERMANENT, f"SQLSTATE {sqlstate}")
    sqlite_code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(sqlite_code, int):
        name = getattr(exc, "sqlite_errorname", None) or f"SQLite code {sqlite_code}"
        if sqlite_code & 0xFF in _SQLITE_TRANSIENT:
            return Failure(TRANSIENT, name)
        if sqlite_code & 0xFF in _SQLITE_PERMANENT:
            return Failure(PERMANENT, name)
        return _message(exc)  # SQLITE_ERROR covers a missing table or column and much else
    status = getattr(exc, "status_code", None)
    if _module(exc).startswith("adbc_driver") and isinstance(status, int):
        if status in _ADBC_TRANSIENT:
            return Failure(TRANSIENT, f"ADBC status {status}")
        if status in _ADBC_PERMANENT:
            return Failure(PERMANENT, f"ADBC status {status}")
    if names & _DBAPI_PERMANENT and {"DatabaseError", "Error"} & names:
        return Failure(PERMANENT, (names & _DBAPI_PERMANENT).pop())
    return None


def _message(exc: BaseException) -> Failure | None:
    text = str(exc)
    lowered = text.lower()
    for word in _TRANSIENT_WORDS:
        if word.lower() in lowered:
            return Failure(TRANSIENT, word)
    for word in _PERMANENT_WORDS:
        if word.lower() in lowered:
            return Failure(PERMANENT, word)
    return None


def _os_error(exc: OSError) -> Failure | None:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return Failure(TRANSIENT, type(exc).__name__)
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
        return Failure(PERMANENT, type(exc).__name__)
    if exc.errno in _TRANSIENT_ERRNOS:
        return Failure(TRANSIENT, errno.errorcode.get(exc.errno, str(exc.errno)))
    if exc.errno in _PERMANENT_ERRNOS:
        return Failure(PERMANENT, errno.errorcode.get(exc.errno, str(exc.errno)))
    return _message(exc)


def _own_kind(exc: BaseException) -> Failure | None:
    retryable = getattr(exc, "retryable", None)
    if isinstance(retryable, bool):
        return Failure(TRANSIENT if retryable else PERMANENT, f"{type(exc).__name__}.retryable is {retryable}")
    names, module = _names(exc), _module(exc)
    if module.split(".")[0] in ("confluent_kafka", "cimpl"):  # its C types live in module cimpl
        if names & {"SerializationError", "KeyDeserializationError", "ValueDeserializationError"}:
            return Failure(PERMANENT, "Kafka record cannot be (de)serialized")
        return _kafka(exc)
    if module.startswith("botocore") or module.startswith("boto3"):
        return _botocore(exc, names)
    found = _database(exc, names)
    if found is not None:
        return found
    if module.startswith("pyarrow") and names & _ARROW_PERMANENT:
        return Failure(PERMANENT, (names & _ARROW_PERMANENT).pop())
    if module.startswith("pyspark") or module.startswith("py4j"):
        if names & _SPARK_PERMANENT_TYPES:
            return Failure(PERMANENT, (names & _SPARK_PERMANENT_TYPES).pop())
        return _message(exc)
    if isinstance(exc, OSError):
        return _os_error(exc)
    if isinstance(exc, _PERMANENT_BUILTINS):
        return Failure(PERMANENT, f"{type(exc).__name__}: a bad value or type")
    if names & {"Timeout", "ConnectTimeout", "ReadTimeout", "ConnectionError"}:  # requests, httpx, urllib3
        return Failure(TRANSIENT, type(exc).__name__)
    return None


def classify(exc: BaseException) -> Failure:
    """Whether retrying the work that raised ``exc`` can help (see the module's doc)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _own_kind(current)
        if found is not None:
            return found
        current = current.__cause__
    return Failure(UNKNOWN, "not a known kind of error")
