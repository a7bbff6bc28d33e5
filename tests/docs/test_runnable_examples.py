"""Every runnable example of README.md and docs/ runs as written, and prints what the page shows.

The markers and the comparison are described in tests/docs/runnable.py. One test per page and sequence
(``README.md:sqlite``), in a fresh folder laid out as a clone of the repository. What a sequence ``needs=``:

- ``postgres``: a fresh database on the session's PostgreSQL server, given as libpq's variables (``PGHOST``,
  ``PGPORT``, ``PGUSER``, ``PGPASSWORD``, ``PGDATABASE``), exported again right after a block's ``export`` line
  that sets one of them, so the placeholders it sets (``PGPASSWORD=...``) stand for the server's;
- ``kafka``: a free loopback port for the sample broker the block starts (``KAFKA_SAMPLE_PORT``, which
  scripts/kafka_sample.py reads), and the clone's job files' ``127.0.0.1:9092`` moved to it;
- ``wikipedia``: a free loopback port for the local MediaWiki API the block starts (``WEB_API_PORT``, which
  ``python -m tests.sources.web_api`` reads), the blocks' ``127.0.0.1:8089`` moved to it, and Gobblin's job files
  in ``GOBBLIN_CORPUS`` (the corpus beside the clone, where the tests of Gobblin's jobs find it: skipped without).

After a sequence ran, ``AFTER`` checks what its page says it left behind, where the page shows no output.
The S3 walkthrough (``needs=s3``) is run by tests/s3/test_readme_walkthrough.py, beside the S3 server it needs,
with the runner of this folder and its own checks of what each command did.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import sys
from pathlib import Path

import fastavro
import pyarrow.parquet as pq
import pytest

from tests.support.paths import CORPUS, NEEDS_CORPUS, REPO
from tests.docs.runnable import Sequence, all_sequences, run_sequence
from tests.docs.shell import Shell

OWNED_ELSEWHERE = {"s3"}  # needs whose sequences another test runs
NEEDS = {"postgres", "kafka", "wikipedia", *OWNED_ELSEWHERE}


# --- what a sequence's page says it leaves behind, checked after it ran -------------------------------------------

def kafka_events_landed(work: Path, printed: list[str]) -> None:
    """README, Pulling Kafka topics: the first 10,000 events, one not JSON, land in Parquet with the Kafka metadata
    columns, the undecodable one in the error folder; the second run has nothing new (the block produces 10,000
    more after it, for a next run)."""
    published = pq.read_table(work / "work" / "kafka_to_parquet" / "published" / "events")
    assert published.num_rows == 9_999
    assert str(published.schema.field("at").type) == "timestamp[ms, tz=UTC]"
    assert {"kafka_partition", "kafka_offset", "kafka_timestamp"} <= set(published.column_names)
    bad = [json.loads(line) for path in (work / "work" / "kafka_to_parquet" / "errors").glob("*.err")
           for line in path.read_text().splitlines()]
    assert len(bad) == 1 and all(record["topic"] == "events" and record["error"] for record in bad), bad
    assert "nothing new to pull" in printed[0]


def sqlite_tables_landed(work: Path, printed: list[str]) -> None:
    """README, Try it on SQLite: each table's Parquet under work/sqlite/published/examples/shop/<table>/."""
    shop = work / "work" / "sqlite" / "published" / "examples" / "shop"
    landed = {path.name.removesuffix("_full") for path in shop.iterdir() if any(path.rglob("*.parquet"))}
    assert landed == {"orders", "customers", "products"}, landed


def wikipedia_revisions_landed(work: Path, printed: list[str]) -> None:
    """README, Gobblin's getting-started example: the first run pulls LinkedIn's revisions 103-107 and the
    Sandbox's 201-210, the second the Sandbox's other 4 (no new revision within the minute), as Avro in a folder
    per page under work/job-output/…/WikipediaOutput/<run>_append/."""
    output = work / "work" / "job-output" / "org" / "apache" / "gobblin" / "example" / "wikipedia" / "WikipediaOutput"
    revisions: dict[str, list[int]] = {}
    for path in sorted(output.glob("*_append/*/*.avro")):
        with open(path, "rb") as stream:
            rows = [row for row in fastavro.reader(stream) if isinstance(row, dict)]  # a record is a dict
            revisions.setdefault(path.parent.name, []).extend(int(row["revid"]) for row in rows)
    assert {page: sorted(ids) for page, ids in revisions.items()} == {
        "LinkedIn": list(range(103, 108)), "Wikipedia_Sandbox": list(range(201, 215))}, revisions


