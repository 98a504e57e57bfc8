"""connector.api.java.jackson, pinned to Jackson's outputs (Jackson is not in the JDK)."""

from __future__ import annotations

import decimal
import math

import pytest

from connector.api.java.jackson import (
    KAFKA_JSON,
    MISSING,
    OBJECT_MAPPER,
    Float32,
    JsonReadError,
    JsonWriteError,
    node_kind,
    node_type,
    quote,
    read_text,
    read_tree,
    write_text,
    write_tree,
)

# Jackson: short escapes for \b \t \n \f \r, upper-case \u00XX for the other controls.
_CONTROL_ESCAPES = {
    0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r",
    **{c: f"\\u{c:04X}" for c in range(0x20) if c not in (0x08, 0x09, 0x0A, 0x0C, 0x0D)},
}


@pytest.mark.parametrize("code", range(0x20))
def test_control_characters(code):
    assert quote(chr(code)) == '"' + _CONTROL_ESCAPES[code] + '"'


@pytest.mark.parametrize("text, json", [
    ("\x1f", '"\\u001F"'), ("\x0b", '"\\u000B"'), ("\x7f", '"\x7f"'),  # DEL is not escaped
    ('a"b\\c', '"a\\"b\\\\c"'), ("a/b", '"a/b"'), ("café ü €", '"café ü €"'),
    ("\U0001F600", '"\U0001F600"'),  # a surrogate pair in Java: written as is
])
def test_strings(text, json):
    assert write_text(text) == json


def test_lone_surrogate_is_kept_in_text_and_rejected_as_utf8():
    assert write_text("a\ud800") == '"a\ud800"'
    with pytest.raises(JsonWriteError):
        write_tree("a\ud800")


@pytest.mark.parametrize("node, json", [
    (5e-324, "4.9E-324"), (1.7976931348623157e308, "1.7976931348623157E308"),
    (Float32(1.401298464324817e-45), "1.4E-45"), (Float32(0.1), "0.1"),
    (1e7, "1.0E7"), (9999999.0, "9999999.0"), (0.001, "0.001"), (1e-4, "1.0E-4"), (-0.0, "-0.0"),
    (1e300, "1.0E300"), (math.nan, '"NaN"'), (math.inf, '"Infinity"'), (-math.inf, '"-Infinity"'),
    (Float32(math.inf), '"Infinity"'),
    (decimal.Decimal("1E+3"), "1E+3"), (decimal.Decimal("-0.00"), "0.00"), (2**70, str(2**70)),
    (b"Hello", '"SGVsbG8="'), (None, "null"), (True, "true"), (MISSING, ""),
    ({"a": [1, 2.5, None], "b": {}}, '{"a":[1,2.5,null],"b":{}}'),
    ({1: "x", 2.0: "y"}, '{"1":"x","2.0":"y"}'), ({False: 0}, '{"false":0}'),  # keys: toString
])
def test_write(node, json):
    assert write_text(node) == json


def test_write_rejects_what_jackson_cannot_write():
    with pytest.raises(JsonWriteError):
        write_text({None: 1})
    with pytest.raises(JsonWriteError):
        write_text(decimal.Decimal("NaN"))
    with pytest.raises(JsonWriteError):
        write_text(object())
    assert write_text([object()], default=lambda value: "pojo") == '["pojo"]'


@pytest.mark.parametrize("mode, text, node", [
    (OBJECT_MAPPER, "1.5600", 1.56), (KAFKA_JSON, "1.5600", decimal.Decimal("1.5600")),
    (KAFKA_JSON, "-0.0", decimal.Decimal("0.0")), (OBJECT_MAPPER, "-0.0", -0.0),
    (KAFKA_JSON, "[007]", [7]), (OBJECT_MAPPER, "1e400", math.inf),
    (OBJECT_MAPPER, '{"a": 1} trailing', {"a": 1}), (OBJECT_MAPPER, "  ", MISSING),
    (OBJECT_MAPPER, '"\\u001f"', "\x1f"),
])
def test_read(mode, text, node):
    assert read_text(text, mode) == node or (node is MISSING and read_text(text, mode) is MISSING)


@pytest.mark.parametrize("mode, text", [
    (OBJECT_MAPPER, "[007]"), (OBJECT_MAPPER, "NaN"), (KAFKA_JSON, "[Infinity]"),
    (OBJECT_MAPPER, "1x"), (KAFKA_JSON, "truex"), (OBJECT_MAPPER, "1." + "1" * 1000),
])
def test_read_rejects(mode, text):
    with pytest.raises(JsonReadError):
        read_text(text, mode)


def test_read_tree_detects_the_encoding():
    assert read_tree('{"a": 1.0}'.encode("utf-16-le")) == {"a": decimal.Decimal("1.0")}


@pytest.mark.parametrize("node, kind, type_name", [
    (1, "int", "NUMBER"), (2**40, "long", "NUMBER"), (2**70, "bigint", "NUMBER"),
    (Float32(1.5), "float", "NUMBER"), (1.5, "double", "NUMBER"), (decimal.Decimal(1), "decimal", "NUMBER"),
    ("x", "text", "STRING"), (b"x", "binary", "BINARY"), (None, "null", "NULL"), (MISSING, "missing", "MISSING"),
    ([], "array", "ARRAY"), ({}, "object", "OBJECT"), (True, "boolean", "BOOLEAN"),
])
def test_node_classes(node, kind, type_name):
    assert node_kind(node) == kind
    assert node_type(node) == type_name
