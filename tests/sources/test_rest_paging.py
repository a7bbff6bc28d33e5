"""The REST source's walk through pages: a run stopped by rest.paging.max is resumed exactly by the next one, and
a server going round in circles (a cursor it gave before, the same page whatever is asked) is caught."""

from __future__ import annotations

import pytest

from tests.sources.rest_jobs import ids, items, run_here, write_job
from tests.sources.web_api import Fault

TEN = list(range(1, 11))


@pytest.mark.parametrize("order, paging, param, watermark_param", [
    ("asc", "page", "page", None),  # the server sends everything: no watermark parameter
    ("desc", "page", "page", "since"),  # newest first, the server told the last run's highest
    ("desc", "offset", "offset", "since"),
    ("asc", "cursor", "cursor", "since"),
])
def test_a_run_stopped_by_the_page_limit_is_resumed_where_it_stopped(web_api, tmp_path, order, paging, param,
                                                                    watermark_param):
    web_api.items.extend(items(*TEN))
    web_api.order = order
    job = write_job(tmp_path, web_api.url, **{"rest.paging.type": paging, "rest.paging.param": param,
                                              "rest.paging.size": "2", "rest.paging.max": "2",
                                              "rest.watermark.param": watermark_param})
    run_here(job, tmp_path)
    assert len(ids(tmp_path)) == 4
    run_here(job, tmp_path)
    run_here(job, tmp_path)  # the last two records, and the walk is complete
    assert sorted(ids(tmp_path)) == TEN
    run_here(job, tmp_path)
    assert sorted(ids(tmp_path)) == TEN  # nothing twice
    web_api.items.extend(items(11, 12))
    for _ in range(3):  # without the parameter the walk goes through the old pages again, two a run
        run_here(job, tmp_path)
    assert sorted(ids(tmp_path)) == [*TEN, 11, 12]


def test_a_cursor_the_server_gave_before_fails_the_run_before_anything_is_published_twice(web_api, tmp_path):
    web_api.items.extend(items(1, 2, 3, 4, 5, 6, 7))
    web_api.repeat_cursor = "3"  # every answer says the next page is at cursor 3
    job = write_job(tmp_path, web_api.url)
    result = run_here(job, tmp_path, expect=1)
    assert "'3' was asked before" in result.output and "rest.paging.repeated" in result.output
    assert ids(tmp_path) == [] and len(web_api.requests("/items")) == 2  # the first page and cursor 3, once
    run_here(write_job(tmp_path, web_api.url, **{"rest.paging.repeated": "stop"}), tmp_path)
    assert ids(tmp_path) == [1, 2, 3, 4, 5, 6]  # the two distinct pages, once; the walk ends with a warning


@pytest.mark.parametrize("paging", ["page", "offset"])
def test_a_server_ignoring_the_page_number_is_caught_at_the_second_page(web_api, tmp_path, paging):
    web_api.items.extend(items(*TEN))
    web_api.ignore_paging = True
    job = write_job(tmp_path, web_api.url, **{"rest.paging.type": paging, "rest.paging.param": paging})
    result = run_here(job, tmp_path, expect=1)
    assert "page 2 holds the same records as page 1" in result.output
    assert ids(tmp_path) == [] and len(web_api.requests("/items")) == 2
    run_here(write_job(tmp_path, web_api.url, **{"rest.paging.type": paging, "rest.paging.param": paging,
                                                  "rest.paging.repeated": "stop"}), tmp_path)
    assert ids(tmp_path) == [1, 2, 3]


def test_an_empty_answer_in_the_middle_of_the_pages_is_retried_never_read_as_their_end(web_api, tmp_path):
    web_api.items.extend(items(*TEN))
    web_api.order = "desc"
    job = write_job(tmp_path, web_api.url, **{"rest.paging.type": "page", "rest.paging.param": "page",
                                              "rest.paging.size": "2", "rest.retry.max": "1",
                                              "rest.retry.backoff.ms": "10"})
    third = lambda path, params: params.get("page") == "3"  # noqa: E731
    web_api.faults.extend([Fault(200, body=b"", when=third), Fault(200, body=b"", when=third)])
    result = run_here(job, tmp_path, expect=1)  # page 3 answered 200 without a body, twice: the retry too
    assert "page=3" in result.output and "the answer is empty" in result.output
    assert ids(tmp_path) == []  # nothing committed: ids 10-7 are not taken for the whole walk
    web_api.faults.append(Fault(200, body=b"", when=third))
    result = run_here(job, tmp_path)  # once: the retry gets the page
    assert sorted(ids(tmp_path)) == TEN and "http_retry" in result.output


