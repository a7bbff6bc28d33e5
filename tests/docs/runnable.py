"""The documentation's runnable examples: found in the pages, run in order, their shown output compared.

A page marks a fenced block runnable with an HTML comment on the line right above its fence (invisible on the
rendered page)::

    <!-- runnable -->                          the page's one sequence, "default"
    <!-- runnable: sqlite -->                  a named sequence: a page can hold several independent ones
    <!-- runnable: pg needs=postgres -->       the environment it needs (see NEEDS in test_runnable_examples.py)
    <!-- runnable: kafka skip="why" -->        shown, not run, for the reason given (the test reports it)

Every block of one page and sequence runs in order in one bash session (``set -euo pipefail``: a failing command
ends the sequence, naming the page, the block's line and what it printed), in a fresh folder laid out as a clone
of the repository (``jobs/``, ``conf/`` and ``scripts/`` copied, ``.venv`` and ``tests`` linked), with ``gpy`` on
PATH and HOME a fresh folder. A block is either

- an ``sh`` block of commands; a fenced block right after it (blank lines between) marked ``<!-- output -->``
  on the line above its fence is what they print on stdout (stderr, where gpy logs, is not compared); or
- a transcript: a block whose lines starting with ``$ `` are commands and the lines under each their stdout.
  A shown line ending in ``(exit code N…)`` says the command exits N; any other non-zero exit fails.

Commands the reader does not need to see (a job key added, file times made even, an earlier run) go in a comment
``<!-- runnable-setup: GROUP`` … ``-->``, the lines in between; they run where the comment stands, a failure
failing the sequence as a block's does. A block marked ``skip=`` may be of any kind; a sequence whose every block
is skipped (the quick start's ``make run``) is shown, not run, and gets no test: its reason stays on the page.

Where the working folder or HOME appears in what a command prints, it reads as a reader's would: paths in the
clone relative (``work/…``), HOME as ``~``.

Shown and real output are compared line by line after ``normalized`` masks what changes from run to run
(``VOLATILE``: ids, epoch milliseconds, extract ids, durations, sizes, process ids; the clock's times, ``TIME``;
the working folder) and collapses runs of blanks (column widths follow the values). A time of the data (an event
time, a completeness watermark) is compared as shown. In a shown output a line ``…`` stands for any
number of lines, and ``…`` inside a line for any text. A run id the page shows in an output
(``job_QuickStart_1795408146267``) stands for the one printed in its place, also in the commands after it.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tests.docs.shell import Ran, Shell

MARKER = re.compile(r"^<!--\s*runnable(?::\s*(?P<args>.*?))?\s*-->\s*$")
SETUP = re.compile(r"^<!--\s*runnable-setup(?::\s*(?P<group>\S+))?\s*$")
OUTPUT = re.compile(r"^<!--\s*output\s*-->\s*$")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<info>[^`\s]*)[^`]*$")
DEFAULT_GROUP = "default"
ELLIPSIS = "…"
EXIT_NOTE = re.compile(r"\s*\(exit code (?P<code>\d+)[^)]*\)\s*$")


@dataclass
class Command:
    """One command of a transcript, with the output shown under it and the exit code it is shown to have."""

    text: str
    expected: str
    exit_code: int = 0


@dataclass
class Block:
    """A runnable block: an ``sh`` block (``commands``) with its shown output, or a transcript."""

    page: str
    line: int  # of the block's first line, 1-based, for messages
    text: str
    expected: str | None = None  # an sh block's shown stdout
    transcript: list[Command] | None = None
    skip: str | None = None
    setup: bool = False

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Sequence:
    """The runnable blocks of one page and group, in page order, and the environments they need."""

    page: str
    group: str
    blocks: list[Block] = field(default_factory=list)
    needs: set[str] = field(default_factory=set)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.group}"

    @property
    def skipped(self) -> list[Block]:
        return [block for block in self.blocks if block.skip]


class MarkupError(ValueError):
    """A runnable marker that cannot be read, naming the page and line."""


def pages(repo: Path) -> list[Path]:
    """The pages whose runnable examples run: README.md and every page of the docs site."""
    return [repo / "README.md", *sorted((repo / "docs").rglob("*.md"))]


def all_sequences(repo: Path) -> list[Sequence]:
    """The runnable sequences of every page, named by the page's path in the repository."""
    found = []
    for page in pages(repo):
        found += sequences(str(page.relative_to(repo)), page.read_text())
    return found


