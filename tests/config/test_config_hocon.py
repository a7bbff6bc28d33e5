"""HOCON with typesafe config 1.4.1 semantics (spec §1.8), including the points where pyhocon differs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.jobconf import ConfigError
from gobblin_py.jobconf.convert import config_to_properties, merge_with_fallback
from gobblin_py.jobconf.hocon import (
    BadPath,
    HObj,
    java_double_to_string,
    parse_hocon,
    parse_hocon_file,
    parse_path_expression,
    render_path,
    resolve,
)


def flat(text: str, env=None, **kwargs):
    return config_to_properties(resolve(parse_hocon(text, path="t.conf", **kwargs), env or {}))


def parse_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        flat(text)
    return info.value


# --- spec §1.8 ------------------------------------------------------------------------------------------
def test_optional_substitution_drops_the_assignment():
    text = 'key1="jobValue1,jobValue2,jobValue3"\nkey2=${key10}\nkey2=${?key4}\nkey10=jobValue2\n'
    assert flat(text) == {"key1": "jobValue1,jobValue2,jobValue3", "key2": "jobValue2", "key10": "jobValue2"}


def test_optional_substitution_resolves_over_the_merged_tree():
    job = parse_hocon("key2=${key10}\nkey2=${?key4}\nkey10=jobValue2\n")
    parent = parse_hocon("key4=dir1Value4\nkey2a=${key2}\n")
    merged = resolve(merge_with_fallback([job, parent]), {})
    assert config_to_properties(merged) == {
        "key4": "dir1Value4",
        "key2a": "dir1Value4",
        "key2": "dir1Value4",
        "key10": "jobValue2",
    }


def test_self_reference_and_concatenation():
    assert flat('self=base\nself=${self}",ext"\nnum=10\nc=${num}" items"\n') == {
        "self": "base,ext",
        "num": "10",
        "c": "10 items",
    }


def test_self_reference_sees_lower_files_only():
    job = parse_hocon('path=${path}"/job"\n')
    parent = parse_hocon("path=/root\n")
    assert config_to_properties(resolve(merge_with_fallback([job, parent]), {})) == {"path": "/root/job"}


def test_object_self_reference_merges():
    assert flat("x = {a:1}\nx = ${x} {b:2}\n") == {"x.a": "1", "x.b": "2"}


def test_plus_equals_appends_to_lists():
    assert flat("a=[x]\na+=y\nb+=z\n") == {"a": '["x","y"]', "b": '["z"]'}


def test_plus_equals_on_a_string_is_an_error():
    # pyhocon concatenates "x y"; typesafe cannot concatenate a string and a list.
    assert "Cannot concatenate" in str(parse_error("a=x\na+=y\n"))


def test_unquoted_comma_list_is_a_parse_error():
    err = parse_error("comma=a,b\n")
    assert "Failed to parse config file t.conf at lineNo:" in str(err)


def test_unquoted_colon_is_a_parse_error_with_the_line_number():
    err = parse_error("\n" * 17 + "key1=foo:122 // unquoted :\n")
    assert err.line == 18 and err.path == "t.conf"
    assert "Failed to parse config file t.conf at lineNo:18" in str(err)


def test_later_assignments_win_with_shape_changes():
    assert flat("a=1\na.b=2\n") == {"a.b": "2"}
    assert flat("a.b=2\na=1\n") == {"a": "1"}


def test_root_value_trick():
    assert flat("a.ROOT_VALUE=1\na.b=2\n") == {"a": "1", "a.b": "2"}


def test_environment_fallback():
    assert flat("h=${HOME}\nd=${a.b}\n", env={"HOME": "/home/me", "a.b": "dotted"}) == {
        "h": "/home/me",
        "d": "dotted",
    }


def test_config_wins_over_environment():
    assert flat("HOME=mine\nh=${HOME}\n", env={"HOME": "/home/me"})["h"] == "mine"


def test_optional_in_concatenation_is_omitted():
    assert flat("from=a\np=${from}/${?nope}\n") == {"from": "a", "p": "a/"}


def test_unresolved_required_substitution_names_file_line_and_key():
    err = parse_error("a=1\nb=${nope}\n")
    assert (err.path, err.line, err.key) == ("t.conf", 2, "nope")
    assert "${?nope}" in str(err)


def test_substitution_cycle_is_an_error():
    err = parse_error("a=${b}\nb=${a}\n")
    assert "cycle" in str(err) and err.path == "t.conf"


def test_optional_self_reference_with_nothing_below_disappears():
    assert flat("a=${?a}\nb=1\n") == {"b": "1"}


# --- tokens and values: where pyhocon 0.3.63 differs from typesafe --------------------------------------
def test_number_and_boolean_text_is_kept():
    assert flat("n=1.50\nm=007\nd=1.0\nb=true\nT=True\nbig=123456789012345678901234\n") == {
        "n": "1.50",
        "m": "007",
        "d": "1.0",
        "b": "true",
        "T": "True",
        "big": "123456789012345678901234",
    }


def test_durations_are_plain_strings():
    assert flat("timeout=10 seconds\n") == {"timeout": "10 seconds"}


def test_null_values_are_omitted_when_flattened():
    assert flat("a=null\nb=1\nc=nullx\n") == {"b": "1", "c": "nullx"}


def test_keyword_prefixes_concatenate():
    assert flat("a=trueish\nb=falsehood\n") == {"a": "trueish", "b": "falsehood"}


def test_quoted_strings_inside_unquoted_text():
    assert flat('job.description=The "Hello World" Gobblin job\n') == {
        "job.description": "The Hello World Gobblin job"
    }


def test_json_escapes_and_triple_quotes():
    assert flat('a="x\\ty\\u0041\\/"\nb="""raw\\n "q" \nline"""\nc = """x"""""\n') == {
        "a": "x\tyA/",
        "b": 'raw\\n "q" \nline',
        "c": 'x""',
    }


@pytest.mark.parametrize("value", ["C:\\dir", "0 0/2 * * * ?", "a=b", "x@y", "a^b", "it's!", "foo\\=bar"])
def test_reserved_characters_outside_quotes_are_errors(value):
    err = parse_error(f"k={value}\n")
    assert err.line == 1


def test_unicode_keys_and_quoted_keys():
    assert flat('ключ=1\n"a.b"=2\n"a$b"=3\n') == {"ключ": "1", "a.b": "2", "a$b": "3"}


def test_newlines_after_separator_and_before_object():
    assert flat("a =\n  1\nb\n{ c = 2 }\n") == {"a": "1", "b.c": "2"}


def test_list_followed_by_unquoted_text_keeps_the_list():
    assert flat("a=[1] foo\n") == {"a": "[1]"}


def test_braced_root_and_json_files():
    assert flat('{"a": {"b": [1, 2.5, "x", true, null, {"c": "<&>"}]}}') == {
        "a.b": '[1,2.5,"x",true,null,{"c":"\\u003c\\u0026\\u003e"}]'
    }


def test_root_must_be_an_object():
    assert "object at its root" in str(parse_error("[1, 2]"))


def test_comments():
    assert flat('# c\n// c\na = 1 // trailing\nb = "http://x.y/z" # quoted\nc = a/b\n') == {
        "a": "1",
        "b": "http://x.y/z",
        "c": "a/b",
    }


def test_unquoted_url_is_an_error():
    assert parse_error("b = http://x.y/z\n").line == 1


def test_duplicate_object_keys_merge():
    assert flat("a { x = 1 }\na { y = 2 }\nb = ${a} { z = 3 }\n") == {
        "a.x": "1",
        "a.y": "2",
        "b.x": "1",
        "b.y": "2",
        "b.z": "3",
    }


def test_trailing_comma_in_list_and_newline_separators():
    assert flat("l = [\n  a\n  b,\n  c,\n]\n") == {"l": '["a","b","c"]'}


@pytest.mark.parametrize(
    "text,line",
    [
        ("a = {\n b = 1\n", 3),
        ("a = }\n", 1),
        ("a = [1, 2\nb = 3\n", 2),
        ('a = "open\n', 1),
        ("a = ${b\n", 1),
        ("a = ${}\n", 1),
        ("a = $x\n", 1),
        ("a + 1\n", 1),
        ("\n\nkey with newline\n= 1\n2 3\n", 6),  # typesafe counts the newline after the key
    ],
)
def test_parse_errors_report_a_line(text, line):
    err = parse_error(text)
    assert err.line == line, str(err)
    assert f"at lineNo:{line}" in str(err)


# --- includes ----------------------------------------------------------------------------------------------
def test_include_file_relative_to_including_file(tmp_path: Path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "base.conf").write_text("a=1\nb=${a}\n")
    (tmp_path / "job.conf").write_text('b=2\ninclude file("inc/base.conf")\nc=3\n')
    tree = parse_hocon_file(str(tmp_path / "job.conf"))
    assert config_to_properties(resolve(tree, {})) == {"b": "1", "a": "1", "c": "3"}


def test_heuristic_include_tries_extensions_and_nested_prefix(tmp_path: Path):
    (tmp_path / "common.conf").write_text("x=1\ny=${x}\n")
    (tmp_path / "job.conf").write_text('outer { include "common" }\n')
    tree = parse_hocon_file(str(tmp_path / "job.conf"))
    assert config_to_properties(resolve(tree, {})) == {"outer.x": "1", "outer.y": "1"}


def test_include_properties_file(tmp_path: Path):
    (tmp_path / "p.properties").write_text("a.b=1\na=2\n")
    (tmp_path / "job.conf").write_text('include "p.properties"\n')
    assert config_to_properties(resolve(parse_hocon_file(str(tmp_path / "job.conf")), {})) == {"a.b": "1"}


def test_missing_include_is_ignored_unless_required(tmp_path: Path):
    (tmp_path / "job.conf").write_text('include "nope.conf"\ninclude file("gone.conf")\na=1\n')
    assert config_to_properties(resolve(parse_hocon_file(str(tmp_path / "job.conf")), {})) == {"a": "1"}
    (tmp_path / "req.conf").write_text('a=1\ninclude required(file("gone.conf"))\n')
    with pytest.raises(ConfigError) as info:
        parse_hocon_file(str(tmp_path / "req.conf"))
    assert info.value.line == 2 and "gone.conf" in str(info.value)


def test_include_cycle_is_an_error(tmp_path: Path):
    (tmp_path / "a.conf").write_text('include "b.conf"\n')
    (tmp_path / "b.conf").write_text('include "a.conf"\n')
    with pytest.raises(ConfigError) as info:
        parse_hocon_file(str(tmp_path / "a.conf"))
    assert "include cycle" in str(info.value)


def test_parse_error_in_included_file_names_that_file(tmp_path: Path):
    (tmp_path / "bad.conf").write_text("ok=1\nbad=a:b\n")
    (tmp_path / "job.conf").write_text('include "bad.conf"\n')
    with pytest.raises(ConfigError) as info:
        parse_hocon_file(str(tmp_path / "job.conf"))
    assert info.value.path == str(tmp_path / "bad.conf") and info.value.line == 2


# --- paths --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,elements",
    [
        ("a.b.c", ("a", "b", "c")),
        ("a-b_c", ("a-b_c",)),
        ("a/b", ("a/b",)),
        ("sp ace", ("sp ace",)),
        ("  padded  ", ("padded",)),
        ("10.5", ("10", "5")),
        ('"a.b".c', ("a.b", "c")),
        ('a.""', ("a", "")),
        ("-x.1e5", ("-x", "1e5")),
        ("ключ.значение", ("ключ", "значение")),
    ],
)
def test_path_expressions(text, elements):
    assert parse_path_expression(text) == elements


@pytest.mark.parametrize("text", ["", " ", ".a", "a.", "a..b", "esc=key", "escaped$", "c@d", "a:b", "a#b", "a//b", "x+y", "a\nb", "q\"x"])
def test_bad_path_expressions(text):
    with pytest.raises(BadPath):
        parse_path_expression(text)


def test_render_path_quotes_unusual_elements():
    assert render_path(("a", "b.c", "", "d e", "x-y_1")) == 'a."b.c"."".\"d e\".x-y_1'


# --- misc ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,text",
    [(1.5, "1.5"), (100000.0, "100000.0"), (1e7, "1.0E7"), (1.0e20, "1.0E20"), (0.001, "0.001"),
     (0.0001, "1.0E-4"), (-2.5e-10, "-2.5E-10"), (123456.789, "123456.789"), (0.0, "0.0")],
)
def test_java_double_to_string(value, text):
    assert java_double_to_string(value) == text


@given(st.lists(st.sampled_from(list('ab1.$"{}[]:=,+#?\\ \n\t/x') + ["${", "${?", "include ", '"""']), max_size=40).map("".join))
def test_arbitrary_hocon_only_raises_config_error(text):
    try:
        tree = parse_hocon(text, path="fuzz.conf")
        config_to_properties(resolve(tree, {}))
    except ConfigError:
        pass


def test_empty_document():
    assert flat("") == {} and isinstance(parse_hocon("   \n# only a comment\n"), HObj)


def test_values_nested_beyond_a_hundred_levels_are_a_config_error_naming_the_file():
    # found by fuzzing: a dotted key of thousands of parts, or a chain of substitutions each wrapping the one
    # before in an object or a list, built trees deep enough that flattening them raised RecursionError
    assert flat("a." * 99 + "b=1") == {"a." * 99 + "b": "1"}
    error = parse_error("a." * 3000 + "b=1")
    assert str(error).startswith("t.conf: Failed to parse config file t.conf: nesting is too deep (more than 100 levels")
    for wrap in ("{x=${a%d}}", "[${a%d}]"):
        chain = "a0=1\n" + "\n".join(f"a{i}=" + wrap % (i - 1) for i in range(1, 400))
        error = parse_error(chain)
        assert re.match(r"t\.conf:\d+: substitutions are nested too deeply \(values of more than 100 levels\)", str(error))
