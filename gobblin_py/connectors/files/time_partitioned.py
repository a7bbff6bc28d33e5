"""Gobblin's ``TimePartitionedDataPublisher``: publishes time-partitioned output into existing date folders.

Gobblin's base publisher moves whole top-level folders and skips one that already exists in the final
directory (losing that partition's new files); this one moves each file to its own place, so new files join
existing ``2015/04/08`` folders. gpy's base publisher already moves file by file — and refuses to overwrite a
file of the same name — so this class is it, under Gobblin's name.
"""

from __future__ import annotations

from gobblin_py.connectors.files.publisher import BaseDataPublisher


class TimePartitionedDataPublisher(BaseDataPublisher):
    """Moves every file of the task output into the same date folder under the final directory."""
