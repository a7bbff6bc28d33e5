"""A job's filesystem settings: S3 credentials and endpoint, and any fsspec storage option.

Every path of a job (state store, commit log, lock, staging, output, final folder, source data) is opened
through fsspec, so one set of options per protocol serves them all. :func:`apply` turns a job's keys into
fsspec's per-protocol defaults (``fsspec.config.conf``, the table fsspec also fills from ``FSSPEC_<PROTOCOL>_*``
environment variables and ``~/.config/fsspec``) for the process: the driver applies them before it opens
anything, and so does each Spark executor before it runs a task.

Precedence, lowest first: gpy's defaults (S3 listings are not cached: other processes change the store),
fsspec's own configuration (environment, files), the job's ``fsspec.<protocol>.<option>`` keys, the job's
``fs.s3a.*`` keys. Unset credentials fall through to s3fs and botocore: ``AWS_ACCESS_KEY_ID`` /
``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE`` and ``~/.aws``, instance and container roles; an unset endpoint to
``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``, then AWS itself.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, setting

OPTIONS_PREFIX = "fsspec."
S3_PROTOCOL = "s3"
S3_CONNECTIONS = 64  # botocore's own 10 would queue the commit threads' requests (20 by default), each with its own
S3_THREADS = 16  # requests of one commit step in flight together (a dataset's lookups, its uploads)
# what gpy sets unless the job or fsspec's configuration says otherwise
_DEFAULTS: dict[str, dict[str, Any]] = {
    S3_PROTOCOL: {"use_listings_cache": False, "config_kwargs": {"max_pool_connections": S3_CONNECTIONS}}}
_ENDPOINT = re.compile(r"^(?:(?P<scheme>https?)://)?(?P<host>[A-Za-z0-9.\-\[\]:]+?)(?::(?P<port>\d+))?/?$")


@dataclass(frozen=True)
class FsSettings(Settings):
    """The keys of filesystems: S3 (and S3-compatible stores) with Hadoop's S3A names, any fsspec option."""

    s3_endpoint: str | None = setting("fs.s3a.endpoint", default_doc="AWS (or AWS_ENDPOINT_URL)",
                                      example="http://minio.internal:9000",
                                      doc="S3 API endpoint of an S3-compatible store (MinIO, Ceph, …): "
                                          "http(s)://host:port, or host:port (https unless "
                                          "fs.s3a.connection.ssl.enabled=false)")
    s3_region: str | None = setting("fs.s3a.endpoint.region", default_doc="AWS_DEFAULT_REGION",
                                    doc="region of the buckets")
    s3_access_key: str | None = setting("fs.s3a.access.key", secret=True, default_doc="the AWS credential chain",
                                        doc="access key id (with fs.s3a.secret.key)")
    s3_secret_key: str | None = setting("fs.s3a.secret.key", secret=True, default_doc="the AWS credential chain",
                                        doc="secret access key; better ${env:NAME} than written in a job file")
    s3_session_token: str | None = setting("fs.s3a.session.token", secret=True,
                                           doc="session token of temporary credentials")
    s3_path_style: bool = setting("fs.s3a.path.style.access", default=False,
                                  doc="address buckets as <endpoint>/<bucket> (most S3-compatible stores need it)")
    s3_ssl: bool = setting("fs.s3a.connection.ssl.enabled", default=True,
                           doc="https for an fs.s3a.endpoint given without a scheme")
    s3_connections: int | None = setting("fs.s3a.connection.maximum", minimum=1, maximum=4096,
                                         default_doc=str(S3_CONNECTIONS),
                                         doc="connections kept open to S3 (botocore's max_pool_connections), "
                                             "shared by every commit thread")
    s3_threads: int = setting("fs.s3a.threads.max", default=S3_THREADS, minimum=1, maximum=1024,
                              doc="requests sent to S3 together: the lookups of a dataset's destinations, and the "
                                  "uploads of the whole process (every dataset committing at once)")
    options: dict = setting("fsspec.*", default=None, secret=True,
                            doc="fsspec storage options, fsspec.<protocol>.<option>=<value> (JSON values: true, "
                                "3, {…}; dots nest: fsspec.s3.client_kwargs.region_name), e.g. "
                                "fsspec.s3.requester_pays=true, fsspec.hdfs.user=etl")

    def check(self) -> list[ConfigError]:
        problems = []
        if self.s3_endpoint is not None and not _ENDPOINT.match(self.s3_endpoint.strip()):
            problems.append(ConfigError(f"{self.s3_endpoint!r} is not an endpoint", key="fs.s3a.endpoint",
                                        hint="give http(s)://host:port or host:port"))
        if bool(self.s3_access_key) != bool(self.s3_secret_key):
            given, missing = (("fs.s3a.access.key", "fs.s3a.secret.key") if self.s3_access_key
                              else ("fs.s3a.secret.key", "fs.s3a.access.key"))
            problems.append(ConfigError(f"is set without {missing}", key=given,
                                        hint="set both, or neither to use the AWS credential chain"))
        for name in sorted(self.options or {}):
            protocol, _, option = name.partition(".")
            key = OPTIONS_PREFIX + name
            if not option:
                problems.append(ConfigError("names no option", key=key,
                                            hint="use fsspec.<protocol>.<option>=<value>, e.g. fsspec.s3.anon=true"))
            elif not _known_protocol(protocol):
                problems.append(ConfigError(f"fsspec has no filesystem {protocol!r}", key=key,
                                            hint="use a protocol of an fsspec URL: s3, gcs, abfs, hdfs, …"))
        return problems

    def storage_options(self) -> dict[str, dict[str, Any]]:
        """The job's options per protocol (without gpy's defaults or fsspec's own configuration)."""
        out: dict[str, dict[str, Any]] = {}
        for name, raw in sorted((self.options or {}).items()):
            protocol, _, option = name.partition(".")
            if not option:
                continue
            target = out.setdefault(protocol, {})
            *parents, leaf = option.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = _value(raw)
        s3: dict[str, Any] = {}
        if self.s3_endpoint:
            s3.setdefault("client_kwargs", {})["endpoint_url"] = endpoint_url(self.s3_endpoint, self.s3_ssl)
        if self.s3_region:
            s3.setdefault("client_kwargs", {})["region_name"] = self.s3_region
        if self.s3_access_key:
            s3["key"] = self.s3_access_key
            s3["secret"] = self.s3_secret_key
        if self.s3_session_token:
            s3["token"] = self.s3_session_token
        if self.s3_path_style:
            s3.setdefault("config_kwargs", {}).setdefault("s3", {})["addressing_style"] = "path"
        if self.s3_connections is not None:
            s3.setdefault("config_kwargs", {})["max_pool_connections"] = self.s3_connections
        if s3:
            out[S3_PROTOCOL] = merged(out.get(S3_PROTOCOL, {}), s3)
        return out


