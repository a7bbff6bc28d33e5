"""Greedy packing of weighted items into a fixed number of bins: heaviest first onto the lightest bin.

Gobblin's "worst fit decreasing", shared by the sources that pack work units into MultiWorkUnits (Kafka
partitions, SQL ranges and partition groups).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def worst_fit_decreasing(items: Sequence[T], bins: int, weight: Callable[[T], float],
                         load: Callable[[list[T]], float] | None = None) -> list[list[T]]:
    """``items`` spread over ``bins`` lists, heaviest first, each onto the currently lightest bin.

    Items of equal weight keep their order, and of equally light bins the first wins. A bin's load is the sum
    of its items' weights unless ``load`` computes it from the bin's items. Every bin is returned, empty or not,
    in bin order.
    """
    ordered = sorted(items, key=weight, reverse=True)  # stable: ties keep their order
    heap: list[tuple[float, int, list[T]]] = [(0.0, index, []) for index in range(max(1, bins))]
    heapq.heapify(heap)
    for item in ordered:
        current, index, members = heapq.heappop(heap)
        members.append(item)
        heapq.heappush(heap, (load(members) if load is not None else current + weight(item), index, members))
    return [members for _, _, members in sorted(heap, key=lambda entry: entry[1])]
