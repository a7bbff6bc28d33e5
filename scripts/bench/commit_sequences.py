"""Benchmark: committing many datasets exactly-once (commit sequences) versus at-least-once.

    python scripts/bench/commit_sequences.py [--datasets 10000] [--threads 1,8] [--dir DIR]

Per dataset: one published file and one dataset state, as a run of a many-table job commits them.
- at-least-once: move the file, save the state;
- exactly-once: log the sequence, move the file, save the state, delete the log;
- replay: a next run finding every sequence pending (a crash right after logging) and finishing them.
Each is run in this process on the same machine; ratios are printed so a noisy machine still compares fairly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gobblin_py.runtime.commit.commit_sequence import CommitSequence, CommitSequenceStore, DatasetStateStep  # noqa: E402
from gobblin_py.io.rename_step import FsRenameStep  # noqa: E402
from gobblin_py.sdk.run_states import DatasetState  # noqa: E402
from gobblin_py.sdk.states import Extract, RunningState, TaskState, WorkUnit  # noqa: E402
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval  # noqa: E402
from gobblin_py.store import FsDatasetStateStore  # noqa: E402


def make_state(i: int) -> DatasetState:
    urn = f"db:schema.table_{i:05d}"
    state = DatasetState("Bench", "job_Bench_1", dataset_urn=urn, state=RunningState.COMMITTED, task_count=1)
    unit = WorkUnit.create(Extract.create("append_only", "db", f"table_{i:05d}"),
                           WatermarkInterval.of(LongWatermark(i), LongWatermark(i + 1000)))
    unit.set_prop("dataset.urn", urn)
    task = TaskState("job_Bench_1", f"task_Bench_1_{i}", unit)
    task.set_actual_high_watermark(LongWatermark(i + 1000))
    task.set_prop("writer.records.written", 1000)
    state.add_task_state(task)
    return state


def setup(root: Path, count: int) -> list[tuple[str, str]]:
    files = []
    for i in range(count):
        src = root / "output" / f"t{i:05d}" / "part.parquet"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_bytes(b"x" * 512)
        files.append((str(src), str(root / "final" / f"t{i:05d}" / "part.parquet")))
    return files


def run(mode: str, root: Path, count: int, threads: int) -> float:
    shutil.rmtree(root, ignore_errors=True)
    files = setup(root, count)
    store = FsDatasetStateStore(str(root / "state"))
    sequences = CommitSequenceStore.for_job({}, store)
    states = [make_state(i) for i in range(count)]

    def one(i: int) -> None:
        src, dst = files[i]
        state = states[i]
        if mode == "at-least-once":
            FsRenameStep(src, dst).execute()
            store.persist_dataset_state(state)
        else:
            sequence = CommitSequence("Bench", state.dataset_urn, state.job_id,
                                      [FsRenameStep(src, dst), DatasetStateStep(store, state.dataset_urn, state)])
            sequences.put(sequence)
            if mode == "exactly-once":
                sequence.execute(lambda _: None, fresh=True)
                sequences.delete(sequence)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, range(count)))
    elapsed = time.perf_counter() - started
    if mode == "replay":  # the next run: find every pending sequence and finish it
        started = time.perf_counter()
        pending = list(sequences.pending("Bench"))
        assert len(pending) == count

        def finish(sequence: CommitSequence) -> None:
            sequence.execute(lambda _: None)
            sequences.delete(sequence)

        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(finish, pending))
        elapsed = time.perf_counter() - started
        assert not list(sequences.pending("Bench"))
    assert len(store.get_latest_dataset_states_by_urns("Bench")) == count if count <= 2000 else True
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=10_000)
    parser.add_argument("--threads", default="1,8")
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="gpy-bench-")) / "commit"
    print(f"{args.datasets} datasets, one file and one state each ({os.cpu_count()} cores)")
    for threads in (int(t) for t in args.threads.split(",")):
        base = run("at-least-once", root, args.datasets, threads)
        exact = run("exactly-once", root, args.datasets, threads)
        replay = run("replay", root, args.datasets, threads)
        print(f"threads {threads:>2}: at-least-once {base:7.2f} s ({args.datasets / base:7.0f} datasets/s) | "
              f"exactly-once {exact:7.2f} s ({args.datasets / exact:7.0f}/s, x{exact / base:.2f} of at-least-once) | "
              f"replay of {args.datasets} pending {replay:7.2f} s ({args.datasets / replay:7.0f}/s)")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
