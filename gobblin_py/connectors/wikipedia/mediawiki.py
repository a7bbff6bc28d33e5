"""What a MediaWiki API answer says besides its data: errors inside an HTTP 200, warnings, and missing pages.

MediaWiki answers an error with HTTP 200 and the error in the body, and a ``MediaWiki-API-Error`` header naming
its code: ``{"error": {"code": "maxlag", "info": "Waiting for db1: 5 seconds lagged", "lag": 5}}`` (the default
``errorformat=bc``) or ``{"errors": [{"code": …, "text": …}]}`` (every other ``errorformat``). Under load it sends
``maxlag`` (with ``Retry-After``); a wiki being maintained sends ``readonly``; a database failure
``internal_api_error_…``; too many requests ``ratelimited``: those are retried, as the server asks, and fail the
task when the retries run out. Any other error fails the task at once. An error is never read as "no revisions".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gobblin_py.connectors.rest.http import ApiError, retry_after

RETRIED_CODES = frozenset({"maxlag", "ratelimited", "readonly"})
RETRIED_PREFIXES = ("internal_api_error",)


def api_error(document: Any, headers: Mapping[str, str]) -> ApiError | None:
    """The error a MediaWiki answer reports (retryable where MediaWiki says to wait), or None."""
    header = next((v for k, v in headers.items() if k.lower() == "mediawiki-api-error"), None)
    errors = _errors(document)
    if not errors and header is None:
        return None
    if not errors:
        errors = [{"code": header}]
    first = errors[0]
    code = str(first.get("code") or header or "unknown")
    text = first.get("info") or first.get("text") or first.get("html") or first.get("key") or ""
    wait = retry_after(next((v for k, v in headers.items() if k.lower() == "retry-after"), None))
    lag = first.get("lag")
    if wait is None and isinstance(lag, (int, float)) and not isinstance(lag, bool):
        wait = float(lag)
    retryable = code in RETRIED_CODES or code.startswith(RETRIED_PREFIXES) or wait is not None
    message = f"the MediaWiki API answered error {code!r}" + (f": {text}" if text else "")
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return ApiError(message, retryable, wait)


def _errors(document: Any) -> list[dict[str, Any]]:
    if not isinstance(document, dict):
        return []
    error, errors = document.get("error"), document.get("errors")
    if isinstance(error, dict):
        return [error]
    if isinstance(error, str):
        return [{"code": error}]
    if isinstance(errors, list) and errors:
        return [e if isinstance(e, dict) else {"code": str(e)} for e in errors]
    return []


def warnings(document: Any) -> list[str]:
    """The warnings of an answer (``{"warnings": {"main": {"*": …}}}``, or a list of them), as text."""
    found = document.get("warnings") if isinstance(document, dict) else None
    if isinstance(found, dict):
        return [f"{module}: {w.get('*') or w.get('warnings') or w}" if isinstance(w, dict) else f"{module}: {w}"
                for module, w in found.items()]
    if isinstance(found, list):
        return [str(w.get("text") or w.get("code") or w) if isinstance(w, dict) else str(w) for w in found]
    return []
