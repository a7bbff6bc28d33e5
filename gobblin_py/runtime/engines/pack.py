"""The environment archive gpy ships to a Spark cluster, so its executors need nothing but a Python.

Public API (also used by engines other than classic Spark, e.g. to ``addArtifacts`` on Spark Connect):

- :func:`environment_archive` ``(props) -> Path``: the ``.tar.gz`` for a job's properties, built once and cached by
  content under ``gpy.pack.cache.dir`` (default ``~/.cache/gobblin_py/packs``); a cache hit costs some ``stat`` calls.
- :data:`ALIAS` (``environment``): the name the archive is unpacked under on executors
  (``spark.archives=<archive>#environment``); :data:`EXECUTOR_PYTHON` (``./environment/bin/python``): the Python an
  executor runs then (``spark.pyspark.python``), relative to the executor's working folder.
- :func:`copy_archive` ``(archive, target)``: a copy of it at ``target`` (``gpy pack --output``), whole or not at all.
- :func:`site_packages` ``(root) -> Path``: where the packages are inside an unpacked archive, for a process that
  cannot choose its Python and puts that folder on ``sys.path`` instead.
- :func:`spark_conf` ``(master, props) -> dict``: the ``spark.*`` settings that ship the archive to a classic
  cluster, per ``gpy.spark.archive`` (``auto``: on a non-local master; ``none``; or an archive of your own).

The archive's layout is a relocatable virtual environment: ``lib/pythonX.Y/site-packages`` (what is in it:
:mod:`gobblin_py.runtime.engines.pack_contents`) and ``bin/python``, a POSIX shell launcher that finds the
machine's own Python X.Y once (``$GPY_PYTHON``, else ``pythonX.Y`` or ``python3`` on ``PATH``), links it in as a
virtual environment does and runs it, so the interpreter need not sit at the same path as on the machine that
packed it. Native wheels ship as they are: executors must share the packing machine's OS and CPU family.
"""

from __future__ import annotations

import fcntl
import gzip
import io
import os
import shutil
import stat
import sys
import sysconfig
import tarfile
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from gobblin_py.io.fs import fsync_dir
from gobblin_py.runtime.engines import pack_contents
from gobblin_py.runtime.engines.pack_settings import PackSettings
from gobblin_py.sdk.logs import get_logger

ALIAS = "environment"
EXECUTOR_PYTHON = f"./{ALIAS}/bin/python"
FORMAT = "gpy-pack-2"  # bump when the layout or the launcher changes: it is part of every fingerprint
KEEP = 3  # archives always kept in the cache folder, the most recently used
STALE_SECONDS = 86_400  # others go once unused this long (a running job's driver serves its archive to new executors)
PARTIAL_PREFIX = ".building-"  # an archive being written; one no build holds locked was left by a killed build
PARTIAL_GRACE_SECONDS = 60  # younger partial archives are never removed (a build locks its own right after creating it)
COPY_PREFIX = ".gpy-pack-"  # a copy being written beside copy_archive's target (as PARTIAL_PREFIX, if left behind)
COPY_CHUNK = 1 << 20
DEFAULT_CACHE = Path("~/.cache/gobblin_py/packs")
log = get_logger(__name__)


def site_packages(root: Path) -> Path:
    """The package folder inside an archive unpacked at ``root``."""
    return root / pack_contents.SITE_PACKAGES


def cache_dir(props: Mapping[str, str]) -> Path:
    """Where archives built for ``props`` are kept."""
    configured = PackSettings.load(props).cache_dir
    return Path(configured).expanduser() if configured else DEFAULT_CACHE.expanduser()


