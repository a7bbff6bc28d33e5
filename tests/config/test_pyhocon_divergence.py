"""Why gobblin_py parses HOCON with its own port of typesafe config rather than pyhocon.

Each case is one where Gobblin (typesafe config 1.4.1) and pyhocon 0.3 disagree at the grammar or value
level; gobblin_py must give Gobblin's answer. Should pyhocon ever agree on all of them, it could serve again.
"""

import pytest
from pyhocon import ConfigFactory
from pyhocon.exceptions import ConfigWrongTypeException

from gobblin_py.jobconf.convert import config_to_properties
from gobblin_py.jobconf.hocon import parse_hocon, resolve
from gobblin_py.sdk.config_errors import ConfigError


def ours(text):
    return config_to_properties(resolve(parse_hocon(text, path="t.conf"), {}))


def test_unquoted_colon_in_value_is_a_parse_error():
    assert ConfigFactory.parse_string("key1=foo:122 // unquoted :")["key1"] == "foo:122"  # pyhocon accepts it
    with pytest.raises(ConfigError, match="lineNo:1"):
        ours("key1=foo:122 // unquoted :")


def test_numbers_keep_their_text():
    assert ConfigFactory.parse_string("a=1.50")["a"] == 1.5
    assert ours("a=1.50")["a"] == "1.50"


def test_durations_stay_strings():
    assert not isinstance(ConfigFactory.parse_string("x=10 seconds")["x"], str)
    assert ours("x=10 seconds")["x"] == "10 seconds"


def test_later_object_replaces_earlier_scalar():
    with pytest.raises(ConfigWrongTypeException):
        ConfigFactory.parse_string("a=1\na.b=2")
    assert ours("a=1\na.b=2") == {"a.b": "2"}
