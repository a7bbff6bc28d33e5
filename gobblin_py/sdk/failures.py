"""Whether retrying a failed task can help: :func:`classify` says ``transient``, ``permanent`` or ``unknown``.

A task's failure is *permanent* when the same attempt would fail the same way (a bad value or cast, a missing file,
table or column, a permission denied, a corrupt input, a configuration error), *transient* when it may pass (a
connection refused or reset, a timeout, a service that is busy or restarting) and *unknown* otherwise. The task
runner fails a task at once on a permanent failure and retries the others (``task.maxretries``), as Gobblin retries
every failure.

In order: an exception's own ``retryable`` attribute (see :mod:`gobblin_py.sdk.errors`), then the classifiers the
plugins register for the errors of the libraries they use, then ``errno`` and Python's own types; an unknown error
whose explicit cause (``raise … from cause``) is known takes its cause's kind.

A classifier is a function from an exception to a :class:`Failure`, or None when it does not know the error. It
recognises its library's errors by their types' modules and names and the attributes the library gives them, so
it imports no optional library. A package registers one as an entry point of group ``gobblin_py.failures``
(``name = "package.module:function"``), which every process, an executor's too, loads the first time it
classifies an error; :func:`register_classifier` adds one in-process.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

TRANSIENT = "transient"
PERMANENT = "permanent"
UNKNOWN = "unknown"

ENTRY_POINT_GROUP = "gobblin_py.failures"


@dataclass(frozen=True)
class Failure:
    """The kind of one failure (:data:`TRANSIENT`, :data:`PERMANENT` or :data:`UNKNOWN`) and why."""

    kind: str
    reason: str

    @property
    def retryable(self) -> bool:
        """Whether a retry may help (unknown failures are retried, as in Gobblin)."""
        return self.kind != PERMANENT


Classifier = Callable[[BaseException], "Failure | None"]

_TRANSIENT_ERRNOS = {errno.ECONNREFUSED, errno.ECONNRESET, errno.ECONNABORTED, errno.ETIMEDOUT, errno.EHOSTUNREACH,
                     errno.ENETUNREACH, errno.ENETDOWN, errno.ENETRESET, errno.EPIPE, errno.EAGAIN, errno.EBUSY,
                     errno.EHOSTDOWN, errno.ESTALE}
_PERMANENT_ERRNOS = {errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR, errno.ENOTDIR, errno.EROFS,
                     errno.ENAMETOOLONG, errno.EINVAL, errno.ELOOP}

# Python's errors of a bad value, a bad type or missing code: the same input fails the same way
_PERMANENT_BUILTINS = (ValueError, TypeError, LookupError, ArithmeticError, AttributeError, ImportError,
                       NotImplementedError, UnicodeError)

#: words of an error's message that say what kind it is, whatever raised it (an OSError without errno, a wrapped
#: error); a classifier adds its library's own words with :func:`by_message`
TRANSIENT_WORDS = ("connection refused", "connection reset", "timed out", "temporarily unavailable")
PERMANENT_WORDS = ("No such file or directory", "Permission denied", "corrupt")

_registered: list[Classifier] = []
_loaded: list[Classifier] | None = None
_lock = threading.Lock()


def register_classifier(classifier: Classifier) -> None:
    """Have :func:`classify` ask ``classifier`` too (after an error's own ``retryable``, before ``errno`` and
    Python's types); registering the same function twice changes nothing."""
    with _lock:
        if classifier not in _registered:
            _registered.append(classifier)


def _entry_point_classifiers() -> list[Classifier]:
    """The classifiers registered as entry points, by name; one whose module fails to load (its optional library
    is not installed) is skipped: no error of that library can reach a task either."""
    global _loaded
    with _lock:
        if _loaded is None:
            # imported here: a run that fails no task pays for no scan of the installed packages
            from importlib.metadata import entry_points

            found = []
            for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
                try:
                    found.append(point.load())
                except (ImportError, AttributeError):
                    continue
            _loaded = found
        return _loaded


def classifiers() -> list[Classifier]:
    """Every classifier :func:`classify` asks, entry points first (by name), then those registered in-process."""
    return [*_entry_point_classifiers(), *(c for c in list(_registered) if c not in (_loaded or ()))]


def by_message(exc: BaseException, transient: Iterable[str] = (), permanent: Iterable[str] = ()) -> Failure | None:
    """The kind the words of ``exc``'s message say (case-insensitive): ``transient`` and :data:`TRANSIENT_WORDS`
    first, then ``permanent`` and :data:`PERMANENT_WORDS`; None when none is there."""
    lowered = str(exc).lower()
    for kind, words in ((TRANSIENT, (*transient, *TRANSIENT_WORDS)), (PERMANENT, (*permanent, *PERMANENT_WORDS))):
        for word in words:
            if word.lower() in lowered:
                return Failure(kind, word)
    return None


def type_names(exc: BaseException) -> set[str]:
    """The names of ``exc``'s type and its bases: how a classifier recognises a library's error without importing
    the library."""
    return {cls.__name__ for cls in type(exc).__mro__}


def module_of(exc: BaseException) -> str:
    """The module of ``exc``'s type."""
    return type(exc).__module__ or ""


def _os_error(exc: OSError) -> Failure | None:
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return Failure(TRANSIENT, type(exc).__name__)
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
        return Failure(PERMANENT, type(exc).__name__)
    if exc.errno in _TRANSIENT_ERRNOS:
        return Failure(TRANSIENT, errno.errorcode.get(exc.errno, str(exc.errno)))
    if exc.errno in _PERMANENT_ERRNOS:
        return Failure(PERMANENT, errno.errorcode.get(exc.errno, str(exc.errno)))
    return by_message(exc)


def _own_kind(exc: BaseException) -> Failure | None:
    retryable = getattr(exc, "retryable", None)
    if isinstance(retryable, bool):
        return Failure(TRANSIENT if retryable else PERMANENT, f"{type(exc).__name__}.retryable is {retryable}")
    for classifier in classifiers():
        found = classifier(exc)
        if found is not None:
            return found
    if isinstance(exc, OSError):
        return _os_error(exc)
    if isinstance(exc, _PERMANENT_BUILTINS):
        return Failure(PERMANENT, f"{type(exc).__name__}: a bad value or type")
    if type_names(exc) & {"Timeout", "ConnectTimeout", "ReadTimeout", "ConnectionError"}:  # requests, httpx, urllib3
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
