"""The run-time check that no replaced final folder is shared: the sorted search finds a conflict exactly when
comparing every pair of folders would (a run of ten thousand datasets cannot afford the pairs)."""

from __future__ import annotations

import itertools
import posixpath

from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.io.contained_paths import is_within
from gobblin_py.runtime.commit.replace_check import _conflict, _Target


def _pairwise(targets: list[_Target]) -> bool:
    for a, b in itertools.combinations(targets, 2):
        if a.fs != b.fs or (a.urn, a.branch) == (b.urn, b.branch) or not (a.replace or b.replace):
            continue
        if is_within(a.folder, b.folder) or is_within(b.folder, a.folder):
            return True
    return False


_names = st.sampled_from(["a", "b", "ab", "a-b", "a.b", "c"])
_folders = st.builds(
    lambda absolute, parts: posixpath.normpath(("/" if absolute else "") + "/".join(parts) if parts or absolute
                                               else "."),
    st.booleans(), st.lists(_names, max_size=3))
_targets = st.lists(st.builds(_Target, urn=st.sampled_from(["d1", "d2", "d3"]), branch=st.sampled_from(["", "b1"]),
                              fs=st.sampled_from(["", "s3://x"]), folder=_folders, replace=st.booleans()),
                    max_size=8)


@given(_targets)
def test_sorted_search_agrees_with_every_pair(targets: list[_Target]) -> None:
    found = _conflict(targets)
    assert (found is not None) == _pairwise(targets), (targets, found)
    if found is not None:
        replaced, other = found
        assert replaced.replace and replaced.fs == other.fs and (replaced.urn, replaced.branch) != (other.urn, other.branch)
        assert is_within(replaced.folder, other.folder) or is_within(other.folder, replaced.folder)


def test_ten_thousand_separate_folders_have_no_conflict() -> None:
    targets = [_Target(f"d{i}", "", "", f"/out/final/d{i}", True) for i in range(10_000)]
    assert _conflict(targets) is None
    assert _conflict([*targets, _Target("all", "", "", "/out/final", False)]) is not None
