"""The contract kit fails a plugin that breaks one of its promises, naming that promise.

Each case writes a small test module that applies one of the kit's suites to a built-in plugin and to the same
plugin with one defect (tests/testing_kit/broken_plugins.py), runs it in a pytest of its own (``pytester``), and
expects the built-in to pass every selected check and the broken plugin to fail exactly the checks of the promise
it breaks, with a message that says what went wrong.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "tests.testing_kit.broken_plugins"


@dataclass(frozen=True)
class Case:
    """A suite applied to a built-in and to its broken copy: what must fail, and the message that must say why."""

    suite: str  # ``module:Class`` of the suite applied to the built-in
    attribute: str  # the class attribute naming the plugin
    broken: str  # the broken plugin's class name in broken_plugins
    select: str  # ``-k``: the suite's checks that concern the promise (and a neighbour the defect must not fail)
    fails: dict[str, str]  # check -> a phrase its failure message holds
    extra: str = ""  # more class attributes of both test classes


SOURCE = "tests.contracts.test_file_sources:TestParquetFileSource"
CASES = {
    "a source that drops a row": Case(
        SOURCE, "source_class", "RowDroppingSource", "first_run or passes_validation",
        {"test_a_first_run_publishes_every_record_once[local]": "2 record(s) never published"}),
    "a source that reads everything again": Case(
        SOURCE, "source_class", "RereadingSource", "nothing_new or new_data_is_pulled or first_run",
        {"test_a_rerun_with_nothing_new_pulls_nothing": "a rerun with nothing new extracted records",
         "test_new_data_is_pulled_exactly_once": "record(s) published more than once"}),
    "a source that ignores a value startpoint": Case(
        SOURCE, "source_class", "ValueStartpointIgnoringSource", "startpoint_value or startpoint_oldest",
        {"test_startpoint_value_reads_again_from_that_record": "4 later record(s) not read again"}),
    "a writer that writes straight to the output folder": Case(
        "gobblin_py.testing:WriterContract", "builder_class", "OutputFolderWriterBuilder",
        "staged_until_commit or keys_validate", {"test_files_stay_staged_until_commit_moves_them[PARQUET]":
                                              "output appeared before the commit"}, 'formats = ("PARQUET",)'),
    "a writer that miscounts bytes": Case(
        "gobblin_py.testing:WriterContract", "builder_class", "ByteMiscountingWriterBuilder",
        "staged_until_commit or keys_validate", {"test_files_stay_staged_until_commit_moves_them[PARQUET]":
                                              "bytes_written"}, 'formats = ("PARQUET",)'),
    "a publisher that publishes twice": Case(
        "gobblin_py.testing:PublisherContract", "publisher_class", "TwicePublishingPublisher",
        "a_job_publishes_every_record_once or keys_validate",
        {"test_a_job_publishes_every_record_once[local]": "record(s) published more than once"}),
}


def module_for(case: Case) -> str:
    """A test module applying ``case.suite`` to the built-in (``TestBuiltIn``) and the broken plugin (``TestBroken``)."""
    module, name = case.suite.split(":")
    body = f'    engines = ("local",)\n    {case.extra}\n'
    return (f"import {module} as suites\n\n\n"
            f"class TestBuiltIn(suites.{name}):\n{body}\n\n"
            f"class TestBroken(suites.{name}):\n{body}    {case.attribute} = \"{BROKEN}.{case.broken}\"\n")


@pytest.mark.parametrize("defect", sorted(CASES))
def test_the_suite_fails_the_broken_plugin_on_its_promise(defect: str, pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[defect]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.setenv("COLUMNS", "400")  # the summary's lines keep their whole message
    pytester.makepyfile(test_kit_applied=module_for(case))
    result = pytester.runpytest_subprocess("-q", "-rfE", "-p", "no:cacheprovider", "-k", case.select, timeout=300)
    text = result.stdout.str()
    failed = dict(re.findall(r"^(?:FAILED|ERROR) \S+::(Test\w+::\S+) - (.*)$", text, re.MULTILINE))
    assert not [t for t in failed if t.startswith("TestBuiltIn::")], f"the built-in fails its own suite:\n{text}"
    broken = {test.split("::", 1)[1]: message for test, message in failed.items()}
    assert set(broken) == set(case.fails), f"{defect}: failed {sorted(broken)}, not {sorted(case.fails)}:\n{text}"
    for test, phrase in case.fails.items():
        assert phrase in broken[test], f"{test} failed without saying {phrase!r}: {broken[test]}"
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) > len(case.fails), f"the built-in's checks did not run:\n{text}"
