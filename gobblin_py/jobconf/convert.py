"""Properties <-> config-tree conversion with the semantics of Gobblin's ``ConfigUtils`` (spec §1.7, §1.9).

* :func:`properties_to_config` -- ``ConfigUtils.propertiesToConfig``: drop ``gobblin.config.blacklistKeys``,
  rename "full prefix keys" (a key immediately followed, in Java string order, by a key starting with
  ``key + "."``) to ``key.ROOT_VALUE``, reject other keys ending in ``.ROOT_VALUE``, parse every key as a
  HOCON path expression (``BadPath`` for empty keys, stray dots, reserved characters) and reject a key
  that is still both a value and a parent (``ConfigException.BugOrBroken``). Values stay literal strings.
* :func:`config_to_properties` -- ``ConfigUtils.configToProperties``: resolve, then one entry per leaf:
  key = rendered path minus a trailing ``.ROOT_VALUE``, with every ``"`` removed; value = the string form
  (numbers keep their text, booleans ``true``/``false``), lists as compact Gson JSON, nulls omitted.
* :func:`merge_with_fallback` -- typesafe ``withFallback`` chains: at each path the higher-priority
  level's shape wins entirely (a string hides an object below it and vice versa).
* ``config_get_*`` / :func:`config_has_path` -- the typed reads Gobblin does on a ``Config``
  (``ConfigUtils.getBoolean``, ``getStringList``, ``Config.getString``/``hasPath``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from gobblin_py.sdk.config_errors import ConfigError

from .hocon import (
    BadPath,
    HBool,
    HList,
    HNull,
    HObj,
    HStr,
    HValue,
    iter_leaves,
    java_double_to_string,
    lookup_resolved,
    object_from_path_map,
    parse_path_expression,
    render_path,
    resolve,
    unwrap,
)

__all__ = [
    "ROOT_VALUE",
    "STRIP_SUFFIX",
    "BLACKLIST_KEYS_KEY",
    "java_string_sort_key",
    "find_full_prefix_keys",
    "properties_to_config",
    "config_to_properties",
    "desanitize_key",
    "merge_with_fallback",
    "gson_json",
    "guava_trim",
    "config_get_boolean",
    "config_get_string",
    "config_get_string_list",
    "config_has_path",
]

ROOT_VALUE = "ROOT_VALUE"
STRIP_SUFFIX = ".ROOT_VALUE"
BLACKLIST_KEYS_KEY = "gobblin.config.blacklistKeys"

KeyLocator = Callable[[str], tuple[str | None, int | None]]

# Guava CharMatcher.whitespace() (used by Splitter.trimResults()).
_GUAVA_WHITESPACE = frozenset(
    "\t\n\x0b\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def guava_trim(text: str) -> str:
    """Guava ``CharMatcher.whitespace().trimFrom``."""
    start, end = 0, len(text)
    while start < end and text[start] in _GUAVA_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in _GUAVA_WHITESPACE:
        end -= 1
    return text[start:end]


def java_string_sort_key(text: str) -> bytes:
    """Sort key reproducing Java ``String.compareTo`` (UTF-16 code unit order)."""
    return text.encode("utf-16-be", "surrogatepass")


def find_full_prefix_keys(keys: Iterable[str], prefix: str = "") -> set[str]:
    """``ConfigUtils.findFullPrefixKeys``: keys whose *next key in sorted order* starts with ``key + "."``.

    Only keys starting with ``prefix`` are considered. Adjacency matters: in ``a``, ``a-b``, ``a.b`` the key
    ``a`` is not found because ``a-b`` sorts between the two.
    """
    names = sorted({k for k in keys if k.startswith(prefix)}, key=java_string_sort_key)
    result: set[str] = set()
    last: str | None = None
    for name in names:
        if last is not None and name.startswith(last + "."):
            result.add(last)
        last = name
    return result


def _no_location(key: str) -> tuple[str | None, int | None]:
    return None, None


def _bad_path_hint(key: str) -> str:
    if key == "":
        return "every line needs a non-empty key before the '=', ':' or space separator"
    return (
        "rename the key: Gobblin converts keys to HOCON paths, which may not be empty, start or end with '.', "
        "contain '..' or contain any of $ \" { } [ ] : = , + # ` ^ ? ! @ * & \\ outside quotes"
    )


def properties_to_config(
    props: Mapping[str, str],
    *,
    prefix: str = "",
    locate: KeyLocator | None = None,
    path: str | None = None,
) -> HObj:
    """``ConfigUtils.propertiesToConfig``: turn flat properties into an (already resolved) object.

    ``locate(key)`` returns ``(file, line)`` for error messages; ``path`` is the fallback file name.
    Raises :class:`ConfigError` naming the key for a bad key path, a key ending in ``.ROOT_VALUE`` or a
    key that is both a value and the parent of another key.
    """
    where: KeyLocator = locate or _no_location

    def location(key: str) -> tuple[str | None, int | None]:
        file, line = where(key)
        return (file if file is not None else path), line

    blacklisted: set[str] = set()
    if BLACKLIST_KEYS_KEY in props:
        blacklisted = {t for t in (guava_trim(p) for p in props[BLACKLIST_KEYS_KEY].split(",")) if t}
    full_prefix_keys = find_full_prefix_keys(props.keys(), prefix)

    by_path: dict[tuple[str, ...], tuple[HValue, str]] = {}
    for key, value in props.items():
        if key.startswith(prefix) and key not in blacklisted:
            by_path[_key_path(key, key in full_prefix_keys, location)] = (HStr(str(value), True, location(key)), key)
    _check_values_are_not_parents(by_path, location)
    return object_from_path_map([(elements, value) for elements, (value, _) in by_path.items()])


def _key_path(key: str, is_prefix: bool, location: KeyLocator) -> tuple[str, ...]:
    """The path of a property's key (``key.ROOT_VALUE`` for a key that is also the prefix of others)."""
    converted = key
    if is_prefix:
        converted = key + STRIP_SUFFIX
    elif key.endswith(STRIP_SUFFIX):
        file, line = location(key)
        raise ConfigError(
            "properties are not allowed to end in .ROOT_VALUE",
            path=file,
            line=line,
            key=key,
            hint="rename the key; Gobblin appends .ROOT_VALUE itself to keys that are also the prefix of other keys",
        )
    try:
        return parse_path_expression(converted)
    except BadPath as exc:
        file, line = location(key)
        raise ConfigError(
            f"not a valid config path ({exc})", path=file, line=line, key=key, hint=_bad_path_hint(key)
        ) from None