def marker_options(args: str, where: str) -> tuple[str, dict[str, str]]:
    """The group and the ``key=value`` options of a marker's arguments."""
    try:
        words = shlex.split(args or "")
    except ValueError as error:
        raise MarkupError(f"{where}: the runnable marker does not parse: {error}") from None
    group, options = DEFAULT_GROUP, {}
    for i, word in enumerate(words):
        key, equals, value = word.partition("=")
        if equals:
            if key not in ("needs", "skip"):
                raise MarkupError(f"{where}: unknown runnable option {key!r} (needs=…, skip=…)")
            options[key] = value
        elif i == 0:
            group = word
        else:
            raise MarkupError(f"{where}: a runnable marker names one group, then options: {args!r}")
    return group, options


def _fenced(lines: list[str], start: int, where: str) -> tuple[str, str, int]:
    """The info string and text of the fenced block opening at ``lines[start]``, and the line after it."""
    opening = FENCE.match(lines[start])
    if not opening:
        raise MarkupError(f"{where}: a runnable marker must stand right above a fenced block")
    fence = opening.group("fence")
    for end in range(start + 1, len(lines)):
        if lines[end].strip() == fence:
            return opening.group("info"), "".join(line + "\n" for line in lines[start + 1:end]), end + 1
    raise MarkupError(f"{where}: the fenced block is not closed")


def _transcript(text: str) -> list[Command]:
    commands: list[Command] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line[2:], ""))
        elif commands:
            note = EXIT_NOTE.search(line)
            if note:
                commands[-1].exit_code = int(note.group("code"))
                line = line[:note.start()]
                if not line.strip():
                    continue
            commands[-1].expected += line + "\n"
    return commands


def sequences(page: str, markdown: str) -> list[Sequence]:
    """The runnable sequences of one page, in the order their first blocks appear."""
    lines = markdown.splitlines()
    found: dict[str, Sequence] = {}
    i = 0
    while i < len(lines):
        where = f"{page}:{i + 1}"
        setup = SETUP.match(lines[i])
        if setup:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "-->"), None)
            if end is None:
                raise MarkupError(f"{where}: runnable-setup is not closed by a line '-->'")
            group = setup.group("group") or DEFAULT_GROUP
            sequence = found.setdefault(group, Sequence(page, group))
            text = "".join(line + "\n" for line in lines[i + 1:end])
            sequence.blocks.append(Block(page, i + 2, text, setup=True))
            i = end + 1
            continue
        marker = MARKER.match(lines[i])
        if not marker:
            i += 1
            continue
        group, options = marker_options(marker.group("args") or "", where)
        info, text, i = _fenced(lines, i + 1, where)
        block = Block(page, i - text.count("\n"), text, skip=options.get("skip"))
        if text.lstrip().startswith("$ "):
            block.transcript = _transcript(text)
        elif info not in ("sh", "bash", "shell") and not block.skip:
            raise MarkupError(f"{where}: a runnable block is ```sh (or a transcript of '$ ' lines), not ```{info}")
        else:
            after = i
            while after < len(lines) and not lines[after].strip():
                after += 1
            if after < len(lines) and OUTPUT.match(lines[after]):
                _, block.expected, i = _fenced(lines, after + 1, f"{page}:{after + 1}")
        sequence = found.setdefault(group, Sequence(page, group))
        sequence.needs |= {need for need in options.get("needs", "").split(",") if need}
        sequence.blocks.append(block)
    for sequence in found.values():
        if all(block.setup for block in sequence.blocks):
            raise MarkupError(f"{page}: runnable-setup for {sequence.group!r}, which has no runnable block")
    return list(found.values())


# --- comparing a shown output with the real one ---------------------------------------------------------------

