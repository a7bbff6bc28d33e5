"""The docs site: it builds with --strict, its generated reference pages match the code, and a reader in a real
browser finds the home page, the navigation and a configuration key through the search."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gobblin_py.cli.reference import pages
from tests.docs.browser import Chromium

REPO = Path(__file__).resolve().parents[2]

# one pytest-xdist worker for the folder: the site is built once (a few seconds), not once in each worker
pytestmark = pytest.mark.xdist_group("docs-site")


def test_the_generated_reference_pages_match_the_code():
    # a fresh interpreter, as `make docs` runs it: what earlier tests of this worker imported or changed (an
    # option's default read once, a registered command) must not make the committed pages look stale
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "update_docs_reference.py"), "--check"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr


def test_the_reference_covers_every_key_command_and_sdk_module():
    from gobblin_py.cli import catalog
    from gobblin_py.cli.base import COMMAND_MODULES, EXIT_CODES
    from gobblin_py.cli.reference import sdk_modules

    generated = pages()
    keys_text = "\n".join(text for path, text in generated.items() if path.startswith("reference/keys/"))
    declared = {k.name for _, keys in catalog.core_sections() for k in keys} | {
        k.name for entries in catalog.settings_groups().values() for k in entries[0].keys}
    assert not [name for name in declared if f"`{name}`" not in keys_text]
    cli = generated["reference/cli.md"]
    assert all(f"## `gpy {command}`" in cli for command in COMMAND_MODULES)
    assert "#### `gpy state startpoint set`" in cli and "`--conf-root`" in cli
    assert all(f"| {code} |" in cli for code, _ in EXIT_CODES)
    assert all(f"::: {module}" in generated["reference/sdk.md"] for module in sdk_modules())


def test_the_site_builds_strictly_with_every_page(built_site: Path):
    for path in pages():
        assert (built_site / path).with_suffix(".html").is_file(), path
    assert (built_site / "search" / "search_index.json").is_file()
    sdk = (built_site / "reference" / "sdk.html").read_text()
    assert 'id="gobblin_py.sdk.settings.setting"' in sdk  # rendered from the docstrings by mkdocstrings
    assert not re.search(r":(func|class|meth|data|mod):<code>", sdk)  # Sphinx's roles do not show


def test_a_reader_finds_home_navigation_and_a_key_in_chromium(site_url: str, chromium_binary: str):
    browser = Chromium(chromium_binary)
    try:
        browser.open(f"{site_url}/index.html")
        assert browser.evaluate("document.querySelector('article h1').firstChild.textContent.trim()") == "gobblin_py"
        assert browser.evaluate("!!document.querySelector('link[rel=stylesheet][href*=\"main\"]').sheet")
        # the navigation: the sidebar's link to the command line reference, clicked
        browser.evaluate("[...document.querySelectorAll('nav.md-nav a')]"
                         ".find(a => a.textContent.trim() === 'Command line').click()")
        browser.wait_for("location.pathname.endsWith('/reference/cli.html') && document.readyState === 'complete'")
        assert browser.evaluate("document.querySelector('article h1').firstChild.textContent.trim()") == "Command line"
        # and a guide, from there
        browser.evaluate("[...document.querySelectorAll('nav.md-nav a')]"
                         ".find(a => a.textContent.trim() === 'Pulling Kafka topics').click()")
        browser.wait_for("location.pathname.endsWith('/guides/kafka.html') && document.readyState === 'complete'")
        assert browser.evaluate("document.querySelector('article h1').firstChild.textContent.trim()") \
            == "Pulling Kafka topics"
        # the search: a key, whole or its last part, answered by the page that declares it (the index is built in
        # the browser, by the theme's worker)
        for query, page in [("source.filebased.maxFilesPerRun", "files"), ("maxFilesPerRun", "files"),
                            ("kafka.brokers", "kafka")]:
            browser.open(f"{site_url}/index.html?q={query}")
            results = browser.wait_for("[...document.querySelectorAll('.md-search-result__item a')].map(a => a.href)")
            assert f"/reference/keys/{page}.html" in results[0], (query, results[:5])
        found = browser.evaluate(f"fetch({results[0]!r}).then(r => r.text())")
        assert "<code>kafka.brokers</code>" in found
    finally:
        browser.close()
