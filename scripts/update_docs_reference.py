"""Rewrites the docs site's generated reference pages (docs/reference/) from the code.

    python scripts/update_docs_reference.py          # write docs/reference/ (and remove pages nothing generates)
    python scripts/update_docs_reference.py --check  # exit 1, naming them, when pages differ (what the suite asserts)
"""

from __future__ import annotations

import sys
from pathlib import Path

from gobblin_py.cli.reference import pages

DOCS = Path(__file__).resolve().parents[1] / "docs"
GENERATED_DIR = DOCS / "reference"


def stale() -> list[str]:
    """The generated pages (paths under docs/) that differ from the code, are missing, or are left over."""
    wanted = pages()
    on_disk = {str(p.relative_to(DOCS)) for p in GENERATED_DIR.rglob("*.md")}
    differing = [path for path, text in wanted.items()
                 if not (DOCS / path).is_file() or (DOCS / path).read_text() != text]
    return sorted(differing + [path for path in on_disk if path not in wanted])


def write() -> None:
    wanted = pages()
    for path in GENERATED_DIR.rglob("*.md"):
        if str(path.relative_to(DOCS)) not in wanted:
            path.unlink()
    for path, text in wanted.items():
        (DOCS / path).parent.mkdir(parents=True, exist_ok=True)
        if not (DOCS / path).is_file() or (DOCS / path).read_text() != text:
            (DOCS / path).write_text(text)


def main() -> int:
    if "--check" in sys.argv:
        if found := stale():
            print("stale generated pages (run `make docs`): " + ", ".join(found), file=sys.stderr)
            return 1
        return 0
    write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
