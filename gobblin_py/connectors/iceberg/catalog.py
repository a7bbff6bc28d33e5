"""The job's Iceberg catalog: pyiceberg's ``load_catalog`` with the job's properties, one per process and job."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from gobblin_py.connectors.iceberg.settings import CATALOG_NAME, CATALOG_PREFIX, catalog_properties
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


CATALOG_TYPES = ("rest", "hive", "glue", "dynamodb", "sql", "in-memory", "bigquery")  # pyiceberg's own
URI_TYPES = (("http", "rest"), ("thrift", "hive"), ("sqlite", "sql"), ("postgresql", "sql"))  # as pyiceberg infers


def catalog_type(properties: Mapping[str, Any]) -> str | None:
    """The catalog's type: given, else inferred from its URI as pyiceberg infers it; None when it cannot be told."""
    given = properties.get("type")
    if given:
        return str(given).lower()
    uri = str(properties.get("uri") or "")
    return next((kind for prefix, kind in URI_TYPES if uri.startswith(prefix)), None)


def catalog_problem(props: Mapping[str, str]) -> tuple[str, str, str] | None:
    """``(key, problem, fix)`` when the job's catalog properties cannot name a catalog pyiceberg can open."""
    properties = {k[len(CATALOG_PREFIX):]: v for k, v in props.items() if k.startswith(CATALOG_PREFIX)}
    if (not properties.get("type") and not properties.get("uri")) or properties.get("py-catalog-impl"):
        return None  # the embedded default, or a catalog class of the user's own
    kind = catalog_type(properties)
    if kind is None:
        return (CATALOG_PREFIX + "uri", f"{properties.get('uri')}: the catalog's type cannot be told from it",
                f"set {CATALOG_PREFIX}type ({', '.join(CATALOG_TYPES)})")
    if kind not in CATALOG_TYPES:
        return (CATALOG_PREFIX + "type", f"{properties.get('type')}: not a catalog type pyiceberg knows",
                f"one of {', '.join(CATALOG_TYPES)} (or {CATALOG_PREFIX}py-catalog-impl for a class of your own)")
    return None


def _describe(properties: Mapping[str, Any]) -> str:
    """The catalog as a message names it: its type and where it is (never its credentials)."""
    where = properties.get("uri") or properties.get("warehouse") or ""
    return f"{catalog_type(properties) or 'of unknown type'} at {where}".strip()


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
