"""A copy job's final dir must lie outside its datasets, and its datasets outside the final dir.

A final dir inside a dataset is copied into itself on every run (``src/`` to ``src/copy``: after three runs
``copy/copy/copy/a.txt``); a dataset inside the final dir has its own copies land beside it, where a later pattern
match takes them for sources. Both are refused before any work, naming both paths: from the configuration alone
where it tells (:func:`config_overlap`, run by ``gpy validate`` and before every run), and at planning time against
the datasets actually found, judged on local disk by where links lead too (:func:`refuse_overlap`).
"""

from __future__ import annotations

import fnmatch
import os
from urllib.parse import urlsplit

from gobblin_py.connectors.copy.finder import deepest_plain_folder
from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import is_within
from gobblin_py.sdk.config_errors import ConfigError

FINAL_KEY = "data.publisher.final.dir"
HINT = "publish to a folder outside the datasets that gobblin.dataset.pattern matches, and not above them"


def _located(url: str, fs_uri: str | None) -> tuple[str, str]:
    """``(filesystem, absolute path)`` of ``url`` as :func:`gobblin_py.io.fs.open_fs` would take it, without opening
    the filesystem (validation connects to nothing)."""
    if "://" not in url and fs_uri and not fs_uri.startswith("file:"):
        base = fs_uri if fs_uri.endswith("://") else fs_uri.rstrip("/") + "/"
        url = base + url.lstrip("/")
    if fsutil.is_local_url(url):
        return "file", os.path.abspath(urlsplit(url).path if "://" in url else url)
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}", "/" + parts.path.lstrip("/")


def config_overlap(pattern: str, pattern_fs_uri: str | None, final_dir: str, final_fs_uri: str | None) -> str | None:
    """Why the final dir and the datasets of ``pattern`` overlap, when the configuration alone tells; else None."""
    where, pattern_path = _located(pattern.rstrip("/") or "/", pattern_fs_uri)
    final_where, final_path = _located(final_dir, final_fs_uri)
    if where != final_where:
        return None
    search_root = deepest_plain_folder(pattern_path)
    if is_within(final_path, search_root):
        return (f"{final_dir} holds the datasets of gobblin.dataset.pattern={pattern}: their copies would land among "
                "them")
    wanted = [p for p in pattern_path.split("/") if p]
    have = [p for p in final_path.split("/") if p]
    inside = len(have) >= len(wanted) and all(fnmatch.fnmatchcase(h, w) for h, w in zip(have, wanted, strict=False))  # have may be deeper
    # with ``**`` any folder below the pattern's plain folder may come to match: its own copies would
    if inside or ("**" in pattern_path and is_within(search_root, final_path)):
        return (f"{final_dir} lies inside what gobblin.dataset.pattern={pattern} matches: every run would copy its "
                "own output again")
    return None


def refuse_overlap(dataset_roots: list[str], final_dir: str, local: bool) -> None:
    """ConfigError naming both paths when the final dir lies inside (or is) one of the datasets, or a dataset inside
    it. The paths are as their filesystems show them (URLs, or paths on local disk); when the final dir is on local
    disk (``local``), links on the way to it or to a local dataset are judged by where they lead too."""
    real_final = os.path.realpath(final_dir) if local else final_dir
    for root in dataset_roots:
        real_root = os.path.realpath(root) if local and "://" not in root else root
        for final, dataset in ((final_dir, root), (real_final, real_root)):
            if is_within(dataset, final):
                raise ConfigError(f"{final_dir} lies inside dataset {root}: every run would copy its own output "
                                  "again", key=FINAL_KEY, hint=HINT)
            if is_within(final, dataset):
                raise ConfigError(f"dataset {root} lies inside {final_dir}: its copies would land beside it",
                                  key=FINAL_KEY, hint=HINT)
