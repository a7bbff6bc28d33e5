"""The repository's paths the tests read: its root, the test data, the Gobblin job corpus beside it."""

from __future__ import annotations

from pathlib import Path

from tests.support.environment import needs

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
GOBBLIN_DATA = DATA / "gobblin"


def _shared() -> Path:
    """``shared/`` beside the repository (a clone), or beside the folder holding it (a worktree)."""
    for parent in (REPO.parent, REPO.parent.parent):
        if (parent / "shared").is_dir():
            return parent / "shared"
    return REPO.parent / "shared"


SHARED = _shared()
CORPUS = SHARED / "corpus" / "gobblin-jobs"
# the marker of the tests that run the Gobblin job corpus (present beside the repository on CI)
NEEDS_CORPUS = needs(CORPUS.is_dir(), f"the Gobblin job corpus is not at {CORPUS}")
