"""A local web server for the HTTP sources' tests: MediaWiki's API (``api.php``) and a paged REST endpoint.

``api.php`` answers ``action=query&prop=revisions`` as MediaWiki documents it (format=json, the default
``formatversion=1``: ``query.pages`` keyed by page id, a missing page under ``-1`` with ``missing``; revisions with
``revid``, ``parentid``, ``user``, ``userid``, ``timestamp``, ``size``, ``anon`` for anonymous edits; ``rvlimit``,
``rvstartid``, ``rvendid``, ``rvstart``, ``rvdir`` older by default; ``continue`` when more are left).
``/items`` serves records under ``data.items`` by cursor (``cursor``, ``limit``, ``next``), ``offset`` or ``page``, ``since`` to
leave out records with ``id`` at or below it, and a bearer token. Faults queued with :meth:`WebApi.fail_next`
answer the next requests instead (a status, with ``Retry-After`` if given); every request is logged.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
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
class WebApi:
    """The server's content, its queued faults and its request log."""

    pages: dict[str, dict] = field(default_factory=dict)  # title -> {"pageid": n, "revisions": [...] oldest first}
    items: list[dict] = field(default_factory=list)
    faults: list[tuple[int, str | None]] = field(default_factory=list)
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

    def fail_next(self, status: int, retry_after: str | None = None) -> None:
        with self.lock:
            self.faults.append((status, retry_after))

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
        since = int(params.get("since", "-1"))
        chosen = [i for i in self.items if i["id"] > since]
        limit = int(params.get("limit", "3"))
        offset = int(params.get("cursor") or params.get("offset") or 0)
        if "page" in params:  # page numbers from 1
            offset = (int(params["page"]) - 1) * limit
        page = chosen[offset:offset + limit]
        answer: dict = {"data": {"items": page}}
        if offset + limit < len(chosen):
            answer["next"] = str(offset + limit)
        return answer


class _Handler(BaseHTTPRequestHandler):
    api: WebApi

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        api = self.api
        with api.lock:
            fault = api.faults.pop(0) if api.faults else None
        status, body, headers = 200, b"", {}
        if fault:
            status, retry_after = fault
            headers = {"Retry-After": retry_after} if retry_after else {}
            body = json.dumps({"error": {"code": "ratelimited" if status == 429 else "internal"}}).encode()
        elif parts.path == "/w/api.php" and params.get("action") == "query" and params.get("prop") == "revisions":
            with api.lock:
                body = json.dumps(api.revisions(params)).encode()
        elif parts.path == "/moved":  # a redirect to ?to=
            status, headers = 302, {"Location": params["to"]}
        elif parts.path == "/items":
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                status, body = 401, b'{"error": "unauthorized"}'
            else:
                with api.lock:
                    body = json.dumps(api.paged_items(params)).encode()
        else:
            status, body = 400, b'{"error": {"code": "badrequest"}}'
        with api.lock:
            api.log.append(Request(parts.path, params, dict(self.headers.items()), time.monotonic(), status))
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the standard library's signature
        pass


def serve() -> tuple[WebApi, ThreadingHTTPServer]:
    """A running server on a free loopback port (a daemon thread) and its content."""
    api = WebApi()
    handler = type("Handler", (_Handler,), {"api": api})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, name="web-api", daemon=True).start()
    return api, server
