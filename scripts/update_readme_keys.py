"""Rewrites the README's key tables from the keys' declarations (the same text `gpy plugins --markdown` prints).

    python scripts/update_readme_keys.py          # update README.md in place
    python scripts/update_readme_keys.py --check  # exit 1 when README.md differs (what the test suite asserts)
"""

from __future__ import annotations

import sys
from pathlib import Path

from gobblin_py.cli.catalog import README_BEGIN, README_END, markdown

README = Path(__file__).resolve().parents[1] / "README.md"


def updated(text: str) -> str:
    start, end = text.index(README_BEGIN), text.index(README_END) + len(README_END)
    return text[:start] + markdown() + text[end:]


def main() -> int:
    text = README.read_text()
    new = updated(text)
    if "--check" in sys.argv:
        return 0 if new == text else 1
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
