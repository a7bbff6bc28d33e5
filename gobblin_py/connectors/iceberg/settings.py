"""The keys of the Iceberg publisher, declared once: the catalog (pyiceberg's own properties) and the table."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.tables.publisher import TableSettings
from gobblin_py.io.fs_settings import FsSettings
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, setting

CATALOG_PREFIX = "iceberg.catalog."
CATALOG_NAME = "gpy"
DEFAULT_CATALOG_FILE = "iceberg_catalog.db"
# a part of a table's name: what every catalog (a Hive Metastore's included) and every engine's SQL can name
IDENTIFIER_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class IcebergSettings(TableSettings):
    """The keys of :class:`~gobblin_py.connectors.iceberg.publisher.IcebergPublisher`."""

    catalog: dict = setting("iceberg.catalog.*", secret=True,
                            doc="pyiceberg's catalog properties, handed to load_catalog as they are (type, uri, "
                                "warehouse, credential, s3.endpoint, …; iceberg.catalog.name names the catalog, "
                                "gpy by default); by default a SQL catalog on SQLite at "
                                "<state.store.dir>/iceberg_catalog.db with its warehouse in "
                                "data.publisher.final.dir")
    table: str | None = setting("iceberg.table", scope=Scope.BRANCH,
                                default_doc="<extract.namespace>.<extract.table.name>",
                                doc="the table, namespace.table (created when missing, with the run's schema)")
    commit_retries: int = setting("iceberg.commit.retries", default=4, minimum=0, maximum=100,
                                  doc="tries again a commit that another writer's commit beat (optimistic "
                                      "concurrency), each after reading the table again")
    snapshots_kept: int | None = setting("iceberg.snapshots.keep", minimum=1, default_doc="every snapshot",
                                         doc="each run's commit expires the table's snapshots beyond the newest N "
                                             "(from the table's metadata only: no data file is removed; tags and "
                                             "branch heads stay), so that the metadata every commit reads and "
                                             "rewrites stays small however many runs the table has had; a commit "
                                             "replayed after its snapshot was expired finds its run in the table's "
                                             "properties instead")


def table_identifier(name: str, key: str) -> tuple[str, ...]:
    """``namespace.table`` as its parts: UsageError naming ``key`` when a part is empty or not a plain name."""
    parts = tuple(name.split("."))
    if len(parts) < 2 or not all(IDENTIFIER_PART.match(p) for p in parts):
        raise UsageError(f"{key}={name!r}: not a table name; expected namespace.table, each part letters, digits, "
                         "'_' or '-'")
    return parts


def catalog_properties(props: Mapping[str, str], settings: IcebergSettings | None = None) -> dict[str, Any]:
    """The properties ``load_catalog`` gets: the job's ``iceberg.catalog.*``, else the embedded default (a SQL
    catalog on SQLite in the state store folder, its warehouse the final folder); S3 access from the job's
    ``fs.s3a.*`` keys where the job names none of pyiceberg's own."""
    settings = settings or IcebergSettings.load(props)
    found = {str(k): str(v) for k, v in (settings.catalog or {}).items()}
    if "type" not in found and "uri" not in found:
        state_dir = props.get("state.store.dir")
        if not state_dir or "://" in state_dir and not state_dir.startswith("file://"):
            raise UsageError("iceberg.catalog.uri is not set and state.store.dir is not on local disk: the embedded "
                             "catalog (SQLite) needs a local folder; set iceberg.catalog.type and iceberg.catalog.uri "
                             "(a SQL database, a REST catalog, a Hive Metastore) instead")
        folder = state_dir.removeprefix("file://").rstrip("/")
        found.update(type="sql", uri=f"sqlite:///{folder}/{DEFAULT_CATALOG_FILE}")
    if "warehouse" not in found:
        final = props.get("data.publisher.final.dir")
        if not final:
            raise UsageError("iceberg.catalog.warehouse is not set, nor data.publisher.final.dir (its default)")
        found["warehouse"] = final if "://" in final else f"file://{final}"
    return {**_s3_properties(props, found), **found}


def _s3_properties(props: Mapping[str, str], given: Mapping[str, str]) -> dict[str, str]:
    """pyiceberg's S3 FileIO properties from gpy's fs.s3a.* keys (only those the catalog's own do not set)."""
    if any(k.startswith("s3.") for k in given):
        return {}
    fs = FsSettings.load(props)
    out: dict[str, str] = {}
    options = fs.storage_options().get("s3", {})
    endpoint = options.get("client_kwargs", {}).get("endpoint_url")
    if endpoint:
        out["s3.endpoint"] = endpoint
    if fs.s3_access_key:
        out["s3.access-key-id"] = fs.s3_access_key
    if fs.s3_secret_key:
        out["s3.secret-access-key"] = fs.s3_secret_key
    if fs.s3_session_token:
        out["s3.session-token"] = fs.s3_session_token
    if fs.s3_region:
        out["s3.region"] = fs.s3_region
    if fs.s3_path_style:
        out["s3.force-virtual-addressing"] = "false"
    return out


def catalog_name(props: Mapping[str, str]) -> str:
    """The catalog's name (``iceberg.catalog.name``, else gpy): pyiceberg's, and a SQL catalog's rows are kept under it."""
    return str(props.get(CATALOG_PREFIX + "name") or CATALOG_NAME)
