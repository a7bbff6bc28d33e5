"""``gpy validate``: load job files and check the plugin classes they name, one report per file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import re

from gobblin_py.config import load_jobs
from gobblin_py.plugins import PluginError, check_plugins, gobblin_name
from gobblin_py.unported import explain

SECRET_KEY = re.compile(r"(password|passwd|secret|token|credential|private[._]?key)", re.IGNORECASE)
MASK = "******"


def mask_secrets(props: dict[str, str]) -> dict[str, str]:
    """The properties with the values of password-like keys replaced by ``******``."""
    return {k: (MASK if SECRET_KEY.search(k) and v else v) for k, v in props.items()}


@dataclass
class JobReport:
    """The verdict on one job file: its resolved properties, or what is wrong with it."""

    path: str
    properties: dict[str, str] | None = None
    error: str | None = None
    unsupported: list[str] = field(default_factory=list)  # Gobblin classes without a gobblin_py equivalent
    unported: list[dict[str, str | None]] = field(default_factory=list)  # each with its nearest built-in and a hint
    unresolved: list[str] = field(default_factory=list)  # names that resolve nowhere
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.unsupported and not self.unresolved

    def render(self) -> str:
        if self.error is not None:
            return f"FAIL {self.path}: {self.error}"
        lines = [f"{'ok  ' if self.ok else 'FAIL'} {self.path}"]
        for item, info in zip(self.unsupported, self.unported):
            lines.append(f"     unsupported: {item}")
            lines.append(f"                  nearest gpy built-in: {info['nearest'] or 'none'}; {info['hint']}")
        lines += [f"     unresolved:  {item}" for item in self.unresolved]
        lines += [f"     warning:     {item}" for item in self.warnings]
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok,
            "error": self.error,
            "unsupported": self.unsupported,
            "unported": self.unported,
            "unresolved": self.unresolved,
            "warnings": self.warnings,
            "properties": mask_secrets(self.properties) if self.properties is not None else None,
        }


def _unported(problem: PluginError) -> dict[str, str | None]:
    name = gobblin_name(problem.name) or problem.name
    info = explain(name)
    nearest = info.nearest if info else None
    hint = info.hint if info else "no gpy equivalent yet: write a plugin (the contracts are in gobblin_py/api.py)"
    return {"key": problem.key, "class": problem.name, "nearest": nearest, "hint": hint}


def validate_paths(paths: list[str], conf_root: str | None, sysconfig: str | None) -> list[JobReport]:
    """Load every job file under ``paths`` and check its plugins; never stops at the first bad file."""
    reports = []
    for result in load_jobs(paths, conf_root=conf_root, sysconfig=sysconfig):
        if result.error is not None or result.config is None:
            reports.append(JobReport(result.path, error=str(result.error)))
            continue
        props = dict(result.config)
        report = JobReport(result.path, properties=props, warnings=list(getattr(result.config, "warnings", ())))
        for problem in check_plugins(props):
            if isinstance(problem, PluginError) and problem.unsupported:
                report.unsupported.append(f"{problem.key}={problem.name}")
                report.unported.append(_unported(problem))
            else:
                report.unresolved.append(str(problem))
        reports.append(report)
    return reports
