"""The runnable-examples runner itself: how it reads the markers, masks volatile values and matches wildcards."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.docs.runnable import (
    MarkupError,
    learn_ids,
    matches,
    normalized,
    run_sequence,
    sequences,
    with_ids,
    with_provided,
)
from tests.docs.shell import Shell

PAGE = '''# A page

<!-- runnable-setup: sql
touch hidden
-->

<!-- runnable: sql needs=postgres -->
```sh
echo one
```

<!-- output -->
```text
one
```

Prose.

<!-- runnable -->
```
$ echo two
two
$ false
(exit code 1)
```

```sh
echo not marked
```

<!-- runnable: sql skip="it takes an hour" -->
```sh
sleep 3600
```
'''


def test_sequences_are_read_by_group_in_page_order():
    sql, default = sequences("page.md", PAGE)
    assert (sql.id, default.id) == ("page.md:sql", "page.md:default")
    assert sql.needs == {"postgres"}
    setup, one, slow = sql.blocks
    assert setup.setup and setup.text == "touch hidden\n" and setup.line == 4
    assert (one.text, one.expected, one.line) == ("echo one\n", "one\n", 9)
    assert slow.skip == "it takes an hour" and sql.skipped == [slow]
    [transcript] = default.blocks
    assert [(c.text, c.expected, c.exit_code) for c in transcript.transcript] == [("echo two", "two\n", 0),
                                                                                  ("false", "", 1)]


@pytest.mark.parametrize("page, message", [
    ("<!-- runnable -->\nno fence\n", "page.md:1: a runnable marker must stand right above a fenced block"),
    ("<!-- runnable -->\n```python\nx\n```\n", "not ```python"),
    ("<!-- runnable: a b -->\n```sh\nx\n```\n", "one group, then options"),
    ("<!-- runnable: a wait=1 -->\n```sh\nx\n```\n", "unknown runnable option 'wait'"),
    ("<!-- runnable -->\n```sh\nx\n", "not closed"),
    ("<!-- runnable-setup: a\nx\n", "not closed"),
], ids=["no-fence", "python-block", "two-groups", "unknown-option", "unclosed-block", "unclosed-setup"])
def test_a_marker_that_cannot_be_read_names_its_line(page, message):
    with pytest.raises(MarkupError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sequences("page.md", page)


def test_volatile_values_are_masked_and_blanks_collapsed():
    printed = ("job Orders  job_Orders_1795409971433  COMMITTED  1.2 s  task_Orders_1795409971433_0\n"
               "  started   2026-11-23T04:28:51.267Z on vm (pid 31313), bytes 19,204, 3.5 MB, id bd0f1849930d\n"
               "  watermark 1795409927818 in /tmp/x/clone/work/out")
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    printed = printed.replace("2026-11-23T04:28:51.267Z", now)
    assert normalized(printed, {"/tmp/x/clone/": ""}, printed=True) == [
        "job Orders job_Orders_<id> COMMITTED <duration> task_Orders_<id>_0",
        "started <time> <pid>, <size>, <size>, id <id>",
        "watermark <ms> in work/out"]


@pytest.mark.parametrize("shown, printed, same", [
    (["a", "…", "d"], ["a", "b", "c", "d"], True),
    (["a", "…", "d"], ["a", "d"], True),
    (["a", "…"], ["a"], True),
    (["a", "…", "d"], ["a", "b"], False),
    (["x (id …) y"], ["x (id 1, 2) y"], True),
    (["x (id …) y"], ["x (id 1, 2) z"], False),
    (["a"], ["a", "b"], False),
])
def test_the_ellipsis_stands_for_lines_or_text(shown, printed, same):
    assert matches(shown, printed) is same


def test_a_time_of_the_data_is_compared_and_one_of_the_clock_is_not():
    shown = normalized("run 2026-11-23T04:28:51.267Z complete up to 2026-11-03T23:50:06.000Z")
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    assert matches(shown, normalized(f"run {now} complete up to 2026-11-03T23:50:06.000Z", printed=True))
    assert not matches(shown, normalized(f"run {now} complete up to 2026-11-03T23:50:07.000Z", printed=True))
    assert not matches(shown, normalized("run 2026-11-22T04:28:51.267Z complete up to 2026-11-03T23:50:06.000Z",
                                         printed=True))


def test_a_sequence_runs_in_one_shell_and_reports_what_differs(tmp_path):
    page = PAGE.replace("echo one", "export SEEN=placeholder; cd sub && echo one").replace("touch hidden", "mkdir sub")
    sql, default = sequences("page.md", page.replace("$ echo two", "$ pwd; echo $SEEN"))
    shell = Shell(tmp_path / "blocks", tmp_path, {"PATH": "/usr/bin:/bin"})
    try:
        assert run_sequence(sql, shell, {}, {"SEEN": "seen"}) == []  # the skipped block is not run
        # the setup's folder, the first block's cd and the exports carried on; the transcript shows "two"
        [difference] = run_sequence(default, shell, {str(tmp_path): "<tmp>"})
    finally:
        shell.close()
    assert difference.startswith("page.md:21: `pwd; echo $SEEN` printed other than the page shows")
    assert "-two\n+<tmp>/sub\n+seen" in difference
    broken = sequences("page.md", "<!-- runnable -->\n```sh\necho before\nfalse\necho after\n```\n")[0]
    shell = Shell(tmp_path / "blocks2", tmp_path, {"PATH": "/usr/bin:/bin"})
    try:
        with pytest.raises(AssertionError, match=r"(?s)page.md:3: a command of this block failed.*before"):
            run_sequence(broken, shell, {})
    finally:
        shell.close()


def test_a_run_id_the_page_shows_stands_for_the_one_printed_in_its_place():
    ids: dict[str, str] = {}
    learn_ids("RUN ID  STATUS\n…\njob_Q_1795408146267  SUCCEEDED\n…",
              "RUN ID  STATUS\njob_Q_1795999999999  NOTHING_NEW\njob_Q_1795000000001  SUCCEEDED\n", {}, ids)
    assert ids == {"job_Q_1795408146267": "job_Q_1795000000001"}
    assert with_ids("gpy history q.pull job_Q_1795408146267", ids) == "gpy history q.pull job_Q_1795000000001"


def test_the_tests_values_follow_each_export_of_a_placeholder():
    text = "export PGHOST=127.0.0.1 PGPASSWORD=...\necho $PGPASSWORD\nexport OTHER=1\n"
    assert with_provided(text, {"PGPASSWORD": "s3cret word"}) == (
        "export PGHOST=127.0.0.1 PGPASSWORD=...\nexport PGPASSWORD='s3cret word'\necho $PGPASSWORD\nexport OTHER=1\n")
