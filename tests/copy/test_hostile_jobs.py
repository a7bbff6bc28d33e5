"""Copy jobs run through the CLI on hostile inputs: links that lead out of a source or out of the final folder,
a destination inside its own source, file names that are not UTF-8, a full disk."""

from __future__ import annotations

import os

from tests.copy.files import write
from tests.copy.test_copy_jobs import job_file, published, run


def test_a_symlinked_dataset_is_not_copied(tmp_path):
    write(tmp_path / "src" / "a" / "x.txt", b"a")
    write(tmp_path / "etc-secret" / "pw", b"hunter2")
    os.symlink(tmp_path / "etc-secret", tmp_path / "src" / "evil")  # ln -s /etc/secret src/evil
    job = job_file(tmp_path, tmp_path / "src" / "*", "FileAwareInputStreamDataWriterBuilder")
    result = run(job)
    assert published(tmp_path) == {"a/x.txt": b"a"}
    assert "copy_skipped_linked_datasets" in result.stderr and "evil" not in result.stdout
