"""JsonToMapTransform and its helpers: ports TestJsonToMapTransform (5 cases) and
TestJsonToMapUtils (21 cases), plus property tests of the typing table on random JSON."""

from __future__ import annotations

import base64
import decimal
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connector.api.errors import DataException
from connector.api.logical import Decimal
from connector.api.record import Header, TimestampType
from connector.api.schema import Field, Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from smt.iceberg import JsonToMapException, JsonToMapTransform
from smt.iceberg import json_to_map as utils
from smt.iceberg.json_to_map import MISSING, Float32
from tests.smt_iceberg import sink_record

# The Java tests' resource jsonmap.json.
JSON_MAP = """{
  "string": "string",
  "int": 42,
  "long": 3147483647,
  "boolean": true,
  "float_is_double": 3.0,
  "double": 0.3,
  "null": null,
  "empty_obj": {},
  "empty_arr": [],
  "empty_arr_arr": [[], []],
  "empty_string": "",
  "array_empty_object": [{}, {}],
  "nested_object_contains_empty": [{}, {"one":  1}],
  "array_int": [1, 1],
  "array_array_int": [[1,1], [2,2]],
  "array_objects": [{"key": 1}],
  "array_array_objects":[[{"key":  1}], [{"key":  2, "other": {"ugly": [1,2]}}]],
  "array_array_inconsistent": [[1], [2.0]],
  "array_different_types": ["one", 1],
  "nested_obj": {
    "key": {"nested_key": 1}
  },
  "bytes": "SGVsbG8=",
  "bigInt": 354736184430273859332531123456,
  "bigDecimal": 13.3333333333333333333333333344444444455555555
}"""

OBJ = utils.parse_json(JSON_MAP)
OPTIONAL_MAP = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional().build()


def record(value, key_schema=Schema.STRING_SCHEMA, key="key_value:"):
    return sink_record(None, value, key_schema, key, offset=100, timestamp=1000,
                       timestamp_type=TimestampType.CREATE_TIME)


# --- TestJsonToMapTransform ----------------------------------------------------------------


def test_null_records():
    rec = sink_record(offset=100, timestamp=1000)
    assert JsonToMapTransform().apply(rec) is rec


def test_throw_exception_non_json_objects():
    with pytest.raises(JsonToMapException, match="not valid json"):
        JsonToMapTransform().apply(record("not_a_json_object"))


def test_throw_exception_invalid_json():
    with pytest.raises(JsonToMapException, match="not valid json"):
        JsonToMapTransform().apply(record('{"key": 1,"""***'))


def test_single_value_on_root_node():
    smt = JsonToMapTransform()
    smt.configure({"json.root": "true"})
    result = smt.apply(record('{"key":1,"a":"a"}'))
    expected_schema = SchemaBuilder.struct().field("payload", OPTIONAL_MAP).build()
    assert isinstance(result.value, Struct)
    assert result.value.get("payload") == {"key": "1", "a": "a"}
    assert result.value_schema == expected_schema


def test_struct_on_root_node():
    result = JsonToMapTransform().apply(record(JSON_MAP))
    assert isinstance(result.value, Struct)
    assert len(result.value.schema.fields()) == 19
    assert result.value.get("string") == "string"


# --- TestJsonToMapUtils ----------------------------------------------------------------------


def test_add_field_skips_null_schemas():
    builder = SchemaBuilder.struct()
    utils.add_field("good", "text", builder)
    utils.add_field("missing", None, builder)
    assert builder.build().fields() == [Field("good", 0, Schema.OPTIONAL_STRING_SCHEMA)]


def test_extract_value_primitives_by_schema_type():
    assert utils.extract_value(OBJ["string"], Type.STRING, "") == "string"
    assert utils.extract_value(OBJ["boolean"], Type.BOOLEAN, "") is True
    assert utils.extract_value(OBJ["int"], Type.INT32, "") == 42
    assert utils.extract_value(OBJ["long"], Type.INT64, "") == 3147483647
    assert utils.extract_value(OBJ["float_is_double"], Type.FLOAT64, "") == 3.0
    assert utils.extract_value(OBJ["double"], Type.FLOAT64, "") == 0.3
    assert utils.extract_value(OBJ["bytes"], Type.BYTES, "") == base64.b64decode("SGVsbG8=")


def test_extract_value_complex_nodes_as_strings():
    assert isinstance(OBJ["array_objects"], list)
    assert isinstance(OBJ["nested_obj"], dict)
    assert utils.extract_value(OBJ["array_objects"], Type.STRING, "") == '[{"key":1}]'
    assert utils.extract_value(OBJ["array_different_types"], Type.STRING, "") == '["one",1]'
    assert utils.extract_value(OBJ["bigInt"], Type.STRING, "") == "354736184430273859332531123456"


