"""Every reader fuzzed for a few seconds (`make fuzz` runs each for 10^6 inputs): on any input it returns a value
or raises the project's clear error naming the file, never another exception, never hangs.

The readers: the state store's SequenceFile container and Writable values, Java-properties and HOCON job files,
the commit log, run-history records, Kafka messages (every deserializer) and the `source.schema` they are read by.
"""

from __future__ import annotations

import pytest

from tests.fuzz.engine import Target, fuzz
from tests.fuzz.targets import all_targets

SECONDS_PER_TARGET = 3.0  # eight targets: about 25 s in all
NAMES = ["state_file", "writable", "properties", "hocon", "commit_log", "run_history", "kafka_values", "kafka_schema"]


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> dict[str, Target]:
    return {target.name: target for target in all_targets(tmp_path_factory.mktemp("fuzz"))}


def test_every_reader_has_a_target(targets):
    assert sorted(targets) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_the_reader_never_crashes(targets, name):
    report = fuzz(targets[name], inputs=50_000, seconds=SECONDS_PER_TARGET, seed=2026)
    assert report.inputs >= len(targets[name].seeds)
    assert not report.crashes, report.describe()


def test_the_fuzzer_reports_an_unexpected_error_a_disallowed_one_and_a_hang():
    def reader(data: bytes) -> None:
        if data.startswith(b"k"):
            raise KeyError("k")
        if data.startswith(b"v"):
            raise ValueError("said without the file's name")
        if data.startswith(b"h"):
            while True:
                pass

    target = Target("toy", reader, [b"ok", b"k", b"v", b"h"], (ValueError,),
                    check=lambda data, exc: None if "toy.txt" in str(exc) else "names no file")
    report = fuzz(target, inputs=4, hang_seconds=0.2)
    assert report.inputs == 4
    assert sorted(report.crashes) == ["KeyError at test_fuzz.py:38", "hang (over 0.2 s)",
                                      "unclear ValueError: names no file"]
