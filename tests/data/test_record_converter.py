"""Record → Arrow conversion (ports of TestRecordConverter and reference §6.3 #7–#10)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from decimal import Decimal as Dec

import numpy as np
import pytest
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.table.name_mapping import MappedField, NameMapping
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from connector.api import DataException, Schema, SchemaBuilder, Struct
from connector.api.logical import Date, Decimal, Time, Timestamp
from connector.data.convert import coercion
from connector.data.convert.record_converter import RecordConversionError, RecordConverter

UTC = dt.timezone.utc


def req(field_id: int, name: str, type_) -> NestedField:
    return NestedField(field_id, name, type_, required=True)


def opt(field_id: int, name: str, type_) -> NestedField:
    return NestedField(field_id, name, type_, required=False)


FIELDS = [
    req(20, "i", IntegerType()), req(21, "l", LongType()), req(22, "d", DateType()), req(23, "t", TimeType()),
    req(24, "ts", TimestampType()), req(25, "tsz", TimestamptzType()), req(26, "fl", FloatType()),
    req(27, "do", DoubleType()), req(28, "dec", DecimalType(9, 2)), req(29, "s", StringType()),
    req(30, "b", BooleanType()), req(31, "u", UUIDType()), req(32, "f", FixedType(3)), req(33, "bi", BinaryType()),
    req(34, "li", ListType(35, StringType(), element_required=True)),
    req(36, "ma", MapType(37, StringType(), 38, StringType(), value_required=True)),
    opt(39, "extra", StringType()),
]
SCHEMA = IcebergSchema(*FIELDS)
MAPPED_CNT = len(FIELDS) - 1
NESTED_SCHEMA = IcebergSchema(req(1, "ii", IntegerType()), req(2, "st", SCHEMA.as_struct()))
SIMPLE_SCHEMA = IcebergSchema(req(1, "ii", IntegerType()), req(2, "st", StringType()))
ID_SCHEMA = IcebergSchema(req(1, "ii", IntegerType()))
STRUCT_IN_LIST_SCHEMA = IcebergSchema(req(100, "stli", ListType(101, NESTED_SCHEMA.as_struct(), element_required=True)))
STRUCT_IN_LIST_BASIC_SCHEMA = IcebergSchema(
    req(100, "stli", ListType(101, ID_SCHEMA.as_struct(), element_required=True))
)
STRUCT_IN_MAP_SCHEMA = IcebergSchema(
    req(100, "stma", MapType(101, StringType(), 102, NESTED_SCHEMA.as_struct(), value_required=True))
)
STRUCT_IN_MAP_BASIC_SCHEMA = IcebergSchema(
    req(100, "stma", MapType(101, StringType(), 102, ID_SCHEMA.as_struct(), value_required=True))
)

CONNECT_SCHEMA = (
    SchemaBuilder.struct()
    .field("i", Schema.INT32_SCHEMA).field("l", Schema.INT64_SCHEMA).field("d", Date.SCHEMA).field("t", Time.SCHEMA)
    .field("ts", Timestamp.SCHEMA).field("tsz", Timestamp.SCHEMA).field("fl", Schema.FLOAT32_SCHEMA)
    .field("do", Schema.FLOAT64_SCHEMA).field("dec", Decimal.schema(2)).field("s", Schema.STRING_SCHEMA)
    .field("b", Schema.BOOLEAN_SCHEMA).field("u", Schema.STRING_SCHEMA).field("f", Schema.BYTES_SCHEMA)
    .field("bi", Schema.BYTES_SCHEMA).field("li", SchemaBuilder.array(Schema.STRING_SCHEMA))
    .field("ma", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA))
    .build()
)
CONNECT_NESTED_SCHEMA = SchemaBuilder.struct().field("ii", Schema.INT32_SCHEMA).field("st", CONNECT_SCHEMA).build()
CONNECT_STRUCT_IN_LIST_SCHEMA = SchemaBuilder.struct().field("stli", SchemaBuilder.array(CONNECT_NESTED_SCHEMA)).build()
CONNECT_STRUCT_IN_MAP_SCHEMA = (
    SchemaBuilder.struct().field("stma", SchemaBuilder.map(Schema.STRING_SCHEMA, CONNECT_NESTED_SCHEMA)).build()
)

DATE_VAL = dt.date(2023, 5, 18)
TIME_VAL = dt.time(7, 14, 21)
TS_VAL = dt.datetime(2023, 5, 18, 7, 14, 21)
TSZ_VAL = dt.datetime(2023, 5, 18, 7, 14, 21, tzinfo=UTC)
DEC_VAL = Dec("12.34")
STR_VAL = "foobar"
UUID_VAL = uuid.uuid4()
BYTES_VAL = b"\x01\x02\x03"
LIST_VAL = ["hello", "world"]
MAP_VAL = {"one": "1", "two": "2"}


def map_data() -> dict:
    return {
        "i": 1, "l": 2, "d": DATE_VAL.isoformat(), "t": TIME_VAL.isoformat(), "ts": TS_VAL.isoformat(),
        "tsz": "2023-05-18T07:14:21Z", "fl": 1.1, "do": 2.2, "dec": str(DEC_VAL), "s": STR_VAL, "b": True,
        "u": str(UUID_VAL), "f": base64.b64encode(BYTES_VAL).decode(), "bi": base64.b64encode(BYTES_VAL).decode(),
        "li": LIST_VAL, "ma": MAP_VAL,
    }


def nested_map_data() -> dict:
    return {"ii": 11, "st": map_data()}


def struct_data() -> Struct:
    s = Struct(CONNECT_SCHEMA)
    for name, value in [
        ("i", 1), ("l", 2), ("d", DATE_VAL), ("t", TIME_VAL), ("ts", TS_VAL.replace(tzinfo=UTC)), ("tsz", TSZ_VAL),
        ("fl", 1.1), ("do", 2.2), ("dec", DEC_VAL), ("s", STR_VAL), ("b", True), ("u", str(UUID_VAL)),
        ("f", BYTES_VAL), ("bi", BYTES_VAL), ("li", LIST_VAL), ("ma", MAP_VAL),
    ]:
        s.put(name, value)
    return s


def nested_struct_data() -> Struct:
    return Struct(CONNECT_NESTED_SCHEMA).put("ii", 11).put("st", struct_data())


def convert_one(schema: IcebergSchema, value, **options) -> dict:
    result = RecordConverter(schema, evolve=False, **options).convert([value])
    assert result.table is not None and not result.updates
    assert result.table.schema.equals(schema_to_pyarrow(schema), check_metadata=True)
    return result.table.to_pylist()[0]


def updates_for(schema: IcebergSchema, value):
    result = RecordConverter(schema, evolve=True).convert([value])
    assert result.table is None
    return result.updates


def assert_record_values(rec: dict) -> None:
    assert rec["i"] == 1
    assert rec["l"] == 2
    assert rec["d"] == DATE_VAL
    assert rec["t"] == TIME_VAL
    assert rec["ts"] == TS_VAL
    assert rec["tsz"] == TSZ_VAL
    assert rec["fl"] == float(np.float32(1.1))
    assert rec["do"] == 2.2
    assert rec["dec"] == DEC_VAL
    assert rec["s"] == STR_VAL
    assert rec["b"] is True
    assert rec["u"] == UUID_VAL
    assert rec["f"] == BYTES_VAL
    assert rec["bi"] == BYTES_VAL
    assert rec["li"] == LIST_VAL
    assert dict(rec["ma"]) == MAP_VAL
    assert rec["extra"] is None


def assert_nested_record_values(rec: dict) -> None:
    assert rec["ii"] == 11
    assert_record_values(rec["st"])


# --- conversion -------------------------------------------------------------------------


def test_map_convert() -> None:
    assert_record_values(convert_one(SCHEMA, map_data()))


def test_struct_convert() -> None:
    assert_record_values(convert_one(SCHEMA, struct_data()))


def test_nested_map_convert() -> None:
    assert_nested_record_values(convert_one(NESTED_SCHEMA, nested_map_data()))


def test_nested_struct_convert() -> None:
    assert_nested_record_values(convert_one(NESTED_SCHEMA, nested_struct_data()))


def test_empty_list_and_map_convert() -> None:
    data = {**map_data(), "li": [], "ma": {}}
    rec = convert_one(SCHEMA, data)
    assert rec["li"] == [] and rec["ma"] == []


def test_uuid_string_conversion() -> None:
    schema = IcebergSchema(req(1, "uuid", UUIDType()))
    connect = SchemaBuilder.struct().field("uuid", SchemaBuilder.string().name("uuid").build()).build()
    assert convert_one(schema, Struct(connect).put("uuid", str(UUID_VAL)))["uuid"] == UUID_VAL
    assert convert_one(schema, {"uuid": str(UUID_VAL)})["uuid"] == UUID_VAL
    assert convert_one(schema, {"uuid": UUID_VAL})["uuid"] == UUID_VAL


def test_map_to_string() -> None:
    text = convert_one(SIMPLE_SCHEMA, nested_map_data())["st"]
    parsed = json.loads(text)
    assert len(parsed) == MAPPED_CNT
    assert '"fl":1.1,' in text and '"li":["hello","world"]' in text and '"b":true' in text


def test_struct_to_string() -> None:
    text = convert_one(SIMPLE_SCHEMA, nested_struct_data())["st"]
    parsed = json.loads(text)
    assert len(parsed) == MAPPED_CNT
    # JsonConverter (schemas disabled): logical types as numbers, bytes and decimals as Base64
    assert parsed["d"] == 19495 and parsed["t"] == 26061000 and parsed["tsz"] == 1684394061000
    assert parsed["f"] == "AQID" and parsed["dec"] == base64.b64encode((1234).to_bytes(2, "big")).decode()
    assert '"fl":1.1,' in text and '"do":2.2,' in text
    assert parsed["ma"] == MAP_VAL


def test_map_value_in_list_and_map_convert() -> None:
    data = nested_map_data()
    rec = convert_one(STRUCT_IN_LIST_SCHEMA, {"stli": [data, data]})
    assert_nested_record_values(rec["stli"][0])
    rec = convert_one(STRUCT_IN_MAP_SCHEMA, {"stma": {"key1": data, "key2": data}})
    assert_nested_record_values(dict(rec["stma"])["key1"])


def test_struct_value_in_list_and_map_convert() -> None:
    data = nested_struct_data()
    rec = convert_one(STRUCT_IN_LIST_SCHEMA, Struct(CONNECT_STRUCT_IN_LIST_SCHEMA).put("stli", [data, data]))
    assert_nested_record_values(rec["stli"][1])
    rec = convert_one(
        STRUCT_IN_MAP_SCHEMA, Struct(CONNECT_STRUCT_IN_MAP_SCHEMA).put("stma", {"key1": data, "key2": data})
    )
    assert_nested_record_values(dict(rec["stma"])["key2"])


def test_name_mapping() -> None:
    mapping = NameMapping([MappedField(field_id=1, names=["renamed_ii"])])
    assert convert_one(IcebergSchema(opt(1, "ii", IntegerType()), opt(2, "st", StringType())), {"renamed_ii": 123},
                       name_mapping=mapping)["ii"] == 123
    as_json = '[{"field-id": 1, "names": ["renamed_ii"]}]'
    rec = convert_one(IcebergSchema(opt(1, "ii", IntegerType())), {"renamed_ii": 123, "ii": 5}, name_mapping=as_json)
    assert rec["ii"] == 123  # with a mapping, only the mapped names count


@pytest.mark.parametrize("case_insensitive", [False, True])
def test_case_sensitivity(case_insensitive: bool) -> None:
    schema = IcebergSchema(opt(1, "ii", IntegerType()), opt(2, "st", StringType()))
    struct_value = Struct(SchemaBuilder.struct().field("II", Schema.INT32_SCHEMA).build()).put("II", 123)
    for value in ({"II": 123}, struct_value):
        expected = 123 if case_insensitive else None
        assert convert_one(schema, value, case_insensitive=case_insensitive)["ii"] == expected


@pytest.mark.parametrize("replace", [False, True])
def test_replace_null_with_default(replace: bool) -> None:
    schema = IcebergSchema(opt(1, "s", StringType()))
    connect = SchemaBuilder.struct().field("s", SchemaBuilder.string().optional().default_value("")).build()
    rec = convert_one(schema, Struct(connect).put("s", None), replace_null_with_default=replace)
    assert rec["s"] == ("" if replace else None)


def test_field_order_follows_table_and_unknown_fields_ignored() -> None:
    schema = IcebergSchema(opt(1, "b", StringType()), opt(2, "a", LongType()))
    result = RecordConverter(schema, evolve=False).convert([{"a": 1, "zzz": 3, "b": "x"}])
    assert result.table.column_names == ["b", "a"] and result.table.to_pylist() == [{"b": "x", "a": 1}]
    assert not result.updates


# --- coercion (§6.3 #9) ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["123", 123.0, 123, 123.9, Dec("123.4")])
def test_int_and_long_conversion(value) -> None:
    assert coercion.to_int(value) == 123
    assert coercion.to_long(value) == 123


@pytest.mark.parametrize("value", ["123", 123, 123.0, " 123 ", "123f", "1.23e2"])
def test_float_and_double_conversion(value) -> None:
    assert coercion.to_float(value) == 123.0
    assert coercion.to_double(value) == 123.0


def test_decimal_conversion() -> None:
    for value in ["123.45", 123.45, Dec("123.45")]:
        assert coercion.to_decimal(value, 10, 2) == Dec("123.45")
    for value in ["123", 123, Dec("123")]:
        assert coercion.to_decimal(value, 10, 0) == Dec("123")
    assert coercion.to_decimal(1.005, 10, 2) == Dec("1.01")  # HALF_UP on Double.toString's digits
    assert coercion.to_decimal("-0.125", 10, 2) == Dec("-0.13")
    with pytest.raises(DataException):
        coercion.to_decimal("12345678.9", 9, 2)


def test_date_conversion() -> None:
    expected = (dt.date(2023, 11, 15) - dt.date(1970, 1, 1)).days
    for value in ["2023-11-15", expected, dt.date(2023, 11, 15), dt.datetime(2023, 11, 15, tzinfo=UTC)]:
        assert coercion.to_date_days(value) == expected


def test_time_conversion() -> None:
    expected = ((7 * 60 + 51) * 60 + 30) * 1_000_000 + 888_000
    for value in ["07:51:30.888", expected // 1000, dt.time(7, 51, 30, 888_000),
                  dt.datetime(1970, 1, 1, 7, 51, 30, 888_000, tzinfo=UTC)]:
        assert coercion.to_time_micros(value) == expected


def test_other_coercions() -> None:
    assert coercion.to_bool("TRUE") is True and coercion.to_bool("yes") is False
    assert coercion.to_string(1.0) == "1.0" and coercion.to_string(1e20) == "1.0E20"
    assert coercion.to_string(True) == "true" and coercion.to_string(12) == "12"
    assert coercion.to_string([1, {"a": None}]) == '[1,{"a":null}]'
    assert coercion.to_binary("AQID") == BYTES_VAL and coercion.to_binary("AQI") == b"\x01\x02"
    for bad, fn in [("x", coercion.to_int), (True, coercion.to_long), (1, coercion.to_bool), (b"x", coercion.to_string),
                    ("1 2", coercion.to_double), ("2**31", coercion.to_int), ([1], coercion.to_uuid)]:
        with pytest.raises(DataException):
            fn(bad)
    with pytest.raises(DataException, match="out of range"):
        coercion.to_int(2**31)


# --- timestamps (§6.3 #8) ---------------------------------------------------------------------

_UTC_INPUTS = [
    "2023-05-18T11:22:33Z", "2023-05-18 11:22:33Z", "2023-05-18T11:22:33+00", "2023-05-18 11:22:33+00",
    "2023-05-18T11:22:33+00:00", "2023-05-18 11:22:33+00:00", "2023-05-18T11:22:33+0000",
    "2023-05-18 11:22:33+0000", "2023-05-18T11:22:33", "2023-05-18 11:22:33", 1684408953000,
    dt.datetime(2023, 5, 18, 11, 22, 33, tzinfo=UTC), dt.datetime(2023, 5, 18, 11, 22, 33),
]
_MINUS_8 = [
    "2023-05-18T03:22:33-08", "2023-05-18 03:22:33-08", "2023-05-18T03:22:33-08:00",
    "2023-05-18 03:22:33-08:00", "2023-05-18T03:22:33-0800", "2023-05-18 03:22:33-0800",
]
_FRACTIONAL = [
    "2026-03-31T03:17:37.260514+00:00", "2026-03-31T03:17:37.260514+0000", "2026-03-31T03:17:37.260514Z",
    "2026-03-31 03:17:37.260514+00:00", "2026-03-31 03:17:37.260514+0000",
]


def _ts_column(type_, values) -> list:
    schema = IcebergSchema(opt(1, "ts", type_))
    return [
        r["ts"] for r in RecordConverter(schema, evolve=False).convert([{"ts": v} for v in values]).table.to_pylist()
    ]


def test_timestamp_with_zone_conversion() -> None:
    assert set(_ts_column(TimestamptzType(), _UTC_INPUTS)) == {dt.datetime(2023, 5, 18, 11, 22, 33, tzinfo=UTC)}
    assert set(_ts_column(TimestamptzType(), _MINUS_8)) == {dt.datetime(2023, 5, 18, 11, 22, 33, tzinfo=UTC)}
    assert set(_ts_column(TimestamptzType(), _FRACTIONAL)) == {
        dt.datetime(2026, 3, 31, 3, 17, 37, 260514, tzinfo=UTC)
    }


def test_timestamp_without_zone_conversion() -> None:
    assert set(_ts_column(TimestampType(), _UTC_INPUTS)) == {dt.datetime(2023, 5, 18, 11, 22, 33)}
    zone_ignored = [s.replace("03:22", "11:22") for s in _MINUS_8]
    assert set(_ts_column(TimestampType(), zone_ignored)) == {dt.datetime(2023, 5, 18, 11, 22, 33)}
    assert set(_ts_column(TimestampType(), _MINUS_8)) == {dt.datetime(2023, 5, 18, 3, 22, 33)}
    assert set(_ts_column(TimestampType(), _FRACTIONAL + ["2026-03-31 03:17:37.260514"])) == {
        dt.datetime(2026, 3, 31, 3, 17, 37, 260514)
    }


@pytest.mark.parametrize("bad", ["2023-05-18", "2023-05-18T11:22:33z", "2023-05-18T25:00:00", "2023-02-30T00:00",
                                 "2023-05-18T11:22:33+19", "x"])
def test_invalid_timestamps(bad: str) -> None:
    with pytest.raises(RecordConversionError):
        _ts_column(TimestamptzType(), [bad])


# --- missing columns (§6.3 #7) ---------------------------------------------------------------------


def assert_types_added_from_map(types: dict) -> None:
    expected = {
        "i": LongType, "l": LongType, "d": StringType, "t": StringType, "ts": StringType, "tsz": StringType,
        "fl": DoubleType, "do": DoubleType, "dec": StringType, "s": StringType, "b": BooleanType, "u": StringType,
        "f": StringType, "bi": StringType, "li": ListType, "ma": StructType,
    }
    assert {k: type(v) for k, v in types.items()} == expected


def assert_types_added_from_struct(types: dict) -> None:
    expected = {
        "i": IntegerType, "l": LongType, "d": DateType, "t": TimeType, "ts": TimestamptzType, "tsz": TimestamptzType,
        "fl": FloatType, "do": DoubleType, "dec": DecimalType, "s": StringType, "b": BooleanType, "u": StringType,
        "f": BinaryType, "bi": BinaryType, "li": ListType, "ma": MapType,
    }
    assert {k: type(v) for k, v in types.items()} == expected


def test_missing_column_detection_map() -> None:
    updates = updates_for(ID_SCHEMA, {**map_data(), "null": None})
    assert len(updates.add_columns) == MAPPED_CNT
    assert all(a.parent is None for a in updates.add_columns)
    assert_types_added_from_map({a.name: a.type for a in updates.add_columns})


def test_missing_column_detection_map_nested() -> None:
    (add,) = updates_for(ID_SCHEMA, nested_map_data()).add_columns
    assert add.name == "st" and len(add.type.fields) == MAPPED_CNT
    assert_types_added_from_map({f.name: f.field_type for f in add.type.fields})


def test_missing_column_detection_map_list_value() -> None:
    data = nested_map_data()
    (add,) = updates_for(STRUCT_IN_LIST_BASIC_SCHEMA, {"stli": [data, data]}).add_columns
    assert add.parent == "stli.element" and add.name == "st"
    assert_types_added_from_map({f.name: f.field_type for f in add.type.fields})


def test_missing_column_detection_struct() -> None:
    updates = updates_for(ID_SCHEMA, struct_data())
    assert len(updates.add_columns) == MAPPED_CNT
    assert_types_added_from_struct({a.name: a.type for a in updates.add_columns})


def test_missing_column_detection_struct_nested() -> None:
    (add,) = updates_for(ID_SCHEMA, nested_struct_data()).add_columns
    assert add.name == "st"
    assert_types_added_from_struct({f.name: f.field_type for f in add.type.fields})


def test_missing_column_detection_struct_list_and_map_value() -> None:
    data = nested_struct_data()
    (add,) = updates_for(
        STRUCT_IN_LIST_BASIC_SCHEMA, Struct(CONNECT_STRUCT_IN_LIST_SCHEMA).put("stli", [data])
    ).add_columns
    assert (add.parent, add.name) == ("stli.element", "st")
    assert_types_added_from_struct({f.name: f.field_type for f in add.type.fields})
    value = Struct(CONNECT_STRUCT_IN_MAP_SCHEMA).put("stma", {"key1": data, "key2": data})
    (add,) = updates_for(STRUCT_IN_MAP_BASIC_SCHEMA, value).add_columns
    assert (add.parent, add.name) == ("stma.value", "st")
    assert_types_added_from_struct({f.name: f.field_type for f in add.type.fields})


def test_no_updates_without_evolution() -> None:
    result = RecordConverter(ID_SCHEMA, evolve=False).convert([{**map_data(), "ii": 1}])
    assert not result.updates and result.table.to_pylist() == [{"ii": 1}]


def test_decimal_column_inferred_from_value() -> None:
    (add,) = updates_for(ID_SCHEMA, {"ii": 1, "amount": Dec("0.001")}).add_columns
    assert add.type == DecimalType(3, 3)


# --- evolution with null nested values (Connect schema drives it) -----------------------------------


def _nested_table(*inner: NestedField, nested_required: bool = False) -> IcebergSchema:
    return IcebergSchema(
        req(1, "id", IntegerType()), NestedField(2, "nested", StructType(*inner), required=nested_required)
    )


def test_nested_schema_evolution_struct_with_null_value() -> None:
    table = _nested_table(req(3, "a", IntegerType()))
    nested = (
        SchemaBuilder.struct()
        .optional()
        .field("a", Schema.INT32_SCHEMA)
        .field("b", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("nested", nested).build()
    updates = updates_for(table, Struct(connect).put("id", 1).put("nested", None))
    assert [(a.parent, a.name, a.type) for a in updates.add_columns] == [("nested", "b", StringType())]


def test_no_schema_evolution_struct_with_null_value() -> None:
    table = _nested_table(req(3, "a", IntegerType()))
    nested = SchemaBuilder.struct().optional().field("a", Schema.INT32_SCHEMA).build()
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("nested", nested).build()
    result = RecordConverter(table, evolve=True).convert([Struct(connect).put("id", 1).put("nested", None)])
    assert not result.updates and result.table.to_pylist() == [{"id": 1, "nested": None}]


def test_nested_schema_evolution_list_of_structs_with_null_value() -> None:
    table = IcebergSchema(
        req(1, "items", ListType(2, StructType(req(3, "product_id", IntegerType()),
                                               opt(4, "details", StructType(req(5, "name", StringType())))),
                                 element_required=True))
    )
    details = SchemaBuilder.struct().optional().field("name", Schema.OPTIONAL_STRING_SCHEMA).field(
        "price", Schema.OPTIONAL_FLOAT64_SCHEMA).build()
    item = SchemaBuilder.struct().field("product_id", Schema.INT32_SCHEMA).field("details", details).build()
    connect = SchemaBuilder.struct().field("items", SchemaBuilder.array(item)).build()
    value = Struct(connect).put("items", [Struct(item).put("product_id", 101).put("details", None)])
    updates = updates_for(table, value)
    assert [(a.parent, a.name, a.type) for a in updates.add_columns] == [
        ("items.element.details", "price", DoubleType())
    ]


def test_nested_schema_evolution_map_of_structs_with_null_value() -> None:
    table = IcebergSchema(
        opt(
            1,
            "metadata",
            MapType(
                2,
                StringType(),
                3,
                StructType(req(4, "key", StringType()), opt(5, "info", StructType(req(6, "name", StringType())))),
                value_required=True,
            ),
        )
    )
    info = SchemaBuilder.struct().optional().field("name", Schema.OPTIONAL_STRING_SCHEMA).field(
        "value", Schema.OPTIONAL_STRING_SCHEMA).build()
    map_value = SchemaBuilder.struct().field("key", Schema.STRING_SCHEMA).field("info", info).build()
    connect = SchemaBuilder.struct().field("metadata", SchemaBuilder.map(Schema.STRING_SCHEMA, map_value)).build()
    value = Struct(connect).put("metadata", {"source": Struct(map_value).put("key", "source_system").put("info", None)})
    updates = updates_for(table, value)
    assert [(a.parent, a.name) for a in updates.add_columns] == [("metadata.value.info", "value")]


def test_nested_schema_evolution_struct_in_struct_with_null_parent() -> None:
    table = IcebergSchema(
        req(1, "id", IntegerType()),
        opt(2, "customer", StructType(req(3, "customer_id", IntegerType()),
                                      opt(4, "details", StructType(req(5, "name", StringType()))))),
    )
    details = SchemaBuilder.struct().optional().field("name", Schema.OPTIONAL_STRING_SCHEMA).field(
        "email", Schema.OPTIONAL_STRING_SCHEMA).build()
    customer = (
        SchemaBuilder.struct().optional().field("customer_id", Schema.INT32_SCHEMA).field("details", details).build()
    )
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("customer", customer).build()
    updates = updates_for(table, Struct(connect).put("id", 1).put("customer", None))
    assert [(a.parent, a.name, a.type) for a in updates.add_columns] == [("customer.details", "email", StringType())]


def test_nested_type_promotion_and_make_optional_with_null_value() -> None:
    table = _nested_table(req(3, "a", IntegerType()), req(4, "b", FloatType()))
    nested = SchemaBuilder.struct().optional().field("a", Schema.INT64_SCHEMA).field("b", Schema.FLOAT64_SCHEMA).build()
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("nested", nested).build()
    updates = updates_for(table, Struct(connect).put("id", 1).put("nested", None))
    assert {u.name: u.type for u in updates.update_types} == {"nested.a": LongType(), "nested.b": DoubleType()}

    table = _nested_table(req(3, "a", IntegerType()), req(4, "b", StringType()))
    nested = SchemaBuilder.struct().optional().field("a", Schema.OPTIONAL_INT32_SCHEMA).field(
        "b", Schema.OPTIONAL_STRING_SCHEMA).build()
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("nested", nested).build()
    updates = updates_for(table, Struct(connect).put("id", 1).put("nested", None))
    assert {m.name for m in updates.make_optionals} == {"nested.a", "nested.b"}


def test_evolution_for_field_and_nested_fields_across_two_rounds() -> None:
    nested = (
        SchemaBuilder.struct()
        .optional()
        .field("x", Schema.INT32_SCHEMA)
        .field("y", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("nested", nested).build()
    value = Struct(connect).put("id", 1).put("nested", None)
    first = updates_for(_nested_table(req(3, "x", IntegerType()), nested_required=True), value)
    assert [m.name for m in first.make_optionals] == ["nested"] and not first.add_columns
    second = updates_for(_nested_table(req(3, "x", IntegerType())), value)
    assert [(a.parent, a.name, a.type) for a in second.add_columns] == [("nested", "y", StringType())]


def test_no_nested_evolution_of_map_keys() -> None:
    table = IcebergSchema(
        req(1, "id", IntegerType()),
        opt(2, "data", MapType(3, StructType(req(5, "k1", StringType())), 4, StringType(), value_required=True)),
    )
    key = SchemaBuilder.struct().field("k1", Schema.STRING_SCHEMA).field("k2", Schema.OPTIONAL_STRING_SCHEMA).build()
    connect = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field(
        "data", SchemaBuilder.map(key, Schema.OPTIONAL_STRING_SCHEMA).optional()).build()
    result = RecordConverter(table, evolve=True).convert([Struct(connect).put("id", 1).put("data", None)])
    assert not result.updates.add_columns


def test_evolve_type_detection_struct_and_nested() -> None:
    table = IcebergSchema(req(1, "ii", IntegerType()), req(2, "ff", FloatType()))
    schema = SchemaBuilder.struct().field("ii", Schema.INT64_SCHEMA).field("ff", Schema.FLOAT64_SCHEMA).build()
    updates = updates_for(table, Struct(schema).put("ii", 11).put("ff", 22.0))
    assert {u.name: u.type for u in updates.update_types} == {"ii": LongType(), "ff": DoubleType()}

    nested_table = IcebergSchema(req(3, "i", IntegerType()), req(4, "st", table.as_struct()))
    outer = SchemaBuilder.struct().field("i", Schema.INT32_SCHEMA).field("st", schema).build()
    value = Struct(outer).put("i", 1).put("st", Struct(schema).put("ii", 11).put("ff", 22.0))
    updates = updates_for(nested_table, value)
    assert {u.name: u.type for u in updates.update_types} == {"st.ii": LongType(), "st.ff": DoubleType()}


def test_schemaless_records_never_widen() -> None:
    table = IcebergSchema(opt(1, "id", IntegerType()))
    result = RecordConverter(table, evolve=True).convert([{"id": 5, "op": None}])
    assert not result.updates and result.table.to_pylist() == [{"id": 5}]


def test_force_optional_added_columns() -> None:
    connect = SchemaBuilder.struct().field("ii", Schema.INT32_SCHEMA).field(
        "n", SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA)).build()
    value = Struct(connect).put("ii", 1).put("n", Struct(connect.field("n").schema).put("x", 1))
    (add,) = RecordConverter(ID_SCHEMA, evolve=True, force_optional=True).convert([value]).updates.add_columns
    assert not add.type.fields[0].required
    (add,) = RecordConverter(ID_SCHEMA, evolve=True).convert([value]).updates.add_columns
    assert add.type.fields[0].required


# --- batches and errors ---------------------------------------------------------------------------


def test_top_level_value_must_be_struct_or_dict() -> None:
    with pytest.raises(RecordConversionError) as info:
        RecordConverter(ID_SCHEMA, evolve=False).convert([{"ii": 1}, "text"])
    assert info.value.index == 1 and "Cannot convert type: str" in str(info.value)
    assert isinstance(info.value, DataException)


def test_error_names_first_failing_record() -> None:
    schema = IcebergSchema(opt(1, "a", LongType()), opt(2, "b", DateType()))
    values = [{"a": 1, "b": 1}, {"a": 2, "b": "2023-13-01"}, {"a": "x", "b": 3}]
    with pytest.raises(RecordConversionError) as info:
        RecordConverter(schema, evolve=False).convert(values)
    assert info.value.index == 1 and "2023-13-01" in str(info.value)


def test_required_column_null_is_an_error() -> None:
    with pytest.raises(RecordConversionError) as info:
        RecordConverter(ID_SCHEMA, evolve=False).convert([{"ii": 1}, {"other": 1}])
    assert info.value.index == 1 and "ii" in str(info.value)


def test_mixed_batch_keeps_order() -> None:
    schema = IcebergSchema(opt(1, "id", LongType()), opt(2, "v", StringType()))
    s1 = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    s2 = SchemaBuilder.struct().field("id", Schema.INT32_SCHEMA).field("v", Schema.FLOAT32_SCHEMA).build()
    values = [{"id": 0}, Struct(s1).put("id", 1), Struct(s2).put("id", 2).put("v", 1.1), {"id": 3, "v": 2.5},
              Struct(s1).put("id", 4)]
    table = RecordConverter(schema, evolve=False).convert(values).table
    assert table.to_pylist() == [
        {"id": 0, "v": None}, {"id": 1, "v": None}, {"id": 2, "v": "1.1"}, {"id": 3, "v": "2.5"}, {"id": 4, "v": None}
    ]
    with pytest.raises(RecordConversionError) as info:
        RecordConverter(schema, evolve=False).convert(values[:3] + [{"id": "bad"}])
    assert info.value.index == 3


def test_empty_batch() -> None:
    result = RecordConverter(SCHEMA, evolve=True).convert([])
    assert result.table.num_rows == 0 and result.table.schema.equals(schema_to_pyarrow(SCHEMA))


def test_schemaless_integration_types() -> None:
    """§6.3 #15: schemaless JSON gives long ids and epoch-millis longs; a null field adds nothing."""
    updates = updates_for(IcebergSchema(opt(1, "x", StringType())), {"id": 1, "ts": 1700000000000, "op": None})
    assert {a.name: a.type for a in updates.add_columns} == {"id": LongType(), "ts": LongType()}


def test_column_fast_paths_match_slow_paths() -> None:
    schema = IcebergSchema(opt(1, "i", IntegerType()), opt(2, "ts", TimestamptzType()), opt(3, "d", DateType()),
                           opt(4, "t", TimeType()), opt(5, "f", FloatType()))
    fast = [{"i": 1, "ts": 1700000000123, "d": 19000, "t": 1234, "f": 1.1}, {"i": None}]
    slow = [{"i": "1", "ts": "2023-11-14T22:13:20.123Z", "d": "2022-01-08", "t": "00:00:01.234", "f": "1.1"}, {}]
    convert = RecordConverter(schema, evolve=False).convert
    assert convert(fast).table.equals(convert(slow).table)
    with pytest.raises(RecordConversionError):
        convert([{"t": 86_400_000}])
    with pytest.raises(RecordConversionError):
        convert([{"i": 2**31}])