def environment_archive(props: Mapping[str, str]) -> Path:
    """The environment archive for a job's ``props``: from the cache when its content is unchanged, else built."""
    settings = PackSettings.load(props)
    began = time.monotonic()
    modules = _plugin_modules(props)
    # a job's archive holds the extras its tasks use; without a job (`gpy pack` alone), every one
    extras = pack_contents.task_extras(modules, props.values()) if props else None
    digest = pack_contents.environment_key(modules, settings.distributions, FORMAT, _launcher("0" * 16),
                                           sysconfig.get_platform(), sys.version,
                                           "extras:" + ",".join(sorted(extras if extras is not None else ["*"])))
    folder = cache_dir(props)
    _remove_abandoned(folder, PARTIAL_PREFIX)
    archive = folder / f"gpy-env-py{sys.version_info.major}{sys.version_info.minor}-{digest[:16]}.tar.gz"
    if archive.is_file():
        os.utime(archive)  # most recently used: kept by the pruning
        log.info("pack_cached", path=str(archive), bytes=archive.stat().st_size,
                 seconds=round(time.monotonic() - began, 3))
        return archive
    folder.mkdir(parents=True, exist_ok=True)
    files = _build(pack_contents.contents(modules, settings.distributions, extras), archive, digest[:16])
    log.info("pack_built", path=str(archive), bytes=archive.stat().st_size, files=files,
             extras=sorted(extras) if extras is not None else "all", seconds=round(time.monotonic() - began, 3))
    _prune(folder, keep=archive)
    return archive


