"""A pytest plugin that shows, at the end of the run, where each random crash campaign's kills landed: the lines
a campaign reports (``report(line)``) travel with its test's report (from an xdist worker too) and are printed
in a section of the terminal summary."""

from __future__ import annotations

import pytest

KEY = "crash landings"
_reported: list[str] = []


def report(line: str) -> None:
    """Show ``line`` under the test that is running, in the run's summary."""
    _reported.append(line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "call" and _reported:
        outcome.get_result().user_properties.extend((KEY, line) for line in _reported)
        _reported.clear()


def pytest_terminal_summary(terminalreporter):
    found = [(report.nodeid, value) for outcome in ("passed", "failed")
             for report in terminalreporter.stats.get(outcome, [])
             for key, value in getattr(report, "user_properties", ()) if key == KEY]
    if found:
        terminalreporter.section("where the random crash kills landed")
        for nodeid, line in found:
            terminalreporter.write_line(f"{nodeid}: {line}")