# What changes from run to run, replaced on both sides before comparing (in this order: ids before times). A page
# shows these as any real run printed them; a value it must not pin otherwise is written … (see ``matches``).
VOLATILE = [
    # a task's and a run's ids: job_<name>_<start ms>[_<n>]
    (re.compile(r"\btask_(\w+?)_\d{13}_(\d+)\b"), r"task_\1_<id>_\2"),
    (re.compile(r"\bjob_(\w+?)_\d{13}\b"), r"job_\1_<id>"),
    # a startpoint's id: 12 hex digits, at least one a letter (a 12-digit number stays)
    (re.compile(r"\b(?=[0-9]*[a-f])[0-9a-f]{12}\b"), "<id>"),
    # yyyyMMddHHmmss: a publish's extract id (the <id>_append folders)
    (re.compile(r"\b20\d{12}(?=_|\b)"), "<stamp>"),
    # epoch milliseconds: a file's modification time (the file source's watermark)
    (re.compile(r"\b1\d{12}\b"), "<ms>"),
    # durations: 1.2 s, (1.202 s), 35 ms
    (re.compile(r"\(\d+(?:\.\d+)? s\)|\b\d+(?:\.\d+)? m?s\b"), "<duration>"),
    # sizes: bytes 19,204, 3.5 MB
    (re.compile(r"\b(bytes|size) \d[\d,]*\b|\b\d[\d,.]* ?(?:bytes|B|KB|MB|GB|KiB|MiB|GiB)\b"), "<size>"),
    # the machine and process a run ran on: on vm (pid 31313)
    (re.compile(r"\bon \S+ \(pid \d+\)|\bpid \d+\b"), "<pid>"),
]


# An ISO 8601 time to the minute or finer. One printed within RECENT of the comparison is the clock's (a run's start
# and end, when a startpoint was set), shown as any time; an older one is data (an event time, a startpoint's time,
# a completeness watermark) and must be the time shown.
TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?\b")
RECENT = dt.timedelta(hours=6)


def _clock_time(match: re.Match) -> str:
    try:
        when = dt.datetime.fromisoformat(match.group(0).replace("Z", "+00:00"))
    except ValueError:
        return match.group(0)
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    now = dt.datetime.now(dt.timezone.utc)
    return "<time>" if now - RECENT <= when <= now + dt.timedelta(minutes=10) else match.group(0)


def normalized(output: str, folders: dict[str, str] | None = None, printed: bool = False) -> list[str]:
    """The lines of ``output`` with volatile values masked (``printed``: the clock's times too), ``folders`` (a
    real path: how a reader sees it) replaced, and runs of blanks collapsed."""
    lines = []
    for line in output.strip("\n").splitlines():
        for path, shown in (folders or {}).items():
            line = line.replace(path, shown)
        if printed:
            line = TIME.sub(_clock_time, line)
        for pattern, replacement in VOLATILE:
            line = pattern.sub(replacement, line)
        lines.append(re.sub(r"\s+", " ", line).strip())
    return lines


def _literal(text: str) -> str:
    """``text`` as a pattern, each time in it matching itself or a clock's time."""
    pieces, end = [], 0
    for match in TIME.finditer(text):
        pieces += [re.escape(text[end:match.start()]), f"(?:{re.escape(match.group(0))}|<time>)"]
        end = match.end()
    return "".join(pieces) + re.escape(text[end:])


