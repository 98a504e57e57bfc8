"""MongoDataConverter: ports TestMongoArrayConverter (12 cases) and TestMongoDataConverter (4 cases)."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.api.errors import DataException
from connector.api.logical import Timestamp
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.iceberg._bson import BsonType, BsonValue, parse_document, parse_value
from smt.iceberg._mongo_converter import ArrayEncoding, MongoDataConverter

UTC = dt.timezone.utc


def plain(value):
    """A Struct as a dict without its null fields (what Java's Struct.toString shows)."""
    if isinstance(value, Struct):
        return {f.name: plain(value.get(f)) for f in value.schema.fields() if value.get(f) is not None}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def convert(text: str, encoding: ArrayEncoding, name: str) -> tuple[Schema, Struct]:
    converter = MongoDataConverter(encoding)
    doc = parse_document(text)
    schema = converter.document_schema(doc, name)
    return schema, converter.document_struct(doc, schema)


def optional_array(value_schema) -> Schema:
    return SchemaBuilder.array(value_schema).optional().build()


# --- TestMongoArrayConverter -----------------------------------------------------------------

HETEROGENOUS_ARRAY = """{
    "_id": 1,
    "a2": [
        11,
        "abc"
    ]
}
"""
EMPTY_ARRAY = """{
    "_id": 1,
    "f": []
}
"""
HETEROGENOUS_DOCUMENT_IN_ARRAY = """{
    "_id": 1,
    "a1": [
        {
            "a": 1
        },
        {
            "a": "c"
        }
    ],
}
"""
HOMOGENOUS_ARRAYS = """{
  "_id": 1,
  "a1": [
      {
          "a": 1
      },
      {
          "b": "c"
      }
  ],
  "a2": [
      "11",
      "abc"
  ],
  "empty": [],
  "additionalContacts": [
    {
      "firstName": "John",
      "lastName": "Doe",
      "comment": null
    },
    {
      "firstName": "Jane",
      "lastName": "Doe",
      "comment": "A comment"
    }
  ]
}
"""


def test_detect_heterogenous_array():
    with pytest.raises(DataException, match="not a homogenous array"):
        convert(HETEROGENOUS_ARRAY, ArrayEncoding.ARRAY, "array")


def test_detect_heterogenous_document_in_array():
    with pytest.raises(DataException, match="not the same type for all documents in the array"):
        convert(HETEROGENOUS_DOCUMENT_IN_ARRAY, ArrayEncoding.ARRAY, "array")


def test_schema_for_homogenous_array():
    schema = MongoDataConverter(ArrayEncoding.ARRAY).document_schema(parse_document(HOMOGENOUS_ARRAYS), "array")
    expected = (
        SchemaBuilder.struct().name("array")
        .field("_id", Schema.OPTIONAL_INT32_SCHEMA)
        .field("a1", optional_array(
            SchemaBuilder.struct().name("array.a1").optional()
            .field("a", Schema.OPTIONAL_INT32_SCHEMA)
            .field("b", Schema.OPTIONAL_STRING_SCHEMA)
            .build()))
        .field("a2", optional_array(Schema.OPTIONAL_STRING_SCHEMA))
        .field("empty", optional_array(Schema.OPTIONAL_STRING_SCHEMA))
        .field("additionalContacts", optional_array(
            SchemaBuilder.struct().name("array.additionalContacts").optional()
            .field("firstName", Schema.OPTIONAL_STRING_SCHEMA)
            .field("lastName", Schema.OPTIONAL_STRING_SCHEMA)
            .field("comment", Schema.OPTIONAL_STRING_SCHEMA)
            .build()))
        .build()
    )
    assert schema == expected


def test_struct_for_homogenous_array():
    _, struct = convert(HOMOGENOUS_ARRAYS, ArrayEncoding.ARRAY, "array")
    assert plain(struct) == {
        "_id": 1,
        "a1": [{"a": 1}, {"b": "c"}],
        "a2": ["11", "abc"],
        "empty": [],
        "additionalContacts": [
            {"firstName": "John", "lastName": "Doe"},
            {"firstName": "Jane", "lastName": "Doe", "comment": "A comment"},
        ],
    }
    assert list(plain(struct)) == ["_id", "a1", "a2", "empty", "additionalContacts"]


def test_schema_for_empty_array_encoding_array():
    schema, _ = convert(EMPTY_ARRAY, ArrayEncoding.ARRAY, "array")
    assert schema == (
        SchemaBuilder.struct().name("array")
        .field("_id", Schema.OPTIONAL_INT32_SCHEMA)
        .field("f", optional_array(Schema.OPTIONAL_STRING_SCHEMA))
        .build()
    )


def test_struct_for_empty_array_encoding_array():
    _, struct = convert(EMPTY_ARRAY, ArrayEncoding.ARRAY, "array")
    assert plain(struct) == {"_id": 1, "f": []}


def test_schema_for_empty_array_encoding_document():
    schema, _ = convert(EMPTY_ARRAY, ArrayEncoding.DOCUMENT, "array")
    assert schema == (
        SchemaBuilder.struct().name("array")
        .field("_id", Schema.OPTIONAL_INT32_SCHEMA)
        .field("f", SchemaBuilder.struct().name("array.f").optional().build())
        .build()
    )


def test_struct_for_empty_array_encoding_document():
    _, struct = convert(EMPTY_ARRAY, ArrayEncoding.DOCUMENT, "array")
    assert plain(struct) == {"_id": 1, "f": {}}
    assert isinstance(struct.get("f"), Struct)


def test_schema_for_heterogenous_array_encoding_document():
    schema, _ = convert(HETEROGENOUS_ARRAY, ArrayEncoding.DOCUMENT, "array")
    assert schema == (
        SchemaBuilder.struct().name("array")
        .field("_id", Schema.OPTIONAL_INT32_SCHEMA)
        .field("a2", SchemaBuilder.struct().name("array.a2").optional()
               .field("_0", Schema.OPTIONAL_INT32_SCHEMA)
               .field("_1", Schema.OPTIONAL_STRING_SCHEMA)
               .build())
        .build()
    )


def test_struct_for_heterogenous_array_encoding_document():
    _, struct = convert(HETEROGENOUS_ARRAY, ArrayEncoding.DOCUMENT, "array")
    assert plain(struct) == {"_id": 1, "a2": {"_0": 11, "_1": "abc"}}


def test_schema_for_heterogenous_document_in_array_encoding_document():
    schema, _ = convert(HETEROGENOUS_DOCUMENT_IN_ARRAY, ArrayEncoding.DOCUMENT, "array")
    assert schema == (
        SchemaBuilder.struct().name("array")
        .field("_id", Schema.OPTIONAL_INT32_SCHEMA)
        .field("a1", SchemaBuilder.struct().name("array.a1").optional()
               .field("_0", SchemaBuilder.struct().name("array.a1._0").optional()
                      .field("a", Schema.OPTIONAL_INT32_SCHEMA).build())
               .field("_1", SchemaBuilder.struct().name("array.a1._1").optional()
                      .field("a", Schema.OPTIONAL_STRING_SCHEMA).build())
               .build())
        .build()
    )


def test_struct_for_heterogenous_document_in_array_encoding_document():
    _, struct = convert(HETEROGENOUS_DOCUMENT_IN_ARRAY, ArrayEncoding.DOCUMENT, "array")
    assert plain(struct) == {"_id": 1, "a1": {"_0": {"a": 1}, "_1": {"a": "c"}}}


# --- TestMongoDataConverter -------------------------------------------------------------------

RESTAURANT = """{
  "address": {
    "building": "1007",
    "floor" : {
      "level" : 17,
      "description" : "level 17"
    },
    "coord": [
      -73.856077,
      40.848447
    ],
    "street": "Morris Park Ave",
    "zipcode": "10462"
  },
  "borough": "Bronx",
  "cuisine": "Bakery",
  "grades": [
    {"date": {"$date": 1393804800000}, "grade": "A", "score": 2},
    {"date": {"$date": 1378857600000}, "grade": "A", "score": 6},
    {"date": {"$date": 1358985600000}, "grade": "A", "score": 10},
    {"date": {"$date": 1322006400000}, "grade": "A", "score": 9},
    {"date": {"$date": 1299715200000}, "grade": "B", "score": 14}
  ],
  "name": "Morris Park Bake Shop",
  "restaurant_id": "30075445"
}"""


def test_struct_from_insert_json():
    _, struct = convert(RESTAURANT, ArrayEncoding.ARRAY, "pub")

    def grade(day: dt.date, letter: str, score: int) -> dict:
        return {"date": dt.datetime(day.year, day.month, day.day, tzinfo=UTC), "grade": letter, "score": score}

    assert plain(struct) == {
        "address": {
            "building": "1007",
            "floor": {"level": 17, "description": "level 17"},
            "coord": [-73.856077, 40.848447],
            "street": "Morris Park Ave",
            "zipcode": "10462",
        },
        "borough": "Bronx",
        "cuisine": "Bakery",
        "grades": [
            grade(dt.date(2014, 3, 3), "A", 2),
            grade(dt.date(2013, 9, 11), "A", 6),
            grade(dt.date(2013, 1, 24), "A", 10),
            grade(dt.date(2011, 11, 23), "A", 9),
            grade(dt.date(2011, 3, 10), "B", 14),
        ],
        "name": "Morris Park Bake Shop",
        "restaurant_id": "30075445",
    }


def test_schema_from_insert_json():
    schema, _ = convert(RESTAURANT, ArrayEncoding.ARRAY, "pub")
    assert schema == (
        SchemaBuilder.struct().name("pub")
        .field("address", SchemaBuilder.struct().name("pub.address").optional()
               .field("building", Schema.OPTIONAL_STRING_SCHEMA)
               .field("floor", SchemaBuilder.struct().name("pub.address.floor").optional()
                      .field("level", Schema.OPTIONAL_INT32_SCHEMA)
                      .field("description", Schema.OPTIONAL_STRING_SCHEMA)
                      .build())
               .field("coord", optional_array(Schema.OPTIONAL_FLOAT64_SCHEMA))
               .field("street", Schema.OPTIONAL_STRING_SCHEMA)
               .field("zipcode", Schema.OPTIONAL_STRING_SCHEMA)
               .build())
        .field("borough", Schema.OPTIONAL_STRING_SCHEMA)
        .field("cuisine", Schema.OPTIONAL_STRING_SCHEMA)
        .field("grades", optional_array(
            SchemaBuilder.struct().name("pub.grades").optional()
            .field("date", Timestamp.builder().optional().build())
            .field("grade", Schema.OPTIONAL_STRING_SCHEMA)
            .field("score", Schema.OPTIONAL_INT32_SCHEMA)
            .build()))
        .field("name", Schema.OPTIONAL_STRING_SCHEMA)
        .field("restaurant_id", Schema.OPTIONAL_STRING_SCHEMA)
        .build()
    )


def test_process_null_value():
    text = """{
        "_id" : ObjectId("51e5619ee4b01f9fbdfba9fc"),
        "delivery" : {
            "hour" : null,
            "hourId" : 10
        }
    }"""
    schema, struct = convert(text, ArrayEncoding.ARRAY, "withnull")
    assert schema == (
        SchemaBuilder.struct().name("withnull")
        .field("_id", Schema.OPTIONAL_STRING_SCHEMA)
        .field("delivery", SchemaBuilder.struct().name("withnull.delivery").optional()
               .field("hour", Schema.OPTIONAL_STRING_SCHEMA)
               .field("hourId", Schema.OPTIONAL_INT32_SCHEMA)
               .build())
        .build()
    )
    assert plain(struct) == {"_id": "51e5619ee4b01f9fbdfba9fc", "delivery": {"hourId": 10}}


def test_process_unsupported_value():
    text = """{
        "_id" : ObjectId("518cc94bc27cfa20d9693e5d"),
        "name" : undefined,
        "address" : {
            "building" : undefined,
            "floor" : 10
        }
    }"""
    schema, struct = convert(text, ArrayEncoding.DOCUMENT, "withundefined")
    assert schema == (
        SchemaBuilder.struct().name("withundefined")
        .field("_id", Schema.OPTIONAL_STRING_SCHEMA)
        .field("address", SchemaBuilder.struct().name("withundefined.address").optional()
               .field("floor", Schema.OPTIONAL_INT32_SCHEMA)
               .build())
        .build()
    )
    assert plain(struct) == {"_id": "518cc94bc27cfa20d9693e5d", "address": {"floor": 10}}


# --- beyond the Java tests -----------------------------------------------------------------------


def test_extended_json_types():
    text = """{
      "oid": {"$oid": "5D505646CF6D4FE581014AB2"},
      "long": {"$numberLong": "9007199254740993"},
      "int": {"$numberInt": "-7"},
      "dbl": {"$numberDouble": "-Infinity"},
      "dec": {"$numberDecimal": "1234.5600"},
      "when": {"$date": "2024-02-29T12:30:00.250Z"},
      "when_long": {"$date": {"$numberLong": "-1000"}},
      "bin": {"$binary": {"base64": "AQID", "subType": "00"}},
      "legacy_bin": {"$binary": "AQID", "$type": "80"},
      "uuid": {"$uuid": "c8edabc3-f738-4ca3-b68d-ab92a91478a3"},
      "ts": {"$timestamp": {"t": 1700000000, "i": 3}},
      "re": {"$regularExpression": {"pattern": "^a.*", "options": "i"}},
      "code": {"$code": "function() {}"},
      "sym": {"$symbol": "s"},
      "min": {"$minKey": 1},
      "undef": {"$undefined": true},
      "op": {"$set": {"a": 1}},
      "flag": false
    }"""
    schema, struct = convert(text, ArrayEncoding.ARRAY, "x")
    types = {f.name: f.schema for f in schema.fields()}
    assert set(types) == {"oid", "long", "int", "dbl", "dec", "when", "when_long", "bin", "legacy_bin", "uuid",
                          "ts", "re", "code", "op", "flag"}  # symbol, min key, undefined: left out
    assert types["long"] == Schema.OPTIONAL_INT64_SCHEMA
    assert types["int"] == Schema.OPTIONAL_INT32_SCHEMA
    assert types["dbl"] == Schema.OPTIONAL_FLOAT64_SCHEMA
    assert types["dec"] == Schema.OPTIONAL_STRING_SCHEMA
    assert types["when"] == Timestamp.builder().optional().build() == types["ts"]
    assert types["bin"] == Schema.OPTIONAL_BYTES_SCHEMA
    assert types["re"].name == "io.debezium.mongodb.regex"
    assert types["op"].name == "x.op"  # an unknown $-operator is a plain document
    assert plain(struct) == {
        "oid": "5d505646cf6d4fe581014ab2",
        "long": 9007199254740993,
        "int": -7,
        "dbl": float("-inf"),
        "dec": "1234.5600",
        "when": dt.datetime(2024, 2, 29, 12, 30, 0, 250000, tzinfo=UTC),
        "when_long": dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
        "bin": b"\x01\x02\x03",
        "legacy_bin": b"\x01\x02\x03",
        "uuid": bytes.fromhex("c8edabc3f7384ca3b68dab92a91478a3"),
        "ts": dt.datetime.fromtimestamp(1700000000, UTC),
        "re": {"regex": "^a.*", "options": "i"},
        "code": "function() {}",
        "op": {"$set": {"a": 1}},
        "flag": False,
    }


def test_shell_syntax():
    text = """{_id: NumberLong(5), 'name': 'it\\'s', d: ISODate("2020-01-01T00:00:00Z"), n: new Date(0),
               i: NumberInt("3"), dec: NumberDecimal("1E+3"), b: BinData(0, "AQ=="), h: HexData(0, "ff"),
               t: Timestamp(10, 1), r: /ab+c/i, nan: NaN, k: MaxKey, }"""
    _, struct = convert(text, ArrayEncoding.ARRAY, "s")
    assert plain(struct) == {
        "_id": 5, "name": "it's", "d": dt.datetime(2020, 1, 1, tzinfo=UTC), "n": dt.datetime(1970, 1, 1, tzinfo=UTC),
        "i": 3, "dec": "1E+3", "b": b"\x01", "h": b"\xff", "t": dt.datetime.fromtimestamp(10, UTC),
        "r": {"regex": "ab+c", "options": "i"}, "nan": pytest.approx(float("nan"), nan_ok=True),
    }


def test_plain_json_numbers():
    _, struct = convert('{"a": 2147483647, "b": 2147483648, "c": 1.0, "d": -1e3}', ArrayEncoding.ARRAY, "n")
    assert [f.schema.type.value for f in struct.schema.fields()] == ["int32", "int64", "float64", "float64"]
    with pytest.raises(DataException, match="out of the range"):
        parse_document('{"a": 9223372036854775808}')


@pytest.mark.parametrize("bad", ['{"a": }', '{"a": 1', "[1]", '{"a": {"$oid": "zz"}}', '{"a": 1} x', "{a b}"])
def test_invalid_documents(bad):
    with pytest.raises(DataException):
        parse_document(bad)


def test_arrays_of_scalars_dates_and_nested_arrays():
    text = """{"dates": [{"$date": 0}, {"$date": 86400000}], "decs": [{"$numberDecimal": "1.5"}],
               "nested": [[1, 2], [3]], "bools": [true, false], "nulls": [null, null]}"""
    schema, struct = convert(text, ArrayEncoding.ARRAY, "a")
    assert schema.field("dates").schema == optional_array(Timestamp.builder().optional().build())
    assert schema.field("nested").schema == optional_array(optional_array(Schema.OPTIONAL_INT32_SCHEMA))
    assert schema.field("nulls").schema == optional_array(Schema.OPTIONAL_STRING_SCHEMA)
    assert plain(struct) == {
        "dates": [dt.datetime(1970, 1, 1, tzinfo=UTC), dt.datetime(1970, 1, 2, tzinfo=UTC)],
        "decs": ["1.5"], "nested": [[1, 2], [3]], "bools": [True, False], "nulls": [],
    }


def test_document_encoding_nests_arrays():
    schema, struct = convert('{"a": [[1, "x"], {"k": 2}]}', ArrayEncoding.DOCUMENT, "d")
    assert schema.field("a").schema.field("_0").schema.name == "d.a._0"
    assert plain(struct) == {"a": {"_0": {"_0": 1, "_1": "x"}, "_1": {"k": 2}}}


def test_document_encoding_keeps_index_order_past_ten():
    text = '{"a": [' + ", ".join(str(i) for i in range(12)) + "]}"
    schema, struct = convert(text, ArrayEncoding.DOCUMENT, "d")
    assert [f.name for f in schema.field("a").schema.fields()] == [f"_{i}" for i in range(12)]
    assert plain(struct)["a"]["_11"] == 11


def test_documents_in_array_members_typed_by_first_non_empty():
    text = '{"a": [{"x": [], "y": 1}, {"x": ["s"], "y": 2}]}'
    schema, struct = convert(text, ArrayEncoding.ARRAY, "u")
    element = schema.field("a").schema.value_schema
    assert [f.name for f in element.fields()] == ["y", "x"]
    assert element.field("x").schema == optional_array(Schema.OPTIONAL_STRING_SCHEMA)
    assert plain(struct) == {"a": [{"y": 1, "x": []}, {"y": 2, "x": ["s"]}]}


def test_documents_in_array_with_only_empty_members():
    schema, struct = convert('{"a": [{"x": []}, {"x": []}]}', ArrayEncoding.ARRAY, "e")
    element = schema.field("a").schema.value_schema
    assert [f.name for f in element.fields()] == ["x"]  # second pass: empty members count
    assert plain(struct) == {"a": [{"x": []}, {"x": []}]}
    # Like the Java converter, a member left out of the union cannot be filled in.
    text = '{"a": [{"x": [], "y": 1}, {"y": 2}]}'
    schema = MongoDataConverter(ArrayEncoding.ARRAY).document_schema(parse_document(text), "u")
    assert [f.name for f in schema.field("a").schema.value_schema.fields()] == ["y"]
    with pytest.raises(DataException):
        MongoDataConverter(ArrayEncoding.ARRAY).document_struct(parse_document(text), schema)


def test_javascript_with_scope():
    schema, struct = convert('{"f": {"$code": "x + y", "$scope": {"x": 1, "o": {"y": 2}}}}', ArrayEncoding.ARRAY, "j")
    js = schema.field("f").schema
    assert js.name == "j.f" and not js.optional
    assert js.field("scope").schema.name == "j.f.scope"
    assert plain(struct) == {"f": {"code": "x + y", "scope": {"x": 1, "o": {"y": 2}}}}


def test_unsupported_array_element_type():
    with pytest.raises(DataException, match="not yet supported"):
        convert('{"r": [{"$regex": "a", "$options": ""}]}', ArrayEncoding.ARRAY, "r")


def test_array_encoding_parse():
    assert ArrayEncoding.parse(" Document ") is ArrayEncoding.DOCUMENT
    assert ArrayEncoding.parse(None, "array") is ArrayEncoding.ARRAY
    assert ArrayEncoding.parse("bogus", "array") is ArrayEncoding.ARRAY
    assert ArrayEncoding.parse("bogus") is None


# --- property tests ------------------------------------------------------------------------------


_json_scalars = (
    st.none() | st.booleans() | st.text(max_size=6) | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
)
_json = st.recursive(
    _json_scalars,
    lambda c: (
        st.lists(c, max_size=4)
        | st.dictionaries(st.text(max_size=4).filter(lambda k: not k.startswith("$")), c, max_size=4)
    ),
    max_leaves=15,
)


def _unwrap(value: BsonValue):
    if value.type is BsonType.DOCUMENT:
        return {k: _unwrap(v) for k, v in value.value.items()}
    if value.type is BsonType.ARRAY:
        return [_unwrap(v) for v in value.value]
    return value.value


@settings(max_examples=150, deadline=None)
@given(_json)
def test_plain_json_parses_like_json_loads(value):
    text = json.dumps(value)
    parsed = parse_value(text)
    assert _unwrap(parsed) == json.loads(text)

    def check_types(bson: BsonValue, original) -> None:
        if isinstance(original, bool):
            assert bson.type is BsonType.BOOLEAN
        elif isinstance(original, int):
            assert bson.type is (BsonType.INT32 if -(2**31) <= original < 2**31 else BsonType.INT64)
        elif isinstance(original, float):
            assert bson.type is BsonType.DOUBLE
        elif isinstance(original, list):
            for b, o in zip(bson.value, original):
                check_types(b, o)
        elif isinstance(original, dict):
            for k, o in original.items():
                check_types(bson.value[k], o)

    check_types(parsed, json.loads(text))


_extended = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(lambda n: ({"$numberLong": str(n)}, BsonValue(BsonType.INT64, n))),
    st.integers(-(2**31), 2**31 - 1).map(lambda n: ({"$numberInt": str(n)}, BsonValue(BsonType.INT32, n))),
    st.integers(-(2**45), 2**45).map(
        lambda ms: ({"$date": {"$numberLong": str(ms)}}, BsonValue(BsonType.DATE_TIME, ms))
    ),
    st.binary(min_size=12, max_size=12).map(lambda b: ({"$oid": b.hex()}, BsonValue(BsonType.OBJECT_ID, b.hex()))),
    st.binary(max_size=20).map(
        lambda b: (
            {"$binary": {"base64": base64.b64encode(b).decode(), "subType": "00"}},
            BsonValue(BsonType.BINARY, (0, b)),
        )
    ),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(
        lambda d: ({"$numberDecimal": str(d)}, BsonValue(BsonType.DECIMAL128, str(d)))
    ),
)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=5).filter(lambda k: not k.startswith("$")), _extended, max_size=6))
def test_canonical_extended_json_round_trip(members):
    text = json.dumps({k: wrapped for k, (wrapped, _) in members.items()})
    assert parse_document(text) == {k: expected for k, (_, expected) in members.items()}