def endpoint_url(endpoint: str, ssl: bool = True) -> str:
    """``http(s)://host:port`` from an ``fs.s3a.endpoint`` value (Hadoop accepts a bare host too)."""
    endpoint = endpoint.strip().rstrip("/")
    if "://" in endpoint:
        return endpoint
    return f"{'https' if ssl else 'http'}://{endpoint}"


def _value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated by ``over``, nested dicts merged key by key."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _known_protocol(protocol: str) -> bool:
    from fsspec.registry import known_implementations, registry

    return protocol in known_implementations or protocol in registry


_lock = threading.Lock()
_baseline: dict[str, dict[str, Any]] | None = None  # fsspec's configuration before gpy first changed it
_pending: dict[str, dict[str, Any]] | None = None  # the job's options, until fsspec is first imported
_local_options = False  # the job gives options for local files (fsspec.file.*)
_threads = S3_THREADS  # the job's fs.s3a.threads.max
_upload_slots = threading.BoundedSemaphore(S3_THREADS)


def apply(props: Mapping[str, str] | Any) -> None:
    """Make the job's filesystem settings fsspec's defaults in this process (replacing an earlier job's).

    fsspec itself is imported only when a job opens a filesystem that is not local disk
    (:func:`configured_fsspec`), so a local job never pays for it. Raises SettingsError (exit code 2) naming the
    key when a value is wrong.
    """
    global _pending, _local_options
    settings = FsSettings.load(props)
    options = settings.storage_options()
    with _lock:
        _set_threads(settings.s3_threads)
        _pending = options
        _local_options = bool({"file", "local"} & set(options))
        if "fsspec" in sys.modules:
            _install()


def request_threads() -> int:
    """How many requests of one step go to an object store together (``fs.s3a.threads.max``)."""
    return _threads


def upload_slots() -> threading.BoundedSemaphore:
    """What an upload to an object store holds while it sends its file: ``fs.s3a.threads.max`` slots for the
    whole process, shared by every commit thread (as Hadoop's key bounds its filesystem's pool), so the files
    held in memory while they are sent stay bounded however many datasets commit at once."""
    return _upload_slots


def _set_threads(threads: int) -> None:
    global _threads, _upload_slots
    if threads != _threads:  # an upload under way releases the slot it took, in the old set
        _threads, _upload_slots = threads, threading.BoundedSemaphore(threads)


def local_options_configured() -> bool:
    """Whether local files must be opened by fsspec itself: the job, the environment (``FSSPEC_FILE_*``) or
    fsspec's configuration folder gives options for them."""
    return _local_options or _fsspec_configures_local_files()


@lru_cache(maxsize=1)
def _fsspec_configures_local_files() -> bool:
    if any(name.startswith(("FSSPEC_FILE", "FSSPEC_LOCAL")) for name in os.environ):
        return True
    folder = os.environ.get("FSSPEC_CONFIG_DIR") or os.path.expanduser(os.path.join("~", ".config", "fsspec"))
    try:
        return bool(os.listdir(folder))
    except OSError:
        return False


def configured_fsspec() -> ModuleType:
    """fsspec, with the settings of the last :func:`apply` installed."""
    import fsspec
    import fsspec.config  # noqa: F401 - the table _install fills

    with _lock:
        if _pending is not None:
            _install()
    return fsspec


def _install() -> None:
    global _baseline, _pending
    import fsspec.config

    if _baseline is None:
        _baseline = copy.deepcopy(fsspec.config.conf)
    options = _pending or {}
    protocols = set(_DEFAULTS) | set(_baseline) | set(options)
    config = {p: merged(merged(_DEFAULTS.get(p, {}), _baseline.get(p, {})), options.get(p, {})) for p in protocols}
    fsspec.config.conf.clear()  # in place: fsspec's filesystems look the table up when they are created
    fsspec.config.conf.update(config)
    _pending = None


def reset() -> None:
    """Give fsspec back the configuration it had before :func:`apply` first changed it (for embedders and tests)."""
    global _baseline, _pending
    with _lock:
        _pending = None
        _set_threads(S3_THREADS)
        if _baseline is not None:
            import fsspec.config

            fsspec.config.conf.clear()
            fsspec.config.conf.update(copy.deepcopy(_baseline))
            _baseline = None
