"""The HOCON port against typesafe config's own conformance resources (``tests/data/typesafe``, from v1.4.1).

* ``EquivalentsTest``: every file of an ``equivNN`` folder parses to the value of its ``original.json``.
* ``ConfParserTest``: the invalid strings of ``TestUtils.scala`` (and their whitespace variations) raise a
  :class:`ConfigError`, the valid ones parse, and the valid JSON ones give the value Python's ``json`` gives
  (typesafe compares with lift-json the same way).

typesafe also rejects the ``valid_conf_invalid_json`` strings under its JSON-only syntax; gobblin_py has none,
because Gobblin parses ``.json`` job files as CONF (``deliberate_differences`` in the data).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gobblin_py.jobconf import ConfigError
from gobblin_py.jobconf.hocon import HObj, HValue, parse_hocon, parse_hocon_file, parse_hocon_value, resolve, unwrap

DATA = Path(__file__).resolve().parents[1] / "data" / "typesafe"
STRINGS = json.loads((DATA / "parse_strings.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def empty_dir(tmp_path_factory) -> Path:
    """A working directory in which includes of the test strings (``include "foo"``) find nothing."""
    return tmp_path_factory.mktemp("no-includes")


def typesafe_parse(text: str, cwd: Path) -> HValue:
    """``ConfParserTest.parse``: the value of ``text``, an object root resolved without the environment."""
    value = parse_hocon_value(text, path=None, cwd=str(cwd))
    return resolve(value, {}) if isinstance(value, HObj) else value


# --- equivNN folders ---------------------------------------------------------------------------------------
EQUIV_DIRS = sorted(DATA.glob("equiv*"))
EQUIV_FILES = [
    (folder.name, path.name)
    for folder in EQUIV_DIRS
    for path in sorted(folder.iterdir())
    if path.suffix in (".conf", ".json") and not path.name.startswith("original.")
]


def test_all_the_equivalence_folders_are_there():
    # typesafe's own check that it "really tested what we were expecting": 5 folders, 15 files besides originals.
    assert [folder.name for folder in EQUIV_DIRS] == ["equiv01", "equiv02", "equiv03", "equiv04", "equiv05"]
    assert len(EQUIV_FILES) == 15


@pytest.mark.parametrize("folder", [folder.name for folder in EQUIV_DIRS])
def test_original_json_parses_to_its_json_value(folder):
    original = DATA / folder / "original.json"
    assert unwrap(resolve(parse_hocon_file(str(original)), {})) == json.loads(original.read_text(encoding="utf-8"))


@pytest.mark.parametrize("folder,name", EQUIV_FILES)
def test_equivalent_file_parses_to_the_original(folder, name):
    original = unwrap(resolve(parse_hocon_file(str(DATA / folder / "original.json")), {}))
    assert unwrap(resolve(parse_hocon_file(str(DATA / folder / name)), {})) == original


# --- TestUtils.scala strings -----------------------------------------------------------------------------
def whitespace_variations(entry: Dict[str, object]) -> List[str]:
    """typesafe ``whitespaceVariations``: the string as is, padded, without spaces, spread out, em spaces."""
    text = str(entry["text"])
    if entry.get("whitespace_matters"):
        return [text]
    variants = [text.replace(" ", "\u2003")] if " " in text else []
    variants += [
        text,
        " " + text,
        text + " ",
        " " + text + " ",
        text.replace(" ", ""),
        text.replace(":", " : "),
        text.replace(",", " , "),
    ]
    return variants


def cases(*lists: str) -> List:
    return [
        pytest.param(variant, id=f"{name}[{index}]-{number}")
        for name in lists
        for index, entry in enumerate(STRINGS[name])
        for number, variant in enumerate(whitespace_variations(entry))
    ]


def json_value_cases() -> List:
    out = []
    for param in cases("valid_json"):
        try:
            expected = json.loads(param.values[0])
        except ValueError:  # e.g. the em-space variants: not JSON whitespace (typesafe skips lift there too)
            continue
        out.append(pytest.param(param.values[0], expected, id=param.id))
    return out


def test_the_string_lists_are_all_there():
    names = ("invalid_json_invalid_conf", "valid_json", "valid_conf_invalid_json")
    assert {name: len(STRINGS[name]) for name in names} == dict(zip(names, (82, 22, 86)))


@pytest.mark.parametrize("text", cases("invalid_json_invalid_conf"))
def test_invalid_string_is_rejected(text, empty_dir):
    with pytest.raises(ConfigError):
        typesafe_parse(text, empty_dir)


@pytest.mark.parametrize("text", cases("valid_conf_invalid_json", "valid_json"))
def test_valid_string_parses(text, empty_dir):
    assert isinstance(typesafe_parse(text, empty_dir), HValue)


@pytest.mark.parametrize("text,expected", json_value_cases())
def test_valid_json_gives_the_json_value(text, expected, empty_dir):
    assert unwrap(typesafe_parse(text, empty_dir)) == expected


# --- any JSON document ---------------------------------------------------------------------------------------
_JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(
    document=st.dictionaries(st.text(), _JSON_VALUES, max_size=5),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 2]),
)
def test_any_json_object_parses_to_its_json_value(document, ascii_only, indent):
    # HOCON is a superset of JSON (typesafe's EquivalentsTest parses every .json file as .conf too).
    text = json.dumps(document, ensure_ascii=ascii_only, indent=indent)
    # Python's == also treats 1.0 and 1 (or -0.0 and 0.0) as one number, as typesafe does.
    assert unwrap(resolve(parse_hocon(text), {})) == json.loads(text)

