"""The walkthrough of docs/getting-started/first-job-s3.md ("A first real job: forked, incremental, on S3"), typed as a new user types it.

The page marks its blocks ``<!-- runnable: walkthrough needs=s3 -->``: tests/docs/runnable.py reads them, and
they run in order in one of its bash sessions (``set -euo pipefail``: a failing command ends the walk), with the
installed ``gpy`` on PATH, HOME a fresh folder and S3 the test session's S3 API server (tests/docs runs every other
marked sequence; this one runs here, beside the server). The install block is marked skipped: the test's own
environment is that installation, whose extras it checks. The block that sets the S3 variables runs as written,
and the server's endpoint, credentials and a new bucket are exported right after each line that sets them.

After each block that runs a ``gpy`` command, the check registered for that command (``CHECKS``) looks at what it
did: the rows published on S3 per fork branch, the state it saved, what it printed. A block's ``<!-- output -->``
is its expected stdout, compared by the runner's rules (ids, times, durations and modification-time watermarks
masked) once the bucket's name is set aside. A step added to the walk adds its check here.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from tests.docs.runnable import Block, Sequence, all_sequences, difference, matches, normalized, with_provided
from tests.docs.shell import Shell
from tests.support.paths import REPO
from tests.support.s3 import ACCESS_KEY, SECRET_KEY

# the variables the settings block sets, replaced by the test server's
S3_VARIABLES = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "BUCKET"}


def walkthrough() -> Sequence:
    """The walkthrough, as the runner reads it, on whichever page holds it (README.md or a page of docs/)."""
    found = [sequence for sequence in all_sequences(REPO) if sequence.group == "walkthrough"]
    assert len(found) == 1, f"one walkthrough (<!-- runnable: walkthrough needs=s3 --> blocks), not {len(found)}"
    assert found[0].needs == {"s3"}, found[0].needs
    return found[0]


# --- the walk's state, as the checks see it ----------------------------------------------------------------------

@dataclass
class Step:
    block: Block
    command: list[str]  # the block's gpy command, split as bash splits it
    stdout: str
    stderr: str
    cwd: Path


@dataclass
class Walk:
    server: object
    bucket: str
    env: dict[str, str]
    runs: list[dict] = field(default_factory=list)  # after each `gpy run`: its job id, rows and the saved state
    pulled: set[Path] = field(default_factory=set)  # source files pulled so far

    def job(self, step: Step) -> tuple[Path, dict[str, str]]:
        """The job file a command names, and its keys (the walk's job file is plain key=value lines)."""
        names = [arg for arg in step.command if arg.endswith((".pull", ".job", ".conf"))]
        assert len(names) == 1, f"{step.block.where}: which job file does {step.command} run?"
        path = step.cwd / names[0]
        keys = {}
        for line in path.read_text().splitlines():
            if line.strip() and not line.lstrip().startswith(("#", "!")):
                key, _, value = line.partition("=")
                keys[key.strip()] = value.strip()
        return path, keys

    def gpy(self, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        """A gpy command the test runs itself, in the walk's environment."""
        result = subprocess.run(["gpy", *args], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"gpy {' '.join(args)}: exit {result.returncode}\n{result.stderr}"
        return result

    def state(self, step: Step) -> dict:
        path, _ = self.job(step)
        shown = json.loads(self.gpy("state", "show", str(path), "--json", cwd=step.cwd).stdout)
        assert len(shown["datasets"]) == 1, shown
        return shown["datasets"][0]


def source_table(files) -> pa.Table:
    return pa.concat_tables([pa_csv.read_csv(path) for path in sorted(files)])


def newest_event(table: pa.Table, column: str) -> str:
    times = pc.cast(table.column(column), pa.timestamp("ms", "UTC"))
    return pc.max(times).as_py().strftime("%Y-%m-%dT%H:%M:%S.000Z")


def published_rows(walk: Walk, folder: str) -> tuple[str, pa.Table]:
    """The rows of every file under a published folder on S3, and the files' format."""
    fs = walk.server.filesystem()
    files = sorted(f for f in fs.find(folder.removeprefix("s3://")) if not Path(f).name.startswith("_gpy_"))
    assert files, f"nothing published under {folder}"
    formats = {Path(name).suffix for name in files}
    assert len(formats) == 1, f"{folder} holds files of several formats: {files}"
    suffix = formats.pop()
    read = {".parquet": lambda data: pq.read_table(io.BytesIO(data)),
            ".json": lambda data: pa_json.read_json(io.BytesIO(data))}[suffix]
    return suffix, pa.concat_tables([read(fs.cat_file(name)) for name in files])


# --- the checks, one per gpy command of the walk ----------------------------------------------------------------

def check_run(walk: Walk, step: Step) -> None:
    """A run pulls the source files no earlier run pulled, and each branch's folder holds every row exactly once."""
    _, keys = walk.job(step)
    source = step.cwd / keys["source.filebased.data.directory"]
    files = set(source.glob(keys.get("source.filebased.file.pattern", "*")))
    new = files - walk.pulled
    assert new, f"{step.block.where}: the walk runs the job with no new file to pull"
    everything = source_table(files)
    new_rows = source_table(new).num_rows
    assert re.search(rf'dataset "" \(default\): COMMITTED .*records extracted {new_rows} '
                     rf'written {new_rows * int(keys["fork.branches"])} ', re.sub(r"\s+", " ", step.stdout)), \
        step.stdout

    # one published folder per branch: the Parquet one with every column, the JSON one with the projection
    folders = re.findall(r"^\s*published (s3://\S+)$", step.stdout, re.MULTILINE)
    assert len(folders) == int(keys["fork.branches"]) == 2, step.stdout
    assert all(folder.startswith(f"s3://{walk.bucket}/") for folder in folders), folders
    branches = dict(published_rows(walk, folder) for folder in folders)
    assert set(branches) == {".parquet", ".json"}, branches.keys()
    source_ids = sorted(everything.column("order_id").to_pylist())
    assert len(set(source_ids)) == len(source_ids) == everything.num_rows
    lake, export = branches[".parquet"], branches[".json"]
    assert lake.column_names == everything.column_names
    assert lake.schema.field("order_id").type == pa.int64()
    assert lake.schema.field("ordered_at").type == pa.timestamp("ms", "UTC")
    assert sorted(lake.column("order_id").to_pylist()) == source_ids  # all of them, none twice
    assert export.column_names == keys["converter.projection.fields.1"].split(",")
    assert sorted(export.column("order_id").to_pylist()) == source_ids
    # the task files of the run are gone from the bucket, and the job's lock is released
    fs = walk.server.filesystem()
    assert not fs.find(keys["task.data.root.dir"].replace("${env:BUCKET}", walk.bucket).removeprefix("s3://"))
    state_dir = keys["state.store.dir"].replace("${env:BUCKET}", walk.bucket).removeprefix("s3://")
    assert not fs.exists(f"{state_dir}/{keys['job.name']}.lock")

    state = walk.state(step)
    job_id = re.search(r"\bjob_\w+_\d{13}\b", step.stdout).group(0)
    assert state["job_id"] == job_id and state["state"] == "COMMITTED"
    [task] = state["tasks"]
    assert task["records_extracted"] == new_rows
    if walk.runs:  # incremental: this run started where the previous one ended, and moved on
        previous = walk.runs[-1]["state"]["tasks"][0]["actual_high_watermark"]["value"]
        assert task["low_watermark"]["value"] == previous
        assert task["actual_high_watermark"]["value"] > previous
    else:
        assert task["low_watermark"]["value"] == 0
    walk.runs.append({"job_id": job_id, "state": state, "source": everything})
    walk.pulled = files


def check_state_show(walk: Walk, step: Step) -> None:
    """The dataset is committed by the last run, with the watermark moved from the run before."""
    assert len(walk.runs) >= 2, "the walk shows the state after an incremental run"
    last = walk.runs[-1]
    task = last["state"]["tasks"][0]
    text = re.sub(r"\s+", " ", step.stdout)
    assert f'dataset "" (default) last run {last["job_id"]} COMMITTED' in text, step.stdout
    assert (f'{task["task_id"]} COMMITTED {task["low_watermark"]["value"]} {task["expected_high_watermark"]["value"]} '
            f'{task["actual_high_watermark"]["value"]} {task["records_extracted"]} {task["records_written"]}') in text
    assert task["low_watermark"]["value"] == walk.runs[-2]["state"]["tasks"][0]["actual_high_watermark"]["value"]
    assert f"complete up to {newest_event(last['source'], 'ordered_at')}" in text


def check_state_datasets(walk: Walk, step: Step) -> None:
    last = walk.runs[-1]
    assert re.sub(r"\s+", " ", step.stdout.strip()) == (
        f'"" (default) {last["job_id"]} COMMITTED complete up to {newest_event(last["source"], "ordered_at")}')


def check_state_watermark(walk: Walk, step: Step) -> None:
    """The completeness watermark is the newest event time pulled; --at a time before it says yes (exit 0)."""
    newest = newest_event(walk.runs[-1]["source"], "ordered_at")
    assert f"complete up to {newest}" in step.stdout
    at = step.command[step.command.index("--at") + 1]
    assert at.replace("Z", ".000Z") < newest  # the README asks about a complete day: exit code 0
    assert step.stdout.strip().splitlines()[-1] == f"complete up to {at.replace('Z', '.000Z')}: yes"


def check_history(walk: Walk, step: Step) -> None:
    """Both runs of the walk, newest first, succeeded with exit 0, each having read what it pulled and written it
    once per branch."""
    lines = step.stdout.splitlines()
    header = next(line for line in lines if line.startswith("RUN ID"))
    starts = [match.start() for match in re.finditer(r"RUN ID|\S+", header)]
    names = [header[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
    rows = [{name: line[a:b].strip() for name, a, b in zip(names, starts, [*starts[1:], None])}
            for line in lines if re.match(r"job_\w+_\d{13}\s", line)]
    assert [row["RUN ID"] for row in rows] == [run["job_id"] for run in reversed(walk.runs)], step.stdout
    for row, run in zip(rows, reversed(walk.runs)):
        read = run["state"]["tasks"][0]["records_extracted"]
        assert (row["STATUS"], row["EXIT"], row["READ"]) == ("SUCCEEDED", "0", str(read)), step.stdout
        assert row["WRITTEN"] == str(2 * read), step.stdout  # two branches


# The walk's gpy commands, each with its check.
CHECKS = {
    "gpy history": check_history,
    "gpy run": check_run,
    "gpy state show": check_state_show,
    "gpy state datasets": check_state_datasets,
    "gpy state watermark": check_state_watermark,
}


def gpy_command(block: Block) -> list[str] | None:
    commands = [shlex.split(line, comments=True) for line in block.text.splitlines() if line.startswith("gpy ")]
    assert len(commands) <= 1, f"{block.where}: one gpy command per block, so its output is its own"
    return commands[0] if commands else None


def check_for(command: list[str], where: str):
    matching = [name for name in CHECKS if command[:len(name.split())] == name.split()]
    assert matching, f"{where}: `{shlex.join(command)}` has no check in this test: add one to CHECKS"
    return CHECKS[max(matching, key=len)]


def settings_block(blocks: list[Block]) -> tuple[int, str]:
    """The block that sets the S3 variables, and the bucket name the README shows."""
    found = [i for i, block in enumerate(blocks) if "export AWS_ENDPOINT_URL=" in block.text]
    assert len(found) == 1, "the walkthrough has one block setting AWS_ENDPOINT_URL, the S3 endpoint"
    block = blocks[found[0]]
    exported = set(re.findall(r"^export (\w+)=", block.text, re.MULTILINE))
    assert exported == S3_VARIABLES, f"{block.where}: the test stands in for {S3_VARIABLES}, not {exported}"
    return found[0], re.search(r"^export BUCKET=(\S+)", block.text, re.MULTILINE).group(1)


def check_install(block: Block) -> None:
    """The extras the install block names exist, and this environment, which stands in for it, has what they bring."""
    extras = re.findall(r"pip install -e '\.\[([\w,-]+)\]'", block.text)
    assert extras, f"{block.where}: the install block installs this repository with its extras"
    provided = metadata.metadata("gobblin_py").get_all("Provides-Extra")
    for extra in extras[0].split(","):
        assert extra in provided, f"{block.where}: gobblin_py has no extra {extra!r}"
        for requirement in metadata.requires("gobblin_py"):
            if re.search(rf"extra\s*==\s*[\"']{extra}[\"']", requirement):
                name = re.match(r"[\w.-]+", requirement).group(0)
                assert metadata.version(name), f"{requirement} is not installed"


def test_the_readme_walkthrough_runs_as_written(tmp_path, s3_server, bucket):
    sequence = walkthrough()
    installs = sequence.skipped
    assert len(installs) == 1 and "pip install" in installs[0].text, "the walkthrough's one skipped block installs"
    check_install(installs[0])
    blocks = [block for block in sequence.blocks if not block.skip]
    settings, readme_bucket = settings_block(blocks)

    home = tmp_path / "home"
    home.mkdir()
    bin_dir = Path(sys.executable).parent
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("AWS_", "FSSPEC_")) and name not in ("BUCKET", "VIRTUAL_ENV")}
    env.update(HOME=str(home), PATH=f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", AWS_EC2_METADATA_DISABLED="true")
    assert shutil.which("gpy", path=env["PATH"]) == str(bin_dir / "gpy"), "the installed gpy is first on PATH"
    test_values = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                   "AWS_ENDPOINT_URL": s3_server.endpoint, "BUCKET": bucket}
    walk = Walk(s3_server, bucket, {**env, **test_values})

    shell = Shell(tmp_path / "blocks", home, env)
    used, compared = set(), 0
    try:
        for number, block in enumerate(blocks):
            command = gpy_command(block)
            check = check_for(command, block.where) if command else None
            ran = shell.run(with_provided(block.text, test_values) if number == settings else block.text)
            if ran is None:
                stdout, stderr = shell.output_of_last()
                raise AssertionError(f"{block.where}: the walk stopped in this block:\n{block.text}"
                                     f"--- stdout\n{stdout}--- stderr\n{stderr}")
            step = Step(block, command or [], ran.stdout, ran.stderr, ran.cwd)
            assert SECRET_KEY not in step.stdout + step.stderr, f"{block.where}: the secret key was printed"
            if block.expected is not None:
                folders = {f"s3://{bucket}/": f"s3://{readme_bucket}/"}
                shown, printed = normalized(block.expected, folders), normalized(step.stdout, folders, printed=True)
                assert matches(shown, printed), (f"{block.where}: the output shown differs from the real "
                                                 f"one:\n{difference(shown, printed)}")
                compared += 1
            if check:
                check(walk, step)
                used.add(check)
    finally:
        shell.close()

    assert used == set(CHECKS.values()), f"steps of the walk not run: {set(CHECKS.values()) - used}"
    assert len(walk.runs) >= 2, "the walk runs its job twice: the second run pulls only what is new"
    assert compared >= len(walk.runs), "the README shows what each run prints"
