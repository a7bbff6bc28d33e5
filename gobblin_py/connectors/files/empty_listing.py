"""Why the file source planned nothing: a pattern that matched no file (naming the files it misses only by case),
an empty folder, or every listed file pulled before."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from gobblin_py.sdk.contracts import EmptyPlan
from gobblin_py.store.report import iso_time

NAMED = 5  # near misses named in a reason; the rest are counted


@dataclass
class Listing:
    """What one listing of the data folder saw: its visible files and those the pattern matched."""

    directory: str
    pattern: str
    visible: list[str] = field(default_factory=list)  # paths relative to the folder, hidden files left out
    matched: int = 0

    def near_misses(self) -> list[str]:
        """The visible files whose name the pattern matches when case is ignored."""
        pattern = self.pattern.casefold()
        return [path for path in self.visible if fnmatch.fnmatchcase(path.rsplit("/", 1)[-1].casefold(), pattern)]

    def nothing_matched(self) -> EmptyPlan:
        """The reason a listing matched no file."""
        if not self.visible:
            return EmptyPlan(f"no file in {self.directory}", nothing_found=True)
        reason = f"pattern {self.pattern} matched 0 of {len(self.visible)} files in {self.directory}"
        near = self.near_misses()
        if near:
            named = ", ".join(near[:NAMED]) + (f" and {len(near) - NAMED} more" if len(near) > NAMED else "")
            reason += f"; {named} {'differs' if len(near) == 1 else 'differ'} only in case"
        return EmptyPlan(reason, nothing_found=True)


def explain(listing: Listing, datasets: int, newest_ms: int) -> EmptyPlan:
    """Why a run of the file source planned nothing: ``datasets`` the listing's datasets, ``newest_ms`` the newest
    modification time of the files it matched."""
    if not listing.matched:
        return listing.nothing_matched()
    if not datasets:
        return EmptyPlan(f"{listing.matched} files match {listing.pattern} in {listing.directory}, none of them in "
                         "a sub-folder (source.filebased.dataset.urn.level=subdirectory)", nothing_found=True)
    newest = iso_time(newest_ms)
    return EmptyPlan(f"every file was pulled before ({listing.matched} files"
                     + (f", last watermark {newest})" if newest else ")"))
