"""A local web server for the HTTP sources' tests: MediaWiki's API (``api.php``) and a paged REST endpoint.

``api.php`` answers ``action=query&prop=revisions`` as MediaWiki documents it (format=json, the default
``formatversion=1``: ``query.pages`` keyed by page id, a missing page under ``-1`` with ``missing``; revisions with
``revid``, ``parentid``, ``user``, ``userid``, ``timestamp``, ``size``, ``anon`` for anonymous edits; ``rvlimit``,
``rvstartid``, ``rvendid``, ``rvstart``, ``rvdir`` older by default; ``continue`` when more are left).
``/items`` serves records under ``data.items`` by cursor (``cursor``, ``limit``, ``next``), ``offset`` or ``page``, ``since`` to
leave out records with ``id`` at or below it, and a bearer token (a refused one is echoed in the reason phrase,
as careless servers do); newest first with ``order="desc"``, and as hostile servers do: ``ignore_paging`` (the
first page whatever is asked), ``repeat_cursor`` (the same next cursor every time); ``ignore_paging="shuffled"`` (the first page, its records
in another order each time, as an unordered query gives them) and ``"alternate"`` (the first and second page in
turn, whatever is asked). Faults queued with
:meth:`WebApi.fail_next` answer the next requests instead (a status, with ``Retry-After`` if given, or any body
and headers, for the requests ``when`` accepts); :meth:`WebApi.route` serves a fixed answer at a path, its body
dripped a byte at a time if asked. Every request is logged.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = "s3cret-token"


@dataclass
class Request:
    """One request the server answered."""

    path: str
    params: dict[str, str]
    headers: dict[str, str]
    at: float
    status: int


@dataclass
class Fault:
    """An answer given instead of the normal one, once, to the first request ``when`` accepts."""

    status: int
    retry_after: str | None = None
    body: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    when: Callable[[str, dict[str, str]], bool] | None = None


@dataclass
class Route:
    """A fixed answer at a path: its body sent whole, or a byte every ``drip_s`` seconds."""

    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    drip_s: float = 0.0
    length: bool = True  # send Content-Length (else the body ends when the connection closes)


@dataclass
class WebApi:
    """The server's content, its queued faults and its request log."""

    pages: dict[str, dict] = field(default_factory=dict)  # title -> {"pageid": n, "revisions": [...] oldest first}
    items: list[dict] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    routes: dict[str, Route] = field(default_factory=dict)
    order: str = "asc"  # of /items: "asc" by id, or "desc" (newest first)
    ignore_paging: bool | str = False  # True: the first page; "shuffled", "alternate": see the module
    repeat_cursor: str | None = None
    log: list[Request] = field(default_factory=list)
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def api(self) -> str:
        return self.url + "/w/api.php"

    def add_revisions(self, title: str, first_revid: int, count: int, age: dt.timedelta, step=dt.timedelta(minutes=1),
                      anon_every: int = 0) -> None:
        """``count`` revisions of ``title`` with revids from ``first_revid``, the first ``age`` ago, ``step`` apart."""
        with self.lock:
            page = self.pages.setdefault(title, {"pageid": 1000 + len(self.pages), "revisions": []})
            start = dt.datetime.now(dt.timezone.utc) - age
            for i in range(count):
                revid = first_revid + i
                revisions = page["revisions"]
                revision = {"revid": revid, "parentid": revisions[-1]["revid"] if revisions else 0,
                            "user": f"Editor{revid % 7}", "userid": 40 + revid % 7,
                            "timestamp": (start + i * step).strftime("%Y-%m-%dT%H:%M:%SZ"), "size": 2000 + revid}
                if anon_every and revid % anon_every == 0:
                    revision.update(user=f"192.0.2.{revid % 250}", userid=0, anon="")
                revisions.append(revision)

    def fail_next(self, status: int, retry_after: str | None = None, body: object = None,
                  headers: dict[str, str] | None = None,
                  when: Callable[[str, dict[str, str]], bool] | None = None) -> None:
        """Answer the next request (that ``when`` accepts) so: ``body`` as JSON, else a small error document."""
        with self.lock:
            self.faults.append(Fault(status, retry_after, None if body is None else json.dumps(body).encode(),
                                     dict(headers or {}), when))

    def route(self, path: str, body: bytes | str | object, **how: object) -> None:
        """Serve ``body`` (bytes, text, or anything else as JSON) at ``path`` (see :class:`Route`)."""
        raw = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        with self.lock:
            self.routes[path] = Route(raw, **how)  # type: ignore[arg-type]

    def reset(self) -> None:
        with self.lock:
            self.pages.clear(), self.items.clear(), self.faults.clear(), self.log.clear(), self.routes.clear()
            self.order, self.ignore_paging, self.repeat_cursor = "asc", False, None

    def requests(self, path: str) -> list[Request]:
        return [r for r in self.log if r.path == path]

    # -- answers

    def revisions(self, params: dict[str, str]) -> dict:
        title = params.get("titles", "")
        page = self.pages.get(title)
        if page is None:
            return {"batchcomplete": "", "query": {"pages": {"-1": {"ns": 0, "title": title, "missing": ""}}}}
        revisions = list(page["revisions"])
        newer = params.get("rvdir", "older") == "newer"
        if not newer:
            revisions.reverse()
        if "rvstartid" in params:
            start = int(params["rvstartid"])
            revisions = [r for r in revisions if (r["revid"] >= start if newer else r["revid"] <= start)]
        if "rvendid" in params:
            end = int(params["rvendid"])
            revisions = [r for r in revisions if (r["revid"] <= end if newer else r["revid"] >= end)]
        if "rvstart" in params:
            since = dt.datetime.strptime(params["rvstart"], "%Y%m%d%H%M%S").strftime("%Y-%m-%dT%H:%M:%SZ")
            revisions = [r for r in revisions if (r["timestamp"] >= since if newer else r["timestamp"] <= since)]
        limit = int(params.get("rvlimit", "1"))
        props = set(params.get("rvprop", "ids|flags|timestamp|user|comment").split("|"))
        shown = []
        for revision in revisions[:limit]:
            keep = {"revid", "parentid"} if "ids" in props else set()
            keep |= {k for k in ("timestamp", "size") if k in props}
            keep |= {"user", "anon"} if "user" in props else set()
            keep |= {"userid"} if "userid" in props else set()
            shown.append({k: v for k, v in revision.items() if k in keep})
        answer: dict = {"query": {"pages": {str(page["pageid"]): {"pageid": page["pageid"], "ns": 0, "title": title,
                                                                  "revisions": shown}}}}
        if len(revisions) > limit:
            answer["continue"] = {"rvcontinue": f"{revisions[limit]['timestamp']}|{revisions[limit]['revid']}",
                                  "continue": "||"}
        else:
            answer["batchcomplete"] = ""
        return answer

    def paged_items(self, params: dict[str, str]) -> dict:
        chosen = sorted(self.items, key=lambda i: i["id"], reverse=self.order == "desc")
        if "since" in params:
            chosen = [i for i in chosen if i["id"] > int(params["since"])]
        limit = int(params.get("limit", "3"))
        offset = int(params.get("cursor") or params.get("offset") or 0)
        if "page" in params:  # page numbers from 1
            offset = (int(params["page"]) - 1) * limit
        asked = len(self.requests("/items"))  # (this request is logged once answered)
        if self.ignore_paging:
            offset = limit * (asked % 2) if self.ignore_paging == "alternate" else 0
        page = chosen[offset:offset + limit]
        if self.ignore_paging == "shuffled":
            page = page[asked % len(page):] + page[:asked % len(page)] if page else page
        answer: dict = {"data": {"items": page}}
        if offset + limit < len(chosen):
            answer["next"] = self.repeat_cursor or str(offset + limit)
        return answer


