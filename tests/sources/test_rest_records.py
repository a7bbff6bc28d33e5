"""What the REST source does with records it cannot take as they are: watermark values a long cannot hold, values
that went backwards, records that are not JSON objects, a records path that leads nowhere. Never dropped without
a word."""

from __future__ import annotations

import json

import pytest

from tests.sources.rest_jobs import ids, items, published, run_here, write_job


def test_a_fractional_watermark_value_fails_the_run_naming_the_record_and_field(web_api, tmp_path):
    web_api.items.extend([*items(1, 2), {"id": 2.9, "name": "a fraction", "price": None}])
    result = run_here(write_job(tmp_path, web_api.url), tmp_path, expect=1)
    assert "record 3 of page 1" in result.output and "rest.watermark.field=id is 2.9, not a whole number" in result.output
    assert ids(tmp_path) == []  # nothing committed: the next run asks again
    web_api.items[2]["id"] = 3.0  # a whole number written as a float is one
    run_here(write_job(tmp_path, web_api.url), tmp_path)
    assert ids(tmp_path) == [1, 2, 3]


def test_a_first_run_pulls_negative_ids_and_later_runs_only_higher_ones(web_api, tmp_path):
    web_api.items.extend(items(-7, -1, 0, 4))
    job = write_job(tmp_path, web_api.url)
    run_here(job, tmp_path)
    assert ids(tmp_path) == [-7, -1, 0, 4]
    web_api.items.extend(items(5))
    run_here(job, tmp_path)
    assert ids(tmp_path) == [-7, -1, 0, 4, 5]
    assert [r.params.get("since") for r in web_api.requests("/items")] == [None, None, "4"]


def test_a_server_whose_ids_went_backwards_is_a_warning(web_api, tmp_path):
    web_api.items.extend(items(*range(1, 11)))
    job = write_job(tmp_path, web_api.url, **{"rest.watermark.param": None})
    run_here(job, tmp_path)
    web_api.items[:] = items(1, 2, 3)  # the server was reset
    result = run_here(job, tmp_path)
    assert "rest_watermark_backwards" in result.output and '"highest_now": 3' in result.output
    assert '"skipped": 3' in result.output and ids(tmp_path) == list(range(1, 11))


ODD = {"data": {"items": [{"id": 1, "name": "one", "price": None}, [1, 2], 3, "four", None]}}


def test_records_that_are_not_objects_fail_the_run_or_are_skipped_and_counted(web_api, tmp_path):
    web_api.route("/odd", ODD)
    odd = {"rest.url": web_api.url + "/odd", "rest.paging.type": "none"}
    result = run_here(write_job(tmp_path, web_api.url, **odd), tmp_path, expect=1)
    assert "record 2 of page 1 is not a JSON object but list [1, 2]" in result.output
    assert "rest.records.nonobject=skip" in result.output and ids(tmp_path) == []
    result = run_here(write_job(tmp_path, web_api.url, **odd, **{"rest.records.nonobject": "skip"}), tmp_path)
    assert ids(tmp_path) == [1]
    summary = [json.loads(line) for line in result.output.splitlines() if '"rest_records_skipped"' in line]
    assert summary and summary[0]["records"] == 4


def test_a_records_path_that_leads_nowhere_fails_the_run_naming_it(web_api, tmp_path):
    web_api.items.extend(items(1, 2))
    result = run_here(write_job(tmp_path, web_api.url, **{"rest.records.path": "data.records"}), tmp_path, expect=1)
    assert "rest.records.path=data.records leads nowhere" in result.output and "the keys data" in result.output
    web_api.route("/empty", {"data": {"items": []}})  # an empty list is a page without records, not an error
    run_here(write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/empty"}), tmp_path)
    assert published(tmp_path) == []


@pytest.mark.parametrize("value, says", [
    ("٣", "is '٣', not a whole number"),  # an Arabic-Indic three: a digit to Python, not to a watermark
    ("３", "is '３', not a whole number"),  # a fullwidth three
    ([5, 3], "is [5, 3], not a whole number"),  # a list is not its first element
    (1e300, "is 1e+300, outside what a watermark holds"),
    (10 ** 300, "is 1000000000…(301 digits), outside what a watermark holds"),
], ids=["arabic-indic digit", "fullwidth digit", "a list", "1e300", "10**300"])
def test_a_watermark_value_a_long_cannot_hold_fails_naming_it_briefly(web_api, tmp_path, value, says):
    web_api.route("/odd", {"data": {"items": [*items(1), {"id": value, "name": "odd", "price": None}]}})
    result = run_here(write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/odd",
                                                          "rest.paging.type": "none"}), tmp_path, expect=1)
    assert "record 2 of page 1: rest.watermark.field=id " + says in result.output
    assert "0" * 40 not in result.output and ids(tmp_path) == []


def test_a_record_that_does_not_fit_the_schema_is_named_with_its_field(web_api, tmp_path):
    odd = {"id": 4, "name": {"first": "x"}, "price": None}
    web_api.route("/odd", {"data": {"items": [*items(1), "skipped", *items(2, 3), odd]}})
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/odd", "rest.paging.type": "none",
                                              "rest.records.nonobject": "skip"})
    result = run_here(job, tmp_path, expect=1)
    assert (f"GET {web_api.url}/odd: record 5 of page 1 does not fit the schema: its field name (string) cannot "
            'hold {"first": "x"}') in result.output
