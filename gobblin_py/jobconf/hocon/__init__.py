"""HOCON with the semantics of typesafe config 1.4.1, as Gobblin uses it.

Gobblin parses ``.conf``/``.json`` job files, ``.configuration`` globals and job templates with typesafe
config, merges every level with ``withFallback`` and calls ``resolve()`` once on the merged tree. This package
is a port of the parts of typesafe config that do that:

* :mod:`.chars`, :mod:`.tokens`, :mod:`.tokenizer` -- characters and tokens (``Tokenizer``);
* :mod:`.paths` -- path expressions (``PathParser``, ``Path.render``);
* :mod:`.values`, :mod:`.concat`, :mod:`.tree` -- the value model with its ``withFallback`` rules, value
  concatenation, and building/walking object trees (down to plain Python values, ``unwrapped()``);
* :mod:`.parser`, :mod:`.includes`, :mod:`.document` -- parsing text and files, with ``include``;
* :mod:`.resolve`, :mod:`.env` -- substitutions (``Config.resolve()``), environment variables as a fallback;
* :mod:`.render` -- JSON strings and Java ``Double.toString``.

pyhocon is not used: version 0.3.63 turns ``10 seconds`` into a ``timedelta``, ``True`` into a boolean and
``1.50`` into ``1.5``, accepts ``key=foo:122`` and unquoted backslashes, rejects ``a=1`` followed by
``a.b=2`` and non-Latin keys, and concatenates ``+=`` strings with a space -- all observable differences
from Gobblin (``tests/config/test_pyhocon_divergence.py``). The port is tested against typesafe's own
conformance resources (``tests/data/typesafe``).
"""

from typing import Any

from .paths import BadPath, parse_path_expression, render_path
from .render import java_double_to_string
from .resolve import lookup_resolved, resolve
from .tree import empty_object, iter_leaves, object_from_path_map, unwrap
from .values import HBool, HConcat, HList, HMerge, HMergeObj, HNull, HNum, HObj, HRef, HStr, HValue

__all__ = [
    "HValue",
    "HStr",
    "HNum",
    "HBool",
    "HNull",
    "HList",
    "HObj",
    "HRef",
    "HConcat",
    "HMerge",
    "HMergeObj",
    "BadPath",
    "parse_path_expression",
    "render_path",
    "parse_hocon",
    "parse_hocon_file",
    "parse_hocon_value",
    "resolve",
    "lookup_resolved",
    "empty_object",
    "object_from_path_map",
    "iter_leaves",
    "unwrap",
    "java_double_to_string",
]

_PARSERS = ("parse_hocon", "parse_hocon_file", "parse_hocon_value")


def __getattr__(name: str) -> Any:
    # the parser (and its include resolution) loads on first use: a .pull job converts properties, never parses
    if name in _PARSERS:
        from . import document

        return getattr(document, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
