"""Substitutions over merged values, as typesafe config 1.4.1 resolves them.

Every expected value below is what typesafe config 1.4.1 gives for the same text (``ConfigFactory.parseString``
then ``resolve()``), except where a test says the port deliberately differs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.jobconf import ConfigError, load_job
from gobblin_py.jobconf.convert import config_to_properties
from gobblin_py.jobconf.hocon import parse_hocon, resolve


def flat(text: str) -> dict:
    return config_to_properties(resolve(parse_hocon(text, path="t.conf"), {}))


def error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        flat(text)
    return info.value


# --- a value later merged with an object ------------------------------------------------------------------
def test_object_over_an_earlier_number_sees_its_own_fields():
    text = "ints = 12\nints { fortyTwo = 42, again = ${ints.fortyTwo} }\noutside = ${ints.again}\n"
    assert flat(text) == {"ints.fortyTwo": "42", "ints.again": "42", "outside": "42"}


def test_path_keys_over_an_earlier_number():
    assert flat("ints = 12\nints.fortyTwo = 42\nints.again = ${ints.fortyTwo}\n") == {
        "ints.fortyTwo": "42",
        "ints.again": "42",
    }


def test_object_over_a_list_then_an_object():
    text = "ints = [1, 2]\nints = { x = 1 }\nints { fortyTwo = 42, again = ${ints.fortyTwo} }\n"
    assert flat(text) == {"ints.x": "1", "ints.fortyTwo": "42", "ints.again": "42"}


def test_reference_to_a_field_of_an_earlier_block_of_the_same_object():
    text = "ints = 12\nints { fortyTwo = 42 }\nints { again = ${ints.fortyTwo} }\n"
    assert flat(text) == {"ints.fortyTwo": "42", "ints.again": "42"}


def test_sibling_reached_through_another_substitution_deliberately_resolves():
    # typesafe 1.4.1 fails here ("Could not resolve substitution to a value: ${ints.a}", or not, depending on
    # the hash order of the keys): it cannot look into an object that hides a non-object while resolving it.
    # The port applies its rule -- the earlier 12 is simply overridden.
    assert flat("x = 1\nints = 12\nints { a = ${x}, b = ${ints.a} }\n") == {"x": "1", "ints.a": "1", "ints.b": "1"}


@given(
    earlier=st.lists(
        st.one_of(
            st.integers(-5, 5).map(str),
            st.sampled_from(['"s"', "true", "null", "[1, 2]", "{ f = 0, g = 1 }", "{ g = 2 }"]),
        ),
        max_size=3,
    ),
    value=st.integers(0, 99),
    path_keys=st.booleans(),
)
def test_a_field_referring_to_its_sibling_sees_the_sibling_whatever_came_before(earlier, value, path_keys):
    lines = [f"k = {item}" for item in earlier]
    if path_keys:
        lines += [f"k.f = {value}", "k.again = ${k.f}"]
    else:
        lines.append(f"k {{ f = {value}, again = ${{k.f}} }}")
    props = flat("\n".join(lines) + "\n")
    assert props["k.f"] == props["k.again"] == str(value)
    # Only an object directly below merges in; anything earlier is hidden.
    below = {"{ f = 0, g = 1 }": "1", "{ g = 2 }": "2"}.get(earlier[-1]) if earlier else None
    assert props.get("k.g") == below


# --- self-references: the value below the current one, for the same path -----------------------------------
def test_list_appends_to_itself():
    assert flat("a = [1]\na = ${a} [2]\na += 3\n") == {"a": "[1,2,3]"}


def test_object_merges_with_itself():
    assert flat("a = { x = 1 }\na = ${a} { y = 2 }\nb = ${a.x}\n") == {"a.x": "1", "a.y": "2", "b": "1"}


def test_self_reference_inside_the_new_part_sees_the_old_value():
    assert flat("a = { x = 1 }\na = ${a} { y = ${a.x} }\n") == {"a.x": "1", "a.y": "1"}


def test_string_self_references_chain():
    assert flat('a = "/root"\na = ${a}"/job"\na = ${a}"/sub"\n') == {"a": "/root/job/sub"}


def test_a_self_reference_that_finds_a_parent_sees_the_lower_value_inside_it():
    # ${?c} finds c, which holds c.z, the merge being resolved: inside it c.z is the value below, "s3".
    err = error('c.z = ${?a.y}\nc.z = ${?c} "t"\na.y = "s3"\n')
    assert "Cannot concatenate" in str(err) and err.path == "t.conf"


def test_optional_references_that_only_meet_themselves_are_dropped_once_not_remembered():
    # typesafe never reuses a dropped (null) result: c.z looks again and finds a.x = [].
    assert flat("a.x += ${?c.z}\nc.z = ${?a.x}\n") == {"a.x": "[]", "c.z": "[]"}


# --- optional substitutions ---------------------------------------------------------------------------------
def test_optional_without_a_value_keeps_the_earlier_assignment():
    assert flat("a = 1\na = ${?nope}\n") == {"a": "1"}


def test_optional_self_reference_with_nothing_below_in_a_concatenation():
    assert flat('path = ${?path}"/x"\n') == {"path": "/x"}


# --- real cycles --------------------------------------------------------------------------------------------
def test_two_references_to_each_other_name_file_line_key_and_the_cycle():
    err = error("a = ${b}\nb = ${a}\n")
    assert (err.path, err.line, err.key) == ("t.conf", 2, "a")
    assert "cycle of substitutions: ${b} (t.conf:1) -> ${a} (t.conf:2) -> ${b}" in str(err)


def test_fields_referring_to_each_other_through_an_object_over_a_number():
    err = error("ints = 12\nints { a = ${ints.b}, b = ${ints.a} }\n")
    assert err.line == 2 and "cycle" in str(err)


def test_a_value_containing_itself_is_a_cycle():
    err = error("a = 12\na { b = ${a} }\n")
    assert (err.line, err.key) == (2, "a") and "cycle" in str(err)


def test_a_cycle_in_a_job_file_names_the_job_file(tmp_path: Path):
    job = tmp_path / "job.conf"
    job.write_text("job.name = x\nsource.a = ${source.b}\nsource.b = ${source.a}\n")
    with pytest.raises(ConfigError) as info:
        load_job(job, env={})
    assert info.value.path == str(job) and info.value.line in (2, 3)
    assert "cycle of substitutions" in str(info.value)
