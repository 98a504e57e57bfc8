"""DebeziumTransform: ports TestDebeziumTransform (3 cases), schema'd and schemaless envelopes."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from connector.api.errors import DataException
from connector.api.logical import Decimal, Timestamp
from connector.api.record import Header
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.iceberg import DebeziumTransform, DmsTransform
from tests.smt_iceberg import sink_record

KEY_SCHEMA = SchemaBuilder.struct().field("account_id", Schema.INT64_SCHEMA).build()
ROW_SCHEMA = (
    SchemaBuilder.struct()
    .field("account_id", Schema.INT64_SCHEMA)
    .field("balance", Decimal.schema(2))
    .field("last_updated", Schema.STRING_SCHEMA)
    .build()
)
SOURCE_SCHEMA = (
    SchemaBuilder.struct()
    .field("db", Schema.STRING_SCHEMA)
    .field("schema", Schema.STRING_SCHEMA)
    .field("table", Schema.STRING_SCHEMA)
    .build()
)
VALUE_SCHEMA = (
    SchemaBuilder.struct()
    .field("op", Schema.STRING_SCHEMA)
    .field("ts_ms", Schema.INT64_SCHEMA)
    .field("source", SOURCE_SCHEMA)
    .field("before", ROW_SCHEMA)
    .field("after", ROW_SCHEMA)
    .build()
)
TS_MS = 1_700_000_000_123
NOW = "2024-01-01T00:00:00Z"


def event_map(op: str, *, before=None, after=None, source=None) -> dict:
    data = {"account_id": 1, "balance": 100, "last_updated": NOW}
    return {
        "op": op,
        "ts_ms": TS_MS,
        "source": source if source is not None else {"db": "db", "schema": "schema", "table": "tbl"},
        "before": data if before is None else before,
        "after": data if after is None else after,
    }


def event_struct(op: str, *, after_balance: str = "100.00", before_balance: str = "100.00") -> Struct:
    source = Struct(SOURCE_SCHEMA).put("db", "db").put("schema", "schema").put("table", "tbl")

    def row(balance: str) -> Struct:
        return (
            Struct(ROW_SCHEMA).put("account_id", 1).put("balance", decimal.Decimal(balance))
            .put("last_updated", NOW)
        )

    return (
        Struct(VALUE_SCHEMA).put("op", op).put("ts_ms", TS_MS).put("source", source)
        .put("before", row(before_balance)).put("after", row(after_balance))
    )


def transform(pattern: str | None = "{db}_x.{table}_x") -> DebeziumTransform:
    smt = DebeziumTransform()
    smt.configure({} if pattern is None else {"cdc.target.pattern": pattern})
    return smt


# --- TestDebeziumTransform -------------------------------------------------------------


def test_dms_transform_null():
    # (the Java class's first test exercises DmsTransform on a tombstone)
    assert DmsTransform().apply(sink_record()).value is None


def test_debezium_transform_schemaless():
    key = {"account_id": 1}
    result = transform().apply(sink_record(None, event_map("u"), None, key))
    assert isinstance(result.value, dict)
    assert result.value["account_id"] == 1
    cdc = result.value["_cdc"]
    assert cdc["op"] == "U"
    assert cdc["source"] == "schema.tbl"
    assert cdc["target"] == "schema_x.tbl_x"
    assert isinstance(cdc["key"], dict)


def test_debezium_transform_with_schema():
    key = Struct(KEY_SCHEMA).put("account_id", 1)
    result = transform().apply(sink_record(VALUE_SCHEMA, event_struct("u"), KEY_SCHEMA, key))
    assert isinstance(result.value, Struct)
    assert result.value.get("account_id") == 1
    cdc = result.value.get("_cdc")
    assert cdc.get("op") == "U"
    assert cdc.get("source") == "schema.tbl"
    assert cdc.get("target") == "schema_x.tbl_x"
    assert isinstance(cdc.get("key"), Struct)


# --- beyond the Java tests ---------------------------------------------------------------


@pytest.mark.parametrize("op,expected", [("c", "I"), ("r", "I"), ("u", "U"), ("d", "D"), ("t", "I"), ("x", "I")])
def test_op_mapping_both_modes(op, expected):
    schemaless = transform().apply(sink_record(None, event_map(op)))
    assert schemaless.value["_cdc"]["op"] == expected
    with_schema = transform().apply(sink_record(VALUE_SCHEMA, event_struct(op)))
    assert with_schema.value.get("_cdc").get("op") == expected


def test_with_schema_output_shape():
    key = Struct(KEY_SCHEMA).put("account_id", 7)
    record = sink_record(VALUE_SCHEMA, event_struct("c", after_balance="12.34"), KEY_SCHEMA, key, offset=42,
                         timestamp=99, headers=(Header("h", "v"),))
    result = transform(None).apply(record)
    schema = result.value_schema
    assert [f.name for f in schema.fields()] == ["account_id", "balance", "last_updated", "_cdc"]
    cdc_schema = schema.field("_cdc").schema
    assert [(f.name, f.schema) for f in cdc_schema.fields()] == [
        ("op", Schema.STRING_SCHEMA),
        ("ts", Timestamp.SCHEMA),
        ("offset", Schema.OPTIONAL_INT64_SCHEMA),
        ("source", Schema.STRING_SCHEMA),
        ("target", Schema.STRING_SCHEMA),
        ("key", KEY_SCHEMA),
    ]
    cdc = result.value.get("_cdc")
    assert cdc.get("ts") == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc)
    assert cdc.get("offset") == 42
    assert cdc.get("target") == "schema.tbl"  # no pattern: <db>.<table>
    assert cdc.get("key") == key
    assert result.value.get("balance") == decimal.Decimal("12.34")
    assert (result.key, result.timestamp, result.headers) == (key, 99, record.headers)


def test_delete_uses_before_image():
    result = transform().apply(sink_record(VALUE_SCHEMA, event_struct("d", before_balance="1.00")))
    assert result.value.get("balance") == decimal.Decimal("1.00")
    assert result.value.get("_cdc").get("op") == "D"
    schemaless = transform().apply(sink_record(None, event_map("d", before={"id": "old"}, after={"id": "new"})))
    assert schemaless.value["id"] == "old"


def test_no_key_schema_means_no_key_field():
    result = transform().apply(sink_record(VALUE_SCHEMA, event_struct("c")))
    assert result.value.get("_cdc").schema.field("key") is None


def test_source_without_schema_uses_db():
    source_schema = (
        SchemaBuilder.struct().field("db", Schema.STRING_SCHEMA).field("table", Schema.STRING_SCHEMA).build()
    )
    value_schema = (
        SchemaBuilder.struct().field("op", Schema.STRING_SCHEMA).field("ts_ms", Schema.INT64_SCHEMA)
        .field("source", source_schema).field("after", ROW_SCHEMA).build()
    )
    row = Struct(ROW_SCHEMA).put("account_id", 1).put("balance", decimal.Decimal("1.00")).put("last_updated", NOW)
    value = (
        Struct(value_schema).put("op", "c").put("ts_ms", 0)
        .put("source", Struct(source_schema).put("db", "mysqldb").put("table", "t")).put("after", row)
    )
    cdc = transform("{table}@{db}").apply(sink_record(value_schema, value)).value.get("_cdc")
    assert (cdc.get("source"), cdc.get("target")) == ("mysqldb.t", "t@mysqldb")
    schemaless = transform().apply(sink_record(None, event_map("c", source={"db": "mysqldb", "table": "t"})))
    assert schemaless.value["_cdc"]["source"] == "mysqldb.t"


def test_schemaless_cdc_fields():
    record = sink_record(None, event_map("c"), None, "not-a-map-key", offset=5)
    cdc = transform().apply(record).value["_cdc"]
    assert cdc == {"op": "I", "ts": TS_MS, "offset": 5, "source": "schema.tbl", "target": "schema_x.tbl_x"}


def test_schemaless_payload_not_a_map_drops_record():
    assert transform().apply(sink_record(None, event_map("c", after="oops"))) is None
    event = event_map("d")
    event["before"] = None
    assert transform().apply(sink_record(None, event)) is None


def test_tombstone_passes_through():
    record = sink_record(VALUE_SCHEMA, None)
    assert transform().apply(record) is record


def test_schema_cache_reused():
    smt = transform()
    first = smt.apply(sink_record(VALUE_SCHEMA, event_struct("c")))
    second = smt.apply(sink_record(VALUE_SCHEMA, event_struct("u")))
    assert first.value_schema is second.value_schema


def test_errors():
    smt = transform()
    with pytest.raises(DataException, match="Only Map objects supported"):
        smt.apply(sink_record(None, "text"))
    with pytest.raises(DataException, match="Only Struct objects supported"):
        smt.apply(sink_record(VALUE_SCHEMA, {"op": "c"}))
    event = event_map("c")
    event["source"] = "nope"
    with pytest.raises(DataException, match="Only Map objects supported"):
        smt.apply(sink_record(None, event))


def test_loads_by_class_name():
    import smt

    transform = smt.load("org.apache.iceberg.connect.transforms.DebeziumTransform", {"cdc.target.pattern": "x_{table}"})
    assert transform.apply(sink_record(None, event_map("c"))).value["_cdc"]["target"] == "x_tbl"
    tabular = smt.load("io.tabular.iceberg.connect.transforms.DebeziumTransform", {})
    assert tabular.apply(sink_record(None, event_map("c"))).value["_cdc"]["target"] == "schema.tbl"
