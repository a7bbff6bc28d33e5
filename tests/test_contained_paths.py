"""The containment rule: no name built from configuration or data yields a path outside its root."""

from __future__ import annotations

import os
import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.io.contained_paths import (
    PathEscapeError,
    check_no_symlink_escape,
    contained_join,
    is_within,
    path_problem,
)

# names made of the pieces that break joins: separators, dots, NUL, unicode, surrogates, plain letters
PIECES = st.sampled_from(["..", ".", "/", "//", "\x00", "a", "é", "表", "\udcff", " ", "~", "$HOME", "\\", "s3:"])
NAMES = st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=8).map("".join)


@given(root=st.sampled_from(["/data/out", "/", "rel/out", "s3://bucket/out", "/data/out/"]), name=NAMES)
def test_no_generated_name_joins_outside_its_root(root: str, name: str) -> None:
    try:
        joined = contained_join(root, name, what="name")
    except PathEscapeError as exc:
        assert "name=" in str(exc)
        return
    assert "\x00" not in joined
    if root.startswith("s3://"):
        assert joined.startswith(root.rstrip("/"))
        assert ".." not in joined[len(root):].split("/")
    else:
        assert is_within(root, joined), (root, name, joined)


@given(name=NAMES)
def test_a_refused_name_has_a_reason_and_an_accepted_one_none(name: str) -> None:
    problem = path_problem(name)
    if problem is None:
        assert ".." not in name.split("/") and not name.startswith("/") and "\x00" not in name


@pytest.mark.parametrize("bad", ["../../../ESC", "/tmp/x", "a/../../b", "x\x00y", "..", "a/.."])
def test_known_escapes_are_refused_naming_the_key(bad: str) -> None:
    with pytest.raises(PathEscapeError, match="extract.table.name"):
        contained_join("/final", bad, what="extract.table.name")


def test_plain_names_join_as_before() -> None:
    assert contained_join("/final", "ns/db", "table", what="x") == "/final/ns/db/table"
    assert contained_join("s3://b/out", "t", what="x") == "s3://b/out/t"
    assert contained_join("/final", "", what="x") == "/final"
    assert contained_join("/final", "./a//b/", what="x") == "/final/a/b"


@given(name=NAMES)
def test_symlinks_on_disk_cannot_lead_a_joined_name_outside(tmp_path_factory, name: str) -> None:
    base = tmp_path_factory.mktemp("link")
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "evil").symlink_to(outside)
    (root / "fine").mkdir()
    for first in ("evil", "fine"):
        try:
            path = contained_join(str(root), first, name, what="name")
            check_no_symlink_escape(str(root), path, what="name")
        except PathEscapeError:
            continue
        assert first == "fine"
        real = os.path.realpath(path)
        assert real.startswith(os.path.realpath(root) + "/"), (name, path, real)


def test_a_link_to_outside_is_refused_and_one_inside_is_not(tmp_path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "in").symlink_to(root / "sub")
    (root / "out").symlink_to(tmp_path)
    check_no_symlink_escape(str(root), str(root / "in" / "new" / "file"))
    with pytest.raises(PathEscapeError, match="symbolic link"):
        check_no_symlink_escape(str(root), posixpath.join(str(root), "out", "file"))


def test_a_root_not_made_yet_holds_no_link(tmp_path) -> None:
    check_no_symlink_escape(str(tmp_path / "final"), str(tmp_path / "final" / "a" / "b.txt"))
    check_no_symlink_escape(str(tmp_path / "final") + "/", str(tmp_path / "final" / "a"))


def test_a_root_that_does_not_exist_yet_has_no_link_to_follow(tmp_path) -> None:
    root = tmp_path / "not" / "yet"
    check_no_symlink_escape(str(root), str(root / "events" / "daily"))


def test_a_link_at_any_depth_below_the_root_is_followed_wherever_the_root_itself_is(tmp_path) -> None:
    """Existing plain folders below the root need no resolving; a link among them, at any depth, is followed;
    the root itself may be reached through a link."""
    real_root, outside = tmp_path / "real_root", tmp_path / "outside"
    (real_root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (real_root / "a" / "b" / "out").symlink_to(outside)
    (real_root / "a" / "in").symlink_to(real_root / "a" / "b")
    root = tmp_path / "root"
    root.symlink_to(real_root)
    for base in (real_root, root):
        check_no_symlink_escape(str(base), str(base / "a" / "b" / "new.txt"))
        check_no_symlink_escape(str(base), str(base / "a" / "b"))
        check_no_symlink_escape(str(base), str(base / "a" / "in" / "new.txt"))
        for escaping in (base / "a" / "b" / "out", base / "a" / "b" / "out" / "deeper" / "new.txt"):
            with pytest.raises(PathEscapeError, match="symbolic link"):
                check_no_symlink_escape(str(base), str(escaping))
