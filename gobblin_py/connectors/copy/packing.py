"""Packing a dataset's files into work units (Gobblin's worst-fit-decreasing bin packing for CopySource).

With ``gobblin.copy.binPacking.maxSizePerBin`` at 0 every file is a work unit of its own (Gobblin's default).
Otherwise the largest file goes first into the open work unit with the most room left that can take it, or into
a new one; a file weighs its size, and at least maxSizePerBin / maxWorkUnitsPerBin (so a unit holds at most
maxWorkUnitsPerBin files). A file larger than the size is a work unit of its own.
"""

from __future__ import annotations

import heapq

from gobblin_py.connectors.copy.descriptor import FileCopy


def pack(files: list[FileCopy], max_size: int, max_files: int) -> list[list[FileCopy]]:
    """``files`` grouped into work units, each group in path order, the groups in order of their first file."""
    if not files:
        return []
    if max_size <= 0:
        return [[f] for f in files]
    least = max(1, max_size // max_files)
    weight = lambda f: max(f.size, least)  # noqa: E731
    bins: list[list[FileCopy]] = []
    room: list[tuple[int, int]] = []  # (-free bytes, bin index): the roomiest bin first
    for item in sorted(files, key=lambda f: (-weight(f), f.destination)):
        if room and -room[0][0] >= weight(item):
            free, index = heapq.heappop(room)
            bins[index].append(item)
            heapq.heappush(room, (free + weight(item), index))
            continue
        bins.append([item])
        heapq.heappush(room, (-(max_size - weight(item)), len(bins) - 1))
    groups = [sorted(b, key=lambda f: f.destination) for b in bins]
    return sorted(groups, key=lambda g: g[0].destination)
