"""Gobblin's getting-started example, its job files as they are (only the API's root URL and the folders pointed
elsewhere): wikipedia.pull and wikipedia-console.pull against a local MediaWiki API (tests/sources/web_api.py)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.orc as orc
import pytest

from tests.corpus.harness import local_copy, run_job, system_config
from tests.sources.rest_jobs import run_here
from tests.sources.web_api import add_sample_pages
from tests.support.cli import run_gpy
from tests.support.paths import NEEDS_CORPUS

pytestmark = NEEDS_CORPUS

EXAMPLES = "gobblin-example/src/main/resources/"
HOURS = dt.timedelta(hours=1)


def published(root: Path) -> dict[str, list[dict]]:
    """The Avro rows published, by their partition folder (below the extract's ``<id>_append`` folder, as in
    Gobblin's output paths), oldest run first."""
    table = root / "job-output" / "org" / "apache" / "gobblin" / "example" / "wikipedia" / "WikipediaOutput"
    rows: dict[str, list[dict]] = {}
    for path in sorted(table.rglob("*.avro")):
        with open(path, "rb") as stream:
            rows.setdefault(path.parent.name, []).extend(fastavro.reader(stream))
    return rows


def test_wikipedia_pull_publishes_new_revisions_per_page_and_a_second_run_only_newer_ones(web_api, tmp_path):
    # LinkedIn: two revisions older than the 2-day bootstrap window, then six inside it; the Sandbox: fifteen
    add_sample_pages(web_api)  # what `python -m tests.sources.web_api` serves (docs/guides/rest-wikipedia.md)
    job = local_copy(EXAMPLES + "wikipedia.pull", tmp_path, {"wikipedia.api.rooturl": web_api.api})
    system_config(tmp_path)
    run_job(job, tmp_path)
    rows = published(tmp_path)
    # Gobblin's rules: the window's first revision is the starting point (not pulled); at most
    # maxRevisionsPerPage=10 per page and run; the partitioner's folder is the title, ':' made '_'
    assert sorted(rows) == ["LinkedIn", "Wikipedia_Sandbox"]
    assert [r["revid"] for r in rows["LinkedIn"]] == [103.0, 104.0, 105.0, 106.0, 107.0]
    assert [r["revid"] for r in rows["Wikipedia_Sandbox"]] == [float(i) for i in range(201, 211)]
    first = rows["LinkedIn"][0]
    assert first["title"] == "LinkedIn" and first["pageid"] == 1000.0 and first["user"] == "Editor5"
    assert first["size"] == 2103.0 and first["timestamp"].endswith("Z") and first["content"] is None
    assert rows["LinkedIn"][2]["anon"] == "" and rows["LinkedIn"][2]["userid"] == 0.0  # revision 105, anonymous
    assert rows["LinkedIn"][0]["anon"] is None

    web_api.add_revisions("LinkedIn", 108, 2, age=HOURS)
    web_api.log.clear()
    run_job(job, tmp_path)
    rows = published(tmp_path)
    assert [r["revid"] for r in rows["LinkedIn"]] == [float(i) for i in range(103, 110)]  # 108, 109 added
    # the Sandbox goes on after the tenth revision it stopped at
    assert [r["revid"] for r in rows["Wikipedia_Sandbox"]] == [float(i) for i in range(201, 215)]
    pulls = [r.params for r in web_api.requests("/w/api.php") if r.params.get("rvdir") == "newer"]
    assert {(p["titles"], p["rvstartid"]) for p in pulls} == {("LinkedIn", "107"), ("Wikipedia:Sandbox", "210")}
    assert not any("rvstart" in p for p in pulls)  # no bootstrap on a second run

    web_api.log.clear()
    run_job(job, tmp_path)  # nothing new: each page's newest revision is asked, none pulled
    assert {page: len(revisions) for page, revisions in published(tmp_path).items()} == \
        {"LinkedIn": 7, "Wikipedia_Sandbox": 14}
    assert {r.params["rvprop"] for r in web_api.requests("/w/api.php")} == {"ids"}


def test_the_local_mediawiki_api_of_the_readme_serves_the_pages_of_wikipedia_pull():
    """`python -m tests.sources.web_api`, as the docs run it: it prints the wikipedia.api.rooturl to set, and
    answers there for the job's pages (what a run then pulls is the test above's)."""
    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen([sys.executable, "-m", "tests.sources.web_api", "--port", "0", "--new-every", "0"],
                              cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        key, _, rooturl = server.stdout.readline().strip().partition("=")
        assert key == "wikipedia.api.rooturl" and rooturl.endswith("/w/api.php"), (key, rooturl)
        newest = {}
        for title in ("LinkedIn", "Wikipedia:Sandbox"):  # source.page.titles of wikipedia.pull
            query = f"?action=query&prop=revisions&rvprop=ids&format=json&titles={title}"
            answer = json.load(urllib.request.urlopen(rooturl + query, timeout=10))
            (page,) = answer["query"]["pages"].values()
            newest[title] = page["revisions"][0]["revid"]
        assert newest == {"LinkedIn": 107, "Wikipedia:Sandbox": 214}
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_wikipedia_console_retries_a_429_after_its_retry_after_and_a_500(web_api, tmp_path):
    for number, title in enumerate(("NASA", "LinkedIn", "Parris_Cues", "Barbara_Corcoran")):
        web_api.add_revisions(title, 1000 * (number + 1), 4, age=HOURS)
    web_api.fail_next(429, retry_after="1")
    web_api.fail_next(500)
    job = local_copy(EXAMPLES + "wikipedia-console.pull", tmp_path, {"wikipedia.api.rooturl": web_api.api})
    system_config(tmp_path, **{"task.maxretries": "0"})  # no task retry: the requests' own retries carry the run
    result = run_job(job, tmp_path)
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")
               and '"revid"' in line]
    # each page: the window's first revision is the starting point, the three after it are pulled
    assert sorted(int(r["revid"]) for r in printed) == sorted(1000 * n + i for n in range(1, 5) for i in (1, 2, 3))
    requests = web_api.requests("/w/api.php")  # the pages' tasks run at once: their requests interleave
    assert [r.status for r in requests[:2]] == [429, 500]
    retried = [next(later for later in requests[n + 1:] if later.params == failed.params)
               for n, failed in enumerate(requests[:2])]
    # Retry-After: 1 honoured, the 500 retried after the first back-off (0.5 s): the waits the run logged, and at
    # least as long between the requests (a busy machine only makes a gap longer)
    logged = [json.loads(line) for line in (result.stdout + result.stderr).splitlines() if line.startswith("{")]
    waits = sorted((e["reason"], e["wait_s"]) for e in logged if e.get("event") == "http_retry")
    assert waits == [("HTTP 429", 1.0), ("HTTP 500", 0.5)]
    assert retried[0].at - requests[0].at >= 1.0 and retried[1].at - requests[1].at >= 0.5
    assert all(r.status == 200 for r in requests[2:])


def test_a_page_the_api_refuses_fails_the_task_naming_the_request(web_api, tmp_path):
    web_api.add_revisions("NASA", 10, 3, age=HOURS)
    job = local_copy(EXAMPLES + "wikipedia-console.pull", tmp_path, {"wikipedia.api.rooturl": web_api.url + "/nowhere",
                                                                    "source.page.titles": "NASA"})
    system_config(tmp_path)
    result = run_job(job, tmp_path, expect=1)
    assert "HTTP 400" in result.stdout + result.stderr and "/nowhere" in result.stdout + result.stderr


def test_wikipedia_orc_writes_the_columns_of_its_avro_schema_literal_as_orc(web_api, tmp_path):
    """HiveSerDeConverter (AvroSerDe → OrcSerde) and HiveWritableHdfsDataWriterBuilder: the revisions read as
    avro.schema.literal says (no revid column there) and written as ORC."""
    web_api.add_revisions("NASA", 70, 3, age=HOURS)
    web_api.add_revisions("LinkedIn", 80, 2, age=HOURS)
    job = local_copy(EXAMPLES + "wikipedia-orc.pull", tmp_path, {"wikipedia.api.rooturl": web_api.api})
    system_config(tmp_path)
    run_job(job, tmp_path)
    files = sorted((tmp_path / "job-output").rglob("*.orc"))
    table = pa.concat_tables([orc.read_table(path) for path in files])
    assert table.schema.names == ["pageid", "title", "user", "anon", "userid", "timestamp", "size", "contentformat",
                                  "contentmodel", "content"]
    assert table.schema.field("size").type == pa.float64() and table.schema.field("title").type == pa.string()
    assert sorted(zip(table.column("title").to_pylist(), table.column("size").to_pylist())) == \
        [("LinkedIn", 2081.0), ("NASA", 2071.0), ("NASA", 2072.0)]


def test_a_hive_serde_pair_gpy_does_not_map_is_refused_naming_the_key(tmp_path):
    cases = {"serde.serializer.type": "PARQUET", "serde.deserializer.type": "ORC", "writer.output.format": "AVRO"}
    for n, (key, value) in enumerate(cases.items()):
        (tmp_path / str(n)).mkdir()
        local_copy(EXAMPLES + "wikipedia-orc.pull", tmp_path / str(n), {key: value})
    system_config(tmp_path)
    result = run_gpy("validate", str(tmp_path), "--json", "--sysconfig", str(tmp_path / "gobblin.properties"))
    reports = {Path(r["path"]).parent.name: r for r in json.loads(result.stdout)}
    for n, (key, value) in enumerate(cases.items()):
        assert any(f"key '{key}': {value}" in p for p in reports[str(n)]["problems"]), reports[str(n)]["problems"]


def _linkedin_job(web_api, tmp_path, **system: str) -> Path:
    job = local_copy(EXAMPLES + "wikipedia.pull", tmp_path, {"wikipedia.api.rooturl": web_api.api,
                                                             "source.page.titles": "LinkedIn"})
    system_config(tmp_path, **{"rest.retry.backoff.ms": "10", **system})
    return job


def _listing(path: str, params: dict) -> bool:
    return params.get("rvdir") == "newer" and "rvstartid" in params


MAXLAG = {"error": {"code": "maxlag", "info": "Waiting for db1: 7 seconds lagged", "host": "db1", "lag": 7,
                    "type": "db", "*": "See https://www.mediawiki.org/w/api.php for API usage"}, "servedby": "mw1"}


def test_an_api_error_inside_an_http_200_fails_the_task_and_commits_no_watermark(web_api, tmp_path):
    web_api.add_revisions("LinkedIn", 95, 6, age=2 * HOURS)
    job = _linkedin_job(web_api, tmp_path, **{"rest.retry.max": "1"})
    run_here(job, tmp_path)
    assert [r["revid"] for r in published(tmp_path)["LinkedIn"]] == [96.0, 97.0, 98.0, 99.0, 100.0]
    web_api.add_revisions("LinkedIn", 101, 10, age=HOURS)
    for _ in range(2):  # MediaWiki under load: maxlag in an HTTP 200, beyond the one retry allowed
        web_api.fail_next(200, retry_after="0", body=MAXLAG, headers={"MediaWiki-API-Error": "maxlag"}, when=_listing)
    result = run_here(job, tmp_path, expect=1)
    assert "the MediaWiki API answered error 'maxlag': Waiting for db1: 7 seconds lagged" in result.output
    assert len(published(tmp_path)["LinkedIn"]) == 5
    web_api.log.clear()
    run_here(job, tmp_path)  # the next run pulls what the failed one could not, from the same watermark
    assert [r["revid"] for r in published(tmp_path)["LinkedIn"]] == [float(i) for i in range(96, 111)]
    assert [r.params["rvstartid"] for r in web_api.requests("/w/api.php") if _listing("", r.params)][0] == "100"


def test_maxlag_is_retried_after_the_wait_the_api_asks(web_api, tmp_path):
    web_api.add_revisions("LinkedIn", 95, 6, age=2 * HOURS)
    web_api.fail_next(200, retry_after="1", body=MAXLAG, headers={"MediaWiki-API-Error": "maxlag"}, when=_listing)
    run_here(_linkedin_job(web_api, tmp_path), tmp_path)
    assert len(published(tmp_path)["LinkedIn"]) == 5
    listings = [r for r in web_api.requests("/w/api.php") if _listing("", r.params)]
    assert len(listings) == 2 and listings[1].at - listings[0].at >= 1.0


@pytest.mark.parametrize("answer, says", [
    ({"errors": [{"code": "badvalue", "text": "Unrecognized value for parameter \"rvdir\": sideways.",
                  "module": "query+revisions"}], "docref": "See https://www.mediawiki.org/w/api.php"},
     "error 'badvalue': Unrecognized value"),
    ({"batchcomplete": ""}, "the answer has no page (no query.pages)"),
    ({"query": {"pages": {"-1": {"title": "Link|edIn", "invalidreason": "The requested page title contains invalid "
                                 "characters: \"|\".", "invalid": ""}}}}, "MediaWiki calls the title 'LinkedIn' invalid"),
])
def test_other_error_answers_fail_the_task_at_once(web_api, tmp_path, answer, says):
    web_api.add_revisions("LinkedIn", 95, 6, age=2 * HOURS)
    web_api.fail_next(200, body=answer, when=_listing)
    result = run_here(_linkedin_job(web_api, tmp_path), tmp_path, expect=1)
    assert says in result.output
    assert len([r for r in web_api.requests("/w/api.php") if _listing("", r.params)]) == 1  # not retried
    assert published(tmp_path) == {}


def test_a_missing_page_is_a_warning_and_keeps_its_watermark(web_api, tmp_path):
    web_api.add_revisions("LinkedIn", 95, 6, age=2 * HOURS)
    job = _linkedin_job(web_api, tmp_path)
    run_here(job, tmp_path)
    removed = web_api.pages.pop("LinkedIn")
    result = run_here(job, tmp_path)
    assert "wikipedia_page_missing" in result.output
    web_api.pages["LinkedIn"] = removed
    web_api.add_revisions("LinkedIn", 101, 2, age=HOURS)
    run_here(job, tmp_path)
    assert [r["revid"] for r in published(tmp_path)["LinkedIn"]] == [float(i) for i in range(96, 103)]


@pytest.mark.parametrize("revisions", [None, []], ids=["no revisions key", "an empty list"])
def test_a_listing_without_the_revisions_below_the_newest_keeps_the_watermark_and_warns(web_api, tmp_path, revisions):
    web_api.add_revisions("LinkedIn", 95, 6, age=2 * HOURS)
    job = _linkedin_job(web_api, tmp_path)
    run_here(job, tmp_path)
    web_api.add_revisions("LinkedIn", 101, 10, age=HOURS)
    page = {"pageid": 1000, "ns": 0, "title": "LinkedIn", **({} if revisions is None else {"revisions": revisions})}
    web_api.fail_next(200, body={"batchcomplete": "", "query": {"pages": {"1000": page}}}, when=_listing)
    result = run_here(job, tmp_path)  # the newest is 110, yet the listing after 100 holds nothing
    assert "wikipedia_revisions_missing" in result.output and '"newest": 110' in result.output
    run_here(job, tmp_path)  # the watermark stayed at 100: the next run pulls 101-110
    assert [r["revid"] for r in published(tmp_path)["LinkedIn"]] == [float(i) for i in range(96, 111)]


def test_a_revision_that_does_not_fit_the_schema_is_named_with_its_field():
    from gobblin_py.connectors.wikipedia import WikipediaConverter
    from gobblin_py.sdk.errors import PermanentError
    from gobblin_py.sdk.schema_meta import text_schema
    from gobblin_py.sdk.states import WorkUnitState

    schema = json.dumps({"type": "record", "name": "R", "fields": [{"name": "revid", "type": "long"},
                                                                   {"name": "title", "type": "string"}]})
    converter = WikipediaConverter()
    state = WorkUnitState()
    converter.init(state)
    converter.convert_schema(text_schema(schema), state)
    texts = [json.dumps({"revid": 7, "title": "NASA"}), json.dumps({"revid": "8a", "title": "NASA"})]
    with pytest.raises(PermanentError, match=r"WikipediaConverter: revision 8a of 'NASA' does not fit the schema: "
                                             r"its field revid \(int64\) cannot hold \"8a\""):
        converter.convert_batch(pa.RecordBatch.from_arrays([pa.array(texts)], schema=text_schema(schema)), state)
