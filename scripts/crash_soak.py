"""Crash soak: thousands of SIGKILLs at random instants against a real job, then the exactly-once checks.

    python scripts/crash_soak.py --kills 2000 [--seed N] [--dir DIR] [--boundaries] [--phases K] [--s3]

Same harness and random campaign as tests/crash (tests/crash/random_kills.py: instants drawn over the window from
taking the lock to the run's end, over its tasks and over its commits, each kill's landing read from the run's
phase log); prints where the kills landed and a final verdict.
``--s3`` keeps the job's data, staging, output, published files, state store, commit log and lock in a bucket of
an S3 API server (moto, started on a free loopback port for the soak), as tests/s3/test_s3_crash.py does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.crash.harness import CrashJob, boundary_campaign  # noqa: E402
from tests.crash.phases import phase_campaign  # noqa: E402
from tests.crash.random_kills import random_campaign  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--dir", default=None, help="work folder (default: a new temporary one)")
    parser.add_argument("--boundaries", action="store_true", help="also kill at every commit boundary first")
    parser.add_argument("--phases", type=int, default=0,
                        help="also K kills aimed inside the phases of a run first (tests/crash/phases.py)")
    parser.add_argument("--s3", action="store_true", help="everything in a bucket of a local S3 API server (moto)")
    args = parser.parse_args()
    root = Path(args.dir or tempfile.mkdtemp(prefix="gpy-crash-"))
    server = start_s3_server() if args.s3 else None
    try:
        return soak(args, root, server)
    finally:
        if server is not None:
            server.process.terminate()
            server.process.wait()


def start_s3_server():
    """moto's S3 server on a free loopback port, and a bucket on it."""
    import subprocess

    from tests.s3.conftest import S3Server, _answers, _server_command
    from tests.sql.servers import free_port

    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="gpy-moto-")) / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(_server_command(port), stdout=out, stderr=subprocess.STDOUT)
    server = S3Server(process, port, log)
    deadline = time.monotonic() + 60
    while not _answers(server.endpoint):
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"moto_server did not start: {log.read_text()[-500:]}")
        time.sleep(0.1)
    server.filesystem().mkdir("crash-soak")
    return server


def soak(args, root: Path, server) -> int:
    if server is None:
        job = CrashJob(root)
    else:
        job = CrashJob(root, store_url="s3://crash-soak/crash", job_keys=server.job_keys())
    started = time.time()
    if args.boundaries:
        print(f"killed at each of {boundary_campaign(job)} commit boundaries: invariants hold", flush=True)
    if args.phases:
        kills = phase_campaign(job, kills=args.phases, seed=args.seed)
        print(f"killed inside phases: {kills.describe()}: invariants hold", flush=True)
    landings = random_campaign(job, kills=args.kills, seed=args.seed)
    landings.check_spread()
    where = "s3://crash-soak/crash" if server is not None else root
    print(f"OK: {job.kills} kills over {job.runs} runs (seed {args.seed}, {time.time() - started:.0f} s); every row "
          f"published exactly once, state consistent ({where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
