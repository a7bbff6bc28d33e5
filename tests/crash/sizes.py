"""How big each crash campaign is: the size `make test` runs, and the full size `make soak` runs before a release.

A campaign's CI size is the smallest that still lands kills everywhere its claim covers — each campaign asserts
that coverage (every phase, every commit boundary, at least a third of the random kills in the tasks and a third
in the commits), so a size that stopped covering fails the test instead of passing with less proof. The soak size
is the campaign as it was sized for a soak: more kills at more instants of each phase. ``GPY_SOAK=1`` (set by
`make soak`) selects the soak sizes; a campaign's own variable (``GPY_CRASH_KILLS=80`` …) overrides either.

A campaign whose proof `make test` gives through others is marked ``@pytest.mark.soak``: `make test` leaves it out
(``-m "not soak"``), `make soak` and a bare ``pytest`` run it. The one so marked is the random campaign on S3: the
suite kills S3 runs at a random instant inside each of the ten phases and at each commit boundary, which reach
every phase and step a random instant lands in, and runs the random campaign itself on local disk and on Kafka.
"""

from __future__ import annotations

import os

SOAK_ENV = "GPY_SOAK"


def soak() -> bool:
    """Whether this is a soak run (``GPY_SOAK=1``)."""
    return os.environ.get(SOAK_ENV, "").strip() not in ("", "0")


def size(variable: str, ci: int, soak_size: int) -> int:
    """A campaign's size: ``variable``'s value where it is set, else the soak size in a soak run, else the CI size."""
    given = os.environ.get(variable, "").strip()
    return int(given) if given else soak_size if soak() else ci