def copy_archive(archive: Path, target: Path) -> None:
    """Copy ``archive`` to ``target`` whole or not at all: into a locked temporary file beside it, made durable,
    then renamed over it. On any failure or interruption the temporary file is removed and a ``target`` already
    there is left as it was; a copy killed outright leaves its temporary file to the next copy into that folder."""
    folder = target.parent
    _remove_abandoned(folder, COPY_PREFIX)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)  # a file replaced keeps its permissions, as a copy over it does
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, temporary = tempfile.mkstemp(prefix=COPY_PREFIX, suffix=".partial", dir=folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as out, open(archive, "rb") as source:
            shutil.copyfileobj(source, out, COPY_CHUNK)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException as exc:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename == temporary:  # a full disk: name the file asked for
            raise OSError(exc.errno, f"{exc.strerror} (writing a copy of {archive}; left as it was)",
                          str(target)) from exc
        raise
    fsync_dir(str(folder))


def spark_conf(master: str, props: Mapping[str, str]) -> dict[str, str]:
    """The ``spark.*`` settings that give a cluster's executors the job's Python environment (none on local)."""
    choice = PackSettings.load(props).archive
    if choice == "none" or (choice == "auto" and (master.startswith("local") or "spark.pyspark.python" in props)):
        return {}
    if choice == "auto":
        target = f"{environment_archive(props)}#{ALIAS}"
        alias = ALIAS
    else:
        path, _, alias = choice.partition("#")
        alias = alias or ALIAS
        target = f"{path if '://' in path else Path(path).expanduser().resolve()}#{alias}"
    archives = ",".join(a for a in (props.get("spark.archives", "").strip(), target) if a)
    conf = {"spark.archives": archives}
    if "spark.pyspark.python" not in props:
        conf["spark.pyspark.python"] = f"./{alias}/bin/python"
    return conf


def _plugin_modules(props: Mapping[str, str]) -> list[str]:
    from gobblin_py.sdk.plugins import plugin_refs, resolve_class

    return [resolve_class(ref.name, ref.key).__module__ for ref in plugin_refs(props)]


def _build(contents: pack_contents.Contents, archive: Path, tag: str) -> int:
    """Write the archive beside its final name, then rename it there (a concurrent build does the same). The
    partial archive stays locked while it is written: a build killed part way leaves it unlocked, and the next
    ``gpy pack`` (or run that packs) removes it."""
    fd, temporary = tempfile.mkstemp(prefix=PARTIAL_PREFIX, suffix=".tar.gz", dir=archive.parent)
    count = 0
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by the system when this process dies, however it dies
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as zipped, \
                tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
            launcher = _launcher(tag).encode()
            info = tarfile.TarInfo("bin/python")
            info.size, info.mode, info.mtime = len(launcher), 0o755, int(time.time())
            tar.addfile(info, io.BytesIO(launcher))
            for path, name in contents.members():
                tar.add(str(path), arcname=name, recursive=False, filter=_owned_by_nobody)
                count += 1
        os.replace(temporary, archive)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count


def _remove_abandoned(folder: Path, prefix: str) -> None:
    """Remove the partial archives (or copies) whose names start with ``prefix`` that builds left behind when they
    were killed: those no process holds locked, older than a minute (a build creates its file, then locks it)."""
    now = time.time()
    for partial in folder.glob(f"{prefix}*"):
        try:
            fd = os.open(partial, os.O_RDONLY)
        except OSError:
            continue
        try:
            if now - os.fstat(fd).st_mtime < PARTIAL_GRACE_SECONDS:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # locked: a build is writing it
            continue
        finally:
            os.close(fd)
        partial.unlink(missing_ok=True)
        log.info("pack_partial_removed", path=str(partial), reason="left by a build that did not finish")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _owned_by_nobody(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _prune(folder: Path, keep: Path) -> None:
    """Remove archives unused for a day beyond the most recent few (another gpy may be pruning too)."""
    used: list[tuple[float, Path]] = []
    for archive in folder.glob("gpy-env-*.tar.gz"):
        try:
            used.append((archive.stat().st_mtime, archive))
        except FileNotFoundError:
            continue
    used.sort(reverse=True)
    now = time.time()
    for mtime, old in [u for u in used if u[1] != keep][KEEP - 1:]:
        if now - mtime > STALE_SECONDS:
            old.unlink(missing_ok=True)


def _launcher(tag: str) -> str:
    """``bin/python``: this archive's packages on the machine's own Python X.Y (see the module's docstring).

    The link to the interpreter and ``pyvenv.cfg`` are written once, each by a rename (several Python workers may
    start at once). Where the unpacked folder is read-only (YARN's localized archives), they go to a folder under
    ``$TMPDIR`` whose ``lib`` links to the archive's.
    """
    major, minor = sys.version_info[:2]
    version = f"{major}.{minor}"
    return f"""#!/bin/sh
# gpy environment archive ({tag}): runs its packages on this machine's Python {version}
set -e
case "$0" in */*) here=${{0%/*}} ;; *) here=. ;; esac
root=$(cd "$here/.." && pwd -P)
venv=$root
if [ ! -w "$root" ]; then
  venv="${{TMPDIR:-/tmp}}/gpy-env-$(id -u)-{tag}"
  mkdir -p "$venv/bin"
  [ -e "$venv/lib" ] || ln -s "$root/lib" "$venv/lib" 2>/dev/null || true
fi
py="$venv/bin/python{version}"
if [ ! -x "$py" ]; then
  base=
  for candidate in "$GPY_PYTHON" python{version} python3; do
    [ -n "$candidate" ] || continue
    base=$("$candidate" -c 'import sys; print((getattr(sys, "_base_executable", "") or sys.executable) if sys.version_info[:2] == ({major}, {minor}) else "")' 2>/dev/null) || base=
    [ -n "$base" ] && break
  done
  if [ -z "$base" ]; then
    echo "gpy environment: no Python {version} on this machine (looked for \\$GPY_PYTHON, python{version} and python3 on PATH)" >&2
    exit 127
  fi
  printf 'home = %s\\ninclude-system-site-packages = false\\nversion = %s\\n' "${{base%/*}}" "{sys.version.split()[0]}" > "$venv/pyvenv.cfg.$$"
  mv -f "$venv/pyvenv.cfg.$$" "$venv/pyvenv.cfg"
  ln -sf "$base" "$venv/bin/.python.$$"
  mv -f "$venv/bin/.python.$$" "$py"
fi
exec "$py" "$@"
"""
