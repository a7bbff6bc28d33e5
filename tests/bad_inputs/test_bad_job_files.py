"""Odd job files, each a folder beside this file: `gpy validate` refuses every one (exit 2), naming the file and
line (or the chain of files) and what is wrong, and `gpy run` refuses them the same way before any work."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli import run_gpy

HERE = Path(__file__).resolve().parent

# folder -> (the job file, what the error must say)
CASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "unicode_escape_not_hex": ("job.pull", ("job.pull:10", "my.key", "\\u")),
    "unicode_escape_cut_short": ("job.pull", ("job.pull:10", "my.key", "\\u")),
    "unicode_escape_cut_short_in_key": ("job.pull", ("job.pull:10", "\\u")),
    "self_reference_repeated_key": ("job.pull", ("job.pull:10", "extract.table.name", "refers to itself")),
    "self_reference_single_key": ("job.pull", ("job.pull:10", "my.key")),
    "binary_nul_bytes": ("job.pull", ("job.pull:10", "NUL")),
    "binary_undecodable_bytes": ("job.pull", ("job.pull:10", "UTF-8")),
    "binary_control_characters": ("job.pull", ("job.pull:10", "control character")),
    "hocon_binary_garbage": ("job.conf", ("job.conf:10", "NUL")),
    "template_inherits_itself": ("job.pull", ("self.template -> ", "self.template", "inherit")),
    "template_inheritance_loop": ("job.pull", ("a.template -> ", "b.template -> ", "inherit")),
    "include_itself": ("job.pull", ("job.pull:10", "include cycle", "job.pull -> ")),
    "include_chain_loop": ("job.pull", ("second.inc:1", "include cycle", "first.inc -> ", "second.inc -> ")),
    "hocon_include_itself": ("job.conf", ("job.conf:10", "include cycle")),
}


def test_every_folder_is_a_case():
    folders = {p.name for p in HERE.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == set(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_refuses_the_file_naming_where(case, tmp_path):
    folder = tmp_path / case
    shutil.copytree(HERE / case, folder)
    job, says = CASES[case]
    result = run_gpy("validate", job, cwd=folder)
    assert result.returncode == 2, result.stdout + result.stderr
    for text in says:
        assert text in result.stdout, (text, result.stdout)


@pytest.mark.parametrize("case", ["unicode_escape_cut_short", "self_reference_repeated_key", "binary_nul_bytes",
                                  "template_inherits_itself"])
def test_run_refuses_the_file_before_any_work(case, tmp_path):
    folder = tmp_path / case
    shutil.copytree(HERE / case, folder)
    (folder / "data").mkdir()
    (folder / "data" / "orders.csv").write_text("id,name\n1,a\n")
    job, says = CASES[case]
    result = run_gpy("run", job, "--engine", "local", cwd=folder)
    assert result.returncode == 2, result.stdout + result.stderr
    assert says[0] in result.stderr
    assert not (folder / "published").exists() and not (folder / "state").exists()
