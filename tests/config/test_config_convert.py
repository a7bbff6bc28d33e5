"""Properties <-> config conversion (spec §1.7) and withFallback shapes (spec §1.9)."""

from __future__ import annotations

import pytest

from gobblin_py.jobconf import ConfigError
from gobblin_py.jobconf.convert import (
    config_to_properties,
    find_full_prefix_keys,
    gson_json,
    java_string_sort_key,
    merge_with_fallback,
    properties_to_config,
)
from gobblin_py.jobconf.hocon import HObj, HStr, parse_hocon, resolve


def round_trip(props):
    return config_to_properties(properties_to_config(props))


# --- ConfigUtilsTest ----------------------------------------------------------------------------------------
def test_find_full_prefix_keys_examples():
    keys = ["a.b", "a.b1", "b", "b_a", "a.b.c", "a.b.c.d.e", "b.a"]
    assert find_full_prefix_keys(keys) == {"a.b", "a.b.c", "b"}
    assert find_full_prefix_keys(keys, "a.") == {"a.b", "a.b.c"}
    assert find_full_prefix_keys(keys, "c.") == set()
    assert find_full_prefix_keys(["a.b", "a.b1", "b", "b_a"]) == set()


def test_properties_to_config_and_back():
    props = {"k1.kk1": "v1", "k1.kk2": "v2", "k2.kk": "v3", "k3": "v4", "k3.kk1": "v5", "k3.kk1.kkk1": "v6"}
    config = properties_to_config(props)
    k3 = config.fields["k3"]
    assert isinstance(k3, HObj)
    assert k3.fields["ROOT_VALUE"].text == "v4"  # type: ignore[attr-defined]
    assert k3.fields["kk1"].fields["ROOT_VALUE"].text == "v5"  # type: ignore[attr-defined]
    assert config_to_properties(config) == props


def test_round_trip_of_branch_suffixed_keys():
    props = {"writer.staging.dir": "foobar", "writer.staging.dir.0": "foobar-0"}
    assert round_trip(props) == props


def test_config_to_properties_renders_scalars_as_text():
    assert config_to_properties(parse_hocon('key1=1\nkey2="sTring"\nkey3=true\nkey4=1.50')) == {
        "key1": "1",
        "key2": "sTring",
        "key3": "true",
        "key4": "1.50",
    }


# --- ROOT_VALUE -----------------------------------------------------------------------------------------------
def test_root_value_renaming_of_a_chain():
    config = properties_to_config({"a": "1", "a.b": "2", "a.b.c": "3"})
    assert sorted(config_to_properties(config).items()) == [("a", "1"), ("a.b", "2"), ("a.b.c", "3")]
    a = config.fields["a"]
    assert set(a.fields) == {"ROOT_VALUE", "b"}  # type: ignore[attr-defined]


def test_only_adjacent_keys_are_compared():
    # "a-b" sorts between "a" and "a.b" ('-' < '.'), hiding the conflict: typesafe BugOrBroken.
    with pytest.raises(ConfigError) as info:
        properties_to_config({"a": "1", "a-b": "2", "a.b": "3"}, path="job.pull")
    err = info.value
    assert err.key == "a" and err.path == "job.pull"
    assert "both as a value and as the parent" in str(err)


def test_key_ending_in_root_value_is_rejected():
    with pytest.raises(ConfigError) as info:
        properties_to_config({"x.ROOT_VALUE": "1"}, locate=lambda key: ("job.pull", 7))
    err = info.value
    assert (err.key, err.line, err.path) == ("x.ROOT_VALUE", 7, "job.pull")
    assert ".ROOT_VALUE" in str(err)


def test_root_value_key_that_is_also_a_prefix_is_renamed_again():
    props = {"x.ROOT_VALUE": "1", "x.ROOT_VALUE.y": "2"}
    assert round_trip(props) == props


def test_java_string_order():
    assert sorted(["a.b", "a-b", "a", "a b", "a!"], key=java_string_sort_key) == ["a", "a b", "a!", "a-b", "a.b"]
    # UTF-16 order puts supplementary characters (surrogates) before U+E000..U+FFFF.
    assert sorted(["\uffff", "\U0001F600"], key=java_string_sort_key) == ["\U0001F600", "\uffff"]


