"""The job's Iceberg catalog: pyiceberg's ``load_catalog`` with the job's properties, one per process and job."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from gobblin_py.connectors.iceberg.settings import CATALOG_NAME, catalog_properties
from gobblin_py.sdk.errors import TransientError

_lock = threading.Lock()
_catalogs: dict[tuple[tuple[str, str], ...], Any] = {}


def open_catalog(props: Mapping[str, str]) -> Any:
    """The catalog the job's keys describe (the embedded SQLite one by default); the same object for the same
    properties, since opening one connects (to a database, a metastore, a REST service)."""
    from pyiceberg.catalog import load_catalog

    properties = catalog_properties(props)
    cache_key = tuple(sorted(properties.items()))
    with _lock:
        found = _catalogs.get(cache_key)
        if found is None:
            if properties.get("type") == "sql" and str(properties.get("uri", "")).startswith("sqlite:///"):
                import os

                os.makedirs(os.path.dirname(str(properties["uri"])[len("sqlite:///"):]) or ".", exist_ok=True)
            try:
                own = {k: v for k, v in properties.items() if k != "name"}
                found = load_catalog(str(properties.get("name", CATALOG_NAME)), **own)
            except Exception as exc:  # noqa: BLE001 - each catalog type fails in a library of its own
                raise TransientError(f"Iceberg catalog {_describe(properties)}: cannot open it: "
                                     f"{type(exc).__name__}: {exc}") from None
            _catalogs[cache_key] = found
        return found


def _describe(properties: Mapping[str, Any]) -> str:
    """The catalog as a message names it: its type and where it is (never its credentials)."""
    where = properties.get("uri") or properties.get("warehouse") or ""
    return f"{properties.get('type', 'rest')} at {where}".strip()


def describe_catalog(props: Mapping[str, str]) -> str:
    """How messages name the job's catalog."""
    return _describe(catalog_properties(props))



def data_url(table: Any) -> str:
    """The URL of a table's data files, ``<table location>/data``: ``file:///x/data`` for a location on local disk
    in either spelling (``file:///x``, or ``file:/x`` as a Hive Metastore writes it)."""
    location = str(table.location()).rstrip("/") + "/data"
    if location.startswith("file:") and not location.startswith("file://"):
        return "file://" + location.removeprefix("file:")
    return location


def data_folder(table: Any) -> str:
    """Where the publisher moves a table's data files: :func:`data_url`, as a path when on local disk."""
    url = data_url(table)
    return url.removeprefix("file://") if url.startswith("file:///") else url
