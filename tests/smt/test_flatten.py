"""Flatten: ported from Kafka's FlattenTest, plus property tests on random nested structs and maps."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.api import DataException, Schema, SchemaBuilder, Struct, Type
from smt.transforms.flatten import Key, Value
from tests.smt import record, value_record


def configured(cls=Value, **config):
    xform = cls()
    xform.configure(config)
    return xform


def test_top_level_struct_required():
    with pytest.raises(DataException):
        configured().apply(value_record(Schema.INT32_SCHEMA, 42))


def test_top_level_map_required():
    with pytest.raises(DataException):
        configured().apply(value_record(None, 42))


def supported_types_schema():
    return (SchemaBuilder.struct()
            .field("int8", Schema.INT8_SCHEMA).field("int16", Schema.INT16_SCHEMA)
            .field("int32", Schema.INT32_SCHEMA).field("int64", Schema.INT64_SCHEMA)
            .field("float32", Schema.FLOAT32_SCHEMA).field("float64", Schema.FLOAT64_SCHEMA)
            .field("boolean", Schema.BOOLEAN_SCHEMA).field("string", Schema.STRING_SCHEMA)
            .field("bytes", Schema.BYTES_SCHEMA)
            .build())


SUPPORTED_VALUES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": 64.0,
                    "boolean": True, "string": "stringy", "bytes": b"bytes"}


def test_nested_struct():
    types_schema = supported_types_schema()
    one_level = SchemaBuilder.struct().field("B", types_schema).build()
    two_level = SchemaBuilder.struct().field("A", one_level).build()
    supported = Struct(types_schema)
    for name, val in SUPPORTED_VALUES.items():
        supported.put(name, val)
    value = Struct(two_level).put("A", Struct(one_level).put("B", supported))
    transformed = configured().apply(value_record(two_level, value))
    assert transformed.value_schema.type is Type.STRUCT
    out = transformed.value
    assert len(out.schema.fields()) == 9
    for name, val in SUPPORTED_VALUES.items():
        assert out.get(f"A.B.{name}") == val


def test_nested_map_with_delimiter():
    value = {"A": {"B": dict(SUPPORTED_VALUES)}}
    transformed = configured(delimiter="#").apply(value_record(None, value))
    assert transformed.value_schema is None
    assert isinstance(transformed.value, dict)
    assert transformed.value == {f"A#B#{name}": val for name, val in SUPPORTED_VALUES.items()}


def test_optional_field_struct():
    types_schema = SchemaBuilder.struct().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    one_level = SchemaBuilder.struct().field("B", types_schema).build()
    value = Struct(one_level).put("B", Struct(types_schema).put("opt_int32", None))
    transformed = configured().apply(value_record(one_level, value))
    assert transformed.value_schema.type is Type.STRUCT
    assert transformed.value.get("B.opt_int32") is None


def test_optional_struct():
    schema = SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    transformed = configured().apply(value_record(schema, None))
    assert transformed.value_schema.type is Type.STRUCT
    assert transformed.value is None


def test_optional_nested_struct():
    types_schema = SchemaBuilder.struct().optional().field("opt_int32", Schema.OPTIONAL_INT32_SCHEMA).build()
    one_level = SchemaBuilder.struct().field("B", types_schema).build()
    value = Struct(one_level).put("B", None)
    transformed = configured().apply(value_record(one_level, value))
    assert transformed.value_schema.type is Type.STRUCT
    assert transformed.value.get("B.opt_int32") is None


def test_optional_field_map():
    transformed = configured().apply(value_record(None, {"B": {"opt_int32": None}}))
    assert transformed.value_schema is None
    assert isinstance(transformed.value, dict)
    assert transformed.value.get("B.opt_int32") is None


def test_key():
    transformed = configured(Key).apply(record(None, {"A": {"B": 12}}, partition=None))
    assert transformed.key_schema is None
    assert isinstance(transformed.key, dict)
    assert transformed.key["A.B"] == 12


def test_schemaless_array():
    value = {"foo": ["bar", {"baz": {"lfg": "lfg"}}]}
    assert configured().apply(record(value=value, partition=None)).value == value


def test_array_with_schema():
    nested_schema = SchemaBuilder.struct().field("lfg", Schema.STRING_SCHEMA).build()
    inner_schema = SchemaBuilder.struct().field("baz", nested_schema).build()
    schema = SchemaBuilder.struct().field("foo", SchemaBuilder.array(inner_schema).doc("durk").build()).build()
    inner = Struct(inner_schema).put("baz", Struct(nested_schema).put("lfg", "lfg"))
    value = Struct(schema).put("foo", [inner])
    transformed = configured().apply(record(value_schema=schema, value=value, partition=None))
    assert transformed.value == value
    assert transformed.value_schema == schema


def test_optional_and_default_values_nested():
    builder = SchemaBuilder.struct().optional()
    builder.field("req_field", Schema.STRING_SCHEMA)
    builder.field("opt_field", SchemaBuilder.string().optional().default_value("child_default").build())
    child_default = Struct(builder.build()).put("req_field", "req_default")
    builder.default_value(child_default)
    schema = builder.build()
    transformed = configured().apply(value_record(schema, Struct(schema)))
    assert transformed is not None
    out = transformed.value_schema
    assert out.type is Type.STRUCT
    assert len(out.fields()) == 2
    assert out.field("req_field").schema == SchemaBuilder.string().optional().default_value("req_default").build()
    assert out.field("opt_field").schema == SchemaBuilder.string().optional().default_value("child_default").build()


def test_tombstone_event_without_schema_should_pass_through():
    transformed = configured().apply(value_record(None, None, topic="test"))
    assert transformed.value is None
    assert transformed.value_schema is None


def test_tombstone_event_with_schema_should_pass_through():
    schema = (SchemaBuilder.struct().name("name").version(1).doc("doc")
              .field("magic", Schema.OPTIONAL_INT64_SCHEMA).build())
    transformed = configured().apply(value_record(schema, None, topic="test"))
    assert transformed.value is None
    assert transformed.value_schema == schema


def test_map_with_null_fields():
    value = {"firstNull": None, "firstNonNull": "nonNull", "secondNull": None, "secondNonNull": "alsoNonNull",
             "thirdNonNull": None}
    assert configured().apply(value_record(None, value, topic="test")).value == value


def test_struct_with_null_fields():
    schema = (SchemaBuilder.struct()
              .field("firstNull", Schema.OPTIONAL_STRING_SCHEMA).field("firstNonNull", Schema.OPTIONAL_STRING_SCHEMA)
              .field("secondNull", Schema.OPTIONAL_STRING_SCHEMA)
              .field("secondNonNull", Schema.OPTIONAL_STRING_SCHEMA)
              .field("thirdNonNull", Schema.OPTIONAL_STRING_SCHEMA).build())
    value = (Struct(schema).put("firstNull", None).put("firstNonNull", "nonNull").put("secondNull", None)
             .put("secondNonNull", "alsoNonNull").put("thirdNonNull", None))
    assert configured().apply(value_record(schema, value, topic="test")).value == value


# --- beyond Kafka's tests: behaviour read from Flatten.java ---------------------------------------


def test_map_field_with_schema_is_rejected():
    schema = SchemaBuilder.struct().field("m", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA)).build()
    with pytest.raises(DataException, match=r"^Flatten transformation does not support MAP for record with "
                                            r"schemas \(for field m\)\.$"):
        configured().apply(value_record(schema, Struct(schema).put("m", {})))


def test_schemaless_unsupported_values():
    inner = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match=r"does not support Struct for record without schemas \(for field x\.s\)"):
        configured().apply(value_record(None, {"x": {"s": Struct(inner).put("a", 1)}}))
    import decimal
    with pytest.raises(DataException, match="which is not supported by Connect's data API"):
        configured().apply(value_record(None, {"d": decimal.Decimal(1)}))


def test_null_fields_read_with_defaults():
    schema = SchemaBuilder.struct().field("f", SchemaBuilder.string().optional().default_value("d").build()).build()
    out = configured().apply(value_record(schema, Struct(schema).put("f", None))).value
    assert out.get_without_default("f") == "d"


def test_optionality_inherited_and_metadata_kept():
    inner = SchemaBuilder.struct().optional().field("x", Schema.INT32_SCHEMA).build()
    schema = (SchemaBuilder.struct().name("outer").version(3).doc("d").parameter("p", "v")
              .field("in", inner).build())
    xform = configured()
    out = xform.apply(value_record(schema, Struct(schema).put("in", None)))
    assert out.value_schema.field("in.x").schema == Schema.OPTIONAL_INT32_SCHEMA
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc,
            out.value_schema.parameters) == ("outer", 3, "d", {"p": "v"})
    again = xform.apply(value_record(schema, Struct(schema).put("in", None)))
    assert again.value_schema is out.value_schema  # cached per input schema


# --- property tests ----------------------------------------------------------------------------

_LEAVES = [
    (Schema.INT32_SCHEMA, st.integers(-(2**31), 2**31 - 1)),
    (Schema.STRING_SCHEMA, st.text(max_size=5)),
    (Schema.BOOLEAN_SCHEMA, st.booleans()),
    (Schema.FLOAT64_SCHEMA, st.floats(allow_nan=False)),
    (Schema.OPTIONAL_INT64_SCHEMA, st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))),
]
_NAMES = st.text(alphabet="abcxyz", min_size=1, max_size=3)


@st.composite
def nested_structs(draw, depth=0):
    """(schema, struct, {flattened name: value}, {flattened name: optional})."""
    names = draw(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
    optional = draw(st.booleans()) if depth else False
    builder = SchemaBuilder.struct()
    if optional:
        builder.optional()
    children = []
    for name in names:
        if depth < 2 and draw(st.booleans()):
            children.append((name, "struct", draw(nested_structs(depth + 1))))
        else:
            schema, values = draw(st.sampled_from(_LEAVES))
            children.append((name, "leaf", (schema, draw(values))))
    for name, _kind, payload in children:
        builder.field(name, payload[0])
    schema = builder.build()
    struct = Struct(schema)
    leaves: dict = {}
    optionality: dict = {}
    for name, kind, payload in children:
        struct.put(name, payload[1])
        if kind == "leaf":
            leaves[name] = payload[1]
            optionality[name] = payload[0].optional
        else:
            for child_name, child_value in payload[2].items():
                leaves[f"{name}.{child_name}"] = child_value
            for child_name, child_optional in payload[3].items():
                optionality[f"{name}.{child_name}"] = child_optional or payload[0].optional
    return schema, struct, leaves, optionality


@settings(max_examples=150, deadline=None)
@given(nested_structs())
def test_flatten_struct_keeps_every_leaf(case):
    schema, struct, leaves, optionality = case
    out = configured().apply(value_record(schema, struct))
    names = [f.name for f in out.value_schema.fields()]
    if len(set(names)) != len(names):  # flattened names can collide only through dots in names; never here
        raise AssertionError(names)
    assert names == list(leaves)
    for name, leaf in leaves.items():
        assert out.value.get(name) == leaf
        assert out.value_schema.field(name).schema.optional == optionality[name]


def _maps():
    leaves = st.one_of(
        st.none(), st.integers(), st.text(max_size=4), st.booleans(), st.lists(st.integers(), max_size=2)
    )
    return st.recursive(st.dictionaries(_NAMES, leaves, max_size=3),
                        lambda children: st.dictionaries(_NAMES, st.one_of(leaves, children), max_size=3),
                        max_leaves=10)


def _expected_flat(value, prefix, delimiter, out):
    for key, child in value.items():
        name = key if not prefix else prefix + delimiter + key
        if isinstance(child, dict):
            _expected_flat(child, name, delimiter, out)
        else:
            out[name] = child
    return out


@settings(max_examples=150, deadline=None)
@given(_maps(), st.sampled_from([".", "_", "#"]))
def test_flatten_map_matches_recursive_join(value, delimiter):
    out = configured(delimiter=delimiter).apply(value_record(None, value)).value
    assert out == _expected_flat(value, "", delimiter, {})