def test_extract_value_throws_for_struct():
    with pytest.raises(JsonToMapException, match="Unexpected type STRUCT for field"):
        utils.extract_value(OBJ["string"], Type.STRUCT, "")


def test_array_node_type_when_consistent():
    assert utils.array_node_type(OBJ["array_int"]) == "int"
    assert utils.array_node_type(OBJ["array_array_int"]) == "array"


def test_array_node_type_none_when_mixed():
    assert utils.array_node_type(OBJ["array_different_types"]) is None


def test_schema_from_null_and_missing_nodes():
    assert utils.schema_from_node(None) is None
    assert utils.schema_from_node(MISSING) is None


def test_schema_from_empty_object():
    assert isinstance(OBJ["empty_obj"], dict)
    assert utils.schema_from_node(OBJ["empty_obj"]) is None


def test_schema_from_big_integer_is_decimal_0():
    assert utils.schema_from_node(OBJ["bigInt"]) == utils.decimal_schema(0)
    assert utils.decimal_schema(0) == Decimal.builder(0).optional().build()


def test_schema_from_primitive_nodes():
    assert utils.schema_from_node(OBJ["int"]) == Schema.OPTIONAL_INT32_SCHEMA
    assert utils.schema_from_node(OBJ["double"]) == Schema.OPTIONAL_FLOAT64_SCHEMA


def test_schema_from_object_is_map():
    assert utils.schema_from_node(OBJ["nested_obj"]) == OPTIONAL_MAP


def test_schema_from_array_of_objects():
    assert utils.schema_from_node(OBJ["array_objects"]) == utils.ARRAY_MAP_OPTIONAL_STRING


def test_schema_from_inconsistent_array():
    expected = SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()
    assert utils.schema_from_node(OBJ["array_different_types"]) == expected


def test_schema_from_arrays_of_inconsistent_arrays():
    expected = (
        SchemaBuilder.array(SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()).optional().build()
    )
    assert utils.schema_from_node(OBJ["array_array_inconsistent"]) == expected


def test_schema_from_arrays_of_arrays_of_objects():
    expected = SchemaBuilder.array(utils.ARRAY_MAP_OPTIONAL_STRING).optional().build()
    assert utils.schema_from_node(OBJ["array_array_objects"]) == expected


def test_schema_from_arrays_of_arrays_of_ints():
    expected = (
        SchemaBuilder.array(SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA).optional().build()).optional().build()
    )
    assert utils.schema_from_node(OBJ["array_array_int"]) == expected


def test_schema_from_empty_array():
    assert utils.schema_from_node(OBJ["empty_arr"]) is None


def test_schema_from_array_of_empty_arrays():
    assert utils.schema_from_node(OBJ["empty_arr_arr"]) is None


def test_schema_from_array_of_empty_objects():
    assert utils.schema_from_node(OBJ["array_empty_object"]) == utils.ARRAY_MAP_OPTIONAL_STRING


def test_schema_from_objects_one_empty():
    assert utils.schema_from_node(OBJ["nested_object_contains_empty"]) == utils.ARRAY_MAP_OPTIONAL_STRING


def test_add_to_struct():
    builder = SchemaBuilder.struct()
    for key, node in OBJ.items():
        utils.add_field(key, node, builder)
    schema = builder.build()
    result = utils.add_to_struct(OBJ, schema, Struct(schema))

    assert result.get("string") == "string"
    assert result.get("int") == 42
    assert result.get("long") == 3147483647
    assert result.get("boolean") is True
    assert result.get("float_is_double") == 3.0
    assert result.get("double") == 0.3
    assert result.get("bytes") == "SGVsbG8="  # text stays text
    assert result.get("bigInt") == decimal.Decimal(354736184430273859332531123456)
    assert result.get("nested_object_contains_empty") == [{}, {"one": "1"}]
    assert result.get("array_int") == [1, 1]
    assert result.get("array_array_int") == [[1, 1], [2, 2]]
    assert result.get("array_objects") == [{"key": "1"}]
    assert result.get("array_array_objects") == [[{"key": "1"}], [{"key": "2", "other": '{"ugly":[1,2]}'}]]
    assert result.get("array_array_inconsistent") == [["1"], ["2.0"]]
    assert result.get("array_different_types") == ["one", "1"]
    assert result.get("nested_obj") == {"key": '{"nested_key":1}'}
    assert result.get("empty_string") == ""
    for absent in ("null", "empty_obj", "empty_arr", "empty_arr_arr"):
        with pytest.raises(DataException, match="not a valid field name"):
            result.get(absent)


# --- beyond the Java tests -------------------------------------------------------------------