def _check_values_are_not_parents(by_path: Mapping[tuple[str, ...], tuple[HValue, str]],
                                  location: KeyLocator) -> None:
    """ConfigError naming the key whose path is both a value and the parent object of another key's."""
    scopes: dict[tuple[str, ...], str] = {}
    for elements, (_, key) in by_path.items():
        for i in range(1, len(elements)):
            scopes.setdefault(elements[:i], key)
    for elements, (_, key) in by_path.items():
        if elements in scopes:
            file, line = location(key)
            child = scopes[elements]
            raise ConfigError(
                f"path '{render_path(elements)}' occurs both as a value and as the parent object of "
                f"'{child}' (keys sorting between them hide the conflict from the .ROOT_VALUE renaming)",
                path=file,
                line=line,
                key=key,
                hint=f"rename '{key}' or '{child}', or list '{key}' in {BLACKLIST_KEYS_KEY}",
            )


def desanitize_key(rendered: str) -> str:
    """``ConfigUtils.desanitizeKey``: drop a trailing ``.ROOT_VALUE`` and every ``"`` character."""
    if rendered.endswith(STRIP_SUFFIX):
        rendered = rendered[: -len(STRIP_SUFFIX)]
    return rendered.replace('"', "")


_GSON_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\t": "\\t",
    "\b": "\\b",
    "\n": "\\n",
    "\r": "\\r",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "=": "\\u003d",
    "'": "\\u0027",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _gson_string(text: str) -> str:
    out = ['"']
    for ch in text:
        escaped = _GSON_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def gson_json(value) -> str:
    """``new Gson().toJson(value)`` for unwrapped config values (HTML-safe escaping, nulls in maps omitted)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return java_double_to_string(value)
    if isinstance(value, str):
        return _gson_string(value)
    if isinstance(value, list):
        return "[" + ",".join(gson_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(
            _gson_string(str(k)) + ":" + gson_json(v) for k, v in value.items() if v is not None
        ) + "}"
    raise TypeError(f"cannot render {value!r}")  # pragma: no cover


def config_to_properties(
    config: HObj, *, prefix: str | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``ConfigUtils.configToProperties``: resolve ``config`` and flatten it to ``{key: string}``."""
    resolved = config if config.resolved else resolve(config, env)
    props: dict[str, str] = {}
    for path, value in iter_leaves(resolved):
        rendered = render_path(path)
        if prefix is not None and not rendered.startswith(prefix):
            continue
        if isinstance(value, HNull):
            continue
        if isinstance(value, HList):
            text = gson_json(unwrap(value))
        else:
            text = value.transform_to_string()  # type: ignore[assignment]
        props[desanitize_key(rendered)] = text
    return props


