"""Bad input: each case exits non-zero with a one-line cause naming the file or key, and changes no state."""

import subprocess
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.environment import missing
from tests.support.jobs import Job, run_local_process, write_csv


def snapshot(root: Path) -> dict[str, bytes]:
    """The state files under ``root``; the run history beside them (``_history``) records refused runs too."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "_history" not in p.relative_to(root).parts}


@pytest.fixture
def committed_job(tmp_path):
    """A job with one committed run, and a new file waiting for the next run."""
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    assert run_local_process(job).returncode == 0
    write_csv(job.data / "b.csv", 101)
    return job


def assert_refused(job: Job, result, code: int, *needles: str) -> None:
    assert result.returncode == code, (result.stdout, result.stderr)
    text = result.stderr.strip().splitlines()[-1] if code == 2 else result.stdout
    for needle in needles:
        assert needle in text, (needle, text)
    assert "Traceback" not in result.stderr


def test_malformed_job_file(committed_job):
    job = committed_job
    before = snapshot(job.state)
    job.file.write_text(job.file.read_text() + "=false\n")
    result = run_local_process(job)
    assert_refused(job, result, 2, f"{job.file}:", "has an empty key (`=false`)")
    assert snapshot(job.state) == before


def test_unknown_class(committed_job):
    job = committed_job
    before = snapshot(job.state)
    job.file.write_text(job.file.read_text().replace("TypeCastConverter", "TypeCastConvertr"))
    assert_refused(job, run_local_process(job), 2, "converter.classes=gobblin_py.transforms.converters.cast.TypeCastConvertr", "TypeCastConverter")
    assert snapshot(job.state) == before


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage", "flip"])
def test_corrupt_state_file(committed_job, damage):
    job = committed_job
    current = job.state / "Orders" / "current.jst"
    data = current.read_bytes()
    current.write_bytes({"truncate": data[: len(data) // 2], "empty": b"", "garbage": b"not a sequence file",
                         "flip": data[:-20] + bytes(b ^ 0xFF for b in data[-20:])}[damage])
    before = snapshot(job.state)
    assert_refused(job, run_local_process(job), 2, str(current))
    assert snapshot(job.state) == before and job.published_ids() == list(range(1, 41))


def test_corrupt_commit_sequence(committed_job):
    job = committed_job
    pending = job.state / "_commit_sequences" / "Orders" / "default_dataset_urn.json"
    pending.parent.mkdir(parents=True, exist_ok=True)
    pending.write_text('{"version": 1, "steps": [')
    before = snapshot(job.state)
    assert_refused(job, run_local_process(job), 2, str(pending), "corrupt commit sequence")
    assert snapshot(job.state) == before


def test_output_directory_that_cannot_be_written(committed_job):
    job = committed_job
    blocker = job.root / "blocker"
    blocker.write_text("a file where a directory should be")
    job.file.write_text(job.file.read_text().replace(f"writer.output.dir={job.root}/output", f"writer.output.dir={blocker}/out"))
    before = snapshot(job.state)
    assert_refused(job, run_local_process(job), 1, "nothing published, state kept", "NotADirectoryError", str(blocker))
    assert snapshot(job.state) == before and job.published_ids() == list(range(1, 41))


@pytest.fixture
def tiny_disk(tmp_path):
    mount = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        missing(f"cannot mount a tmpfs to simulate a full disk here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk(tmp_path, tiny_disk):
    job = Job(tmp_path, extra=f"writer.staging.dir={tiny_disk}/staging\nsource.filebased.file.pattern=*.parquet\nconverter.classes=\n")
    pq.write_table(pa.table({"order_id": pa.array(range(1, 11), pa.int64()), "noise": [""] * 10}),
                   job.data / "small.parquet")
    assert run_local_process(job).returncode == 0
    noise = pa.array([uuid.uuid4().hex * 4 for _ in range(20_000)])  # ~2.5 MB that does not compress
    pq.write_table(pa.table({"order_id": pa.array(range(100, 20_100), pa.int64()), "noise": noise}), job.data / "big.parquet",
                   compression="none")
    before = snapshot(job.state)
    assert_refused(job, run_local_process(job), 1, "nothing published, state kept", "No space left on device")
    assert snapshot(job.state) == before and job.published_ids() == list(range(1, 11))


def test_full_disk_under_the_state_store(tmp_path, tiny_disk):
    """The lock and the state go to a full disk: one line naming the file, no temporary file left behind."""
    filler = tiny_disk / "filler"
    job = Job(tmp_path, extra=f"state.store.dir={tiny_disk}/state\n")
    write_csv(job.data / "a.csv", 1)
    with open(filler, "wb", buffering=0) as out:  # leave the disk completely full
        try:
            while True:
                out.write(b"\0" * 4096)
        except OSError:
            pass
    result = run_local_process(job)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("gpy: error:")]
    assert len(lines) == 1 and "No space left on device" in lines[0] and str(tiny_disk / "state") in lines[0], lines
    left = [p.name for p in tiny_disk.rglob("*") if p.is_file() and p != filler]
    assert left == [], left  # no empty lock file, no lock temp file, no half state file
    assert job.published_ids() == []
    filler.unlink()
    assert run_local_process(job).returncode == 0 and job.published_ids() == list(range(1, 41))
