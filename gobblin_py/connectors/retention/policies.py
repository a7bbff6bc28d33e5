"""Gobblin's version selection policies (``org.apache.gobblin.data.management.policy.*``): which versions of a
dataset a retention job deletes. Each is configured from the ``gobblin.retention.selection.*`` keys."""

from __future__ import annotations

from typing import ClassVar

from gobblin_py.connectors.retention.settings import (
    COMBINE_KEY,
    LOOKBACK_KEY,
    MAX_LOOKBACK_KEY,
    MIN_LOOKBACK_KEY,
    OPERATION_KEY,
    POLICY_KEY,
    CleanerSettings,
)
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.store.retention import Lookback, Policy, combine, newest_k, select_before, select_between


class SelectionPolicy:
    """A selection policy: ``policy(settings)`` builds the function that picks the versions to delete."""

    settings_class: ClassVar[type[CleanerSettings]] = CleanerSettings

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        raise NotImplementedError

    @classmethod
    def newest_selected(cls, settings: CleanerSettings, now: float) -> float | None:
        """The newest time a version this policy selects can have (its lookback's cutoff); None when any."""
        return None


def _lookback(value: str | None, key: str, required: bool = True) -> Lookback | None:
    if value is None or not value.strip():
        if required:
            raise UsageError(f"{key}: is not set; the policy needs it ({POLICY_KEY})")
        return None
    return Lookback.parse(value, key)


class SelectBeforeTimeBasedPolicy(SelectionPolicy):
    """Gobblin's ``SelectBeforeTimeBasedPolicy``: versions older than ``selection.timeBased.lookbackTime``."""

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        return select_before(_lookback(settings.lookback, LOOKBACK_KEY))  # type: ignore[arg-type]

    @classmethod
    def newest_selected(cls, settings: CleanerSettings, now: float) -> float | None:
        return _lookback(settings.lookback, LOOKBACK_KEY).cutoff(now)  # type: ignore[union-attr]


class SelectBetweenTimeBasedPolicy(SelectionPolicy):
    """Gobblin's ``SelectBetweenTimeBasedPolicy``: versions between the min and the max lookback."""

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        return select_between(_lookback(settings.min_lookback, MIN_LOOKBACK_KEY, required=False),
                              _lookback(settings.max_lookback, MAX_LOOKBACK_KEY, required=False))

    @classmethod
    def newest_selected(cls, settings: CleanerSettings, now: float) -> float | None:
        newest = _lookback(settings.min_lookback, MIN_LOOKBACK_KEY, required=False)
        return newest.cutoff(now) if newest is not None else None


class NewestKSelectionPolicy(SelectionPolicy):
    """Gobblin's ``NewestKSelectionPolicy``: the newest k versions (``versionsSelected``, default 2), or every
    version but the newest k (``versionsNotSelected``)."""

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        if settings.newest_not is not None:
            return newest_k(settings.newest_not, exclude=True)
        return newest_k(settings.newest or 2, exclude=False)


class CombineSelectionPolicy(SelectionPolicy):
    """Gobblin's ``CombineSelectionPolicy``: the versions all its policies select (``intersect``) or any does
    (``union``); the policies read the same keys."""

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        names = [n.strip() for n in (settings.combined or "").split(",") if n.strip()]
        if not names:
            raise UsageError(f"{COMBINE_KEY}: is not set; name the policies to combine")
        if settings.operation is None:
            raise UsageError(f"{OPERATION_KEY}: is not set; intersect or union")
        return combine([policy_class(name, COMBINE_KEY).policy(settings) for name in names],
                       settings.operation.strip().lower())

    @classmethod
    def newest_selected(cls, settings: CleanerSettings, now: float) -> float | None:
        """Intersected: the earliest of its policies' cutoffs (a version must pass each); united: the latest,
        when every policy has one (else one of them may select any version)."""
        names = [n.strip() for n in (settings.combined or "").split(",") if n.strip()]
        cutoffs = [policy_class(name, COMBINE_KEY).newest_selected(settings, now) for name in names]
        if (settings.operation or "").strip().lower() == "intersect":
            known = [c for c in cutoffs if c is not None]
            return min(known) if known else None
        return None if not cutoffs or None in cutoffs else max(c for c in cutoffs if c is not None)


class SelectAllPolicy(SelectionPolicy):
    """Gobblin's ``SelectAllPolicy``: every version."""

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        return lambda versions, now: list(versions)


class SelectNothingPolicy(SelectionPolicy):
    """Gobblin's ``SelectNothingPolicy``: no version."""

    @classmethod
    def policy(cls, settings: CleanerSettings) -> Policy:
        return lambda versions, now: []


def policy_class(name: str, key: str) -> type[SelectionPolicy]:
    """The selection policy a key names (PluginError, exit 2, when gpy has none by that name)."""
    cls = resolve_class(name, key)
    if not issubclass(cls, SelectionPolicy):
        raise UsageError(f"{key}={name}: {cls.__module__}.{cls.__qualname__} is not a selection policy")
    return cls