@pytest.mark.parametrize("how, size, caught", [
    ("shuffled", "10", "page 2 holds the same records as page 1"),  # the same ten, in another order each time
    ("alternate", "4", "page 3 holds the same records as page 1"),  # ids 1-4, 5-8, 1-4, ...
])
def test_a_server_ignoring_the_page_number_is_caught_whatever_the_order_and_however_far_back(web_api, tmp_path, how,
                                                                                            size, caught):
    web_api.items.extend(items(*TEN))
    web_api.ignore_paging = how
    job = write_job(tmp_path, web_api.url, **{"rest.paging.type": "page", "rest.paging.param": "page",
                                              "rest.paging.size": size, "rest.paging.max": "20"})
    result = run_here(job, tmp_path, expect=1)
    assert caught in result.output and ids(tmp_path) == []


def test_a_page_whose_every_record_came_before_is_caught(web_api, tmp_path):
    web_api.items.extend(items(*TEN))
    web_api.fail_next(200, body={"data": {"items": items(2, 3, 4)}}, when=lambda path, params: params.get("page") == "3")
    job = write_job(tmp_path, web_api.url, **{"rest.paging.type": "page", "rest.paging.param": "page",
                                              "rest.paging.max": "20"})
    result = run_here(job, tmp_path, expect=1)
    assert "every record of page 3 came on an earlier page" in result.output and ids(tmp_path) == []


def _limited(web_api, root, **extra):
    return write_job(root, web_api.url, **{"rest.paging.type": "page", "rest.paging.param": "page",
                                           "rest.paging.size": "2", "rest.paging.max": "2", **extra})


def test_records_arriving_between_runs_of_a_newest_first_walk_are_not_pulled_twice(web_api, tmp_path):
    web_api.items.extend(items(*TEN))
    web_api.order = "desc"
    job = _limited(web_api, tmp_path)
    run_here(job, tmp_path)
    assert ids(tmp_path) == [10, 9, 8, 7]
    web_api.items.extend(items(11, 12))  # every page moves down by two: page 3 now holds 8 and 7 again
    result = run_here(job, tmp_path)
    assert ids(tmp_path) == [10, 9, 8, 7, 6, 5] and '"rest_records_pulled_before"' in result.output
    assert "those this walk pulled are known by their watermark" in result.output  # the page limit's warning
    for _ in range(3):
        run_here(job, tmp_path)
    assert sorted(ids(tmp_path)) == [*TEN, 11, 12] and len(ids(tmp_path)) == 12


def test_a_record_sharing_the_watermark_value_at_the_page_boundary_is_still_pulled(web_api, tmp_path):
    web_api.items.extend({**item, "group": (item["id"] + 1) // 2} for item in items(*TEN))  # 1,1,2,2,...,5,5
    web_api.order = "desc"
    job = _limited(web_api, tmp_path, **{"rest.watermark.field": "group", "rest.watermark.param": None,
                                         "rest.paging.size": "3", "rest.paging.max": "1"})
    run_here(job, tmp_path)
    assert ids(tmp_path) == [10, 9, 8]  # groups 5, 5, 4: id 7 (group 4 too) is on the next page
    web_api.items.extend({**item, "group": 6} for item in items(11, 12))  # page 2 now holds 9, 8 and 7
    for _ in range(4):  # the pages after the first, and the empty one that ends the walk
        run_here(job, tmp_path)
    assert sorted(ids(tmp_path)) == TEN  # 9 and 8 known as pulled; 7, of the same group as 8, pulled
    run_here(job, tmp_path)  # a new walk: the groups above 5
    assert sorted(ids(tmp_path)) == [*TEN, 11, 12]


@pytest.mark.parametrize("key, before, after", [
    ("rest.paging.size", "2", "5"),
    ("rest.query.status", "open", "closed"),
    ("rest.watermark.param", "since", None),
])
def test_a_key_shaping_the_walk_changed_before_it_ends_is_refused_naming_both_values(web_api, tmp_path, key, before,
                                                                                   after):
    web_api.items.extend(items(*range(1, 7)))
    run_here(_limited(web_api, tmp_path, **{key: before}), tmp_path)
    result = run_here(_limited(web_api, tmp_path, **{key: after}), tmp_path, expect=2)
    assert f"{key} is " in result.output and before in result.output and "the walk began with" in result.output
    assert "gpy state reset" in result.output and len(web_api.requests("/items")) == 2  # refused before any request
    run_here(_limited(web_api, tmp_path, **{key: before}), tmp_path)  # pages 3 and 4 (empty: the walk's end)
    assert ids(tmp_path) == list(range(1, 7))  # set back, the walk ends where it would have
    run_here(_limited(web_api, tmp_path, **{key: after}), tmp_path)  # and the next walk takes the new value


def test_a_walk_that_cannot_know_its_records_again_says_so_at_the_page_limit(web_api, tmp_path):
    web_api.items.extend({**item, "mixed": item["id"] % 3} for item in items(*TEN))
    for field, why in ((None, "have no rest.watermark.field"), ("mixed", "do not come in rest.watermark.field order")):
        result = run_here(_limited(web_api, tmp_path / str(field), **{"rest.watermark.field": field,
                                                                      "rest.watermark.param": None}),
                          tmp_path / str(field))
        assert "as many records can be pulled twice or missed" in result.output and why in result.output