# by group name, whichever page the sequence is on
AFTER = {"kafka": kafka_events_landed, "sqlite": sqlite_tables_landed, "wikipedia": wikipedia_revisions_landed}


def checked_sequences() -> list[Sequence]:
    found = all_sequences(REPO)
    for sequence in found:
        unknown = sequence.needs - NEEDS
        assert not unknown, f"{sequence.id}: needs {sorted(unknown)}, which this test cannot give ({sorted(NEEDS)})"
    groups = [sequence.group for sequence in found]
    for group in AFTER:
        assert groups.count(group) == 1, f"AFTER checks the sequence {group!r}: the pages have {groups.count(group)}"
    return found


def _runs(sequence: Sequence) -> bool:
    """Whether any block of ``sequence`` runs: one whose every block is marked skip (each with its reason, which the
    runner requires) is shown, not run, and gets no test."""
    return len(sequence.skipped) < len([block for block in sequence.blocks if not block.setup])


SEQUENCES = [sequence for sequence in checked_sequences()
             if not sequence.needs & OWNED_ELSEWHERE and _runs(sequence)]


def _params(with_postgres: bool) -> list:
    return [pytest.param(sequence, id=sequence.id, marks=[NEEDS_CORPUS] if "wikipedia" in sequence.needs else [])
            for sequence in SEQUENCES if ("postgres" in sequence.needs) == with_postgres]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clone(folder: Path) -> Path:
    """A folder laid out as a user's clone of the repository, with gpy installed in its .venv."""
    folder.mkdir()
    for name in ("jobs", "conf", "scripts"):
        shutil.copytree(REPO / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (folder / "tests").symlink_to(REPO / "tests")
    return folder


def environment(home: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AWS_", "PG", "GPY_", "KAFKA_", "WEB_API_")) and name != "VIRTUAL_ENV"}
    env.update(HOME=str(home), PATH=f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}")
    return env


def stop_sample_broker(work: Path) -> None:
    """The sample broker a sequence started and did not stop (it failed first): the broker runs in a session of
    its own, out of the shell's process group."""
    pid_file = work / "work" / "kafka-broker" / "broker.pid"
    if pid_file.exists():
        try:
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
        except (ProcessLookupError, ValueError, IndexError):
            pass


def run(sequence: Sequence, tmp_path: Path, provided: dict[str, str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    work = clone(tmp_path / "clone")
    env = {**environment(home), **provided}
    if "kafka" in sequence.needs:
        port = free_port()
        env["KAFKA_SAMPLE_PORT"] = str(port)
        for job in (work / "jobs").glob("*.pull"):
            job.write_text(job.read_text().replace("127.0.0.1:9092", f"127.0.0.1:{port}"))
    if "wikipedia" in sequence.needs:
        port = free_port()
        env.update(WEB_API_PORT=str(port), GOBBLIN_CORPUS=str(CORPUS))
        sequence = dataclasses.replace(sequence, blocks=[
            dataclasses.replace(block, text=block.text.replace("127.0.0.1:8089", f"127.0.0.1:{port}"))
            for block in sequence.blocks])
    shell = Shell(tmp_path / "blocks", work, env)
    try:
        differences = run_sequence(sequence, shell, {str(work) + "/": "", str(home): "~"}, provided)
    finally:
        shell.close()
        stop_sample_broker(work)
    assert not differences, "\n\n".join(differences)
    if sequence.group in AFTER:
        printed = [path.read_text() for path in sorted((tmp_path / "blocks").glob("*.stdout"),
                                                        key=lambda path: int(path.stem))]
        AFTER[sequence.group](work, printed)


@pytest.mark.parametrize("sequence", _params(with_postgres=False))
def test_runnable_example(sequence: Sequence, tmp_path: Path) -> None:
    run(sequence, tmp_path, {})


@pytest.mark.parametrize("sequence", _params(with_postgres=True))
def test_runnable_example_on_postgres(sequence: Sequence, tmp_path: Path, pg_db) -> None:
    run(sequence, tmp_path, {"PGHOST": pg_db.host, "PGPORT": str(pg_db.port), "PGUSER": pg_db.user,
                             "PGPASSWORD": pg_db.password, "PGDATABASE": pg_db.name})
