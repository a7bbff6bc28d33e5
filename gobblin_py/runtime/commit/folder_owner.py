"""A final folder belongs to the job that first published into it.

Two jobs publishing into one ``data.publisher.final.dir`` put their files side by side: a reader of the folder
sees both jobs' rows, and where the jobs pull the same data, every row twice. So the first job to publish into a
branch's final folder claims it — ``_gpy_owner.marker`` (JSON: the job's name and its job file) at the folder's
root, shared by every dataset of the job — and a run of another job is refused before any work (exit 2, naming
both jobs, the folder and the key), unless it sets ``data.publisher.final.dir.shared[.N]=true``: the folder is
shared on purpose.

The claim is a create-if-absent (:func:`gobblin_py.io.fs_conditional.create_if_absent`: atomic on local disk and
on an S3 store that honours conditional writes) made after the tasks and before the first dataset's commit is
logged, so no file is ever published into a folder nobody owns: a run killed in between leaves the folder
claimed by its job, with none of its data yet. Two jobs whose first runs reach their commits at the same time:
one claims the folder, the other is refused there, nothing of it published. A folder published into before
claims existed is claimed by the first run of a job that publishes there (the other jobs' ``_gpy_published``
markers it holds are named in a warning). Only publishers whose files are named anew each run
(``DataPublisher.marks_final_folders``) are concerned. Nothing in ``gpy state`` releases a claim (the published
data stays the job's): deleting the marker does, and the next job to publish there claims the folder.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gobblin_py.io import fs as fsutil
from gobblin_py.io import fs_conditional as conditional
from gobblin_py.io.processes import host_name, pid_alive
from gobblin_py.runtime.commit.published_marks import FinalFolder, Mark, final_folders, read_marks
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

OWNER_MARKER = "_gpy_owner.marker"
SHARED_KEY = "data.publisher.final.dir.shared"  # the publisher's key (FilePublisherSettings), read here by name
_CLAIMER_FILE = re.compile(r"\.(?P<host>.+)-(?P<pid>\d+)\.[0-9a-f]+\.new")  # create_if_absent's temporary copy


class FolderOwnedError(UsageError):
    """A run would publish into a final folder another job owns, not shared on purpose (exit code 2)."""


@dataclass(frozen=True)
class Owner:
    """What an owner marker says: the job that first published into the folder, and its job file."""

    job: str
    job_file: str | None

    def to_json(self) -> bytes:
        return json.dumps({"job": self.job, "job_file": self.job_file}, indent=1).encode()

    @classmethod
    def parse(cls, data: bytes) -> Owner | None:
        try:
            found = json.loads(data)
            return cls(str(found["job"]), found.get("job_file"))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class OwnedFolder:
    """A branch's final folder, and whether the job says it shares it on purpose (and by which key)."""

    folder: FinalFolder
    shared: bool
    shared_key: str

    @property
    def marker(self) -> str:
        return posixpath.join(self.folder.path, OWNER_MARKER)

    @property
    def shown_marker(self) -> str:
        return posixpath.join(self.folder.shown, OWNER_MARKER)


@dataclass
class FolderClaims:
    """The job's final folders no job owns yet (claimed before the run's first commit), and those it owns that a
    run empties (``data.publisher.replace.final.dir``: claimed again once the commits are done)."""

    me: Owner
    unclaimed: list[OwnedFolder]
    replaced: list[OwnedFolder]

    def claim(self) -> None:
        """Before any dataset's commit is logged: each unclaimed folder becomes this job's, unless another job
        claimed it first (refused as at the start of the run: nothing of this run is published)."""
        for owned in self.unclaimed:
            _claim(owned, self.me)
        self.unclaimed = []

    def claim_replaced(self) -> None:
        """After the commits: a folder a run emptied lost its marker with its files; it is this job's again."""
        for owned in self.replaced:
            _claim(owned, self.me)


def _folders(props: Mapping[str, str]) -> list[OwnedFolder]:
    """Each branch's final folder (once each: branches of one folder share the first one's keys)."""
    found = []
    for folder in final_folders(dict(props), include_replaced=True):
        key = SHARED_KEY + _suffix(folder)
        value = props.get(key) or props.get(SHARED_KEY) or ""
        found.append(OwnedFolder(folder, value.strip().lower() == "true", key))
    return found


def _suffix(folder: FinalFolder) -> str:
    """The branch suffix (``.N``, or none) of the key that named ``folder``."""
    return folder.key[len("data.publisher.final.dir"):]


