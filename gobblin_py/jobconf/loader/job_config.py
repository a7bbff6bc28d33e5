"""What loading a job gives: its resolved properties (:class:`JobConfig`) or, per file, a :class:`LoadResult`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from gobblin_py.sdk.config_errors import ConfigError

from ..convert import guava_trim

__all__ = ["JobConfig", "LoadResult", "KeyLocator"]

KeyLocator = Callable[[str], tuple[str | None, int | None]]

_INT_RE = re.compile(r"[+-]?[0-9]+")



# ----------------------------------------------------------------------------------------------------
# Public result types
# ----------------------------------------------------------------------------------------------------


class JobConfig(Mapping[str, str]):
    """The resolved, flat ``str -> str`` properties of one job (Gobblin's job ``Properties``/``State``).

    Behaves as a read-only mapping; ``path`` is the job file, ``warnings`` lists non-fatal findings and
    ``applied`` the files read, in the order applied.
    The typed getters follow Gobblin's ``State`` accessors and raise :class:`ConfigError` naming the key.
    """

    def __init__(
        self,
        path: str,
        properties: Mapping[str, str],
        warnings: Iterable[str] = (),
        locator: KeyLocator | None = None,
        applied: Iterable[str] = (),
    ) -> None:
        self.path = str(path)
        self.properties: dict[str, str] = dict(properties)
        self.warnings: list[str] = list(warnings)
        self._locator = locator
        # the files the properties came from, absolute, in the order applied: system configuration, global files
        # from the jobs root down, the job file (later ones win)
        self.applied: list[str] = list(applied)

    def locate(self, key: str) -> tuple[str | None, int | None]:
        """``(file, line)`` where ``key`` was set: the job file, a global file or the system configuration (the
        line is None where it is not known, e.g. in HOCON); the job file when no file sets it (a template)."""
        if self._locator is not None:
            file, line = self._locator(key)
            if file is not None:
                return file, line
        return self.path, None

    def __getitem__(self, key: str) -> str:
        return self.properties[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.properties)

    def __len__(self) -> int:
        return len(self.properties)

    def __repr__(self) -> str:
        return f"JobConfig({self.path!r}, {len(self.properties)} properties)"

    def with_defaults(self, defaults: Mapping[str, str]) -> JobConfig:
        """A copy with ``defaults`` for the keys it does not set (located in the job file)."""
        return JobConfig(self.path, {**defaults, **self.properties}, self.warnings, self._locator, self.applied)

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        """The value of ``key`` or ``default``."""
        return self.properties.get(key, default)

    def _number(self, key: str, default: int | None, bits: int) -> int | None:
        value = self.properties.get(key)
        if value is None:
            return default
        limit = 2 ** (bits - 1)
        if _INT_RE.fullmatch(value) is None or not -limit <= int(value) < limit:
            kind = "an integer" if bits == 32 else "a long integer"
            raise ConfigError(
                f"expected {kind}, got '{value}'",
                path=self.path,
                key=key,
                hint=f"set {key} to a whole number without spaces",
            )
        return int(value)

    def get_int(self, key: str, default: int | None = None) -> int | None:
        """``State.getPropAsInt``: Java ``Integer.parseInt`` (no spaces, 32-bit range)."""
        return self._number(key, default, 32)

    def get_long(self, key: str, default: int | None = None) -> int | None:
        """``State.getPropAsLong``: Java ``Long.parseLong`` (no spaces, 64-bit range)."""
        return self._number(key, default, 64)

    def get_bool(self, key: str, default: bool = False) -> bool:
        """``State.getPropAsBoolean``: Java ``Boolean.parseBoolean`` -- only ``true`` (any case) is true."""
        value = self.properties.get(key)
        if value is None:
            return default
        return value.lower() == "true"

    def get_list(self, key: str, default: Sequence[str] | None = None) -> list[str]:
        """``State.getPropAsList``: split on ``,``, trim, drop empty pieces."""
        value = self.properties.get(key)
        if value is None:
            return list(default) if default is not None else []
        return [piece for piece in (guava_trim(p) for p in value.split(",")) if piece]


@dataclass
class LoadResult:
    """Outcome of loading one job file: either ``config`` or ``error`` is set."""

    path: str
    config: JobConfig | None = None
    error: ConfigError | None = None
    mtime_ms: int | None = None

    @property
    def ok(self) -> bool:
        """True when the job loaded."""
        return self.error is None
