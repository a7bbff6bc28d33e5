"""Event logging: JSON lines off a terminal, aligned key=value lines on one, levels, listeners, exceptions."""

from __future__ import annotations

import json
import pathlib

import pytest

from gobblin_py.sdk import logs


class _Err:
    def __init__(self, capsys):
        self.capsys = capsys

    def getvalue(self) -> str:
        return self.capsys.readouterr().err


@pytest.fixture
def stderr(capsys, monkeypatch):
    monkeypatch.setenv("GPY_LOG_LEVEL", "INFO")
    monkeypatch.setenv("GPY_LOG_FORMAT", "json")
    yield _Err(capsys)
    logs.configure_logging("INFO", "json")


def test_json_lines_carry_fields_event_level_and_utc_timestamp(stderr):
    logs.configure_logging("INFO", "json")
    logs.get_logger("t").info("job_started", job="J", n=3, path=pathlib.Path("/a"), nothing=None)
    [line] = stderr.getvalue().splitlines()
    record = json.loads(line)
    assert list(record) == ["job", "n", "path", "nothing", "event", "level", "timestamp"]
    assert record["path"] == "PosixPath('/a')" and record["nothing"] is None  # what JSON cannot hold is repr'd
    assert record["event"] == "job_started" and record["level"] == "info" and record["timestamp"].endswith("Z")


def test_events_below_the_level_are_dropped(stderr):
    logs.configure_logging("WARNING", "json")
    log = logs.get_logger("t")
    log.debug("a")
    log.info("b")
    log.warning("c")
    log.error("d")
    assert [json.loads(line)["event"] for line in stderr.getvalue().splitlines()] == ["c", "d"]


def test_console_lines_sort_fields_and_quote_values_with_spaces(stderr, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    logs.configure_logging("DEBUG", "console")
    logs.get_logger("t").warning("disk_low", zone="b", free="3 GB", at=2)
    line = stderr.getvalue().rstrip("\n")
    stamp, rest = line.split(" ", 1)
    assert stamp.endswith("Z") and "\x1b" not in line
    assert rest == "[warning  ] disk_low" + " " * 23 + "at=2 free='3 GB' zone=b"


def test_exceptions_are_rendered_in_both_formats(stderr):
    for fmt in ("json", "console"):
        logs.configure_logging("INFO", fmt)
        try:
            raise ValueError("bad record 7")
        except ValueError:
            logs.get_logger("t").error("task_failed", exc_info=True)
    json_line, console = stderr.getvalue().split("\n", 1)
    assert "ValueError: bad record 7" in json.loads(json_line)["exception"]
    assert "task_failed" in console and console.rstrip().endswith("ValueError: bad record 7")


def test_a_listener_sees_events_and_may_take_them(stderr):
    logs.configure_logging("INFO", "json")
    seen = []

    def take(level, event):
        seen.append((level, event["event"]))
        return event["event"] == "task_finished"

    logs.add_listener(take)
    try:
        log = logs.get_logger("t")
        log.info("task_finished", task="t1")
        log.info("job_finished")
    finally:
        logs.remove_listener(take)
    assert seen == [("info", "task_finished"), ("info", "job_finished")]
    assert [json.loads(line)["event"] for line in stderr.getvalue().splitlines()] == ["job_finished"]
