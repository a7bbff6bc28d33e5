"""Job templates (spec §1.12): ``job.template``, ``gobblin.template.uri(s)``, inheritance, required attributes.

A template is a HOCON file. Applying it to a job's flat properties ``P`` gives
``P withFallback template withFallback super_n ... withFallback super_1`` (``gobblin.template.inherit``
lists the supers; later-listed supers win over earlier ones; a template met twice on one chain of supers is
refused, see below), then ``resolve()`` -- so template ``${...}`` can use job values -- and flattening. This is
``InheritingJobTemplate.getResolvedConfig`` as ``SchedulerUtils.resolveTemplate`` (``job.template``) and
``AbstractJobLauncher.resolveGobblinJobTemplateIfNecessary`` (``gobblin.template.uri``, else
``gobblin.template.uris``) use it.

Template names are looked up next to the referring template, next to the job file, in the configuration
root, and in gobblin_py's packaged template folder (:data:`PACKAGED_TEMPLATE_DIR`, used if present);
``resource:///x`` and ``file:///x`` URIs are accepted, ``class://`` templates are not supported.

Deliberate difference from Gobblin: ``gobblin.template.required_attributes`` (collected from the template
and its supers, minus what the templates define themselves) is *enforced* -- a missing attribute is an
error naming the attribute and the template; Gobblin only reports the list. And a template that inherits
itself, directly or through its supers, is an error naming the chain; Gobblin uses each template once and goes on,
so a job quietly gets whatever the loop happened to leave.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from gobblin_py.jobconf import keys as K
from gobblin_py.sdk.config_errors import ConfigError

from .convert import (
    KeyLocator,
    config_get_boolean,
    config_get_string,
    config_get_string_list,
    config_has_path,
    config_to_properties,
    guava_trim,
    properties_to_config,
)
from .hocon import BadPath, HObj, HValue, parse_path_expression, resolve

__all__ = ["PACKAGED_TEMPLATE_DIR", "Template", "TemplateResolver", "ordered"]

PACKAGED_TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


def ordered(props: Mapping[str, str], *key_lists: Sequence[str]) -> dict[str, str]:
    """``props`` re-ordered: keys of the first list first, then the second list's, ..., then the rest."""
    out: dict[str, str] = {}
    for key_list in key_lists:
        for key in key_list:
            if key in props and key not in out:
                out[key] = props[key]
    for key, value in props.items():
        if key not in out:
            out[key] = value
    return out


def _has_key(props: Mapping[str, str], attribute: str) -> bool:
    if attribute in props:
        return True
    prefix = attribute + "."
    return any(key.startswith(prefix) for key in props)


def _put(fields: dict[str, HValue], elements: Sequence[str], value: HValue) -> None:
    for element in elements[:-1]:
        child = fields.get(element)
        if not isinstance(child, HObj):
            child = HObj({})
            fields[element] = child
        fields = child.fields
    fields[elements[-1]] = value


@dataclass(eq=False)
class Template:
    """One job template (Gobblin ``StaticJobTemplate``) and its super templates."""

    uri: str
    path: str
    raw: HObj
    local_required: list[str]
    secure: bool = False
    overridable: list[str] = field(default_factory=list)
    supers: list[Template] = field(default_factory=list)

    def raw_config(self, seen: set[Template]) -> HObj:
        """The template merged over its supers, unresolved (``getRawTemplateConfig``)."""
        config: HValue = self.raw
        for template in reversed(self.supers):
            if template not in seen:
                seen.add(template)
                config = config.with_fallback(template.raw_config(seen))
        assert isinstance(config, HObj)
        return config

    def _all_required(self, seen: set[Template]) -> list[str]:
        names = list(self.local_required)
        for template in self.supers:
            if template not in seen:
                seen.add(template)
                names += template._all_required(seen)
        return names

    def required_attributes(self) -> list[str]:
        """Required attributes of this template and its supers, minus those the templates define."""
        raw = self.raw_config({self})
        return [n for n in dict.fromkeys(self._all_required({self})) if not config_has_path(raw, n)]

    def _filter_user(self, user: HObj) -> HObj:
        # SecureJobTemplate.filterUserConfig: a secure template keeps only the overridable user keys.
        if not self.secure:
            return user
        kept: dict[str, HValue] = {}
        for name in self.overridable:
            try:
                elements = parse_path_expression(name)
            except BadPath:
                continue
            node: HValue | None = user
            for element in elements:
                node = node.fields.get(element) if isinstance(node, HObj) else None
            if node is not None:
                _put(kept, elements, node)
        return HObj(kept)

    def resolved_config(self, user: HObj, seen: set[Template]) -> HObj:
        """``user withFallback template withFallback supers`` (unresolved; ``getResolvedConfig``)."""
        config: HValue = self._filter_user(user).with_fallback(self.raw)
        for template in reversed(self.supers):
            if template not in seen:
                seen.add(template)
                config = config.with_fallback(template.resolved_config(config, seen))  # type: ignore[arg-type]
        assert isinstance(config, HObj)
        return config


def _url_path(text: str) -> str:
    parsed = urlparse(text)
    path = unquote(parsed.path)
    if parsed.netloc:
        path = parsed.netloc + ("" if path.startswith("/") else "/") + path
    return path


