"""`gpy plugins`, `gpy validate --explain` and the docs' key tables: all from the keys' declarations."""

from __future__ import annotations

import json

from gobblin_py.cli.catalog import markdown
from gobblin_py.cli.reference import pages
from gobblin_py.sdk.plugins import registered_plugins
from tests.support.cli import run_gpy
from tests.support.paths import REPO


def test_the_markdown_listing_gives_the_reference_pages_key_tables():
    reference = "\n".join(text for path, text in pages().items() if path.startswith("reference/keys/"))
    rows = [line for line in markdown().splitlines() if line.startswith("| `")]
    assert len(rows) > 500 and [row for row in rows if row not in reference] == []


def test_plugins_lists_every_registered_plugin_with_names_and_keys():
    result = run_gpy("plugins", "--json")
    assert result.returncode == 0, result.stderr
    listed = {p["class"]: p for p in json.loads(result.stdout)}
    assert {info.target.replace(":", ".") for info in registered_plugins()} == set(listed)
    publisher = listed["gobblin_py.connectors.files.publisher.BaseDataPublisher"]
    assert publisher["kind"] == "publisher" and "org.apache.gobblin.publisher.BaseDataPublisher" in publisher["names"]
    assert {k["key"] for k in publisher["keys"]} >= {"data.publisher.final.dir", "data.publisher.replace.final.dir"}
    source = listed["gobblin_py.connectors.files.filebased.FileBasedSource"]
    max_files = next(k for k in source["keys"] if k["key"] == "source.filebased.maxFilesPerRun")
    assert max_files["type"] == "whole number (>= 1)" and max_files["default"] == "unlimited"


def test_explain_a_branch_key_a_gobblin_key_and_a_typo():
    explained = run_gpy("validate", "--explain", "writer.codec.type.1")
    assert explained.returncode == 0
    assert "writer.codec.type  (read by gobblin_py.connectors.files.builder.AvroDataWriterBuilder" in explained.stdout
    assert "per branch: writer.codec.type.N when the job has several branches" in explained.stdout
    gobblin = run_gpy("validate", "--explain", "job.group")
    assert gobblin.returncode == 0 and "a Gobblin key gpy accepts and does not act on" in gobblin.stdout
    typo = run_gpy("validate", "--explain", "writer.outptu.format")
    assert typo.returncode == 2 and "did you mean writer.output.format" in typo.stdout


def test_explain_shows_the_runs_retry_budget_and_each_retry_key_names_it():
    from gobblin_py.cli.catalog import explain

    budget = explain("gpy.retry.budget.seconds")
    assert budget.startswith("gpy.retry.budget.seconds  (gpy runtime: The bound on a run's retry waiting)")
    assert "type: number (>= 0, <= 604800); default: 900.0" in budget
    for key in ("task.maxretries", "task.retry.intervalinsec", "rest.retry.max", "hive.metastore.connect.retries"):
        assert "gpy.retry.budget.seconds" in explain(key), key
