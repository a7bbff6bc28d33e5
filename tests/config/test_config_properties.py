"""commons-configuration 1.10 Java-properties semantics (spec §1.5, §1.6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gobblin_py.jobconf import ConfigError
from gobblin_py.jobconf.properties import load_properties, parse_properties, split_list


def parse(text: str, disabled: bool = False, **kwargs):
    kwargs.setdefault("env", {})
    return parse_properties(text, path="job.pull", delimiter_parsing_disabled=disabled, **kwargs)


def props(text: str, disabled: bool = False, **kwargs):
    return parse(text, disabled, **kwargs).to_dict()


# --- §1.5 table: one row per case, both parsing modes ------------------------------------------------
SPEC_TABLE = [
    # (file line(s), key, default D=false, property.parsing.enablekey=true)
    ("key1=jobValue1,jobValue2,jobValue3", "key1", "jobValue1,jobValue2,jobValue3", "jobValue1,jobValue2,jobValue3"),
    ("spaced = a , b ,  c", "spaced", "a,b,c", "a , b ,  c"),
    ("escapedcomma=a\\,b,c", "escapedcomma", "a,b,c", "a\\,b,c"),
    ("k2=a\\\\\\\\b,c", "k2", "a\\b,c", "a\\\\b,c"),
    ("k2=a\\\\\\\\b", "k2", "a\\\\b", "a\\\\b"),
    ("dup=first\ndup=second", "dup", "first,second", "first,second"),
    ("backslash=C:\\\\dir\\\\file", "backslash", "C:\\dir\\file", "C:\\dir\\file"),
    ("tabs=a\\tb", "tabs", "a\tb", "a\tb"),
    ("unicode=\\u0041BC", "unicode", "ABC", "ABC"),
    ('quoted="q"', "quoted", '"q"', '"q"'),
    ("trailing=value   ", "trailing", "value", "value"),
    ('json={"name":"shankar","country":"bharat"}', "json", '{"name":"shankar","country":"bharat"}',
     '{"name":"shankar","country":"bharat"}'),
    ('j={"a": 1, "b": 2}', "j", '{"a": 1,"b": 2}', '{"a": 1, "b": 2}'),
]


@pytest.mark.parametrize("text,key,default_value,disabled_value", SPEC_TABLE)
def test_spec_table_default_mode(text, key, default_value, disabled_value):
    assert props(text)[key] == default_value


@pytest.mark.parametrize("text,key,default_value,disabled_value", SPEC_TABLE)
def test_spec_table_delimiter_parsing_disabled(text, key, default_value, disabled_value):
    assert props(text, disabled=True)[key] == disabled_value


# --- logical lines -----------------------------------------------------------------------------------
def test_comments_and_blank_lines_are_skipped():
    text = "# comment\n! bang comment\n\n   \n  # indented comment\nk=v\n"
    assert props(text) == {"k": "v"}


def test_continuation_joins_trimmed_lines():
    assert props("a=one \\\n   two\n") == {"a": "one two"}


def test_comment_inside_continuation_is_skipped():
    assert props("c=x\\\n# inner comment\n\n  y\nd=1\n") == {"c": "xy", "d": "1"}


def test_even_number_of_trailing_backslashes_does_not_continue():
    assert props("a=x\\\\\nb=y\n") == {"a": "x\\", "b": "y"}


def test_odd_number_of_trailing_backslashes_continues():
    assert props("a=x\\\\\\\nb=y\n") == {"a": "x\\b=y"}


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_terminators(newline):
    assert props(newline.join(["a=1", "b=2", ""])) == {"a": "1", "b": "2"}


def test_continuation_at_end_of_file_is_dropped_and_reported():
    parsed = parse("a=1\nb=2\\")
    assert parsed.to_dict() == {"a": "1"}
    assert [(p.kind, p.line) for p in parsed.problems] == [("dangling-continuation", 2)]


def test_leading_byte_order_mark_is_dropped():
    assert props("\ufeffjob.name=x\n") == {"job.name": "x"}


# --- key/value split -----------------------------------------------------------------------------------
@pytest.mark.parametrize("line", ["k=v", "k = v", "k:v", "k v", "k\tv", "k  :  v", "   k=v   "])
def test_separators(line):
    assert props(line) == {"k": "v"}


def test_first_separator_wins():
    assert props("k:with=2") == {"k": "with=2"}


def test_empty_value():
    assert props("source.conn.password=") == {"source.conn.password": ""}


def test_line_without_separator_gives_empty_key_and_is_recorded():
    parsed = parse("job.name=x\nworkunit.retry.enabled-false\n")
    assert parsed.to_dict() == {"job.name": "x", "": ""}
    [problem] = parsed.problems
    assert (problem.kind, problem.line, problem.text) == ("no-separator", 2, "workunit.retry.enabled-false")
    assert problem.describe() == "line 2 of job.pull has no key/value separator (`workunit.retry.enabled-false`)"


def test_empty_key_is_recorded():
    parsed = parse("=v\n")
    assert parsed.to_dict() == {"": "v"}
    assert [(p.kind, p.line) for p in parsed.problems] == [("empty-key", 1)]


def test_value_with_line_separator_char_does_not_match_the_pattern():
    # Java's "." excludes U+2028, so the whole line fails to match and yields key "".
    parsed = parse("k=a\u2028b\n")
    assert parsed.to_dict() == {"": ""}
    assert parsed.problems[0].kind == "no-separator"


# --- unescaping ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line,key,value",
    [
        ("esc\\=key=2", "esc=key", "2"),
        ("sp\\ ace=1", "sp ace", "1"),
        ("co\\:lon=1", "co:lon", "1"),
        ("tab\\tkey=1", "tab\tkey", "1"),
        ("\\u0041key=1", "Akey", "1"),
        ("\\#notcomment=1", "#notcomment", "1"),
        ("q=\\q\\z", "q", "qz"),
        ("n=a\\nb\\rc\\fd\\be", "n", "a\nb\rc\fd\be"),
        ("quotes=\\'x\\\"", "quotes", "'x\""),
        ("trail=abc\\\\", "trail", "abc\\"),
        ("pair=\\uD83D\\uDE00", "pair", "\U0001F600"),
        ("hexcase=\\u00e9\\u00C9", "hexcase", "éÉ"),
    ],
)
def test_unescaping(line, key, value):
    assert props(line) == {key: value}


def test_value_ending_in_escaped_backslash():
    assert props("v=C:\\\\\n") == {"v": "C:\\"}


@pytest.mark.parametrize("line", ["bad=\\uZZZZ", "bad=\\u12G4", "b\\uXYZWad=1"])
def test_malformed_unicode_escape_is_an_error_naming_the_line(line):
    with pytest.raises(ConfigError) as info:
        parse("ok=1\n" + line + "\n")
    assert info.value.line == 2
    assert "unicode" in str(info.value)


def test_unfinished_unicode_escape_at_end_is_refused():
    # commons-lang drops it (the value silently loses its end); java.util.Properties refuses it, and so does gpy
    with pytest.raises(ConfigError) as info:
        props("ok=1\nv=ab\\u00")
    assert info.value.line == 2 and info.value.key == "v" and "'00'" in str(info.value)


# --- list splitting --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line,expected",
    [
        ("l=,a,b", ",a,b"),  # comma at index 0: never split, stored untouched
        ("l=a,", "a,"),
        ("l=a,,b", "a,,b"),
        ("l= a ,b ", "a,b"),
        ("l=a\\\\x,c", "a\\x,c"),  # "\\x" unescapes to "\x"; split() keeps an unknown escape's backslash
        ("l=a\\b,c", "a,c"),  # "\b" is a backspace, which the per-piece Java trim removes
    ],
)
def test_list_splitting_edge_cases(line, expected):
    assert parse(line).to_dict()["l"] == expected


def test_escaped_leading_comma_is_split_after_index_zero():
    # unescaping keeps "\," so the value "\,a,b" has its first comma at index 1 and is split.
    parsed = parse("l=\\,a,b")
    assert parsed.entries["l"] == [",a", "b"]
    assert parsed.to_dict()["l"] == ",a,b"


def test_split_elements_are_stored_separately():
    parsed = parse("l=a, b ,c")
    assert parsed.entries["l"] == ["a", "b", "c"]
    assert parse("l=a, b ,c", disabled=True).entries["l"] == ["a, b ,c"]


def test_disabled_delimiter_is_nul():
    # PropertiesConfiguration uses '\0' as the "disabled" delimiter, so a NUL still splits.
    assert parse("v=a \\u0000 b", disabled=True).entries["v"] == ["a", "b"]


def test_split_list_helper():
    assert split_list("a\\,b,c\\\\d, e ") == ["a,b", "c\\d", "e"]
    assert split_list("x\\y") == ["x\\y"]
    assert split_list("a,", trim=False) == ["a", ""]


def test_duplicate_keys_accumulate_in_both_modes():
    for disabled in (False, True):
        parsed = parse("dup=first\nother=1\ndup=second,third", disabled)
        expected = ["first", "second", "third"] if not disabled else ["first", "second,third"]
        assert parsed.entries["dup"] == expected
        assert parsed.to_dict()["dup"] == "first,second,third"
        assert list(parsed.to_dict()) == ["dup", "other"]
        assert [line for _, line in parsed.origins["dup"]] == [1, 3]


# --- §1.6 interpolation ------------------------------------------------------------------------------------
def test_forward_reference():
    assert props("key2=${key10}\nkey10=aValue\n") == {"key2": "aValue", "key10": "aValue"}


def test_reference_to_multi_valued_key_uses_first_element():
    text = "key1=jobValue1,jobValue2,jobValue3\nref=${key1}\njson={\"name\":\"shankar\",\"c\":\"b\"}\njr=${json}\n"
    assert props(text)["ref"] == "jobValue1"
    assert props(text)["jr"] == '{"name":"shankar"'
    assert props(text, disabled=True)["ref"] == "jobValue1,jobValue2,jobValue3"
    assert props("d=x\nd=y\nref=${d}")["ref"] == "x"


def test_env_lookup():
    assert props("refenv=${env:HOME}", env={"HOME": "/home/me"}) == {"refenv": "/home/me"}


def test_env_value_is_list_split_and_interpolated_against_the_environment():
    env = {"LIST": " a , b", "INNER": "${OTHER}/x", "OTHER": "/o"}
    assert props("l=${env:LIST}\ni=${env:INNER}", env=env) == {"l": "a", "i": "/o/x"}


def test_missing_env_falls_back_to_the_full_text_as_key():
    assert props("env\\:X=fromfile\nv=${env:X}", env={}) == {"env:X": "fromfile", "v": "fromfile"}


def test_sys_lookup_uses_the_given_system_properties():
    assert props("u=${sys:user.name}", system_properties={"user.name": "alice"}) == {"u": "alice"}
    assert props("u=${sys:user.name}") == {"u": "${sys:user.name}"}


def test_const_and_unknown_prefixes_find_nothing():
    assert props("c=${const:java.lang.Integer.MAX_VALUE}\nu=${foo:bar}") == {
        "c": "${const:java.lang.Integer.MAX_VALUE}",
        "u": "${foo:bar}",
    }


def test_unresolved_reference_is_left_verbatim():
    assert props("refmissing=${nope}") == {"refmissing": "${nope}"}


def test_dollar_escape():
    assert props("key1=v\nesc=$${key1}\nesc2=$$${key1}\nplain=$$ $x") == {
        "key1": "v",
        "esc": "${key1}",
        "esc2": "$${key1}",
        "plain": "$$ $x",
    }


def test_recursive_interpolation():
    assert props("a=${b}-a\nb=${c}-b\nc=c")["a"] == "c-b-a"


def test_unterminated_and_nested_references():
    assert props("u=${abc\nn=${a${b}}\nb=1") == {"u": "${abc", "n": "${a${b}}", "b": "1"}


def test_interpolation_cycle_is_an_error_naming_file_and_key():
    parsed = parse("ok=1\nx=${y}\ny=${x}\n")
    with pytest.raises(ConfigError) as info:
        parsed.to_dict()
    err = info.value
    assert err.path == "job.pull" and err.key == "x" and err.line == 2
    assert "infinite loop" in str(err)


def test_self_reference_is_a_cycle():
    with pytest.raises(ConfigError):
        props("a=${a}")


def test_empty_reference_resolves_to_empty_key():
    # A separator-less line stores key "" -- ${} then finds it (commons-configuration quirk).
    assert props("garbage\nv=[${}]")["v"] == "[]"


def test_escape_check_sees_substituted_text():
    # StrSubstitutor checks the character before "${" in the already substituted buffer.
    assert props("p=$\nv=${p}${p}x")["v"] == "${p}x"


# --- includes ----------------------------------------------------------------------------------------------
def test_include_relative_to_including_file(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inc.properties").write_text("shared=1\ndup=inc\n")
    (tmp_path / "job.pull").write_text("dup=job\ninclude=sub/inc.properties\nafter=${shared}\n")
    parsed = load_properties(tmp_path / "job.pull", env={})
    assert parsed.to_dict() == {"dup": "job,inc", "shared": "1", "after": "1"}
    assert parsed.location("shared") == (str(tmp_path / "sub" / "inc.properties"), 1)


def test_include_falls_back_to_working_directory(tmp_path: Path):
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "common.properties").write_text("c=1\n")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "job.pull").write_text("InClUdE = common.properties\n")
    parsed = load_properties(tmp_path / "jobs" / "job.pull", env={}, cwd=str(tmp_path / "cwd"))
    assert parsed.to_dict() == {"c": "1"}


def test_include_list_and_interpolated_names(tmp_path: Path):
    (tmp_path / "a.properties").write_text("a=1\n")
    (tmp_path / "b.properties").write_text("b=2\n")
    (tmp_path / "job.pull").write_text("dir=" + str(tmp_path) + "\ninclude=a.properties, ${dir}/b.properties,\n")
    assert load_properties(tmp_path / "job.pull", env={}).to_dict() == {"dir": str(tmp_path), "a": "1", "b": "2"}


def test_include_with_env_name(tmp_path: Path):
    (tmp_path / "x.properties").write_text("x=1\n")
    (tmp_path / "job.pull").write_text("include=${env:CONF}/x.properties\n")
    assert load_properties(tmp_path / "job.pull", env={"CONF": str(tmp_path)}).to_dict() == {"x": "1"}


def test_missing_include_names_including_file_and_line(tmp_path: Path):
    (tmp_path / "job.pull").write_text("a=1\ninclude=nope.properties\n")
    with pytest.raises(ConfigError) as info:
        load_properties(tmp_path / "job.pull", env={}, cwd=str(tmp_path))
    err = info.value
    assert err.path == str(tmp_path / "job.pull") and err.line == 2
    assert "nope.properties" in str(err)


def test_include_cycle_is_an_error(tmp_path: Path):
    (tmp_path / "a.properties").write_text("include=b.properties\n")
    (tmp_path / "b.properties").write_text("include=a.properties\n")
    with pytest.raises(ConfigError) as info:
        load_properties(tmp_path / "a.properties", env={})
    assert "include cycle" in str(info.value)


def test_include_is_not_stored_and_not_split_when_disabled(tmp_path: Path):
    (tmp_path / "a,b.properties").write_text("x=1\n")
    (tmp_path / "job.pull").write_text("include=a,b.properties\n")
    assert load_properties(tmp_path / "job.pull", env={}, delimiter_parsing_disabled=True).to_dict() == {"x": "1"}


# --- property-based ---------------------------------------------------------------------------------------
# U+FEFF too: at the start of a file it reads as a byte-order mark and is dropped, as a Java reader of a
# UTF-8 file with a BOM would need; written as \ufeff it stays part of the key or value
_ESCAPE_AS_UNICODE = {chr(c) for c in range(0x21)} | {"\x7f", "\x85", "\u2028", "\u2029", "\ufeff"}


def escape_key(key: str) -> str:
    out = []
    for index, ch in enumerate(key):
        if ch == "\\":
            out.append("\\\\")
        elif ch in _ESCAPE_AS_UNICODE:
            out.append("\\u%04x" % ord(ch))
        elif ch in "=:" or (index == 0 and ch in "#!"):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def escape_value(value: str) -> str:
    value = value.replace("${", "$${")
    out = []
    for ch in value:
        if ch == "\\":
            out.append("\\\\")
        elif ch in _ESCAPE_AS_UNICODE:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


_interesting = st.sampled_from(list("=:\\,#! $\t{}\n\r\"'u") + ["${", "é", "ключ", "\U0001F600", "\u2028", "\x85", "\ufeff"])
_text = st.lists(st.one_of(st.text(st.characters(blacklist_characters="\x00"), max_size=3), _interesting), max_size=8).map("".join)
_keys = _text.filter(lambda k: k != "" and k.lower() != "include")


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(_keys, _text, max_size=6))
def test_escaped_mapping_round_trips(mapping):
    text = "".join(f"{escape_key(k)}={escape_value(v)}\n" for k, v in mapping.items())
    parsed = parse_properties(text, delimiter_parsing_disabled=True, env={})
    assert parsed.problems == []
    assert parsed.to_dict() == mapping


@given(st.text(max_size=200), st.booleans())
def test_parsing_arbitrary_text_only_raises_config_error(tmp_path_factory, text, disabled):
    cwd = str(tmp_path_factory.getbasetemp())
    try:
        parse_properties(text, delimiter_parsing_disabled=disabled, env={}, cwd=cwd).to_dict()
    except ConfigError:
        pass
