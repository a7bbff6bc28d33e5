"""Interpolation of Java-properties values: commons-lang 2.6 ``StrSubstitutor`` with commons-configuration's lookups.

``${key}`` takes the first element of ``key`` in the same file, ``${env:X}`` and ``${sys:x}`` read the
environment and the system properties, ``$${`` escapes, unresolved references are kept verbatim and a cycle
raises :class:`InterpolationCycle`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .syntax import split_list

__all__ = ["InterpolationCycle", "Interpolator"]


class InterpolationCycle(Exception):
    """An infinite loop: ``original`` is the text interpolated, ``chain`` the variables that loop."""

    def __init__(self, original: str, chain: list[str]) -> None:
        super().__init__(original)
        self.original = original
        self.chain = chain


class Interpolator:
    """commons-lang 2.6 ``StrSubstitutor`` driven by a commons-configuration ``ConfigurationInterpolator``."""

    def __init__(
        self,
        default_lookup: Callable[[str], str | None],
        env: Mapping[str, str],
        system_properties: Mapping[str, str],
    ) -> None:
        self._default_lookup = default_lookup
        self._env = env
        self._sys = system_properties
        self._env_interpolator: Interpolator | None = None

    # -- variable lookup (ConfigurationInterpolator.lookup) -----------------------------------------
    def lookup(self, var: str) -> str | None:
        colon = var.find(":")
        if colon >= 0:
            prefix, name = var[:colon], var[colon + 1 :]
            value: str | None = None
            if prefix == "sys":
                raw = self._sys.get(name)
                value = None if raw is None else str(raw)
            elif prefix == "env":
                value = self._lookup_env(name)
            # "const" (Java static fields) and unknown prefixes find nothing.
            if value is not None:
                return value
        return self._default_lookup(var)

    def _lookup_env(self, name: str) -> str | None:
        # EnvironmentLookup -> EnvironmentConfiguration.getString: the variable's value is list-split,
        # its first element is taken and interpolated against the environment itself.
        if self._env_interpolator is None:
            env = self._env

            def env_default(var: str) -> str | None:
                raw = env.get(var)
                return None if raw is None else split_list(raw)[0]

            self._env_interpolator = Interpolator(env_default, env, self._sys)
        raw = self._env.get(name)
        if raw is None:
            return None
        return self._env_interpolator.replace(split_list(raw)[0])

    # -- substitution (StrSubstitutor.substitute) ---------------------------------------------------
    def replace(self, text: str, owner: str | None = None) -> str:
        """Interpolate ``text``; raises ``InterpolationCycle`` on an infinite loop.

        ``owner`` is the key whose value ``text`` is: a reference back to it, however indirect, is a loop too
        (its chain then starts and ends with ``owner``), also where the key has several values and
        commons-configuration would take the first.
        """
        if "${" not in text:
            return text
        return self._substitute(text, None if owner is None else [text, owner])

    def _substitute(self, region: str, prior: list[str] | None) -> str:
        out: list[str] = []
        pos = 0
        end = len(region)
        while pos < end:
            start = region.find("${", pos)
            if start < 0:
                out.append(region[pos:])
                break
            out.append(region[pos:start])
            if _last_char(out) == "$":
                # "$${": the escape char is dropped and scanning resumes after the "$" of the prefix.
                _drop_last_char(out)
                out.append("$")
                pos = start + 1
                continue
            close = region.find("}", start + 2)
            if close < 0:
                out.append(region[start:])
                break
            var = region[start + 2 : close]
            if prior is None:
                prior = [region]
            if var in prior:
                raise InterpolationCycle(prior[0], prior[1:] + [var])
            prior.append(var)
            value = self.lookup(var)
            if value is not None:
                out.append(self._substitute(value, prior))
            else:
                out.append(region[start : close + 1])
            prior.pop()
            pos = close + 1
        return "".join(out)


def _last_char(pieces: list[str]) -> str:
    for piece in reversed(pieces):
        if piece:
            return piece[-1]
    return ""


def _drop_last_char(pieces: list[str]) -> None:
    for index in range(len(pieces) - 1, -1, -1):
        if pieces[index]:
            pieces[index] = pieces[index][:-1]
            return
