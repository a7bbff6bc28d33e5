"""Fixtures recreating the resource trees of Gobblin's own loader tests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import pytest

# 16 '#' lines (the Apache license header of the Gobblin resources) + 1 blank line: bodies start on line 18.
LICENSE_HEADER = (
    "#\n# Licensed to the Apache Software Foundation (ASF) under one or more\n"
    + "".join("#\n" for _ in range(14))
    + "\n"
)
assert LICENSE_HEADER.count("\n") == 17


def write_tree(root: Path, files: Dict[str, str]) -> Path:
    """Write ``{relative path: content}`` under ``root``."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def write_files():
    """The :func:`write_tree` helper, for tests."""
    return write_tree


PULL_FILE_LOADER_TREE = {
    "root.properties": "key1=rootValue1\nkey3=rootValue3\n",
    "ajob.pull": "key2=${key10}\nkey10=aValue\n",
    "bjob.pull": 'json.property.key={"name":"shankar","country":"bharat"}\n'
    "json.property.key1=${json.property.key}\n",
    "dir1/dir1.configuration": "key4=dir1Value4\nkey2a=${key2}\n",
    "dir1/job.pull": "key1=jobValue1,jobValue2,jobValue3\nkey2=jobValue2\n",
    "dir1/job.conf": 'key1="jobValue1,jobValue2,jobValue3"\nkey2=${key10}\nkey2=${?key4}\nkey10=jobValue2\n',
    "dir2/badjob.conf": "key1=foo:122 // unquoted :\n",
}


@pytest.fixture
def pull_file_loader_tree(tmp_path: Path) -> Path:
    """gobblin-utility/src/test/resources/pullFileLoaderTest (every file: license header + body)."""
    root = tmp_path / "pullFileLoaderTest"
    write_tree(root, {name: LICENSE_HEADER + body for name, body in PULL_FILE_LOADER_TREE.items()})
    # Gobblin's recursive load sorts by mtime; give the files distinct, deterministic times.
    for index, name in enumerate(sorted(PULL_FILE_LOADER_TREE)):
        stamp = 1_600_000_000 + index
        os.utime(root / name, (stamp, stamp))
    return root


def _java_properties_store(props: Dict[str, str]) -> str:
    # java.util.Properties.store: a "#<date>" comment line, then key=value lines.
    return "#Mon Jan 01 00:00:00 UTC 2024\n" + "".join(f"{k}={v}\n" for k, v in props.items())


SCHEDULER_UTILS_TREE = {
    "root.properties": {"k1": "a1", "k2": "a2"},
    "test1/test.properties": {"k1": "b1", "k3": "a3"},
    "test1/test11.pull": {"k1": "c1", "k3": "b3", "k6": "a6"},
    "test1/test12.PULL": {"k7": "a7"},
    "test1/test11/test111.pull": {"k1": "d1", "k8": "a8", "k9": "${k8}"},
    "test2/test.PROPERTIES": {"k2": "b2", "k5": "a5"},
    "test2/test21.PULL": {"k5": "b5"},
    "test3/test31.PULL": {"k1": "b1"},
}


@pytest.fixture
def scheduler_utils_tree(tmp_path: Path) -> Path:
    """The tree SchedulerUtilsTest builds with java.util.Properties.store."""
    root = tmp_path / "schedulerUtilsTest"
    write_tree(root, {name: _java_properties_store(props) for name, props in SCHEDULER_UTILS_TREE.items()})
    return root
