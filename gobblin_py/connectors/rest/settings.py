"""The keys of the HTTP/REST source, declared once: the request, paging, authorisation, retries, records, watermark."""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass

from gobblin_py.connectors.rest.http import MAX_BYTES, JsonHttpClient, RetryPolicy
from gobblin_py.sdk.retry_budget import RetryBudget
from gobblin_py.sdk.settings import Settings, setting

PAGING = ("none", "page", "offset", "cursor")


@dataclass(frozen=True)
class HttpSettings(Settings):
    """How every HTTP request of a REST-based source is made and retried."""

    timeout_s: float = setting("rest.timeout.seconds", default=30.0, minimum=0.001, maximum=3600,
                               doc="seconds one request may take in all: connecting, redirects and the whole "
                                   "answer (a server sending its answer slowly cannot hold the run); retried "
                                   "as a lost connection")
    max_bytes: int = setting("rest.response.max.bytes", default=MAX_BYTES, minimum=1,
                             doc="the largest answer read (bytes): a larger one fails the task naming the URL, "
                                 "before it is read whole")
    retries: int = setting("rest.retry.max", default=5, minimum=0, maximum=100,
                           doc="retries of a request answered 429 or 5xx, or whose connection failed (their waits "
                               "within the run's gpy.retry.budget.seconds)")
    backoff_ms: int = setting("rest.retry.backoff.ms", default=500, minimum=0,
                              doc="the first retry's wait when the server gives no Retry-After; doubled each retry")
    max_wait_ms: int = setting("rest.retry.wait.max.ms", default=30000, minimum=0,
                               doc="the longest wait before a retry, Retry-After included")

    def client(self, budget: RetryBudget, headers: dict[str, str] | None = None) -> JsonHttpClient:
        """A client making requests as these settings say, its retries waiting within the run's ``budget``."""
        return JsonHttpClient(headers, self.timeout_s,
                              RetryPolicy(self.retries, self.backoff_ms / 1000, self.max_wait_ms / 1000),
                              self.max_bytes, budget=budget)


@dataclass(frozen=True)
class RestSettings(HttpSettings):
    """The keys of :class:`RestSource`: one endpoint, its pages, its records and their watermark."""

    url: str = setting("rest.url", required=True, example="https://api.example.com/v1/orders",
                       doc="the endpoint: every page is a GET of it")
    query: dict = setting("rest.query.*", doc="query parameters sent with every request")
    auth_token: str | None = setting("rest.auth.token", secret=True,
                                     doc="the credential sent in rest.auth.header (use ${env:NAME}); never printed")
    auth_header: str = setting("rest.auth.header", default="Authorization", doc="the header carrying the credential")
    auth_scheme: str = setting("rest.auth.scheme", default="Bearer",
                               doc="the word before the credential in the header; empty for the credential alone")
    records_path: str = setting("rest.records.path", default="",
                                doc="where the records are in an answer: a dotted path (data.items; * for every "
                                    "member); empty for the answer itself. A path that leads nowhere in an answer "
                                    "fails the task")
    nonobject: str = setting("rest.records.nonobject", default="fail", choices=("fail", "skip"),
                             doc="a record that is not a JSON object (a list, number, string, null): fail the task "
                                 "naming it, or skip: leave it out, counted in a warning")
    paging: str = setting("rest.paging.type", default="none", choices=PAGING,
                          doc="none: one request; page: a page number; offset: a record offset; cursor: a token the "
                              "answer gives")
    paging_param: str = setting("rest.paging.param", default="page",
                                doc="the query parameter carrying the page number, offset or cursor")
    page_size: int | None = setting("rest.paging.size", minimum=1,
                                    doc="records asked per page (sent in rest.paging.size.param); a shorter page "
                                        "is the last")
    page_size_param: str = setting("rest.paging.size.param", default="limit",
                                   doc="the query parameter carrying rest.paging.size")
    first_page: int | None = setting("rest.paging.start", default_doc="1 for page numbers, 0 for offsets",
                                     doc="the first page number (page) or offset (offset)")
    cursor_path: str = setting("rest.paging.cursor.path", default="next",
                               doc="with cursor paging: where the answer gives the next cursor; none ends the pulls")
    max_pages: int = setting("rest.paging.max", default=10000, minimum=1,
                             doc="the most pages one run requests; a run stopped by it keeps its place in its "
                                 "watermark and the next run goes on from there (a key that shapes the walk, "
                                 "rest.url, rest.query.*, rest.paging.*, rest.records.path or rest.watermark.*, "
                                 "changed before the walk ends is refused)")
    repeated: str = setting("rest.paging.repeated", default="fail", choices=("fail", "stop"),
                            doc="a cursor the run asked before, a page holding the records of an earlier page in any "
                                "order, or one whose every record came before (a server ignoring the page number): "
                                "fail the task (nothing of the run is committed), "
                                "or stop: end the pages there, with a warning")
    watermark_field: str | None = setting("rest.watermark.field",
                                          doc="a whole-number field of each record (an id, epoch milliseconds): "
                                              "records at or below the last run's highest are skipped; a value "
                                              "that is not a whole number fails the task naming the record")
    watermark_param: str | None = setting("rest.watermark.param",
                                          doc="a query parameter sent the last run's highest watermark, so the "
                                              "server sends only newer records")
    schema: str | None = setting("rest.schema", default_doc="inferred from the records",
                                 doc="the Avro record schema (JSON) of the records; fields not in it are dropped")
    namespace: str = setting("extract.namespace", default="rest", doc="the extract's namespace")
    table: str = setting("extract.table.name", default="records", doc="the extract's table: the output folder")

    def check(self) -> list:
        from gobblin_py.sdk.config_errors import ConfigError

        problems = []
        if self.watermark_param and not self.watermark_field:
            problems.append(ConfigError("needs rest.watermark.field", key="rest.watermark.param",
                                        hint="name the record field whose highest value is sent next run"))
        if "@" in urllib.parse.urlsplit(self.url).netloc and self.auth_token:
            problems.append(ConfigError("has a user and password and rest.auth.token is set too: which credential?",
                                        key="rest.url", hint="keep one of them"))
        if not self.url.lower().startswith(("http://", "https://")):
            problems.append(ConfigError(f"{self.url!r} is not an http:// or https:// URL", key="rest.url",
                                        hint="the endpoint's full URL"))
        return problems

    def headers(self) -> dict[str, str]:
        """The authorisation header, when a credential is set."""
        if not self.auth_token:
            return {}
        return {self.auth_header: f"{self.auth_scheme} {self.auth_token}".strip()}
