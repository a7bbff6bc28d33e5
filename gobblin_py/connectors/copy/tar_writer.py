"""The tar writer: each file it is given is a tar archive (decoded first, e.g. by UnGzipConverter), unpacked
into the folder of its destination (Gobblin's TarArchiveInputStreamDataWriter).

When the archive's first entry is a folder, it is the archive's root and takes the destination's name: the
archive ``LogData.tar.gz`` with root ``LogData/``, gunzipped to the destination ``LogData``, unpacks
``LogData/sub1/a.txt`` to ``<final dir>/LogData/sub1/a.txt``; ``x.tar.gz`` with the same root unpacks it to
``<final dir>/x/sub1/a.txt``. Other entries keep their paths, below the destination's folder. (Gobblin always
skips the first entry as the root, a file included; gpy unpacks a first entry that is a file.)

An entry with an absolute path, ``..`` or a name that is not valid UTF-8 is refused, naming the archive and the
entry (the rule of :mod:`gobblin_py.io.contained_paths`), as are links and special files (only folders and regular
files are unpacked) and a path two entries share. The archive is read as a stream, ``gobblin.copy.bufferSize``
bytes at a time.
"""

from __future__ import annotations

import gzip
import posixpath
import tarfile
import zlib
from contextlib import ExitStack

from gobblin_py.connectors.copy.descriptor import FileCopy, copy_stream
from gobblin_py.connectors.copy.writers import CopyWriter, CopyWriterBuilder, naming_the_copy, safe_relative
from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError


class TarArchiveWriter(CopyWriter):
    """Unpacks each archive it is given into the folder of the archive's destination."""

    def copy(self, entry: FileCopy) -> int:
        destination = safe_relative(entry.destination, "destination", entry.source)
        folder, name = posixpath.dirname(destination), posixpath.basename(destination)
        written = 0
        with naming_the_copy(entry.source, self.staged(destination)), ExitStack() as stack:
            stream = self.open_source(entry, stack)
            try:
                archive = stack.enter_context(tarfile.open(fileobj=stream, mode="r|"))
                root: str | None = None
                for index, member in enumerate(archive):
                    path = safe_relative(member.name, "archive entry", entry.source)
                    if index == 0 and member.isdir() and path:
                        root = path
                    if root is not None and (path == root or path.startswith(root + "/")):
                        path = name + path[len(root):]
                    if not path:
                        continue  # the archive's "." entry
                    relative = posixpath.join(folder, path) if folder else path
                    if member.isdir():
                        self.make_folder(self.staged(relative), relative, f"{entry.source} entry {member.name!r}")
                    elif member.isreg():
                        what = f"{entry.source} entry {member.name!r}"
                        reader = archive.extractfile(member)
                        assert reader is not None  # a regular file's member always has its data
                        with naming_the_copy(what, self.staged(relative)), self.new_file(relative, what) as out:
                            written += copy_stream(reader, out, self.settings.buffer_size, entry.source)
                    else:
                        raise GobblinPyError(f"{entry.source}: archive entry {member.name!r} is a link or special "
                                             "file; only folders and regular files are unpacked")
            except gzip.BadGzipFile as exc:
                raise CorruptFileError(entry.source, f"cannot be decoded as gzip ({exc})") from exc
            except (tarfile.ReadError, EOFError, zlib.error) as exc:
                hint = ("; a .tar.gz needs UnGzipConverter before the tar writer"
                        if entry.source.endswith((".gz", ".tgz")) and "gzip" not in entry.decodings else "")
                raise CorruptFileError(entry.source, f"not a readable tar archive ({exc}){hint}") from exc
        return written


class TarArchiveInputStreamDataWriterBuilder(CopyWriterBuilder):
    """Gobblin's TarArchiveInputStreamDataWriterBuilder: each copied file is a tar archive, unpacked at its
    destination (put UnGzipConverter before it for ``.tar.gz``)."""

    writer_class = TarArchiveWriter
