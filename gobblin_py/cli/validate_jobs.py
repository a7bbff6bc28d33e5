"""``gpy validate``: load job files and check each as ``gpy run`` would before any work, one report per file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.jobconf import load_jobs
from gobblin_py.jobconf.unported import explain
from gobblin_py.sdk.plugins import gobblin_name
from gobblin_py.sdk.redact import MASK, credential_name, redact

SECRET_KEY = re.compile(r"(password|passwd|secret|token|credential|private[._]?key)", re.IGNORECASE)


def mask_secrets(props: dict[str, str]) -> dict[str, str]:
    """The properties with the values of password-like keys, and of keys declared secret, replaced by ``******``,
    and credentials inside other values (a URL's user-info or ``api_key=`` query parameter) masked."""
    names, prefixes = _declared_secrets()
    return {k: (MASK if v and (SECRET_KEY.search(k) or _base(k) in names or k.startswith(prefixes) or _query_secret(k))
                else redact(v)) for k, v in props.items()}


def _query_secret(key: str) -> bool:
    """A query parameter's key (``rest.query.api_key``) whose name says it carries a credential."""
    family, _, name = key.rpartition(".")
    return family.endswith(".query") and credential_name(name)


def _base(key: str) -> str:
    return re.sub(r"\.\d+$", "", key)


def _declared_secrets() -> tuple[set[str], tuple[str, ...]]:
    """Names of the keys declared ``secret=True``, and the prefixes of secret key families (``fsspec.``)."""
    from gobblin_py.runtime.plan.validation import declared_keys

    secrets = [key for key, _ in declared_keys() if key.secret]
    names = {name for key in secrets if not key.is_prefix for name in (key.name, *key.aliases)}
    prefixes = tuple(key.name[:-1] for key in secrets if key.is_prefix)
    return names, prefixes


@dataclass
class JobReport:
    """The verdict on one job file: its resolved properties, or what is wrong with it."""

    path: str
    properties: dict[str, str] | None = None
    error: str | None = None  # the file does not load
    problems: list[str] = field(default_factory=list)  # keys whose values are wrong
    unsupported: list[str] = field(default_factory=list)  # Gobblin classes without a gobblin_py equivalent
    unported: list[dict[str, str | None]] = field(default_factory=list)  # each with its nearest built-in and a hint
    unresolved: list[str] = field(default_factory=list)  # names that resolve nowhere
    warnings: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)  # the files read, in the order applied (later ones win)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.problems and not self.unsupported and not self.unresolved

    def render(self) -> str:
        if self.error is not None:
            return f"FAIL {self.path}: {self.error}"
        lines = [f"{'ok  ' if self.ok else 'FAIL'} {self.path}"]
        lines += [f"     applied:     {path}" for path in self.applied]
        for item, info in zip(self.unsupported, self.unported, strict=True):
            lines.append(f"     unsupported: {item}")
            lines.append(f"                  nearest gpy built-in: {info['nearest'] or 'none'}; {info['hint']}")
        lines += [f"     unresolved:  {item}" for item in self.unresolved]
        lines += [f"     error:       {item}" for item in self.problems]
        lines += [f"     warning:     {item}" for item in self.warnings]
        return "\n".join(lines)

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": self.ok,
            "error": self.error,
            "problems": self.problems,
            "unsupported": self.unsupported,
            "unported": self.unported,
            "unresolved": self.unresolved,
            "warnings": self.warnings,
            "applied": self.applied,
            "properties": mask_secrets(self.properties) if self.properties is not None else None,
        }


def unported(item: str) -> dict[str, str | None]:
    """A ``key=GobblinClass`` the job names without a gpy equivalent, with the nearest built-in and a hint."""
    key, _, name = item.partition("=")
    info = explain(gobblin_name(name) or name)
    hint = info.hint if info else "no gpy equivalent yet: write a plugin (the contracts are in gobblin_py/sdk/contracts.py)"
    return {"key": key, "class": name, "nearest": info.nearest if info else None, "hint": hint}


def validate_paths(paths: list[str], conf_root: str | None, sysconfig: str | None, strict: bool = False,
                   lenient: bool = False) -> list[JobReport]:
    """Load every job file under ``paths`` and check it; never stops at the first bad file. ``sysconfig`` is
    ``--sysconfig``: when None, each path takes the ``conf/gobblin.properties`` found from where it is."""
    from gobblin_py.cli.base import resolve_sysconfig
    from gobblin_py.runtime.plan.implied_keys import with_source_defaults
    from gobblin_py.runtime.plan.validation import check_job

    reports = []
    for path in paths:
        for result in load_jobs([path], conf_root=conf_root, sysconfig=resolve_sysconfig(sysconfig, path, conf_root)):
            if result.error is not None or result.config is None:
                reports.append(JobReport(result.path, error=str(result.error)))
                continue
            config = with_source_defaults(result.config)
            check = check_job(config, strict=strict, lenient=lenient)
            reports.append(JobReport(
                result.path, properties=dict(config), problems=[str(e) for e in check.settings_errors],
                unsupported=check.unsupported, unported=[unported(u) for u in check.unsupported],
                unresolved=check.unresolved,
                warnings=list(result.config.warnings) + check.warnings,
                applied=result.config.applied,
            ))
    return reports