class _Handler(BaseHTTPRequestHandler):
    api: WebApi

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        api = self.api
        with api.lock:
            fault = next((f for f in api.faults if f.when is None or f.when(parts.path, params)), None)
            if fault is not None:
                api.faults.remove(fault)
            route = api.routes.get(parts.path)
        status, body, headers, reason = 200, b"", {}, None
        if fault:
            status = fault.status
            headers = {**({"Retry-After": fault.retry_after} if fault.retry_after else {}), **fault.headers}
            body = fault.body if fault.body is not None else \
                json.dumps({"error": {"code": "ratelimited" if status == 429 else "internal"}}).encode()
        elif route is not None:
            self._send_route(parts.path, params, route)
            return
        elif parts.path == "/w/api.php" and params.get("action") == "query" and params.get("prop") == "revisions":
            with api.lock:
                body = json.dumps(api.revisions(params)).encode()
        elif parts.path == "/moved":  # a redirect to ?to=
            status, headers = 302, {"Location": params["to"]}
        elif parts.path == "/items":
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":  # echoed, as careless servers do
                status, body = 401, b'{"error": "unauthorized"}'
                reason = f"Unauthorized: {self.headers.get('Authorization')}"
            else:
                with api.lock:
                    body = json.dumps(api.paged_items(params)).encode()
        else:
            status, body = 400, b'{"error": {"code": "badrequest"}}'
        with api.lock:
            api.log.append(Request(parts.path, params, dict(self.headers.items()), time.monotonic(), status))
        self.send_response(status, reason)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_route(self, path: str, params: dict[str, str], route: Route) -> None:
        with self.api.lock:
            self.api.log.append(Request(path, params, dict(self.headers.items()), time.monotonic(), route.status))
        self.send_response(route.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        if route.length:
            self.send_header("Content-Length", str(len(route.body)))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        for key, value in route.headers.items():
            self.send_header(key, value)
        self.end_headers()
        try:
            if not route.drip_s:
                self.wfile.write(route.body)
                return
            for n in range(len(route.body)):
                self.wfile.write(route.body[n:n + 1])
                self.wfile.flush()
                time.sleep(route.drip_s)
        except OSError:  # the client gave up
            self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the standard library's signature
        pass


def serve(port: int = 0) -> tuple[WebApi, ThreadingHTTPServer]:
    """A running server on a loopback port (a free one by default; a daemon thread) and its content."""
    api = WebApi()
    handler = type("Handler", (_Handler,), {"api": api})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, name="web-api", daemon=True).start()
    return api, server