# --- BadPath ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key", ["", ".a", "a.", "a..b", "esc=key", "escaped$", "c@d", "a:b", "a{b", "a,b", "a+b", "x#y", "q?", "s*", "a\\b"]
)
def test_bad_keys_are_rejected_naming_the_key(key):
    with pytest.raises(ConfigError) as info:
        properties_to_config({"fine": "1", key: "v"}, locate=lambda k: ("job.pull", 3 if k == key else None))
    err = info.value
    assert err.key == key and err.line == 3 and err.path == "job.pull"
    assert "not a valid config path" in str(err)


@pytest.mark.parametrize("key", ["a-b", "a_b", "a/b", "sp ace", "10.5", "UPPER.lower", "é.ü", "a.1"])
def test_accepted_keys(key):
    assert round_trip({key: "v"}) == {key: "v"}


def test_blacklisted_keys_are_dropped_before_validation():
    props = {"gobblin.config.blacklistKeys": " a ,, bad$key", "a": "1", "a-b": "2", "a.b": "3", "bad$key": "x"}
    assert round_trip(props) == {"gobblin.config.blacklistKeys": " a ,, bad$key", "a-b": "2", "a.b": "3"}


def test_prefix_filter():
    assert round_trip({"a.x": "1", "b.y": "2"}) == {"a.x": "1", "b.y": "2"}
    assert config_to_properties(properties_to_config({"a.x": "1", "b.y": "2"}, prefix="a.")) == {"a.x": "1"}
    assert config_to_properties(parse_hocon("a.x=1\nb.y=2"), prefix="b") == {"b.y": "2"}


# --- flattening --------------------------------------------------------------------------------------------------
def test_quotes_are_removed_from_keys():
    assert config_to_properties(parse_hocon('"a.b" = 1\n"c d".e = 2\n')) == {"a.b": "1", "c d.e": "2"}


def test_lists_become_compact_gson_json():
    config = parse_hocon('l = [a, "b c", 1, 2.50, 1e3, true, null, [x], {k: "v", n: null}]\ne = []\n')
    assert config_to_properties(config) == {
        "l": '["a","b c",1,2.5,1000,true,null,["x"],{"k":"v"}]',
        "e": "[]",
    }


def test_gson_escaping():
    assert gson_json(["<a href='x'>&=", '"\\', "\t\n\x01\u2028"]) == (
        '["\\u003ca href\\u003d\\u0027x\\u0027\\u003e\\u0026\\u003d","\\"\\\\","\\t\\n\\u0001\\u2028"]'
    )


def test_nulls_and_empty_objects_are_omitted():
    assert config_to_properties(parse_hocon("a = null\nb {}\nc = 1\n")) == {"c": "1"}


# --- §1.9 shape conflicts ------------------------------------------------------------------------------------------
def merged(*levels):
    return config_to_properties(resolve(merge_with_fallback([parse_hocon(t) for t in levels]), {}))


def test_string_hides_object_below():
    assert merged("a=1", "a.b=2") == {"a": "1"}


def test_object_hides_string_below():
    assert merged("a.b=2", "a=1") == {"a.b": "2"}


def test_higher_object_shape_wins_over_lower_levels():
    assert merged("x.y=job", "x=global", "x.y.z=sys") == {"x.y": "job"}


def test_objects_merge_across_levels():
    assert merged("a.b=1", "a.c=2", "a.b=3") == {"a.b": "1", "a.c": "2"}


def test_root_value_is_not_repaired_across_files():
    # Each file is sanitised separately: job "a" (a string) hides the parent's "a.b".
    job = properties_to_config({"a": "1"})
    parent = properties_to_config({"a.b": "2"})
    assert config_to_properties(merge_with_fallback([job, parent])) == {"a": "1"}


def test_null_overrides_lower_values():
    assert merged("a=null", "a=1") == {}


def test_merge_keeps_unrelated_values_literal():
    job = properties_to_config({"lit": "${shared}"})
    assert config_to_properties(merge_with_fallback([job, HObj({"shared": HStr("x")})])) == {
        "lit": "${shared}",
        "shared": "x",
    }
