"""Hadoop primitive encodings: vint/vlong and Text."""

import pytest
from hypothesis import given, strategies as st

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.store.hadoop_io import (
    LONG_MAX,
    LONG_MIN,
    DataInput,
    DataOutput,
    decode_vlong,
    encode_text,
    encode_vlong,
    vint_size,
)


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, "00"),
        (127, "7f"),
        (-1, "ff"),
        (-112, "90"),
        (-113, "87 70"),
        (128, "8f 80"),
        (1291, "8e 05 0b"),
        (5984, "8e 17 60"),
        (LONG_MAX, "88 7f ff ff ff ff ff ff ff"),
        (LONG_MIN, "80 7f ff ff ff ff ff ff ff"),
    ],
)
def test_vlong_known_encodings(value, encoded):
    data = bytes.fromhex(encoded)
    assert encode_vlong(value) == data
    assert decode_vlong(data) == (value, len(data))
    assert vint_size(data[0]) == len(data)


@given(st.integers(min_value=LONG_MIN, max_value=LONG_MAX))
def test_vlong_round_trip(value):
    data = encode_vlong(value)
    assert decode_vlong(data) == (value, len(data))
    assert vint_size(data[0]) == len(data) <= 9


def test_vlong_out_of_range():
    with pytest.raises(ValueError):
        encode_vlong(LONG_MAX + 1)


@given(st.integers(min_value=LONG_MIN, max_value=LONG_MAX))
def test_truncated_vlong_is_an_error(value):
    data = encode_vlong(value)
    if len(data) > 1:
        with pytest.raises(ValueError):
            decode_vlong(data[:-1])


@given(st.text())
def test_text_round_trip(value):
    out = DataOutput()
    out.write_text(value)
    inp = DataInput(out.getvalue())
    expected = value.encode("utf-8", "replace").decode("utf-8")
    assert inp.read_text() == expected
    assert inp.remaining() == 0


def test_text_length_is_utf8_bytes_and_surrogates_become_question_marks():
    assert encode_text("é") == b"\x02\xc3\xa9"
    assert encode_text("\U0001F600") == b"\x04\xf0\x9f\x98\x80"
    assert encode_text("a\ud800b") == b"\x03a?b"


def test_data_input_reports_truncation_with_offset():
    out = DataOutput()
    out.write_int(7)
    out.write_text("hello")
    with pytest.raises(CorruptFileError) as err:
        inp = DataInput(out.getvalue()[:-2], "value", base_offset=100)
        inp.read_int()
        inp.read_text("name")
    assert "name runs past the end" in str(err.value)
    assert err.value.offset == 105  # just after the length prefix


@given(st.integers(-(2**31), 2**31 - 1), st.integers(LONG_MIN, LONG_MAX), st.booleans())
def test_fixed_width_round_trip(i, q, b):
    out = DataOutput()
    out.write_int(i)
    out.write_long(q)
    out.write_boolean(b)
    inp = DataInput(out.getvalue())
    assert (inp.read_int(), inp.read_long(), inp.read_boolean()) == (i, q, b)


@pytest.mark.parametrize("size", [0, 1, 127, 128, 129, 300, 70_000])
def test_text_framing_at_every_length_prefix_size(size):
    value = "x" * (size - 1) + "é"[: size > 0] if size else ""  # 'é' is 2 bytes: lengths around 127/128 in bytes
    out = DataOutput()
    out.write_text(value)
    out.write_text("next")
    assert out.getvalue() == encode_text(value) + encode_text("next")
    inp = DataInput(out.getvalue())
    assert (inp.read_text(), inp.read_text(), inp.remaining()) == (value, "next", 0)


def test_short_text_running_past_the_end_or_negative_is_corruption():
    with pytest.raises(CorruptFileError, match="Text runs past the end"):
        DataInput(b"\x05abc").read_text()
    with pytest.raises(CorruptFileError, match="negative Text length -112"):
        DataInput(b"\x90abc").read_text()


def test_short_texts_are_read_without_the_vint_decoder(monkeypatch):
    # a state holds hundreds of short strings: each is framed by a one-byte length, read in place
    import gobblin_py.store.hadoop_io as hadoop_io

    calls = []
    real = hadoop_io.decode_vlong
    monkeypatch.setattr(hadoop_io, "decode_vlong", lambda *a: calls.append(a) or real(*a))
    out = DataOutput()
    for text in ("key", "value", "y" * 127):
        out.write_text(text)
    out.write_text("z" * 128)
    inp = DataInput(out.getvalue())
    assert [inp.read_text() for _ in range(4)] == ["key", "value", "y" * 127, "z" * 128]
    assert len(calls) == 1  # only the 128-byte text has a longer length
