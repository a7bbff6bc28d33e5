"""`gpy run --engine local` never imports pyspark, nor fsspec for local files, nor the entry-point scan for gpy's
own plugins: a local run pays for no JVM bridge, filesystem layer or package scan it does not use."""

from __future__ import annotations

import subprocess
import sys

from tests.support.jobs import Job, write_csv

# runs the real CLI, then reports at exit which of the heavy modules the run loaded
WRAPPER = """
import os, runpy, sys
def report():
    print("LOADED=" + ",".join(sorted(m for m in ("pyspark", "py4j", "fsspec", "importlib.metadata") if m in sys.modules)), file=sys.stderr)
    sys.stderr.flush()
exit_now = os._exit  # a local run ends with os._exit, after its output is flushed
os._exit = lambda code: (report(), exit_now(code))
sys.argv = ["gpy"] + sys.argv[1:]
runpy.run_module("gobblin_py.cli", run_name="__main__")
"""


def test_a_local_run_does_not_import_pyspark(tmp_path):
    job = Job(tmp_path, "writer.output.format=PARQUET\ntaskexecutor.threadpool.size=2")
    write_csv(job.data / "day1.csv", 1)
    write_csv(job.data / "day2.csv", 101)
    done = subprocess.run([sys.executable, "-c", WRAPPER, "run", str(job.file), "--engine", "local"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert job.published_ids() == list(range(1, 41)) + list(range(101, 141))  # the run did its work
    assert "LOADED=\n" in done.stderr or done.stderr.rstrip().endswith("LOADED="), done.stderr[-2000:]
