"""DmsTransform: ports TestDmsTransform (2 cases) plus the envelope's edge cases."""

from __future__ import annotations

import pytest

from connector.api.errors import DataException
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.iceberg import DmsTransform
from tests.smt_iceberg import sink_record

NOW = "2024-05-01T10:00:00.000000Z"


def dms_event(operation: str) -> dict:
    metadata = {
        "timestamp": NOW,
        "record-type": "data",
        "operation": operation,
        "partition-key-type": "schema-table",
        "schema-name": "db",
        "table-name": "tbl",
        "transaction-id": 12345,
    }
    data = {"account_id": 1, "balance": 100, "last_updated": NOW}
    return {"metadata": metadata, "data": data}


# --- TestDmsTransform ------------------------------------------------------------------


def test_dms_transform():
    result = DmsTransform().apply(sink_record(None, dms_event("update")))
    assert isinstance(result.value, dict)
    assert result.value["account_id"] == 1
    cdc = result.value["_cdc"]
    assert cdc["op"] == "U"
    assert cdc["source"] == "db.tbl"


def test_dms_transform_null():
    assert DmsTransform().apply(sink_record()).value is None


# --- beyond the Java tests ---------------------------------------------------------------


@pytest.mark.parametrize("operation,op", [("insert", "I"), ("load", "I"), ("update", "U"), ("delete", "D")])
def test_operations(operation, op):
    smt = DmsTransform()
    smt.configure({})
    value = smt.apply(sink_record(None, dms_event(operation), offset=3)).value
    assert value == {
        "account_id": 1, "balance": 100, "last_updated": NOW,
        "_cdc": {"op": op, "ts": NOW, "source": "db.tbl"},
    }


@pytest.mark.parametrize("value", [{"data": {"a": 1}}, {"metadata": {"operation": "insert"}},
                                   {"data": "x", "metadata": {"operation": "insert"}}])
def test_missing_data_or_metadata_drops_record(value):
    assert DmsTransform().apply(sink_record(None, value)) is None


def test_schema_not_supported():
    schema = SchemaBuilder.struct().field("data", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataException, match="Schema not support for DMS records"):
        DmsTransform().apply(sink_record(schema, Struct(schema).put("data", "x")))


def test_value_must_be_a_map():
    with pytest.raises(DataException, match="Only Map objects supported in absence of schema for \\[DMS transform\\]"):
        DmsTransform().apply(sink_record(None, "text"))


def test_key_and_timestamp_kept():
    result = DmsTransform().apply(sink_record(None, dms_event("insert"), Schema.STRING_SCHEMA, "k", timestamp=7))
    assert (result.key_schema, result.key, result.timestamp, result.value_schema) == (
        Schema.STRING_SCHEMA,
        "k",
        7,
        None,
    )


def test_loads_by_class_name():
    import smt

    for name in (
        "org.apache.iceberg.connect.transforms.DmsTransform",
        "io.tabular.iceberg.connect.transforms.DmsTransform",
    ):
        assert smt.load(name, {}).apply(sink_record(None, dms_event("delete"))).value["_cdc"]["op"] == "D"
