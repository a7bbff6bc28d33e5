"""The content of a Java-properties file as commons-configuration stores it, and the line problems found in it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gobblin_py.sdk.config_errors import ConfigError

from .interpolation import InterpolationCycle, Interpolator
from .syntax import LIST_DELIMITER

__all__ = ["LineProblem", "PropertiesFile"]


@dataclass(frozen=True)
class LineProblem:
    """A logical line that commons-configuration accepts silently but that is almost certainly a mistake."""

    path: str | None
    line: int
    kind: str  # "no-separator", "empty-key" or "dangling-continuation"
    text: str

    def describe(self) -> str:
        """A one-line human description of the problem."""
        where = self.path if self.path is not None else "<properties>"
        if self.kind == "no-separator":
            return f"line {self.line} of {where} has no key/value separator (`{self.text}`)"
        if self.kind == "empty-key":
            return f"line {self.line} of {where} has an empty key (`{self.text}`)"
        return (
            f"line {self.line} of {where} ends with a continuation backslash at the end of the file, "
            f"so it is ignored (`{self.text}`)"
        )



@dataclass
class PropertiesFile:
    """The content of one Java-properties file (plus its includes) as commons-configuration stores it.

    ``entries`` maps each key (in first-definition order) to its stored elements *before* interpolation;
    ``origins`` gives the ``(file, line)`` of every ``addProperty`` call for a key (``element_origins``: of every
    stored element); ``problems`` lists
    separator-less lines, empty keys and a dangling final continuation. Use :meth:`to_dict` for the
    ``ConfigurationConverter.getProperties`` view (interpolated, elements joined with ``,``).
    """

    path: str | None
    delimiter_parsing_disabled: bool = False
    entries: dict[str, list[str]] = field(default_factory=dict)
    origins: dict[str, list[tuple[str | None, int]]] = field(default_factory=dict)
    element_origins: dict[str, list[tuple[str | None, int]]] = field(default_factory=dict)
    problems: list[LineProblem] = field(default_factory=list)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    system_properties: Mapping[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._interpolator = Interpolator(self._first_element, self.env, self.system_properties)

    def _first_element(self, key: str) -> str | None:
        values = self.entries.get(key)
        if not values:
            return None
        return values[0]

    def location(self, key: str) -> tuple[str | None, int | None]:
        """``(file, line)`` where ``key`` was first defined (``(self.path, None)`` if unknown)."""
        origins = self.origins.get(key)
        if origins:
            return origins[0]
        return self.path, None

    def interpolate(self, text: str, *, key: str | None = None, index: int = 0) -> str:
        """Interpolate ``text`` (element ``index`` of ``key``'s values) against this file's keys and lookups.

        Deliberately stricter than commons-configuration: a value referring back to its own key is an error
        even when the key is repeated, where commons-configuration would substitute the key's first value and
        join the values with commas (``t`` and ``${t}_x`` give ``t,t_x``) -- never what such a line means.
        """
        try:
            return self._interpolator.replace(text, owner=key)
        except InterpolationCycle as cycle:
            origins = self.element_origins.get(key or "", [])
            path, line = origins[index] if index < len(origins) else (
                self.location(key) if key is not None else (self.path, None))
            chain = " -> ".join(cycle.chain)
            if key is not None and cycle.chain == [key, key]:
                repeated = len(self.entries.get(key, [])) > 1
                raise ConfigError(
                    f"the value '{text}' refers to itself ({chain})"
                    + (f": in a .properties file ${{{key}}} would take the key's first value, and the values "
                       "of a repeated key are joined with commas" if repeated else ""),
                    path=path,
                    line=line,
                    key=key,
                    hint="write the whole value out, or use a HOCON (.conf) job file, where a key referring to "
                    "itself extends the value it had before",
                ) from None
            raise ConfigError(
                f"infinite loop in property interpolation of '{cycle.original}': {chain}",
                path=path,
                line=line,
                key=key,
                hint="make sure the ${...} references do not refer back to each other",
            ) from None
        except RecursionError:
            path, line = self.location(key) if key is not None else (self.path, None)
            raise ConfigError(
                "property interpolation is nested too deeply",
                path=path,
                line=line,
                key=key,
                hint="shorten the chain of ${...} references",
            ) from None

    def get_list(self, key: str) -> list[str]:
        """``Configuration.getList``: every element of ``key`` interpolated (empty list if absent)."""
        return [self.interpolate(value, key=key, index=i) for i, value in enumerate(self.entries.get(key, []))]

    def to_dict(self) -> dict[str, str]:
        """``ConfigurationConverter.getProperties``: interpolated elements joined with ``,``."""
        return {key: LIST_DELIMITER.join(self.get_list(key)) for key in self.entries}