def test_typing_table_examples():
    text = json.dumps({
        "i": 1, "l": 2**40, "big": 2**70, "f": 1.5, "b": False, "s": "x", "o": {"a": [1, {"b": None}]},
        "ai": [1, 2], "al": [2**40, 2**41], "mixed_int_long": [1, 2**40], "nulls": [None, None],
        "with_null": ["a", None], "objs": [{"a": 1}, {}], "strs": ["a", "b"], "bools": [True],
        "floats": [1.0, 2.5], "bigs": [2**70], "aa_mixed": [[1], ["a"]], "n": None, "e": {}, "ea": [],
    })
    result = JsonToMapTransform().apply(record(text))
    schema, value = result.value_schema, result.value
    types = {f.name: f.schema for f in schema.fields()}
    assert types["i"] == Schema.OPTIONAL_INT32_SCHEMA
    assert types["l"] == Schema.OPTIONAL_INT64_SCHEMA
    assert types["big"] == utils.decimal_schema(0)
    assert types["f"] == Schema.OPTIONAL_FLOAT64_SCHEMA
    assert types["b"] == Schema.OPTIONAL_BOOLEAN_SCHEMA
    assert types["s"] == Schema.OPTIONAL_STRING_SCHEMA
    assert types["o"] == OPTIONAL_MAP
    assert types["ai"].value_schema == Schema.OPTIONAL_INT32_SCHEMA
    assert types["al"].value_schema == Schema.OPTIONAL_INT64_SCHEMA
    assert types["mixed_int_long"] == utils.ARRAY_OPTIONAL_STRING
    assert types["nulls"] == utils.ARRAY_OPTIONAL_STRING
    assert types["with_null"] == utils.ARRAY_OPTIONAL_STRING
    assert types["objs"] == utils.ARRAY_MAP_OPTIONAL_STRING
    assert types["bools"].value_schema == Schema.OPTIONAL_BOOLEAN_SCHEMA
    assert types["floats"].value_schema == Schema.OPTIONAL_FLOAT64_SCHEMA
    assert types["bigs"].value_schema == utils.decimal_schema(0)
    assert types["aa_mixed"] == utils.ARRAY_ARRAY_OPTIONAL_STRING
    assert not {"n", "e", "ea"} & set(types)
    assert value.get("o") == {"a": '[1,{"b":null}]'}
    assert value.get("mixed_int_long") == ["1", "1099511627776"]
    assert value.get("nulls") == ["null", "null"]
    assert value.get("with_null") == ["a", "null"]
    assert value.get("objs") == [{"a": "1"}, {}]
    assert value.get("bigs") == [decimal.Decimal(2**70)]
    assert value.get("aa_mixed") == [["1"], ["a"]]


def test_json_text_like_jackson():
    value = JsonToMapTransform().apply(record(
        '{"o": {"d": 1e20, "small": 0.0001, "neg": -2.50, "u": "caf\\u00e9\\n\\"q\\"", "big": 12345678901234567890}}'
    )).value
    assert value.get("o") == {"d": "1.0E20", "small": "1.0E-4", "neg": "-2.5", "u": 'café\n"q"',
                              "big": "12345678901234567890"}
    nested = JsonToMapTransform().apply(record('{"o": {"x": {"y": [1.0, "é", true, null]}}}')).value
    assert nested.get("o") == {"x": '{"y":[1.0,"é",true,null]}'}


def test_node_kinds_not_produced_by_parsing():
    # FloatNode, DecimalNode and BinaryNode only appear in hand-built trees.
    assert utils.schema_from_node(Float32(1.5)) == Schema.OPTIONAL_FLOAT32_SCHEMA
    assert utils.schema_from_node(decimal.Decimal("1.10")) == Schema.OPTIONAL_STRING_SCHEMA
    assert utils.schema_from_node(b"\x01") == Schema.OPTIONAL_BYTES_SCHEMA
    assert utils.extract_value(decimal.Decimal("1E+2"), Type.STRING, "f") == "1E+2"
    assert utils.extract_value(b"Hello", Type.BYTES, "f") == b"Hello"
    assert utils.extract_value(Float32(0.1), Type.FLOAT32, "f") == pytest.approx(0.1)
    obj = {"f": Float32(0.1), "b": b"Hello"}
    schema = SchemaBuilder.struct()
    for key, node in obj.items():
        utils.add_field(key, node, schema)
    struct = utils.add_to_struct(obj, schema.build(), Struct(schema.build()))
    assert struct.get("b") == b"Hello"
    assert utils.populate_map({"n": {"f": Float32(0.1), "b": b"Hello"}}, {}) == {"n": '{"f":0.1,"b":"SGVsbG8="}'}


def test_parse_rules_like_jackson():
    smt = JsonToMapTransform()
    for bad in ['{"a": NaN}', '{"a": Infinity}', "{'a': 1}", '{"a": 01}', "", "   "]:
        with pytest.raises(JsonToMapException):
            smt.apply(record(bad))
    for not_object in ["[1, 2]", "1", '"text"', "null"]:
        with pytest.raises(JsonToMapException, match="Expected json object"):
            smt.apply(record(not_object))
    # Jackson stops after the first value: trailing content is ignored.
    assert smt.apply(record('{"a": 1} trailing')).value.get("a") == 1


