"""GET a JSON document over HTTP(S), retrying what a retry can help: 429 and 5xx answers, lost connections, answers
that took too long, and API errors the caller's check calls retryable.

A request has ``rest.timeout.seconds`` in all (connecting, redirects, headers and the whole body: a server
dripping its answer cannot hold a run) and an answer at most ``rest.response.max.bytes``; both failures name the
URL. A retried request waits as the server asks (``Retry-After``, in seconds or as an HTTP date), else an
exponential back-off from ``rest.retry.backoff.ms``, never longer than ``rest.retry.wait.max.ms``; after
``rest.retry.max`` retries the task fails (a transient error: the task's own retries may still help). Every wait
comes out of the run's retry budget (``gpy.retry.budget.seconds``): shortened to what is left of it, and once it is
spent the request is not retried and the task fails naming that key. Any other 4xx
answer fails at once. A stop of the run (SIGTERM, SIGINT) ends a wait or a request in flight at once and makes no
further request. Headers (the authorisation one among them) are sent and never written anywhere; they are not
sent on when a redirect leaves the request's scheme, host or port (an https → http redirect never carries them).
Only http:// and https:// URLs are requested: a redirect anywhere else (``ftp://``, ``file://``) fails the task
naming both URLs, so no connection escapes the deadline or a stop.
A URL's user-info is sent as Basic authorisation, never in the request line. Every URL and reason printed has its
credentials masked (:mod:`gobblin_py.sdk.redact`). The standard library's client: no dependency to install.
"""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.rest.deadline import Deadline, HttpHandler, HttpsHandler
from gobblin_py.sdk import redact
from gobblin_py.sdk.errors import PermanentError, TransientError
from gobblin_py.sdk.interrupts import check_cancelled, pause
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry_budget import DEFAULT_BUDGET_S, RetryBudget, RetryBudgetSpent

log = get_logger(__name__)

RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_BYTES = 256 * 1024 * 1024  # rest.response.max.bytes' default
CHUNK = 1024 * 1024
KEPT_ON_REDIRECT = ("Accept", "User-agent")


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


@dataclass(frozen=True)
class ApiError:
    """An error an API reports inside a successful HTTP answer (MediaWiki's ``{"error": …}``)."""

    message: str
    retryable: bool
    retry_after: float | None = None


AnswerCheck = Callable[[Any, Mapping[str, str]], "ApiError | None"]


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


def split_user_info(url: str) -> tuple[str, str | None]:
    """``url`` without its user-info, and the Basic authorisation header value of that user-info (None without);
    the password (or a user alone: a token) is masked from then on wherever this process writes."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    user_info, _, host = parts.netloc.rpartition("@")
    user, _, password = user_info.partition(":")
    redact.remember(password or user)
    redact.remember(urllib.parse.unquote(password or user))
    plain = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"
    return urllib.parse.urlunsplit(parts._replace(netloc=host)), "Basic " + base64.b64encode(plain.encode()).decode()


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.hostname, parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())


class _Retryable(Exception):
    """A request that failed in a way a retry can help: the connection, the deadline, a body cut short."""


class _RefusedRedirect(Exception):
    """A redirect to a URL that is not http:// or https://."""

    def __init__(self, newurl: str) -> None:
        super().__init__(newurl)
        self.newurl = newurl


class _CredentialsStayOnTheirOrigin(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http:// and https:// URLs only (another scheme would leave the deadline-watched
    connections), without the request's headers other than Accept and User-Agent when one leaves its scheme, host
    or port: credentials never travel over plain HTTP after an https answer, nor to another server."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        if urllib.parse.urlsplit(newurl).scheme.lower() not in ("http", "https"):
            fp.close()
            raise _RefusedRedirect(newurl)
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            for name in [n for n in new.headers if n not in KEPT_ON_REDIRECT]:
                new.remove_header(name)
        return new


