"""The one exception type of the configuration package."""

from __future__ import annotations

from gobblin_py.sdk.errors import UsageError


class ConfigError(UsageError):
    """A job configuration problem, located precisely enough for a user to fix it.

    Every instance names the file (``path``) and, where known, the 1-based ``line`` and the offending
    ``key``. ``str(error)`` reads like::

        jobs/x.pull:12: key 'foo': <what is wrong>; <what to do>

    ``problem`` is the "what is wrong" part and ``hint`` the "what to do" part.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.problem = problem
        self.path = None if path is None else str(path)
        self.line = line
        self.key = key
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.path is not None or self.line is not None:
            location = self.path if self.path is not None else "<config>"
            parts.append(f"{location}:{self.line}:" if self.line is not None else f"{location}:")
        if self.key is not None:
            parts.append(f"key '{self.key}':")
        parts.append(self.problem)
        text = " ".join(parts)
        if self.hint:
            text = f"{text}; {self.hint}"
        return text

    @property
    def message(self) -> str:
        """The full rendered message (same as ``str(error)``)."""
        return self._render()

    def with_location(
        self, *, path: str | None = None, line: int | None = None, key: str | None = None
    ) -> ConfigError:
        """Return a copy whose missing location fields are filled from the arguments."""
        return ConfigError(
            self.problem,
            path=self.path if self.path is not None else path,
            line=self.line if self.line is not None else line,
            key=self.key if self.key is not None else key,
            hint=self.hint,
        )

    def __reduce__(self):  # keep the keyword-only constructor picklable (Spark ships errors around)
        return (_rebuild, (self.problem, self.path, self.line, self.key, self.hint))


def _rebuild(problem, path, line, key, hint) -> ConfigError:
    return ConfigError(problem, path=path, line=line, key=key, hint=hint)


class ConfigWarning(ConfigError):
    """What looks wrong in a job's configuration without being an error: a plugin's or a standalone job's
    ``validate`` may return it among its errors; ``gpy validate`` and ``gpy run`` show it as a warning."""
