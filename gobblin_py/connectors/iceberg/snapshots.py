"""A table's snapshot history as a run's commit sees it: the old snapshots it expires (``iceberg.snapshots.keep``).

Every commit reads and rewrites the table's metadata file, which lists every snapshot (pyiceberg also copies it
whole each time a commit looks at it): a table that keeps every snapshot makes each commit slower than the last.
Expiring the oldest ones in the run's own commit keeps it as small as its newest ``keep`` snapshots. Expiring
removes snapshots from the metadata only: the data files the current snapshot holds stay, and so does every file.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def expire_beyond(transaction: Any, table: Any, keep: int) -> int:
    """Within ``transaction`` (whose new snapshot is staged), expire the snapshots of ``table`` (as loaded before
    it) older than its newest ``keep - 1``, so that with the new one ``keep`` are left; tags and branch heads are
    never expired. Returns how many were. A snapshot is expired only when it is older than every one kept (by
    its timestamp), so a writer's clock running behind never costs a newer snapshot."""
    from pyiceberg.table.update.snapshot import ExpireSnapshots

    snapshots = table.snapshots()  # in commit order, oldest first
    if len(snapshots) < keep:  # with the new one, no more than keep
        return 0
    kept = snapshots[len(snapshots) - keep + 1:]  # the newest keep - 1 (none when keep is 1)
    boundary = min((s.timestamp_ms for s in kept), default=max(s.timestamp_ms for s in snapshots) + 1)
    protected = {ref.snapshot_id for ref in transaction.table_metadata.refs.values()}
    expired = sum(1 for s in snapshots if s.timestamp_ms < boundary and s.snapshot_id not in protected)
    if expired:
        # older_than looks at the metadata twice however many snapshots go (by_ids twice for each)
        with ExpireSnapshots(transaction) as expire:
            expire.older_than(EPOCH + timedelta(milliseconds=boundary))
    return expired
