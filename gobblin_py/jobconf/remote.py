"""Job files on an fsspec URL (``s3://bucket/jobs/orders.pull``): fetched, then loaded as local ones.

The job file, and the global ``.properties`` / ``.configuration`` file of each folder from the configuration
root down to the job's folder (the root is the job's folder unless ``--conf-root`` names another URL), are
copied into a temporary folder with the same layout and loaded from there; every file name in the result and
in errors is the URL again. Includes and templates are read where the loader finds them (local paths): a
remote job's own ``include`` of a sibling file is not fetched. Reading the job happens before its keys are
known, so its filesystem's credentials and endpoint come from the environment (``AWS_ACCESS_KEY_ID``,
``AWS_ENDPOINT_URL``, ``FSSPEC_S3_*``, …).
"""

from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.jobconf.loader import JobConfig, load_job
from gobblin_py.jobconf.loader.job_files import GLOBAL_HOCON_EXTENSION, GLOBAL_PROPS_EXTENSION
from gobblin_py.sdk.config_errors import ConfigError


def is_remote(path: str) -> bool:
    """Whether ``path`` is a URL of a filesystem other than the local one."""
    return "://" in path and not path.startswith("file://")


@dataclass(frozen=True)
class Fetched:
    """A remote job's local copy: the job file, the root given to the loader (None: the job's folder), and the
    local and remote names of the root, to turn file names back into URLs."""

    job: str
    conf_root: str | None
    local_root: str
    remote_root: str

    def rename(self, text: Any) -> Any:
        """``text`` with the local copy's folder replaced by the URL it came from."""
        return text.replace(self.local_root, self.remote_root) if isinstance(text, str) else text


@contextmanager
def fetched(url: str, conf_root: str | None = None) -> Iterator[Fetched]:
    """The local copy of the job file at ``url`` and of its configuration root; removed on exit."""
    fs, path = fsutil.open_fs(url)
    directory = posixpath.dirname(path)
    root = directory
    if conf_root is not None:
        root_fs, root = fsutil.open_fs(conf_root)
        root = root.rstrip("/")
        if type(root_fs) is not type(fs) or not (directory + "/").startswith(root + "/"):
            raise ConfigError(f"is not inside the configuration root {conf_root}", path=url,
                              hint="give a --conf-root URL that holds the job file, or none")
    import tempfile  # only a remote job file needs a scratch folder

    scratch = tempfile.mkdtemp(prefix="gpy-job-")
    try:
        local_root = os.path.join(scratch, "root")
        parts = [p for p in directory[len(root):].split("/") if p]
        for depth in range(len(parts) + 1):  # the root's folder, then each one down to the job's
            folder = posixpath.join(root, *parts[:depth])
            local = os.path.join(local_root, *parts[:depth])
            os.makedirs(local, exist_ok=True)
            for name in fsutil.list_names(fs, folder):
                if name.endswith((GLOBAL_PROPS_EXTENSION, GLOBAL_HOCON_EXTENSION)):
                    fs.get_file(posixpath.join(folder, name), os.path.join(local, name))
        local_job = os.path.join(local_root, *parts, posixpath.basename(path))
        try:
            fs.get_file(path, local_job)
        except FileNotFoundError:
            raise ConfigError("job file not found", path=url, hint="check the URL") from None
        yield Fetched(local_job, local_root if conf_root is not None else None, local_root,
                      fs.unstrip_protocol(root).rstrip("/"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def load_remote_job(url: str, conf_root: str | None = None, sysconfig: Any = None) -> JobConfig:
    """A job file on an fsspec URL, loaded as :func:`gobblin_py.jobconf.load_job` loads a local one."""
    with fetched(url, conf_root) as copy:
        try:
            config = load_job(copy.job, conf_root=copy.conf_root, sysconfig=sysconfig)
        except ConfigError as exc:
            raise ConfigError(copy.rename(exc.problem), path=copy.rename(exc.path), line=exc.line, key=exc.key,
                              hint=copy.rename(exc.hint)) from None
    locate = config.locate

    def located(key: str) -> tuple[str | None, int | None]:
        file, line = locate(key)
        return copy.rename(file), line

    return JobConfig(url, config.properties, [copy.rename(w) for w in config.warnings], locator=located,
                     applied=[copy.rename(a) for a in config.applied])
