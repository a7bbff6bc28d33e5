"""The one place a plugin's own exception becomes a gpy error on the driver.

A plugin (a Source planning work units, a publisher planning its steps, …) may raise anything; the driver calls
it inside :func:`plugin_boundary`, which lets gpy's own errors through and turns any other into a
:class:`PluginFailure` naming what was being done (the traceback is kept as its cause, for ``--log-level
DEBUG``). Tasks have their boundary in the retry loop of :func:`gobblin_py.runtime.execute.task.run_task`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from gobblin_py.sdk.errors import GobblinPyError


class PluginFailure(GobblinPyError):
    """A plugin failed with an exception of its own (exit code 1)."""


@contextmanager
def plugin_boundary(what: str) -> Iterator[None]:
    """Run a plugin call; a non-gpy exception becomes ``PluginFailure("<what> failed: <exception>")``."""
    try:
        yield
    except GobblinPyError:
        raise
    except Exception as exc:  # noqa: BLE001 - this is the boundary: anything a plugin raises
        raise PluginFailure(f"{what} failed: {type(exc).__name__}: {exc}") from exc