def merge_with_fallback(configs: Sequence[HObj]) -> HObj:
    """``configs[0].withFallback(configs[1]).withFallback(...)`` (highest priority first)."""
    if not configs:
        return HObj({})
    merged: HValue = configs[0]
    for lower in configs[1:]:
        merged = merged.with_fallback(lower)
    assert isinstance(merged, HObj)
    return merged


# --- typed reads from an (unresolved) config tree: ConfigUtils.getBoolean / getStringList / hasPath ---------


def _lookup(tree: HObj, key: str, env: Mapping[str, str] | None) -> HValue | None:
    return lookup_resolved(tree, parse_path_expression(key), env)


def _show(value: HValue) -> str:
    text = value.transform_to_string()
    if text is not None:
        return f"'{text}'"
    return "a list" if isinstance(value, HList) else "an object"


def config_get_boolean(
    tree: HObj, key: str, default: bool, *, env: Mapping[str, str] | None = None, path: str | None = None
) -> bool:
    """``ConfigUtils.getBoolean``: typesafe booleans (``true/false/yes/no/on/off``, exact case); else an error."""
    value = _lookup(tree, key, env)
    if value is None or isinstance(value, HNull):
        return default
    if isinstance(value, HBool):
        return value.value
    if isinstance(value, HStr):
        if value.text in ("true", "yes", "on"):
            return True
        if value.text in ("false", "no", "off"):
            return False
    file, line = value.origin
    raise ConfigError(
        f"expected a boolean (true/false/yes/no/on/off), got {_show(value)}",
        path=file or path,
        line=line,
        key=key,
        hint=f"set {key} to true or false",
    )


def config_get_string(
    tree: HObj, key: str, *, env: Mapping[str, str] | None = None, path: str | None = None
) -> str | None:
    """``Config.getString`` when the path exists (None when absent or null); lists/objects are an error."""
    value = _lookup(tree, key, env)
    if value is None or isinstance(value, HNull):
        return None
    text = value.transform_to_string()
    if text is None:
        raise ConfigError(f"expected a string, got {_show(value)}", path=value.origin[0] or path, key=key)
    return text


def config_get_string_list(
    tree: HObj, key: str, *, env: Mapping[str, str] | None = None, path: str | None = None
) -> list[str]:
    """``ConfigUtils.getStringList``: a HOCON list, or a CSV string (quotes respected, leading blanks dropped)."""
    value = _lookup(tree, key, env)
    if value is None or isinstance(value, HNull):
        return []
    if isinstance(value, HList):
        return [item.transform_to_string() or "" for item in value.items]
    text = config_get_string(tree, key, env=env, path=path)
    if not text:
        return []
    tokens: list[str] = []
    current: list[str] = []
    in_quotes = False
    for ch in text:
        if ch == '"':
            in_quotes = not in_quotes
        elif ch == "," and not in_quotes:
            tokens.append("".join(current))
            current = []
        else:
            current.append(ch)
    tokens.append("".join(current))
    return [token.lstrip() for token in tokens]


def config_has_path(tree: HObj, key: str) -> bool:
    """``Config.hasPath`` on the literal tree: every element is an object field and the value is not null."""
    try:
        elements = parse_path_expression(key)
    except BadPath:
        return False
    node: HValue = tree
    for element in elements:
        if not isinstance(node, HObj):
            return False
        child = node.fields.get(element)
        if child is None:
            return False
        node = child
    return not isinstance(node, HNull)
