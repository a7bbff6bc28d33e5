"""GET a JSON document over HTTP(S), retrying what a retry can help: 429 and 5xx answers and lost connections.

A retried request waits as the server asks (``Retry-After``, in seconds or as an HTTP date), else an exponential
back-off from ``rest.retry.backoff.ms``, never longer than ``rest.retry.wait.max.ms``; after ``rest.retry.max``
retries the task fails (a transient error: the task's own retries may still help). Any other 4xx answer fails at
once. Headers (the authorisation one among them) are sent and never logged, and not sent on when a redirect
leaves the request's host. The standard library's client: no
dependency to install.
"""

from __future__ import annotations

import email.utils
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.sdk.errors import PermanentError, TransientError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long a request is retried."""

    retries: int = 5
    backoff_s: float = 0.5
    max_wait_s: float = 30.0

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry ``attempt`` (1 for the first): the server's word, else the back-off."""
        wait = retry_after if retry_after is not None else self.backoff_s * (2 ** (attempt - 1))
        return max(0.0, min(wait, self.max_wait_s))


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def with_query(url: str, params: Mapping[str, str]) -> str:
    """``url`` with ``params`` added to its query string (in order, percent-encoded)."""
    if not params:
        return url
    return url + ("&" if urllib.parse.urlsplit(url).query else "?") + urllib.parse.urlencode(list(params.items()))


class _CredentialsStayOnTheirHost(urllib.request.HTTPRedirectHandler):
    """Follows redirects, without the request's headers other than Accept and User-Agent when one leaves its host."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            for name in [n for n in new.headers if n not in ("Accept", "User-agent")]:
                new.remove_header(name)
        return new


class JsonHttpClient:
    """GETs JSON documents with fixed headers, retrying as its :class:`RetryPolicy` says."""

    def __init__(self, headers: Mapping[str, str] | None = None, timeout_s: float = 30.0,
                 retry: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.headers = {"Accept": "application/json", "User-Agent": "gobblin_py", **(headers or {})}
        self.timeout_s, self.retry, self.sleep = timeout_s, retry or RetryPolicy(), sleep
        self.retries = 0  # retries made by this client, over all its requests
        self.opener = urllib.request.build_opener(_CredentialsStayOnTheirHost())

    def get(self, url: str, params: Mapping[str, str] | None = None) -> tuple[Any, Mapping[str, str]]:
        """The decoded JSON document at ``url`` with ``params``, and the answer's headers."""
        target = with_query(url, params or {})
        attempt = 0
        while True:
            try:
                with self.opener.open(urllib.request.Request(target, headers=self.headers),
                                      timeout=self.timeout_s) as answer:
                    body, headers = answer.read(), dict(answer.headers.items())
                break
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRIED_STATUS:
                    raise PermanentError(f"GET {target}: HTTP {exc.code} {exc.reason}") from None
                why, asked = f"HTTP {exc.code}", retry_after(exc.headers.get("Retry-After"))
            except (TimeoutError, urllib.error.URLError, ConnectionError) as exc:
                why, asked = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}", None
            attempt += 1
            if attempt > self.retry.retries:
                raise TransientError(f"GET {target}: {why}, still after {self.retry.retries} retries "
                                     f"(rest.retry.max)") from None
            wait = self.retry.wait(attempt, asked)
            log.warning("http_retry", url=target, reason=why, attempt=attempt, wait_s=round(wait, 3),
                        retry_after=asked)
            self.retries += 1
            self.sleep(wait)
        if not body.strip():
            return {}, headers
        try:
            return json.loads(body), headers
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PermanentError(f"GET {target}: the answer is not JSON: {exc}") from None
