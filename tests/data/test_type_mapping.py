"""Connect schema → Iceberg type, and schemaless inference (TestSchemaUtils, reference §3.3–3.4, §6.3 #3–#5)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal as Dec

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from connector.api import Schema, SchemaBuilder, Struct, Type
from connector.api.logical import Date, Decimal, Time, Timestamp
from connector.data.convert.type_mapping import (
    decimal_type_for,
    iceberg_schema_for,
    iceberg_type_for,
    infer_iceberg_schema,
    infer_iceberg_type,
    widened_type_for,
)


@pytest.mark.parametrize("force_optional", [False, True])
def test_to_iceberg_type(force_optional: bool) -> None:
    def t(schema):
        return iceberg_type_for(schema, force_optional=force_optional)

    assert t(Schema.BOOLEAN_SCHEMA) == BooleanType()
    assert t(Schema.BYTES_SCHEMA) == BinaryType()
    assert t(Schema.INT8_SCHEMA) == IntegerType()
    assert t(Schema.INT16_SCHEMA) == IntegerType()
    assert t(Schema.INT32_SCHEMA) == IntegerType()
    assert t(Schema.INT64_SCHEMA) == LongType()
    assert t(Schema.FLOAT32_SCHEMA) == FloatType()
    assert t(Schema.FLOAT64_SCHEMA) == DoubleType()
    assert t(Schema.STRING_SCHEMA) == StringType()
    assert t(Date.SCHEMA) == DateType()
    assert t(Time.SCHEMA) == TimeType()
    assert t(Timestamp.SCHEMA) == TimestamptzType()
    assert t(Decimal.schema(4)) == DecimalType(38, 4)

    list_type = t(SchemaBuilder.array(Schema.STRING_SCHEMA).build())
    assert isinstance(list_type, ListType) and list_type.element_type == StringType()
    assert list_type.element_required is not force_optional

    map_type = t(SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build())
    assert isinstance(map_type, MapType)
    assert map_type.key_type == StringType() and map_type.value_type == StringType()
    assert map_type.value_required is not force_optional

    struct_type = t(SchemaBuilder.struct().field("i", Schema.INT32_SCHEMA).build())
    assert isinstance(struct_type, StructType)
    assert struct_type.field_by_name("i").field_type == IntegerType()
    assert struct_type.field_by_name("i").required is not force_optional


def test_uuid_logical_type_on_string() -> None:
    assert iceberg_type_for(SchemaBuilder.string().name("uuid").build()) == UUIDType()


def test_nested_force_optional_applies_everywhere() -> None:
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).build()
    schema = (
        SchemaBuilder.struct()
        .field("li", SchemaBuilder.array(inner))
        .field("ma", SchemaBuilder.map(Schema.STRING_SCHEMA, inner))
        .build()
    )
    result = iceberg_schema_for(schema, True)
    li = result.find_field("li").field_type
    assert not li.element_required and not li.element_type.fields[0].required
    ma = result.find_field("ma").field_type
    assert not ma.value_required and not ma.value_type.fields[0].required


def test_schema_for_non_struct_raises() -> None:
    with pytest.raises(Exception, match="INT32"):
        iceberg_schema_for(Schema.INT32_SCHEMA)


def test_needs_data_type_update() -> None:
    assert widened_type_for(FloatType(), Schema.FLOAT64_SCHEMA) == DoubleType()
    assert widened_type_for(IntegerType(), Schema.INT64_SCHEMA) == LongType()
    assert widened_type_for(IntegerType(), Schema.STRING_SCHEMA) is None
    assert widened_type_for(FloatType(), Schema.STRING_SCHEMA) is None
    assert widened_type_for(StringType(), Schema.INT64_SCHEMA) is None


def test_infer_iceberg_type() -> None:
    assert infer_iceberg_type(1) == LongType()
    assert infer_iceberg_type(2**40) == LongType()
    assert infer_iceberg_type(1.1) == DoubleType()
    assert infer_iceberg_type("foobar") == StringType()
    assert infer_iceberg_type(True) == BooleanType()
    assert infer_iceberg_type(dt.date.today()) == DateType()
    assert infer_iceberg_type(dt.time(1, 2)) == TimeType()
    assert infer_iceberg_type(dt.datetime.now(dt.timezone.utc)) == TimestamptzType()
    assert infer_iceberg_type(dt.datetime.now()) == TimestampType()
    decimal_type = infer_iceberg_type(Dec("12.345"))
    assert isinstance(decimal_type, DecimalType) and decimal_type.scale == 3
    assert isinstance(infer_iceberg_type(["foobar"]), ListType)
    assert isinstance(infer_iceberg_type({"foo": "bar"}), StructType)


@pytest.mark.parametrize("value", [None, [], [None], [{}], {}, {"col": None}, {"nested": {}}])
def test_infer_iceberg_type_empty(value) -> None:
    assert infer_iceberg_type(value) is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.001", DecimalType(3, 3)),
        ("1E+2", DecimalType(3, 0)),
        ("100", DecimalType(3, 0)),
        ("1E+37", DecimalType(38, 0)),
        ("1E-38", DecimalType(38, 38)),
        ("1E+38", None),
        ("1E-39", None),
        ("1E+2147483648", None),
        ("NaN", None),
    ],
)
def test_decimal_inference(text: str, expected) -> None:
    assert decimal_type_for(Dec(text)) == expected
    assert infer_iceberg_type(Dec(text)) == expected


def test_inferred_fields_and_elements_are_optional() -> None:
    inferred = infer_iceberg_type({"a": [{"b": 1}], "c": None})
    assert isinstance(inferred, StructType) and [f.name for f in inferred.fields] == ["a"]
    a = inferred.fields[0]
    assert not a.required and not a.field_type.element_required
    assert not a.field_type.element_type.fields[0].required


def test_infer_schema_and_struct_values() -> None:
    schema = infer_iceberg_schema({"id": 123, "data": "foo2"})
    assert isinstance(schema, IcebergSchema)
    assert schema.find_field("id").field_type == LongType()
    assert schema.find_field("data").field_type == StringType()
    assert infer_iceberg_schema({"x": None}) is None
    connect = SchemaBuilder.struct().field("i", Schema.INT32_SCHEMA).build()
    assert isinstance(infer_iceberg_type({"s": Struct(connect).put("i", 1)}).fields[0].field_type, StructType)


# --- property: structure and optionality are preserved ------------------------------------

_PRIMITIVES = st.sampled_from(
    [Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64, Type.BOOLEAN, Type.STRING, Type.BYTES]
)
_NAMES = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)


def _primitive_schemas() -> st.SearchStrategy[Schema]:
    logical = st.sampled_from([Date.SCHEMA, Time.SCHEMA, Timestamp.SCHEMA, Decimal.schema(2)])
    plain = _PRIMITIVES.map(lambda t: Schema(t))
    return st.one_of(plain, logical)


def _optional(schema: Schema, optional: bool) -> Schema:
    return Schema(
        schema.type, optional=optional, name=schema.name, version=schema.version, parameters=schema.parameters,
        fields=schema.fields() if schema.type is Type.STRUCT else None,
        key_schema=schema.key_schema, value_schema=schema.value_schema,
    )


def _extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    def struct(fields):
        builder = SchemaBuilder.struct()
        for name, schema in fields.items():
            builder.field(name, schema)
        return builder.build()

    return st.one_of(
        children.map(lambda s: SchemaBuilder.array(s).build()),
        st.tuples(_primitive_schemas(), children).map(lambda kv: SchemaBuilder.map(kv[0], kv[1]).build()),
        st.dictionaries(_NAMES, children, min_size=1, max_size=4).map(struct),
    )


_SCHEMAS = st.recursive(
    st.tuples(_primitive_schemas(), st.booleans()).map(lambda p: _optional(*p)),
    lambda children: st.tuples(_extend(children), st.booleans()).map(lambda p: _optional(*p)),
    max_leaves=12,
)


def _check(schema: Schema, iceberg, force_optional: bool) -> None:
    if schema.type is Type.STRUCT:
        assert isinstance(iceberg, StructType)
        assert [f.name for f in schema.fields()] == [f.name for f in iceberg.fields]
        for connect_field, field in zip(schema.fields(), iceberg.fields):
            assert field.required is not (force_optional or connect_field.schema.optional)
            _check(connect_field.schema, field.field_type, force_optional)
    elif schema.type is Type.ARRAY:
        assert isinstance(iceberg, ListType)
        assert iceberg.element_required is not (force_optional or schema.value_schema.optional)
        _check(schema.value_schema, iceberg.element_type, force_optional)
    elif schema.type is Type.MAP:
        assert isinstance(iceberg, MapType)
        assert iceberg.value_required is not (force_optional or schema.value_schema.optional)
        _check(schema.key_schema, iceberg.key_type, force_optional)
        _check(schema.value_schema, iceberg.value_type, force_optional)
    else:
        assert iceberg.is_primitive


@settings(max_examples=150, deadline=None)
@given(schema=_SCHEMAS, force_optional=st.booleans())
def test_property_structure_and_optionality(schema: Schema, force_optional: bool) -> None:
    iceberg = iceberg_type_for(schema, force_optional=force_optional)
    _check(schema, iceberg, force_optional)
    ids = _field_ids(iceberg)
    assert len(ids) == len(set(ids))
    if schema.type is Type.STRUCT:
        assert len(iceberg_schema_for(schema, force_optional).fields) == len(schema.fields())


def _field_ids(iceberg) -> list[int]:
    if isinstance(iceberg, StructType):
        return [i for f in iceberg.fields for i in [f.field_id, *_field_ids(f.field_type)]]
    if isinstance(iceberg, ListType):
        return [iceberg.element_id, *_field_ids(iceberg.element_type)]
    if isinstance(iceberg, MapType):
        return [iceberg.key_id, iceberg.value_id, *_field_ids(iceberg.key_type), *_field_ids(iceberg.value_type)]
    return []
