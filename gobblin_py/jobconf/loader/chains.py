"""Global files: at most one ``.properties`` or ``.configuration`` per folder, from the jobs root down.

The chain for a folder is the system configuration, then each folder's global file from the root down to
that folder, each one over the previous (``SchedulerUtils``). Chains are built once per folder and session;
a broken global file fails every job below it with the same error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from gobblin_py.sdk.config_errors import ConfigError

from ..hocon import HObj
from .job_files import GLOBAL_HOCON_EXTENSION, global_files, is_within
from .levels import Level, LevelReader

__all__ = ["Chain", "GlobalChains"]


@dataclass
class Chain:
    """The fallback a job in some folder is loaded over, with the levels that make it up (nearest first)."""

    tree: HObj
    levels: list[Level] = field(default_factory=list)  # nearest first
    warnings: list[str] = field(default_factory=list)


class GlobalChains:
    """The chains of global files of one session, built on demand and cached per (folder, root)."""

    def __init__(self, sys_tree: HObj, reader: LevelReader, load_globals: bool) -> None:
        self.sys_tree = sys_tree
        self.reader = reader
        self.load_globals = load_globals
        self._chains: dict[tuple[str, str], Chain | ConfigError] = {}

    def chain_for(self, directory: str, root: str) -> Chain:
        """The fallback for a job in ``directory``: system config plus globals from ``root`` down."""
        directory = os.path.abspath(directory)
        root = os.path.abspath(root)
        key = (directory, root)
        cached = self._chains.get(key)
        if isinstance(cached, ConfigError):
            raise cached
        if cached is not None:
            return cached
        try:
            chain = self._build_chain(directory, root)
        except ConfigError as exc:
            self._chains[key] = exc
            raise
        self._chains[key] = chain
        return chain

    def _build_chain(self, directory: str, root: str) -> Chain:
        if directory == root or not self.load_globals:
            parent = Chain(self.sys_tree, [])
        elif not is_within(directory, root):
            return Chain(self.sys_tree, [])
        else:
            parent = self.chain_for(os.path.dirname(directory), root)
        if not self.load_globals:
            return parent
        globals_here = global_files(directory)
        if not globals_here:
            return parent
        if len(globals_here) > 1:
            names = ", ".join(os.path.basename(g) for g in globals_here)
            raise ConfigError(
                f"found more than one global properties file in folder {directory}: {names}",
                path=directory,
                hint="keep at most one .properties or .configuration file per folder",
            )
        path = globals_here[0]
        warnings = list(parent.warnings)
        if path.lower().endswith(GLOBAL_HOCON_EXTENSION):
            level = self.reader.hocon_level(path, parent.tree)
        else:
            level = self.reader.props_level(path, parent.tree, warnings)
        return Chain(level.tree, [level] + parent.levels, warnings)