def test_value_must_be_a_string():
    with pytest.raises(JsonToMapException, match="record value is not a string, use StringConverter"):
        JsonToMapTransform().apply(record({"a": 1}))


def test_error_mentions_record_coordinates():
    with pytest.raises(JsonToMapException, match="topic topic partition 0 offset 100"):
        JsonToMapTransform().apply(record("{"))


def test_key_and_headers_pass_through():
    rec = record('{"a": "b"}').with_headers([Header("h", "v")])
    result = JsonToMapTransform().apply(rec)
    assert (result.key_schema, result.key, result.headers, result.timestamp) == (
        rec.key_schema, rec.key, rec.headers, rec.timestamp)


def test_empty_key_is_an_error_like_kafka():
    with pytest.raises(DataException):
        JsonToMapTransform().apply(record('{"": 1}'))


# --- property tests -------------------------------------------------------------------------

INT32 = 2**31
INT64 = 2**63

scalars = (
    st.none() | st.booleans() | st.text(max_size=5)
    | st.integers(-(2**80), 2**80) | st.integers(-(2**33), 2**33) | st.integers(-1000, 1000)
    | st.floats(allow_nan=False, allow_infinity=False)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=8)


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int" if -INT32 <= value < INT32 else "long" if -INT64 <= value < INT64 else "big"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "text"
    return "array" if isinstance(value, list) else "object"


def _expected_type(value):
    """The typing table (docs/smt-iceberg.md) as a compact signature, or None: field dropped."""
    kind = _kind(value)
    if kind == "null" or (kind in ("array", "object") and not value):
        return None
    if kind != "array":
        return {"bool": "boolean", "int": "int32", "long": "int64", "big": "decimal0", "double": "float64",
                "text": "string", "object": "map"}[kind]
    kinds = {_kind(v) for v in value}
    if len(kinds) > 1 or kinds == {"null"}:
        return ("array", "string")
    if kinds == {"object"}:
        return ("array", "map")
    if kinds == {"array"}:
        inner = {_expected_type(v) for v in value}
        if len(inner) > 1:
            return ("array", ("array", "string"))
        (only,) = inner
        return None if only is None else ("array", only)
    return ("array", _expected_type(value[0]))


def _signature(schema: Schema):
    if schema.type is Type.ARRAY:
        assert schema.optional
        return ("array", _signature(schema.value_schema))
    if schema.type is Type.MAP:
        return "map"
    if schema.name == Decimal.LOGICAL_NAME:
        assert schema.parameters == {"scale": "0"}
        return "decimal0"
    return schema.type.value


def _check_value(expected, actual, original):
    if expected is None:
        return
    if expected == "map" or expected == ("array", "map"):
        maps = [actual] if expected == "map" else actual
        originals = [original] if expected == "map" else original
        for got, want in zip(maps, originals):
            assert list(got) == list(want)
            for k, text in got.items():
                assert text == want[k] if isinstance(want[k], str) else json.loads(text) == want[k]
    elif expected == "decimal0":
        assert actual == decimal.Decimal(original) and actual.as_tuple().exponent == 0
    elif isinstance(expected, tuple):
        assert len(actual) == len(original)
        for got, want in zip(actual, original):
            if expected[1] == "string":
                assert got == want if isinstance(want, str) else json.loads(got) == want
            else:
                _check_value(expected[1], got, want)
    else:
        assert actual == original and type(actual) is type(original)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_objects)
def test_random_objects_follow_typing_table(obj):
    result = JsonToMapTransform().apply(record(json.dumps(obj)))
    fields = {f.name: f.schema for f in result.value_schema.fields()}
    expected = {k: _expected_type(v) for k, v in obj.items()}
    assert list(fields) == [k for k, sig in expected.items() if sig is not None]
    for name, schema in fields.items():
        assert schema.optional
        assert _signature(schema) == expected[name], name
        _check_value(expected[name], result.value.get(name), obj[name])


@settings(max_examples=75, deadline=None)
@given(json_objects)
def test_random_objects_at_root_become_one_map(obj):
    smt = JsonToMapTransform()
    smt.configure({"json.root": True})
    payload = smt.apply(record(json.dumps(obj))).value.get("payload")
    assert list(payload) == list(obj)
    for key, text in payload.items():
        assert text == obj[key] if isinstance(obj[key], str) else json.loads(text) == obj[key]


def test_loads_by_class_name():
    import smt

    transform = smt.load("org.apache.iceberg.connect.transforms.JsonToMapTransform", {"json.root": "true"})
    assert transform.apply(record('{"a": 1}')).value.get("payload") == {"a": "1"}