def _read(owned: OwnedFolder) -> Owner | None:
    """The folder's owner; None when no job claimed it (a marker that does not parse is a refusal: exit 2)."""
    try:
        data = owned.folder.fs.cat_file(owned.marker)
    except (FileNotFoundError, NotADirectoryError):
        return None
    owner = Owner.parse(data)
    if owner is None:
        raise UsageError(f"{owned.shown_marker}: not an owner marker gpy wrote (it names the job that owns the "
                         f"final folder {owned.folder.shown}); delete it, and the next job to publish there claims "
                         "the folder")
    return owner


def check_folder_owners(props: Mapping[str, str], job: str, job_file: str | None) -> FolderClaims:
    """Before any work: refuse (:class:`FolderOwnedError`) a run whose final folder another job owns, unless the
    job shares it on purpose; the folders to claim before publishing."""
    me = Owner(job, job_file)
    unclaimed, replaced = [], []
    for owned in _folders(props):
        try:
            owner = _read(owned)
        except OSError as exc:  # the claim before the commits reads it again, and refuses or fails there
            log.warning("final_folder_owner_not_checked", folder=owned.folder.shown, error=str(exc))
            unclaimed.append(owned)
            continue
        if owner is None:
            unclaimed.append(owned)
        elif owner.job != job and not owned.shared:
            raise FolderOwnedError(_refusal(owned, owner, me))
        elif owner.job == job and fsutil.is_local(owned.folder.fs):
            _remove_leftovers(owned)
        if (owner is None or owner.job == job) and _replaces(props, owned):
            replaced.append(owned)
    return FolderClaims(me, unclaimed, replaced)


def _replaces(props: Mapping[str, str], owned: OwnedFolder) -> bool:
    value = props.get(f"data.publisher.replace.final.dir{_suffix(owned.folder)}") or props.get("data.publisher.replace.final.dir")
    return (value or "").strip().lower() == "true"


def _claim(owned: OwnedFolder, me: Owner) -> None:
    folder = owned.folder
    if conditional.create_if_absent(folder.fs, owned.marker, me.to_json()):
        others = sorted({mark.job for _, mark in _published_marks(folder) if mark.job != me.job})
        if others:
            log.warning("final_folder_claimed", folder=folder.shown, job=me.job, published_there_before_by=others,
                        consequence=f"those jobs are refused there from now on, unless they set {owned.shared_key}"
                                    "=true")
        else:
            log.info("final_folder_claimed", folder=folder.shown, job=me.job)
    else:
        owner = _read(owned)
        if owner is not None and owner.job != me.job and not owned.shared:
            raise FolderOwnedError(_refusal(owned, owner, me))
    if fsutil.is_local(folder.fs):
        _remove_leftovers(owned)


def _published_marks(folder: FinalFolder) -> list[tuple[str, Mark]]:
    try:
        return read_marks(folder)
    except OSError:  # only for a warning
        return []


def _remove_leftovers(owned: OwnedFolder) -> None:
    """The temporary copies of the marker that a claim of this host killed midway left (its process is gone)."""
    try:
        entries = os.scandir(owned.folder.path)
    except OSError:
        return
    with entries:
        for entry in entries:
            if not entry.name.startswith(OWNER_MARKER + "."):
                continue
            claimer = _CLAIMER_FILE.fullmatch(entry.name[len(OWNER_MARKER):])
            if claimer is not None and claimer["host"] == host_name() and not pid_alive(int(claimer["pid"])):
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass


def _refusal(owned: OwnedFolder, owner: Owner, me: Owner) -> str:
    folder = owned.folder
    by = f"job {owner.job!r}" + (f" (job file {owner.job_file})" if owner.job_file else "")
    text = (f"the final folder {folder.shown} ({folder.key}) belongs to {by}, which first published into it "
            f"({owned.shown_marker}); job {me.job!r} would publish its files beside that job's, and a reader of "
            "the folder would get both jobs' rows: nothing was run.")
    if owner.job_file is not None and owner.job_file == me.job_file:
        return (f"{text} This job file published there as job {owner.job!r}: if the job was renamed, give it its "
                f"name back (job.name={owner.job}), or hand the folder over by deleting {owned.shown_marker} (the "
                "next run of the job claims it)")
    return (f"{text} Give job {me.job!r} a folder of its own, or, if the jobs publish into one folder on purpose, "
            f"set {owned.shared_key}=true in job {me.job!r}")

