"""The folders the state lives in must be folders: a regular file where one is expected is reported by path,
with exit 2, before anything is read or written (not as a raw errno from deep inside a write)."""

from __future__ import annotations

import os
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.errors import StateStoreError


def require_folder(fs: Any, path: str, what: str) -> None:
    """Raise StateStoreError when ``path`` on local disk is a file, or lies below one; a missing folder is fine
    (it is made when first written). ``what`` says which folder it is (a key, an option)."""
    if not fsutil.is_local(fs):
        return  # object stores have no files in the way of a prefix
    probe = os.path.abspath(path)
    while not os.path.isdir(probe):
        if os.path.lexists(probe):
            if probe == os.path.abspath(path):
                raise StateStoreError(f"{path}: {what} is a file, not a folder")
            raise StateStoreError(f"{path}: {what} cannot be a folder: {probe} is a file, not a folder")
        parent = os.path.dirname(probe)
        if parent == probe:
            return
        probe = parent
