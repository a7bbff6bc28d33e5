"""The one masking helper every writer of gpy uses (log lines, task failures, run history, metrics, lineage):
credentials in URLs, query strings and authorisation headers, and values declared secret."""

from __future__ import annotations

from gobblin_py.connectors.rest.settings import RestSettings
from gobblin_py.sdk.redact import redact, redact_value


def test_credentials_in_urls_and_headers_are_masked_and_the_rest_kept():
    assert redact("GET https://ann:pa55@api.example.com/v1?api_key=k3y&page=2&access_token=t0k#x") == \
        "GET https://ann:******@api.example.com/v1?api_key=******&page=2&access_token=******#x"
    assert redact("postgresql://loader@db:5432/shop") == "postgresql://loader@db:5432/shop"  # a user alone is no secret
    assert redact("HTTP 401 Unauthorized: Bearer eyJhbGciOi.J9") == "HTTP 401 Unauthorized: Bearer ******"
    assert redact("Authorization: Basic dXNlcjpwYXNz") == "Authorization: Basic ******"
    prose = "Basic authentication failed; Token expired; sort=name&limit=10 at https://example.com/a?b=c"
    assert redact(prose) == prose
    assert redact_value({"error": ["x?token=abc1", ("y",)], "n": 3}) == {"error": ["x?token=******", ("y",)], "n": 3}


def test_a_value_of_a_key_declared_secret_is_masked_wherever_it_appears():
    RestSettings.load({"rest.url": "https://api.example.com/items", "rest.auth.token": "plain-Secret-42"})
    assert redact("the server said: 'plain-Secret-42 is not valid'") == "the server said: '****** is not valid'"
