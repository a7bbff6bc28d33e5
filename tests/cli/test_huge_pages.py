"""``gpy`` and the processes it starts run without transparent huge pages (Linux): Arrow's short-lived parse
buffers are then not zeroed 2 MB at a time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.environment import needs

PROGRAM = """
import subprocess, sys
from gobblin_py.cli.base import no_huge_pages
no_huge_pages()
print(open("/proc/self/status").read())
print(subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout)
"""


@needs(sys.platform.startswith("linux") and "THP_enabled" in Path("/proc/self/status").read_text(),
       "transparent huge pages a process can turn off (Linux 3.15 and later)")
def test_gpy_and_its_child_processes_run_without_transparent_huge_pages():
    status = subprocess.run([sys.executable, "-c", PROGRAM], check=True, capture_output=True, text=True).stdout
    assert status.count("THP_enabled:\t0") == 2, status
