"""The README is a front page, and everything it said before the docs site moved in has a home on a page of it.

``readme_headings.txt`` holds every heading of the README as it was before the move (all levels, outside code
blocks). Each must be a heading of some page under docs/, with the same text, unless ``RENAMED`` names the
heading that took its place (a change reviewed like any other: say where the section went).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.paths import REPO

DOCS = REPO / "docs"
FRONT_PAGE_LINES = 250
# old heading -> the heading on a docs page that holds its content now
RENAMED = {
    "The runtime": "The runtime: configuration keys",  # the key tables: docs/reference/keys/runtime.md
}
_HEADING = re.compile(r"^(#{1,6}) (.+?)\s*$")


def headings(text: str) -> list[str]:
    """The text of each Markdown heading of ``text`` outside fenced code blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            found.append(match.group(2))
    return found


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_is_a_front_page():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= FRONT_PAGE_LINES, "README.md is the front page: move sections into docs/"
    # its links into the site lead to pages that are there, and to headings on them (GitHub's anchors: it shows
    # the README and the pages it links to)
    for target, anchor in re.findall(r"\]\((docs/[^)#]+)#?([^)]*)\)", readme):
        assert (REPO / target).exists(), target
        if anchor:
            assert anchor in {github_anchor(h) for h in headings((REPO / target).read_text())}, f"{target}#{anchor}"


def test_every_heading_the_readme_had_has_a_home_in_the_site():
    on_pages: dict[str, list[str]] = {}
    for page in sorted(DOCS.rglob("*.md")):
        for heading in headings(page.read_text()):
            on_pages.setdefault(heading, []).append(str(page.relative_to(DOCS)))
    frozen = headings(Path(__file__).with_name("readme_headings.txt").read_text())
    assert len(frozen) > 100
    homeless = [old for old in frozen if RENAMED.get(old, old) not in on_pages]
    assert not homeless, f"headings of the old README with no home under docs/ (or in RENAMED): {homeless}"