def _line_pattern(expected: str) -> re.Pattern:
    return re.compile(".*".join(_literal(part) for part in expected.split(ELLIPSIS)) + r"\Z")


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` line for line, a line ``…`` standing for any number of lines."""
    patterns = [None if line == ELLIPSIS else _line_pattern(line) for line in expected]
    reachable = {0}  # how many actual lines the expected lines so far can account for
    for pattern in patterns:
        if pattern is None:
            reachable = set(range(min(reachable), len(actual) + 1)) if reachable else set()
        else:
            reachable = {n + 1 for n in reachable if n < len(actual) and pattern.match(actual[n])}
    return len(actual) in reachable


RUN_ID = re.compile(r"\bjob_\w+?_\d{13}\b")


def learn_ids(expected: str, printed: str, folders: dict[str, str], ids: dict[str, str]) -> None:
    """Add to ``ids`` the run ids a page shows (``job_QuickStart_1795408146267``) and the ones printed at the same
    places: each shown line with ids takes those of the first printed line it matches."""
    printed_lines = printed.splitlines()
    masked = normalized(printed, folders, printed=True)
    for line in expected.splitlines():
        shown = RUN_ID.findall(line)
        if shown:
            pattern = _line_pattern(normalized(line, folders)[0])
            found = next((printed_lines[n] for n, real in enumerate(masked) if pattern.match(real)), None)
            if found is not None:
                ids.update(zip(shown, RUN_ID.findall(found), strict=False))


def with_ids(command: str, ids: dict[str, str]) -> str:
    """``command`` with the run ids the page showed earlier replaced by the real ones (``learn_ids``)."""
    return RUN_ID.sub(lambda match: ids.get(match.group(0), match.group(0)), command)


def difference(expected: list[str], actual: list[str]) -> str:
    return "\n".join(difflib.unified_diff(expected, actual, "shown", "printed", lineterm=""))


# --- running a sequence -------------------------------------------------------------------------------------------

def _compare(block: Block, what: str, expected: str, ran: Ran, folders: dict[str, str],
             ids: dict[str, str]) -> str | None:
    shown, printed = normalized(expected, folders), normalized(ran.stdout, folders, printed=True)
    if matches(shown, printed):
        learn_ids(expected, ran.stdout, folders, ids)
        return None
    return (f"{block.where}: {what} printed other than the page shows (volatile values masked):\n"
            f"{difference(shown, printed)}\n--- stderr\n{ran.stderr[-3000:]}")


def with_provided(text: str, provided: dict[str, str]) -> str:
    """``text`` with the test's values exported again right after each ``export`` line that sets one of them: a
    block's placeholders (``export PGPASSWORD=...``) stand for the test's servers."""
    if not provided:
        return text
    again = "export " + " ".join(f"{name}={shlex.quote(value)}" for name, value in provided.items())
    lines = []
    for line in text.splitlines():
        lines.append(line)
        if re.match(r"\s*export\s", line) and any(re.search(rf"\b{name}=", line) for name in provided):
            lines.append(again)
    return "".join(line + "\n" for line in lines)


def run_sequence(sequence: Sequence, shell: Shell, folders: dict[str, str],
                 provided: dict[str, str] | None = None) -> list[str]:
    """Run the sequence's blocks in order in ``shell``: the differences between shown and printed outputs
    (an empty list when every output is as shown). A failing command raises AssertionError naming its block.
    ``provided``: variables the test gives (``with_provided``)."""
    differences = []
    ids: dict[str, str] = {}  # the run ids the page shows: the ones this run printed in their places
    for block in sequence.blocks:
        if block.skip:
            continue
        if block.transcript is None:
            ran = shell.run(with_provided(with_ids(block.text, ids), provided or {}))
            if ran is None:
                stdout, stderr = shell.output_of_last()
                raise AssertionError(f"{block.where}: a command of this block failed:\n{block.text}--- stdout\n"
                                     f"{stdout[-3000:]}--- stderr\n{stderr[-3000:]}")
            if block.expected is not None:
                differences.append(_compare(block, "the block", block.expected, ran, folders, ids))
            continue
        for command in block.transcript:
            ran = shell.run(with_ids(command.text, ids) + "\n", errexit=False)
            assert ran is not None, f"{block.where}: the shell ended at `{command.text}`"
            assert ran.exit_code == command.exit_code, (
                f"{block.where}: `{command.text}` exited {ran.exit_code}, the page shows "
                f"{command.exit_code}:\n--- stdout\n{ran.stdout[-3000:]}--- stderr\n{ran.stderr[-3000:]}")
            differences.append(_compare(block, f"`{command.text}`", command.expected, ran, folders, ids))
    return [found for found in differences if found]
