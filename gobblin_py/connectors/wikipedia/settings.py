"""The keys of Gobblin's Wikipedia example (its names and defaults), and the HTTP client's (retries, timeouts)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from gobblin_py.connectors.rest.settings import HttpSettings
from gobblin_py.sdk.settings import Settings, setting

_PERIOD = re.compile(r"^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")


def period(text: str) -> dt.timedelta | None:
    """An ISO-8601 period of weeks, days, hours, minutes and seconds (``P2D``, ``PT12H``); None if not one."""
    match = _PERIOD.match(text.strip().upper())
    if not match or text.strip().upper() in ("P", "PT"):
        return None
    weeks, days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return dt.timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)


@dataclass(frozen=True)
class WikipediaSettings(HttpSettings):
    """The keys of :class:`WikipediaSource` (Gobblin's ``WikipediaSource`` and ``WikipediaExtractor``)."""

    titles: tuple[str, ...] = setting("source.page.titles", required=True, example="LinkedIn,Wikipedia:Sandbox",
                                      doc="the pages whose revisions are pulled, each its own dataset")
    root_url: str = setting("wikipedia.api.rooturl", required=True, example="https://en.wikipedia.org/w/api.php",
                            doc="the MediaWiki API's endpoint")
    schema: str = setting("wikipedia.avro.schema", required=True,
                          doc="the Avro schema of the revisions (WikipediaConverter makes rows of it)")
    page_size: int = setting("source.revisions.cnt", default=5, minimum=1, maximum=499,
                             doc="revisions asked per request (Gobblin's extractor always asks 5)")
    max_revisions: int = setting("gobblin.wikipediaSource.maxRevisionsPerPage", default=-1, minimum=-1,
                                 doc="the most revisions of a page one run pulls; -1 for all")
    lookback: str = setting("wikipedia.source.bootstrap.lookback", default="P2D",
                            doc="a page's first run pulls the revisions of this ISO-8601 period back from now")
    namespace: str | None = setting("extract.namespace", doc="the extract's namespace (table: WikipediaOutput)")

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        problems = []
        if period(self.lookback) is None:
            problems.append(ConfigError(f"{self.lookback!r} is not an ISO-8601 period", hint="e.g. P2D or PT12H",
                                        key="wikipedia.source.bootstrap.lookback"))
        if not self.root_url.lower().startswith(("http://", "https://")):
            problems.append(ConfigError(f"{self.root_url!r} is not an http:// or https:// URL",
                                        key="wikipedia.api.rooturl", hint="the API's full URL"))
        return problems


@dataclass(frozen=True)
class WikipediaConverterSettings(Settings):
    """The key of :class:`WikipediaConverter`."""

    schema: str | None = setting("wikipedia.avro.schema", default_doc="the schema the records carry",
                                 doc="the Avro schema of the revisions")
