"""MkDocs hooks of the docs site (mkdocs.yml: hooks).

The SDK's docstrings cross-reference in Sphinx's roles (:func:`branch_key`), which mkdocstrings shows as they are
written: the role's name goes, the name stays in code type.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj|const):(?=<code>)")


def on_page_content(html: str, **_: Any) -> str:
    return _ROLE.sub("", html)
