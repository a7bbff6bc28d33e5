"""``gpy`` keeps the C allocations of all its threads in one malloc arena (glibc)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.environment import needs

PROGRAM = """
import ctypes, os, sys, threading
from gobblin_py.cli.base import limit_malloc_arenas
limit_malloc_arenas()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
def allocate():
    for _ in range(100):
        libc.malloc(4096)
threads = [threading.Thread(target=allocate) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
libc.fopen.restype = ctypes.c_void_p
out = libc.fopen(sys.argv[1].encode(), b"w")
libc.malloc_info(0, ctypes.c_void_p(out))
libc.fclose(ctypes.c_void_p(out))
"""


@needs(sys.platform.startswith("linux"), "glibc's malloc arenas (Linux)")
def test_threads_allocate_in_one_arena(tmp_path):
    report = tmp_path / "malloc.xml"
    subprocess.run([sys.executable, "-c", PROGRAM, str(report)], check=True)
    assert report.read_text().count("<heap nr=") == 1
