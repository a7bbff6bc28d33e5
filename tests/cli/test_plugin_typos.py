"""A misspelt Gobblin class name is a typo with a did-you-mean, not a Gobblin class gpy lacks."""

from __future__ import annotations

import json

import pytest

from gobblin_py.sdk.plugins import PluginError, resolve_class
from tests.support.cli import run_gpy
from tests.support.jobs import Job

AVRO = "org.apache.gobblin.converter.avro.JsonIntermediateToAvroConverter"


@pytest.mark.parametrize(("typo", "meant"), [
    (AVRO + "r", AVRO),
    ("gobblin.converter.avro.JsonIntermediateToAvroConvertr", AVRO),
    ("org.apache.gobblin.publisher.BaseDataPublsher", "org.apache.gobblin.publisher.BaseDataPublisher"),
    ("gobblin_py.connectors.files.filebased.FileBasedSorce", "gobblin_py.connectors.files.filebased.FileBasedSource"),
])
def test_a_name_close_to_a_known_one_says_did_you_mean(typo, meant):
    with pytest.raises(PluginError) as err:
        resolve_class(typo, "converter.classes")
    assert not err.value.unsupported
    assert f"did you mean {meant}?" in str(err.value)
    assert err.value.exit_code == 2


@pytest.mark.parametrize("name", ["org.apache.gobblin.zuora.ZuoraSource",
                                  "org.apache.gobblin.source.DatePartitionedJsonFileSource",
                                  "org.apache.gobblin.data.management.copy.hive.HivePartitionExtendedFilter"])
def test_a_real_gobblin_class_gpy_lacks_is_still_unsupported(name):
    with pytest.raises(PluginError) as err:
        resolve_class(name, "source.class")
    assert err.value.unsupported and "did you mean" not in str(err.value)


def typo_job(tmp_path) -> Job:
    return Job(tmp_path, extra=f"converter.classes={AVRO}r\n")


def test_validate_names_the_typo_and_the_gobblin_name_meant(tmp_path):
    job = typo_job(tmp_path)
    result = run_gpy("validate", str(job.file))
    assert result.returncode == 2
    assert f"converter.classes={AVRO}r" in result.stdout
    assert f"did you mean {AVRO}?" in result.stdout
    assert "write a plugin" not in result.stdout and "unsupported" not in result.stdout
    report = json.loads(run_gpy("validate", str(job.file), "--json").stdout)[0]
    assert report["unsupported"] == [] and any(f"did you mean {AVRO}?" in u for u in report["unresolved"])


def test_run_exits_2_with_the_did_you_mean(tmp_path):
    job = typo_job(tmp_path)
    result = run_gpy("run", str(job.file), "--engine", "local")
    assert result.returncode == 2
    assert f"did you mean {AVRO}?" in result.stderr
    assert not job.final.exists()
