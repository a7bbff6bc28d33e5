"""Crash soak: thousands of SIGKILLs at random instants against a real job, then the exactly-once checks.

    python scripts/crash_soak.py --kills 2000 [--seed N] [--dir DIR] [--boundaries]

Same harness as tests/crash (which runs 50 kills in CI); prints a line per 100 kills and a final verdict.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.crash.harness import CrashJob, boundary_campaign  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--dir", default=None, help="work folder (default: a new temporary one)")
    parser.add_argument("--boundaries", action="store_true", help="also kill at every commit boundary first")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="gpy-crash-"))
    job = CrashJob(root)
    started = time.time()
    if args.boundaries:
        print(f"killed at each of {boundary_campaign(job)} commit boundaries: invariants hold", flush=True)
    import random

    rng = random.Random(args.seed)
    job.add_files(6)
    target = job.kills + args.kills
    while job.kills < target:
        if rng.random() < 0.3:
            job.add_files(rng.randint(1, 3))
        job.run(kill_after=rng.uniform(0.05, 1.6))
        if job.kills % 100 == 0 and job.runs % 1 == 0:
            print(f"{job.kills} kills, {job.runs} runs, {job.files_written} files, {time.time() - started:.0f} s", flush=True)
    job.run_until_success()
    job.check()
    print(f"OK: {job.kills} kills over {job.runs} runs (seed {args.seed}); every row published exactly once, "
          f"state consistent ({root})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
