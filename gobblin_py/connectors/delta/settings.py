"""The keys of the Delta publisher, declared once: where the table is, how delta-rs reaches its store, retries."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.tables.publisher import TableSettings
from gobblin_py.io.branch_paths import BranchScope
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.io.fs_settings import FsSettings, endpoint_url
from gobblin_py.sdk.branches import branch_key
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, setting
from gobblin_py.sdk.states import State

URI_KEY = "delta.table.uri"
# the stores delta-rs opens (object_store's): a table elsewhere is refused before the run
SCHEMES = ("s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "azure", "hdfs", "file", "memory")


@dataclass(frozen=True)
class DeltaSettings(TableSettings):
    """The Delta publisher's keys: the table, how delta-rs reaches its store, commit retries."""

    table_uri: str | None = setting(URI_KEY, scope=Scope.BRANCH,
                                    default_doc="<data.publisher.final.dir>/<extract.namespace>/<extract.table.name>",
                                    example="s3://lake/shop/orders",
                                    doc="the Delta table: a folder on local disk or a URL delta-rs opens (s3://, "
                                        "s3a://, …); made when missing, with the run's schema")
    storage: dict = setting("delta.storage.*", secret=True,
                            doc="delta-rs storage options, handed over as they are (AWS_ENDPOINT_URL, "
                                "AWS_S3_LOCKING_PROVIDER, AZURE_STORAGE_ACCOUNT_NAME, …); for S3 gpy's own "
                                "fs.s3a.* keys are turned into them unless set here")
    commit_retries: int = setting("delta.commit.retries", default=15, minimum=0, maximum=1000,
                                  doc="tries again a commit that another writer's commit beat (optimistic "
                                      "concurrency), on the table as it then is")


def table_uri(state: State, branches: int = 1, branch: int = 0) -> tuple[str, str]:
    """The branch's table URI (a local folder as an absolute path) and the key that names it."""
    settings = DeltaSettings.load(state, branches=branches, branch=branch)
    scope = BranchScope(state, branches, branch)
    if settings.table_uri:
        return _qualified(settings.table_uri, scope), branch_key(URI_KEY, branches, branch)
    namespace = state.get_prop("extract.namespace") or ""
    table = state.get_prop("extract.table.name") or ""
    key = f"{scope.key('data.publisher.final.dir')}, extract.namespace and extract.table.name ({URI_KEY} unset)"
    if not table:
        raise UsageError(f"{URI_KEY} is not set and extract.table.name is empty: name the table with {URI_KEY}")
    folder = contained_join(scope.final_root(), *([namespace] if namespace else []), table, what="Delta table folder")
    return _qualified(folder, scope), key


def _qualified(path: str, scope: BranchScope) -> str:
    """``path`` as delta-rs opens it: a URL as given, a bare path on the publisher's filesystem, else local."""
    if path.startswith("file://"):
        path = path[len("file://"):]
    if "://" in path:
        scheme, _, rest = path.partition("://")
        if scheme.lower() not in SCHEMES or not rest.strip("/"):
            raise UsageError(f"{path!r} is not a table delta-rs can open: give a local folder or a URL of "
                             f"{', '.join(s + '://' for s in SCHEMES)}")
        return path.rstrip("/")
    fs_uri = scope.prop("data.publisher.fs.uri") or scope.prop("writer.fs.uri")
    if fs_uri and not fs_uri.startswith("file:"):
        return fs_uri.rstrip("/") + "/" + path.strip("/")
    return os.path.abspath(path)


def storage_options(props: Mapping[str, str] | Any, uri: str) -> dict[str, str]:
    """delta-rs's storage options for the table at ``uri``: the job's ``delta.storage.*``, and for a table on S3
    what gpy's ``fs.s3a.*`` keys say (endpoint, region, credentials, addressing), where ``delta.storage.*`` does
    not set it. Unset credentials fall through to delta-rs's own chain (``AWS_*`` variables, profiles, instance
    roles)."""
    given = {str(k): str(v) for k, v in (DeltaSettings.load(props).storage or {}).items()}
    if not uri.startswith(("s3://", "s3a://")):
        return given
    fs = FsSettings.load(props)
    derived: dict[str, str] = {}
    if fs.s3_endpoint:
        url = endpoint_url(fs.s3_endpoint, fs.s3_ssl)
        derived["AWS_ENDPOINT_URL"] = url
        if url.startswith("http://"):
            derived["AWS_ALLOW_HTTP"] = "true"
    if fs.s3_region:
        derived["AWS_REGION"] = fs.s3_region
    elif fs.s3_endpoint:
        derived["AWS_REGION"] = "us-east-1"  # an S3-compatible store rarely has regions; delta-rs wants one
    if fs.s3_access_key and fs.s3_secret_key:
        derived["AWS_ACCESS_KEY_ID"], derived["AWS_SECRET_ACCESS_KEY"] = fs.s3_access_key, fs.s3_secret_key
    if fs.s3_session_token:
        derived["AWS_SESSION_TOKEN"] = fs.s3_session_token
    derived["AWS_VIRTUAL_HOSTED_STYLE_REQUEST"] = "false" if fs.s3_path_style else "true"
    upper = {k.upper() for k in given}
    return {**{k: v for k, v in derived.items() if k not in upper}, **given}
