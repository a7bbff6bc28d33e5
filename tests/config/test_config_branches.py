"""Per-branch key names (spec §3.1, ForkOperatorUtilsTest) and key constants."""

from __future__ import annotations

import pytest

from gobblin_py.jobconf import (
    ConfigError,
    JobConfig,
    branch_key,
    branch_name,
    fork_id,
    fork_key,
    get_branch_prop,
    path_for_branch,
    state_branch_key,
)


@pytest.mark.parametrize(
    "num_branches,branch_id,expected", [(0, 0, "foo"), (1, 0, "foo"), (2, 0, "foo.0"), (2, 1, "foo.1"), (3, 2, "foo.2")]
)
def test_branch_key_suffixes_only_with_several_branches(num_branches, branch_id, expected):
    assert branch_key("foo", num_branches, branch_id) == expected


def test_branch_key_rejects_negative_arguments():
    with pytest.raises(ValueError):
        branch_key("foo", -1, 0)
    with pytest.raises(ValueError):
        branch_key("foo", 2, -1)


@pytest.mark.parametrize("branch,expected", [(-1, "foo"), (0, "foo.0"), (1, "foo.1")])
def test_fork_key_suffixes_whenever_in_a_fork(branch, expected):
    assert fork_key("foo", branch) == expected


def test_single_branch_converters_still_use_the_suffix():
    # In-fork converters and row policies use fork_key: converter.classes.0 even with one branch.
    assert fork_key("converter.classes", 0) == "converter.classes.0"
    assert branch_key("writer.output.dir", 1, 0) == "writer.output.dir"


def test_state_branch_key_uses_fork_branch_id():
    assert state_branch_key({}, "converter.x") == "converter.x"
    assert state_branch_key({"fork.branch.id": "1"}, "converter.x") == "converter.x.1"
    assert state_branch_key({"fork.branch.id": "-1"}, "converter.x") == "converter.x"
    with pytest.raises(ConfigError) as info:
        state_branch_key(JobConfig("j.pull", {"fork.branch.id": "one"}), "converter.x")
    assert info.value.key == "fork.branch.id" and info.value.path == "j.pull"


def test_path_for_branch():
    props = {"fork.branch.name.0": "fork_foo_0"}
    assert path_for_branch(props, "foo", 2, 0) == "foo/fork_foo_0"
    assert path_for_branch(props, "foo", 2, 1) == "foo/fork_1"
    assert path_for_branch(props, "foo", 1, 0) == "foo"
    assert branch_name(props, 3) == "fork_3" and branch_name(props, 3, "x") == "x"


def test_get_branch_prop():
    props = {"writer.fs.uri": "file:///", "writer.fs.uri.1": "hdfs://nn/"}
    assert get_branch_prop(props, "writer.fs.uri", 2, 1) == "hdfs://nn/"
    assert get_branch_prop(props, "writer.fs.uri", 1, 0) == "file:///"
    assert get_branch_prop(props, "writer.fs.uri", 2, 0, "dflt") == "dflt"


def test_fork_id():
    assert fork_id("task_x_1_0", 1) == "task_x_1_0.1"