def _opener(deadline: Deadline) -> urllib.request.OpenerDirector:
    """urllib's opener with HTTP(S) alone, each connection under ``deadline`` (``build_opener`` would add FTP, file
    and data handlers, whose connections no deadline or stop reaches)."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.UnknownHandler(), HttpHandler(deadline),
                    HttpsHandler(deadline), urllib.request.HTTPDefaultErrorHandler(), _CredentialsStayOnTheirOrigin(),
                    urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


class JsonHttpClient:
    """GETs JSON documents with fixed headers, retrying as its :class:`RetryPolicy` says."""

    def __init__(self, headers: Mapping[str, str] | None = None, timeout_s: float = 30.0,
                 retry: RetryPolicy | None = None, max_bytes: int = MAX_BYTES,
                 sleep: Callable[[float], None] = pause, budget: RetryBudget | None = None) -> None:
        self.headers = {"Accept": "application/json", "User-Agent": "gobblin_py", **(headers or {})}
        for name, value in self.headers.items():
            if name not in ("Accept", "User-Agent"):
                redact.remember(value)
                redact.remember(value.partition(" ")[2])  # the credential after its scheme
        self.timeout_s, self.retry, self.max_bytes, self.sleep = timeout_s, retry or RetryPolicy(), max_bytes, sleep
        self.budget = budget or RetryBudget(DEFAULT_BUDGET_S)  # the run's, shared with its other retry loops
        self.retries = 0  # retries made by this client, over all its requests

    def get(self, url: str, params: Mapping[str, str] | None = None,
            check: AnswerCheck | None = None) -> tuple[Any, Mapping[str, str]]:
        """The decoded JSON document at ``url`` with ``params`` (None for an empty answer), and the answer's
        headers. ``check`` may call a successful answer an API error, retried when it says so."""
        url, basic = split_user_info(url)
        headers = dict(self.headers)
        if basic is not None:
            redact.remember(basic.partition(" ")[2])
            headers.setdefault("Authorization", basic)
        for name, value in (params or {}).items():
            if redact.credential_name(name):
                redact.remember(value)
        target = with_query(url, params or {})
        shown = redact.redact(target)
        attempt = 0
        while True:
            check_cancelled()  # a stopped run makes no further request
            asked: float | None = None
            try:
                answer = self._fetch(target, headers, shown)
                answer_headers = answer.headers
                document = parse(answer, shown)
                error = check(document, answer_headers) if check is not None else None
                if error is None:
                    return document, answer_headers
                if not error.retryable:
                    raise PermanentError(f"GET {shown}: {redact.redact(error.message)}")
                why, asked = redact.redact(error.message), error.retry_after
            except urllib.error.HTTPError as exc:
                if exc.code not in RETRIED_STATUS:
                    raise PermanentError(f"GET {shown}: HTTP {exc.code} {redact.redact(str(exc.reason))}") from None
                why, asked = f"HTTP {exc.code}", retry_after(exc.headers.get("Retry-After"))
            except _Retryable as exc:
                why = str(exc)
            attempt += 1
            if attempt > self.retry.retries:
                raise TransientError(f"GET {shown}: {why}, still after {self.retry.retries} retries "
                                     f"(rest.retry.max)") from None
            try:
                grant = self.budget.grant(self.retry.wait(attempt, asked))
            except RetryBudgetSpent as spent:
                raise RetryBudgetSpent(f"GET {shown}: {why}, not retried: {spent}") from None
            note = grant.note()
            log.warning("http_retry", url=shown, reason=why, attempt=attempt, wait_s=round(grant.seconds, 3),
                        retry_after=asked, **({"note": note} if note else {}))
            self.retries += 1
            self.sleep(grant.seconds)  # a stop ends the wait at once: the check above then ends the task

    def _fetch(self, target: str, headers: Mapping[str, str], shown: str) -> Answer:
        """The whole body of one GET and its headers, within the deadline and the size limit."""
        with Deadline(self.timeout_s) as deadline:
            opener = _opener(deadline)
            try:
                with opener.open(urllib.request.Request(target, headers=dict(headers)),
                                 timeout=self.timeout_s) as answer:
                    answer_headers = dict(answer.headers.items())
                    body = self._read(answer, answer_headers.get("Content-Length"), shown)
            except _RefusedRedirect as exc:
                raise PermanentError(f"GET {shown}: redirected to {redact.redact(exc.newurl)}: only http:// and "
                                     "https:// redirects are followed") from None
            except urllib.error.HTTPError:
                if deadline.expired:
                    check_cancelled()
                    raise _Retryable(self._late()) from None
                raise
            except (OSError, http.client.HTTPException, _Retryable) as exc:  # timeouts, resets, a body cut short
                check_cancelled()
                if deadline.expired:
                    raise _Retryable(self._late()) from None
                why = str(exc) if isinstance(exc, _Retryable) else f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
                raise _Retryable(redact.redact(why)) from None
            check_cancelled()
            if deadline.expired:  # a body without a length ends where the socket was shut: it is not whole
                raise _Retryable(self._late())
        return Answer(body, answer_headers)

    def _late(self) -> str:
        return f"no whole answer within {self.timeout_s:g} s (rest.timeout.seconds)"

    def _read(self, answer: http.client.HTTPResponse, length: str | None, shown: str) -> bytearray:
        """The body, read into one buffer (its size known up front when the server gives it)."""
        if length is not None and length.strip().isdigit():
            size = int(length)
            self._check_size(size, shown, f"its Content-Length is {size}")
            body = bytearray(size)
            view, done = memoryview(body), 0
            while done < size:
                got = answer.readinto(view[done:done + CHUNK])
                if not got:
                    raise _Retryable(f"the answer was cut short after {done} of its {size} bytes")
                done += got
            view.release()
            return body
        body = bytearray()
        while chunk := answer.read(CHUNK):
            body += chunk
            self._check_size(len(body), shown, f"at least {len(body)} bytes, without a Content-Length")
        return body

    def _check_size(self, size: int, shown: str, how: str) -> None:
        if size > self.max_bytes:
            raise PermanentError(f"GET {shown}: the answer is larger than rest.response.max.bytes={self.max_bytes} "
                                 f"({how}); raise the key, or ask for smaller pages (rest.paging.size)")


@dataclass
class Answer:
    """One answer's body (let go of once parsed: a large one is not kept twice) and headers."""

    body: bytes | bytearray
    headers: dict[str, str]


def parse(answer: Answer, shown: str) -> Any:
    """The JSON document of an answer's body (None for an empty one), the body decoded and let go of before
    parsing, so that a large answer is never held as bytes, text and objects at once; an answer nested deeper than
    Python can parse is an error naming the URL."""
    body, answer.body = answer.body, b""
    if not body or body.isspace():  # (strip() would copy a body that may be large)
        return None
    try:
        text = body.decode(json.detect_encoding(body), "surrogatepass")
    except UnicodeDecodeError as exc:
        raise PermanentError(f"GET {shown}: the answer is not JSON: {exc}") from None
    del body
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PermanentError(f"GET {shown}: the answer is not JSON: {exc}") from None
    except RecursionError:
        raise PermanentError(f"GET {shown}: the answer's JSON is nested deeper than can be read") from None
