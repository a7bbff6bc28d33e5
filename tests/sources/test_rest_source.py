"""The generic HTTP/REST source against a local endpoint (tests/sources/web_api.py): cursor paging, the records'
JSON path, a bearer token from the environment, the watermark field, retries."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest

from gobblin_py.connectors.rest.http import JsonHttpClient, RetryPolicy, retry_after
from gobblin_py.connectors.rest.jsonpath import select
from tests.corpus.harness import run_job, system_config
from tests.sources.web_api import TOKEN
from tests.support.cli import run_gpy
from tests.support.clock import FakeClock

SCHEMA = json.dumps({"type": "record", "name": "Item", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"}, {"name": "price", "type": ["null", "double"]}]})


def write_job(root: Path, url: str, **extra: str) -> Path:
    props = {"job.name": "Items", "source.class": "RestSource", "rest.url": url + "/items",
             "rest.records.path": "data.items", "rest.paging.type": "cursor", "rest.paging.param": "cursor",
             "rest.paging.size": "3", "rest.paging.cursor.path": "next", "rest.auth.token": "${env:ITEMS_TOKEN}",
             "rest.watermark.field": "id", "rest.watermark.param": "since", "rest.schema": SCHEMA,
             "extract.namespace": "shop", "extract.table.name": "items", "writer.output.format": "AVRO", **extra}
    root.mkdir(parents=True, exist_ok=True)
    job = root / "items.pull"
    job.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    system_config(root)
    return job


def published(root: Path) -> list[dict]:
    rows = []
    for path in sorted((root / "job-output" / "shop" / "items").rglob("*.avro")):
        with open(path, "rb") as stream:
            rows.extend(fastavro.reader(stream))
    return rows


def test_pages_of_records_are_pulled_once_and_a_second_run_asks_only_newer_ones(web_api, tmp_path):
    web_api.items.extend({"id": i, "name": f"item {i}", "price": i * 1.5, "extra": "dropped"} for i in range(1, 8))
    job = write_job(tmp_path, web_api.url)
    env = {"ITEMS_TOKEN": TOKEN}
    run_job(job, tmp_path, env=env)
    assert published(tmp_path) == [{"id": i, "name": f"item {i}", "price": i * 1.5} for i in range(1, 8)]
    first = web_api.requests("/items")
    assert [r.params.get("cursor") for r in first] == [None, "3", "6"]  # three pages of at most 3
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" and "since" not in r.params for r in first)

    web_api.items.extend({"id": i, "name": f"item {i}", "price": None} for i in (8, 9))
    web_api.log.clear()
    run_job(job, tmp_path, env=env)
    assert [r["id"] for r in published(tmp_path)] == list(range(1, 10))
    assert [r.params["since"] for r in web_api.requests("/items")] == ["7"]


def test_a_server_asking_to_wait_is_retried_and_a_refused_token_fails_the_run(web_api, tmp_path):
    web_api.items.extend({"id": i, "name": f"item {i}", "price": None} for i in range(1, 3))
    web_api.fail_next(503, retry_after="0")
    web_api.fail_next(502)
    job = write_job(tmp_path, web_api.url, **{"rest.retry.backoff.ms": "1"})
    run_job(job, tmp_path, env={"ITEMS_TOKEN": TOKEN})
    assert [r["id"] for r in published(tmp_path)] == [1, 2]
    assert [r.status for r in web_api.requests("/items")] == [503, 502, 200]

    result = run_job(write_job(tmp_path / "bad", web_api.url), tmp_path / "bad", expect=1,
                     env={"ITEMS_TOKEN": "wrong"})
    out = result.stdout + result.stderr
    assert "HTTP 401" in out and "wrong" not in out  # the credential is never printed


def test_each_retry_waits_what_the_server_asks_else_the_doubling_back_off(web_api):
    web_api.items.append({"id": 1, "name": "item 1", "price": None})
    web_api.fail_next(503, retry_after="7")
    web_api.fail_next(502)
    web_api.fail_next(429)
    clock = FakeClock()
    client = JsonHttpClient({"Authorization": f"Bearer {TOKEN}"}, retry=RetryPolicy(5, 0.25, 30.0), sleep=clock.sleep)
    document, _ = client.get(web_api.url + "/items")
    assert [item["id"] for item in document["data"]["items"]] == [1]
    # the server's Retry-After, then the back-off of the second and third retries (0.25 s doubled each retry)
    assert clock.slept == [7.0, 0.5, 1.0] and client.retries == 3
    assert [r.status for r in web_api.requests("/items")] == [503, 502, 429, 200]


def test_validate_masks_the_token_and_names_bad_keys(web_api, tmp_path):
    job = write_job(tmp_path, web_api.url, **{"rest.auth.token": "plain-secret", "rest.paging.type": "pages"})
    result = run_gpy("validate", str(job), "--json", "--sysconfig", str(tmp_path / "gobblin.properties"))
    report = json.loads(result.stdout)[0]
    assert report["properties"]["rest.auth.token"] == "******" and "plain-secret" not in result.stdout
    assert any("rest.paging.type" in p for p in report["problems"])


@pytest.mark.parametrize("paging, param, asked", [
    ("page", "page", ["1", "2", "3"]),  # the third page is short: the last
    ("offset", "offset", ["0", "3", "6"]),
])
def test_page_numbers_and_offsets_end_at_a_short_page(web_api, tmp_path, paging, param, asked):
    web_api.items.extend({"id": i, "name": f"item {i}", "price": None} for i in range(1, 8))
    job = write_job(tmp_path, web_api.url, **{"rest.paging.type": paging, "rest.paging.param": param})
    run_job(job, tmp_path, env={"ITEMS_TOKEN": TOKEN})
    assert [r["id"] for r in published(tmp_path)] == list(range(1, 8))
    assert [r.params[param] for r in web_api.requests("/items")] == asked


def test_retry_after_is_read_as_seconds_or_as_an_http_date():
    assert retry_after("3") == 3.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412500.0) == 10.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412500.0) == 0.0  # a date past: at once
    policy = RetryPolicy(retries=3, backoff_s=0.5, max_wait_s=2.0)
    assert [policy.wait(n, None) for n in (1, 2, 3)] == [0.5, 1.0, 2.0] and policy.wait(1, 60.0) == 2.0


def test_records_are_found_by_a_dotted_path_with_stars():
    answer = {"query": {"pages": {"7": {"revisions": [{"revid": 1}, {"revid": 2}]}, "9": {"revisions": []}}}}
    assert select(answer, "query.pages.*.revisions") == [{"revid": 1}, {"revid": 2}]
    assert select(answer, "query.pages.7.revisions.1.revid") == [2] and select(answer, "query.none") == []
    assert select([{"a": 1}], "") == [{"a": 1}]


def test_the_credential_follows_a_redirect_on_its_host_only(web_api, tmp_path):
    web_api.items.extend({"id": i, "name": f"item {i}", "price": None} for i in range(1, 3))
    port = web_api.url.rsplit(":", 1)[1]
    env = {"ITEMS_TOKEN": TOKEN}
    run_job(write_job(tmp_path, web_api.url, **{"rest.url": f"{web_api.url}/moved?to=/items"}), tmp_path, env=env)
    assert [r["id"] for r in published(tmp_path)] == [1, 2]
    web_api.log.clear()
    other = tmp_path / "other"  # another host name for the same server: the token is not sent there
    result = run_job(write_job(other, web_api.url, **{"rest.url": f"{web_api.url}/moved?to=http://localhost:{port}/items"}),
                     other, expect=1, env=env)
    assert "HTTP 401" in result.stdout + result.stderr
    assert "Authorization" not in web_api.requests("/items")[0].headers
