"""The keys of the environment archive (:mod:`gobblin_py.runtime.engines.pack`), apart from the packing itself.

Validation checks these keys on every run; only a run that ships an archive imports the packing machinery
(tarfile, hashlib, tempfile, the installed distributions' metadata).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Settings, setting

ARCHIVE_KEY = "gpy.spark.archive"


@dataclass(frozen=True)
class PackSettings(Settings):
    """The keys of the environment gpy ships to a Spark cluster's executors."""

    archive: str = setting(
        ARCHIVE_KEY, default="auto",
        doc="what --engine spark (and a Spark Connect run) ships to executors: auto (on a master other than "
            "local[...] and on Spark Connect, an archive of gpy, "
            "its dependencies and the job's plugin modules, built by `gpy pack`), none (the cluster's Python "
            "has them installed), or the path or URL of your own archive (PATH[#ALIAS]; executors run "
            "./ALIAS/bin/python, ALIAS defaulting to environment)")
    cache_dir: str | None = setting("gpy.pack.cache.dir", default_doc="~/.cache/gobblin_py/packs",
                                    doc="folder where built environment archives are kept, named by content")
    distributions: tuple[str, ...] = setting(
        "gpy.pack.distributions", default=(),
        doc="installed distributions to ship besides gpy's own dependencies and the plugins' (with their "
            "dependencies), e.g. a library a plugin imports without declaring it")

    def check(self) -> list[ConfigError]:
        if self.archive in ("auto", "none") or "://" in self.archive:
            return []
        path = self.archive.partition("#")[0]
        if not Path(path).expanduser().is_file():
            return [ConfigError(f"no archive at {path!r}", key=ARCHIVE_KEY,
                                hint="name a .tar.gz/.zip file, or use auto or none")]
        return []
