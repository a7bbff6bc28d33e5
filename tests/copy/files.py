"""Building the files a copy test copies: plain files, gzip files and tar archives, on local disk."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.environment import missing

LOG_ENTRIES = {"LogData/sub1/sub2/text1.txt": b"text1", "LogData/sub1/sub2/text2.txt": b"text2",
               # the AppleDouble files Gobblin's own LogData.tar.gz carries beside each text file
               "LogData/sub1/sub2/._text1.txt": b"\x00\x05\x16\x07" + b"\x00" * 167,
               "LogData/sub1/sub2/._text2.txt": b"\x00\x05\x16\x07" + b"\x00" * 167}


def write(path: Path, data: bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def tar_bytes(entries: dict[str, bytes], folders: list[str] = (), links: dict[str, str] | None = None) -> bytes:
    """A tar archive: ``folders`` first (in order), then each file entry, then symbolic links."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type = tarfile.DIRTYPE
            archive.addfile(info)
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return out.getvalue()


def log_data_tar_gz(path: Path) -> Path:
    """An archive with the entries of Gobblin's LogData.tar.gz (its root folder first, as tar writes it)."""
    data = tar_bytes(LOG_ENTRIES, folders=["LogData/", "LogData/sub1/", "LogData/sub1/sub2/"])
    return write(path, gzip.compress(data))


@contextmanager
def full_disk(folder: Path, size: str = "1m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``folder`` (a real disk that fills up), unmounted afterwards; the test is
    skipped when it cannot be mounted (mounting needs root)."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        missing(f"cannot mount a {size} tmpfs to fill up at {folder}: {mounted.stderr.strip() or 'not root'}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)
