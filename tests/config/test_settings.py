"""Typed settings: declaration, Gobblin's parsing rules, scopes, every problem at once."""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError, dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Context, Kind, Scope, Settings, SettingsError, coerce, setting
from gobblin_py.sdk.errors import UsageError


@dataclass(frozen=True)
class Sample(Settings):
    name: str = setting("sample.name", required=True, doc="what it is called")
    count: int = setting("sample.count", default=3, minimum=1, maximum=10, doc="how many")
    ratio: float = setting("sample.ratio", default=0.5, minimum=0.0, maximum=1.0, doc="share")
    enabled: bool = setting("sample.enabled", default=False, doc="on or off")
    items: tuple[str, ...] = setting("sample.items", default=(), doc="a list")
    mode: str = setting("sample.mode", default="fast", choices=("fast", "safe"), doc="how")
    size: int | None = setting("sample.size", kind=Kind.SIZE, doc="bytes")
    pattern: re.Pattern | None = setting("sample.pattern", doc="a regex")
    folder: str | None = setting("sample.folder", kind=Kind.NAME, doc="a folder name")
    extra: dict = setting("sample.extra.*", default=None, doc="passed through")


def test_defaults_and_parsing():
    settings = Sample.load({"sample.name": " orders ", "sample.count": "7", "sample.enabled": "TRUE",
                            "sample.items": " a, ,b ,", "sample.mode": "SAFE", "sample.size": "128MB",
                            "sample.pattern": "^x.*", "sample.extra.one": "1", "sample.extra.two.deep": "2"})
    assert settings.name == " orders " and settings.count == 7 and settings.enabled is True  # text as written
    assert settings.items == ("a", "b") and settings.mode == "safe" and settings.size == 128 << 20
    assert settings.pattern.match("xyz") and settings.ratio == 0.5
    assert settings.extra == {"one": "1", "two.deep": "2"}
    with pytest.raises(FrozenInstanceError):
        settings.count = 2  # type: ignore[misc]


def test_every_problem_is_reported_at_once_with_key_and_fix():
    with pytest.raises(SettingsError) as err:
        Sample.load({"sample.count": "0", "sample.ratio": "lots", "sample.enabled": "yes", "sample.mode": "slow",
                     "sample.pattern": "(", "sample.folder": "../x"})
    problems = err.value.problems
    assert {p.key for p in problems} == {"sample.name", "sample.count", "sample.ratio", "sample.enabled",
                                         "sample.mode", "sample.pattern", "sample.folder"}
    text = str(err.value)
    assert "must be at least 1" in text and "fast | safe" in text and "not a boolean" in text
    assert "cannot be used as a folder name" in text and "is not set" in text
    assert isinstance(err.value, UsageError) and err.value.exit_code == 2


def test_unresolved_substitution_is_refused():
    problems = Sample.problems({"sample.name": "${env:NAME}"})
    assert len(problems) == 1 and "unresolved substitution ${env:NAME}" in str(problems[0])


def test_locations_come_from_the_job_config():
    class Located(dict):
        def locate(self, key):
            return ("jobs/x.pull", 12)

    problems = Sample.problems(Located({"sample.name": "a", "sample.count": "x"}))
    assert str(problems[0]).startswith("jobs/x.pull:12: key 'sample.count':")


@dataclass(frozen=True)
class Scoped(Settings):
    fmt: str = setting("writer.output.format", default="PARQUET", scope=Scope.BRANCH, doc="format")
    conv: tuple[str, ...] = setting("converter.classes", default=(), scope=Scope.FORK, doc="converters")
    delta: str | None = setting("extract.delta.fields", scope=Scope.ENTITY, doc="delta column")


def test_branch_fork_and_entity_scopes():
    props = {"writer.output.format": "AVRO", "writer.output.format.1": "ORC", "converter.classes": "a",
             "converter.classes.0": "b", "extract.delta.fields": "id", "source.querybased.entity.t2.extract.delta.fields": "ts"}
    assert Scoped.load(props).fmt == "AVRO"
    assert Scoped.load(props, branches=2, branch=1).fmt == "ORC"
    assert Scoped.load(props, branches=2, branch=0).fmt == "PARQUET"  # Gobblin: no .0, no fallback to the shared key
    assert Scoped.load(props, branches=1, branch=0).fmt == "AVRO"   # one branch: never suffixed
    assert Scoped.load(props).conv == ("a",)                        # before the fork
    assert Scoped.load(props, branches=1, branch=0).conv == ("b",)  # inside branch 0, even with one branch
    assert Scoped.load(props, entity="t2").delta == "ts" and Scoped.load(props, entity="t1").delta == "id"
    assert Context(branches=3, branch=2).lookup_names(Scoped.keys()[0]) == ["writer.output.format.2"]


def test_check_hook_adds_cross_key_problems():
    @dataclass(frozen=True)
    class Pair(Settings):
        low: int = setting("p.low", default=0, doc="low")
        high: int = setting("p.high", default=0, doc="high")

        def check(self):
            return [ConfigError("must exceed p.low", key="p.high")] if self.high <= self.low else []

    assert Pair.problems({"p.low": "1", "p.high": "5"}) == []
    assert "must exceed p.low" in str(Pair.problems({"p.low": "5", "p.high": "1"})[0])


def test_mutable_defaults_are_refused():
    with pytest.raises(TypeError):
        setting("x", default=[], doc="x")


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_integers_round_trip(value):
    key = Sample.keys()[1].__class__(name="k", kind=Kind.INT, doc="")
    assert coerce(key, f" {value} ") == value


@given(st.text())
def test_booleans_are_only_true_or_false(text):
    key = Sample.keys()[3]
    if text.strip().lower() in ("true", "false"):
        assert coerce(key, text) is (text.strip().lower() == "true")
    else:
        with pytest.raises(ValueError):
            coerce(key, text)


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters=",$"), max_size=5), max_size=6))
def test_lists_split_trim_and_drop_empties(items):
    key = Sample.keys()[4]
    assert coerce(key, ",".join(items)) == tuple(i.strip() for i in items if i.strip())