class TemplateResolver:
    """Finds, parses (once) and applies job templates for the jobs of one load call."""

    def __init__(self, env: Mapping[str, str], cwd: str | None = None) -> None:
        self.env = env
        self.cwd = cwd or os.getcwd()
        self._cache: dict[str, Template] = {}

    def apply(
        self, props: dict[str, str], job_path: str, root: str, locate: KeyLocator | None = None
    ) -> dict[str, str]:
        """Apply ``job.template``, then ``gobblin.template.uri`` (or ``gobblin.template.uris``) to ``props``."""
        if K.JOB_TEMPLATE_PATH in props:
            template = self.template(props[K.JOB_TEMPLATE_PATH], job_path, root, [], K.JOB_TEMPLATE_PATH)
            props = self._resolve_with(props, template, job_path, locate)
        key: str | None = None
        uris: list[str] = []
        if K.GOBBLIN_JOB_TEMPLATE_KEY in props:
            key, uris = K.GOBBLIN_JOB_TEMPLATE_KEY, [props[K.GOBBLIN_JOB_TEMPLATE_KEY]]
        elif K.GOBBLIN_JOB_MULTI_TEMPLATE_KEY in props:
            key = K.GOBBLIN_JOB_MULTI_TEMPLATE_KEY
            uris = [u for u in (guava_trim(p) for p in props[key].split(",")) if u]
        if key is not None and uris:
            supers = [self.template(uri, job_path, root, [], key) for uri in uris]
            template = supers[0] if len(supers) == 1 else Template(", ".join(uris), "", HObj({}), [], supers=supers)
            # The launcher puts the resolved properties back over the job properties.
            props = {**props, **self._resolve_with(props, template, job_path, locate)}
        return props

    def _resolve_with(
        self, props: dict[str, str], template: Template, job_path: str, locate: KeyLocator | None
    ) -> dict[str, str]:
        for attribute in template.required_attributes():
            if not _has_key(props, attribute):
                raise ConfigError(
                    f"required attribute '{attribute}' of template {template.uri} is not set",
                    path=job_path,
                    key=attribute,
                    hint=f"add {attribute}=<value> to the job (the template lists it in "
                    f"{K.REQUIRED_ATTRIBUTES_LIST_KEY})",
                )
        user = properties_to_config(props, locate=locate, path=job_path)
        resolved = resolve(template.resolved_config(user, set()), self.env)
        return ordered(config_to_properties(resolved), list(props))

    def template(self, uri: str, job_path: str, root: str, referrers: list[str], key: str) -> Template:
        """The template named ``uri`` (with its supers), parsed once per resolver; ``referrers``: the chain above it."""
        path = self._find(uri, job_path, root, referrers, key)
        if path in referrers:
            chain = " -> ".join([*reversed(referrers), path])
            raise ConfigError(
                f"template inheritance loop: {chain}",
                path=referrers[0],
                key=key,
                hint=f"a template may not inherit itself, directly or through its supers: remove {uri} from "
                f"{K.TEMPLATE_INHERIT_KEY} of {os.path.basename(referrers[0])}",
            )
        cached = self._cache.get(path)
        if cached is not None:
            return cached
        from .hocon.document import parse_hocon_file

        raw = parse_hocon_file(path, cwd=self.cwd)
        required_text = config_get_string(raw, K.REQUIRED_ATTRIBUTES_LIST_KEY, env=self.env, path=path)
        required = [n for n in (p.strip() for p in (required_text or "").split(",")) if n]
        secure = config_get_boolean(raw, K.TEMPLATE_IS_SECURE_KEY, False, env=self.env, path=path)
        overridable = (
            config_get_string_list(raw, K.TEMPLATE_SECURE_OVERRIDABLE_KEY, env=self.env, path=path) if secure else []
        )
        template = Template(uri, path, raw, required, secure, [o.strip() for o in overridable])
        self._cache[path] = template
        for super_uri in config_get_string_list(raw, K.TEMPLATE_INHERIT_KEY, env=self.env, path=path):
            template.supers.append(self.template(super_uri, job_path, root, [path] + referrers, K.TEMPLATE_INHERIT_KEY))
        return template

    def _find(self, uri: str, job_path: str, root: str, referrers: list[str], key: str) -> str:
        where = referrers[0] if referrers else job_path
        text = uri.strip()
        match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", text)
        scheme = match.group(1).lower() if match and len(match.group(1)) > 1 else ""  # "C:" is a drive
        if scheme == "class":
            raise ConfigError(
                f"template class {text.split('://', 1)[-1]} cannot be used: Java template classes are not supported",
                path=where,
                key=key,
                hint="use a .template (HOCON) file instead",
            )
        if scheme not in ("", "resource", "file"):
            raise ConfigError(
                f"unsupported template URI '{uri}'",
                path=where,
                key=key,
                hint="use a relative path, resource:///templates/<name>.template or file:///<absolute path>",
            )
        location = _url_path(text) if scheme else text
        if scheme == "file":
            candidates = [unquote(urlparse(text).path)]
        else:
            candidates = [location] if (not scheme and os.path.isabs(location)) else []
            relative = location.lstrip("/")
            bases = [os.path.dirname(r) for r in referrers[:1]] + [
                os.path.dirname(os.path.abspath(job_path)),
                root,
                str(PACKAGED_TEMPLATE_DIR.parent),
                str(PACKAGED_TEMPLATE_DIR),
            ]
            candidates += [os.path.join(base, relative) for base in bases]
        for candidate in candidates:
            if os.path.isfile(candidate):
                return os.path.abspath(candidate)
        raise ConfigError(
            f"template '{uri}' not found (looked at {', '.join(dict.fromkeys(candidates))})",
            path=where,
            key=key,
            hint="template names are resolved against the referring template's folder, the job file's folder, "
            "the configuration root and gobblin_py's packaged templates",
        )