# the pages of Gobblin's wikipedia.pull (source.page.titles), as `python -m tests.sources.web_api` serves them
SAMPLE_TITLES = ("LinkedIn", "Wikipedia:Sandbox")


def add_sample_pages(api: WebApi) -> None:
    """Revisions of wikipedia.pull's pages: two of LinkedIn's older than its 2-day bootstrap window, six inside it;
    fifteen of the Sandbox's, more than the ten a page gives per run."""
    hours = dt.timedelta(hours=1)
    api.add_revisions("LinkedIn", 100, 2, age=80 * hours)
    api.add_revisions("LinkedIn", 102, 6, age=20 * hours, anon_every=5)
    api.add_revisions("Wikipedia:Sandbox", 200, 15, age=10 * hours)


def add_one_revision_each(api: WebApi) -> None:
    """A new revision of every page, made now."""
    for title in list(api.pages):
        api.add_revisions(title, api.pages[title]["revisions"][-1]["revid"] + 1, 1, age=dt.timedelta(0))


def main(argv: list[str] | None = None) -> None:
    """Serve MediaWiki's API with wikipedia.pull's pages on loopback until stopped, a new revision of each page
    every ``--new-every`` seconds, printing the ``wikipedia.api.rooturl`` to set in the job."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.sources.web_api", description=main.__doc__)
    parser.add_argument("--port", type=int, default=int(os.environ.get("WEB_API_PORT", "8089")),
                        help="the loopback port (default $WEB_API_PORT, else 8089; 0: a free one)")
    parser.add_argument("--new-every", type=float, default=60.0, metavar="SECONDS",
                        help="seconds between new revisions of each page (default 60; 0: none)")
    args = parser.parse_args(argv)
    api, server = serve(args.port)
    add_sample_pages(api)
    print(f"wikipedia.api.rooturl={api.api}", flush=True)
    try:
        while True:
            time.sleep(args.new_every or 3600)
            if args.new_every:
                add_one_revision_each(api)
                api.log.clear()  # a server left running keeps no growing request log
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
