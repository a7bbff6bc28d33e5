"""The folders a run stages and outputs its tasks' files in, and their housekeeping.

Every run works under its own folders: ``writer.staging.dir[.N]`` and ``writer.output.dir[.N]`` become
``<dir>/<job>/<job id>`` (Gobblin's JobContext rewrite, spec §6.2; Gobblin leaves branch folders shared across
runs, where a failed run's files could linger), and ``task.data.root.dir`` gives the defaults
``<root>/<job>/<job id>/task-staging`` and ``…/task-output``. At the start of a run the folders of earlier runs
that crashed are removed (unless a commit still pending needs them); this run's staging goes once its tasks have
ended, while the datasets commit, and its task output at the end.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Mapping

from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

BACKGROUND_THREADS = 4  # removing staging beside the commits: few threads, not to crowd them out
DIR_KEY = re.compile(r"^writer\.(staging|output)\.dir(\.\d+)?$")


class RunFolders:
    """One run's staging and output folders, and the roots that hold every run's."""

    def __init__(self, props: Mapping[str, str], job_name: str, job_id: str) -> None:
        self.job_name = job_name
        self.job_id = job_id
        self.roots = {k: v for k, v in props.items() if (DIR_KEY.match(k) or k == "task.data.root.dir") and v}
        self.props = dict(props)
        self._stager: threading.Thread | None = None
        self._rewrite()

    def _rewrite(self) -> None:
        props = self.props
        for key in [k for k in props if DIR_KEY.match(k)]:
            if props.get(key):
                props[key] = contained_join(props[key], self.job_name, self.job_id, what="job.name/job.id")
        root = props.get("task.data.root.dir")
        if root:
            root = contained_join(root, self.job_name, self.job_id, what="job.name/job.id")
            props["task.data.root.dir"] = root
            props.setdefault("writer.staging.dir", posixpath.join(root, "task-staging"))
            props.setdefault("writer.output.dir", posixpath.join(root, "task-output"))
        if not props.get("writer.staging.dir") or not props.get("writer.output.dir"):
            raise UsageError("writer.staging.dir and writer.output.dir are not set: set them, or task.data.root.dir")

    def job_props(self) -> dict[str, str]:
        """The job's properties with this run's folders."""
        return dict(self.props)

    def _fs_uri(self, key: str) -> str | None:
        """The filesystem of a folder key: ``writer.fs.uri.N`` for a branch's ``writer.*.dir.N``."""
        match = DIR_KEY.match(key)
        branch = match.group(2)[1:] if match and match.group(2) else None
        return (self.props.get(f"writer.fs.uri.{branch}") if branch else None) or self.props.get("writer.fs.uri")

    def remove_earlier_runs(self, keep: set[str]) -> None:
        """Delete staging and task output that crashed runs left behind (their commits are finished by now);
        the runs in ``keep`` (job ids whose commit is still pending) keep their files."""
        for key, root in self.roots.items():
            fs, path = fsutil.open_fs(contained_join(root, self.job_name, what="job.name"), self._fs_uri(key))
            try:
                names = fsutil.list_dirs(fs, path)
            except OSError as exc:  # e.g. not a directory: the tasks will report it properly
                log.warning("old_run_files_unlisted", directory=path, error=str(exc))
                continue
            for name in names:
                if name != self.job_id and name not in keep and name.startswith(f"job_{self.job_name}_"):
                    log.info("old_run_files_removed", directory=posixpath.join(path, name))
                    fsutil.remove_tree(fs, posixpath.join(path, name))

    def remove_staging(self) -> None:
        """Delete this run's staging folders: once every task has ended, no file there is needed any more (a
        commit only moves task output). The commits run meanwhile; :meth:`remove` waits for it."""
        self._stager = threading.Thread(target=self._remove, args=("writer.staging.dir", BACKGROUND_THREADS),
                                        name="gpy-staging-rm", daemon=True)
        self._stager.start()

    def remove(self, keep_output: bool = False) -> None:
        """Delete this run's staging and task-output folders (published data has moved out already);
        ``keep_output``: a commit left for the next run still needs this run's task output."""
        stager, self._stager = self._stager, None
        if stager is not None:
            stager.join()
        self._remove("writer.staging.dir")
        if not keep_output:
            self._remove("writer.output.dir")

    def _remove(self, prefix: str, threads: int = fsutil.REMOVE_THREADS) -> None:
        for key in [k for k in self.props if DIR_KEY.match(k) and k.startswith(prefix)]:
            fs, path = fsutil.open_fs(self.props[key], self._fs_uri(key))
            try:
                if fs.exists(path):
                    fsutil.remove_tree(fs, path, threads)
            except OSError as exc:
                log.warning("run_files_not_removed", directory=path, error=str(exc))
