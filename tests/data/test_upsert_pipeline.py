"""Upsert and CDC tables through the task pipeline: op checks with error tolerance, one segment per flush.

No Spark: the pipeline runs as a task would, tables are created inline as the
coordinator would (``tests/smt_batch/harness.run_pipeline``).
"""

from __future__ import annotations

import json
import pickle

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from connector.api.errors import ConfigException, ConnectException, DataException
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.data.convert.changes import DELETED, OFFSET, PARTITION, TOPIC
from tests.smt_batch.harness import raw_batch, run_pipeline, sink_props

DEBEZIUM = {"transforms": "dbz", "transforms.dbz.type": "org.apache.iceberg.connect.transforms.DebeziumTransform"}
CDC = {"iceberg.tables.cdc-field": "_cdc.op", "iceberg.tables.default-id-columns": "id"}
UPSERT = {"iceberg.tables.upsert-mode-enabled": "true", "iceberg.tables.default-id-columns": "id"}


def _event(op: str, before: dict | None, after: dict | None) -> bytes:
    return json.dumps({"before": before, "after": after, "op": op, "ts_ms": 1_700_000_000_000,
                       "source": {"db": "shop", "table": "orders"}}).encode()


def _json(*values) -> list[bytes]:
    return [json.dumps(v).encode() for v in values]


def _file_rows(files) -> list[dict]:
    tables = [pq.read_table(f.file_path.removeprefix("file://")) for f in files]
    return sorted((r for t in tables for r in t.to_pylist()), key=lambda r: r["id"])


def _keys(segment) -> list[tuple]:
    names = ["id", TOPIC, PARTITION, OFFSET, DELETED]
    return sorted(zip(*(segment.keys.column(n).to_pylist() for n in names)))


@pytest.mark.parametrize("columnar", [False, True])
def test_debezium_events_become_one_row_per_key_and_the_segment_keys(tmp_path, columnar):
    props = sink_props(tmp_path, transforms=DEBEZIUM, **CDC)
    batch = raw_batch([
        _event("c", None, {"id": 1, "name": "a"}),
        _event("c", None, {"id": 2, "name": "b"}),
        _event("u", {"id": 1, "name": "a"}, {"id": 1, "name": "a2"}),
        _event("d", {"id": 2, "name": "b"}, None),
        _event("r", None, {"id": 3, "name": "c"}),
        _event("u", {"id": 3, "name": "c"}, {"id": 3, "name": "c2"}),
    ], topic="orders", partition=4, first_offset=100)
    _, pipeline = run_pipeline(props, [batch], columnar=columnar)
    written = pipeline.close()

    [segment] = written.changes["db.t"]
    assert _keys(segment) == [(1, "orders", 4, 102, False), (2, "orders", 4, 103, True),
                              (3, "orders", 4, 105, False)]
    assert segment.files == written.data_files["db.t"] and written.records_written == {"db.t": 2}
    rows = _file_rows(segment.files)
    assert [(r["id"], r["name"], r["_cdc"]["op"], r["_cdc"]["offset"]) for r in rows] == [
        (1, "a2", "U", 102), (3, "c2", "U", 105)]
    table = pipeline.catalog.load_table("db.t")
    assert table.schema().identifier_field_names() == {"id"} and table.schema().find_field("id").required


@pytest.mark.parametrize("columnar", [False, True])
def test_schemaless_json_in_upsert_mode_keeps_the_latest_row_per_key(tmp_path, columnar):
    props = sink_props(tmp_path, **UPSERT)
    batch = raw_batch(_json({"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 1, "v": "c"}, {"id": 1, "v": "d"}))
    _, pipeline = run_pipeline(props, [batch], columnar=columnar)
    written = pipeline.close()
    [segment] = written.changes["db.t"]
    assert _keys(segment) == [(1, "orders", 0, 3, False), (2, "orders", 0, 1, False)]
    assert [(r["id"], r["v"]) for r in _file_rows(segment.files)] == [(1, "d"), (2, "b")]


def test_an_append_only_table_has_no_changes(tmp_path):
    _, pipeline = run_pipeline(sink_props(tmp_path), [raw_batch(_json({"id": 1}, {"id": 1}))], columnar=True)
    written = pipeline.close()
    assert written.changes == {} and written.records_written == {"db.t": 2}
    files, rows = written  # unpacks as before
    assert rows == {"db.t": 2}


@pytest.mark.parametrize("columnar", [False, True])
@pytest.mark.parametrize("value, why", [
    ({"id": 1, "op": "x"}, "invalid operation 'x' in op"),
    ({"id": 1, "op": None}, "invalid operation None in op"),
    ({"id": None, "op": "I"}, "id column id is null"),
])
def test_a_bad_operation_or_a_null_key_fails_naming_the_record(tmp_path, columnar, value, why):
    props = sink_props(tmp_path, **{"iceberg.tables.cdc-field": "op", "iceberg.tables.default-id-columns": "id"})
    run_pipeline(props, [raw_batch(_json({"id": 0, "op": "I"}))], columnar=False)  # the table, id required
    if value["id"] is None:  # a null in a required column fails the conversion before the key check
        why = "id"
    with pytest.raises(DataException, match=rf"topic: orders, partition: 0, offset: 1\b.*{why}"):
        run_pipeline(props, [raw_batch(_json({"id": 5, "op": "U"}, value), first_offset=0)], columnar=columnar)


@pytest.mark.parametrize("columnar", [False, True])
def test_with_tolerance_bad_operations_go_to_the_dlq_and_leave_every_table(tmp_path, columnar):
    props = sink_props(tmp_path, **{"iceberg.tables": "db.t,db.u", "iceberg.tables.cdc-field": "op",
                                    "iceberg.tables.default-id-columns": "id", "errors.tolerance": "all"})
    batch = raw_batch(_json({"id": 1, "op": "I"}, {"id": 2, "op": "?"}, {"id": 3, "op": "u"}, {"id": 1, "op": ""},
                            {"id": 3, "op": "D"}))
    _, pipeline = run_pipeline(props, [batch], columnar=columnar)
    errant = pipeline.take_errant()
    sink_task = "org.apache.kafka.connect.sink.SinkTask"
    assert [(e.offset, e.stage, e.executing_class) for e in errant] == [(1, "TASK_PUT", sink_task),
                                                                        (3, "TASK_PUT", sink_task)]
    assert "invalid operation '?' in op" in errant[0].message
    written = pipeline.close()
    for table in ("db.t", "db.u"):
        [segment] = written.changes[table]
        assert _keys(segment) == [(1, "orders", 0, 0, False), (3, "orders", 0, 4, True)]
        assert [r["id"] for r in _file_rows(segment.files)] == [1]


def test_a_schema_change_flushes_a_segment_and_segments_keep_flush_order(tmp_path):
    props = sink_props(tmp_path, **UPSERT, **{"iceberg.tables.evolve-schema-enabled": "true"})
    first = raw_batch(_json({"id": 1, "v": "a"}, {"id": 2, "v": "b"}))
    second = raw_batch(_json({"id": 1, "v": "c", "w": 7}), first_offset=2)  # a new column: evolve, then reload
    _, pipeline = run_pipeline(props, [first, second], columnar=False)
    written = pipeline.close()
    segments = written.changes["db.t"]
    assert [_keys(s) for s in segments] == [[(1, "orders", 0, 0, False), (2, "orders", 0, 1, False)],
                                            [(1, "orders", 0, 2, False)]]
    assert written.data_files["db.t"] == segments[0].files + segments[1].files


def _existing_table(tmp_path, schema: Schema, extra: dict) -> dict:
    props = sink_props(tmp_path, **extra)
    catalog = load_catalog(SinkConfig.parse(props).props)
    catalog.create_namespace("db")
    catalog.create_table("db.t", schema=schema)
    return props


def test_an_existing_tables_identifier_fields_are_its_id_columns(tmp_path):
    schema = Schema(NestedField(1, "k", LongType(), required=True), NestedField(2, "v", StringType()),
                    identifier_field_ids=[1])
    props = _existing_table(tmp_path, schema, {"iceberg.tables.upsert-mode-enabled": "true"})
    _, pipeline = run_pipeline(props, [raw_batch(_json({"k": 1, "v": "a"}, {"k": 1, "v": "b"}))], columnar=True)
    [segment] = pipeline.close().changes["db.t"]
    assert segment.keys.column("k").to_pylist() == [1] and segment.keys.column(OFFSET).to_pylist() == [1]


def test_an_upsert_table_without_id_columns_fails_naming_the_three_ways(tmp_path):
    schema = Schema(NestedField(1, "k", LongType(), required=True))
    props = _existing_table(tmp_path, schema, {"iceberg.tables.upsert-mode-enabled": "true"})
    message = ("Table db.t is written in upsert mode but has no id columns: set iceberg.table.db.t.id-columns or "
               "iceberg.tables.default-id-columns, or give the table identifier fields in its schema")
    with pytest.raises(ConnectException, match=message):
        run_pipeline(props, [raw_batch(_json({"k": 1}))], columnar=True)
    with pytest.raises(ConnectException, match=message):  # and before auto-creating one
        run_pipeline(sink_props(tmp_path / "new", **{"iceberg.tables.upsert-mode-enabled": "true"}),
                     [raw_batch(_json({"k": 1}))], columnar=True)


def test_a_table_without_the_cdc_column_fails_naming_table_and_field(tmp_path):
    schema = Schema(NestedField(1, "k", LongType(), required=True), identifier_field_ids=[1])
    props = _existing_table(tmp_path, schema, {"iceberg.tables.cdc-field": "_cdc.op"})
    with pytest.raises(ConfigException, match=r"Table db.t has no column _cdc.op \(iceberg.tables.cdc-field\)"):
        run_pipeline(props, [raw_batch(_json({"k": 1}))], columnar=True)


def test_an_id_column_missing_from_the_record_fails_the_creation_of_an_upsert_table(tmp_path):
    props = sink_props(tmp_path, **{**UPSERT, "iceberg.tables.default-id-columns": "nope"})
    with pytest.raises(ConfigException, match="Id column nope of table db.t is not in the table's schema"):
        run_pipeline(props, [raw_batch(_json({"k": 1}))], columnar=True)


def test_positions_are_those_of_the_rows_left_after_tolerant_conversion(tmp_path):
    """Rows that fail their conversion (a value that does not fit) leave the positions too."""
    props = sink_props(tmp_path, **UPSERT, **{"errors.tolerance": "all"})
    run_pipeline(props, [raw_batch(_json({"id": 0, "n": 1}), first_offset=50)], columnar=False)
    batch = raw_batch(_json({"id": 1, "n": 1}, {"id": 2, "n": "not a number"}, {"id": 3, "n": 3},
                            {"id": 1, "n": "bad"}, {"id": 1, "n": 5}))
    _, pipeline = run_pipeline(props, [batch], columnar=True)
    assert [e.offset for e in pipeline.take_errant()] == [1, 3]
    [segment] = pipeline.close().changes["db.t"]
    assert _keys(segment) == [(1, "orders", 0, 4, False), (3, "orders", 0, 2, False)]
    assert [(r["id"], r["n"]) for r in _file_rows(segment.files)] == [(1, 5), (3, 3)]


def test_rows_of_a_batch_are_not_buffered_without_positions(tmp_path):
    props = sink_props(tmp_path, **UPSERT)
    _, pipeline = run_pipeline(props, [raw_batch(_json({"id": 1}))], columnar=True)
    with pytest.raises(ConnectException, match="without their positions"):
        pipeline.tables.buffer("db.t", pa.table({"id": [2]}))


@pytest.mark.parametrize("columnar", [False, True])
def test_a_null_in_an_optional_id_column_fails_naming_record_table_and_column(tmp_path, columnar):
    schema = Schema(NestedField(1, "k", LongType(), required=False), NestedField(2, "v", StringType()))
    props = _existing_table(tmp_path, schema, UPSERT | {"iceberg.tables.default-id-columns": "k"})
    with pytest.raises(DataException, match=r"converting record, topic: orders, partition: 0, offset: 1, "
                                            r"table: db.t: id column k is null"):
        run_pipeline(props, [raw_batch(_json({"k": 1, "v": "a"}, {"v": "b"}))], columnar=columnar)


def test_the_spark_sinks_task_result_carries_the_segments(tmp_path):
    """``write_batches`` (the Spark sink's task, run here without Spark) fills ``TaskResult.changes``."""
    from connector.kafka.range_reader import RAW_SCHEMA
    from connector.spark.iceberg_sink import write_batches

    config = SinkConfig.parse(sink_props(tmp_path, **UPSERT))
    batch = raw_batch(_json({"id": 1, "v": "a"}, {"id": 1, "v": "b"}))
    result = write_batches(config, {name: name for name in RAW_SCHEMA.names}, [batch])
    [segment] = result.changes["db.t"]
    assert _keys(segment) == [(1, "orders", 0, 1, False)]
    assert result.data_files["db.t"] == segment.files and result.records_written == {"db.t": 1}
    back = pickle.loads(pickle.dumps(result))  # a commit message travels pickled to the driver
    assert back.changes["db.t"][0].keys.equals(segment.keys) and back.changes["db.t"][0].files == segment.files


def test_id_columns_of_the_table_then_the_default_then_its_identifier_fields(tmp_path):
    from connector.data.convert.changes import id_columns_of

    schema = Schema(NestedField(1, "k", LongType(), required=True), NestedField(2, "V", StringType()),
                    identifier_field_ids=[1])
    props = _existing_table(tmp_path, schema, {"iceberg.tables.upsert-mode-enabled": "true"})
    table = load_catalog(SinkConfig.parse(props).props).load_table("db.t")

    def of(**extra):
        return id_columns_of(SinkConfig.parse({**props, **extra}).iceberg, "db.t", table)

    assert of() == ("k",)
    assert of(**{"iceberg.tables.default-id-columns": "V"}) == ("V",)
    assert of(**{"iceberg.tables.default-id-columns": "V", "iceberg.table.db.t.id-columns": "k,V"}) == ("k", "V")
    assert of(**{"iceberg.tables.default-id-columns": "v", "iceberg.tables.schema-case-insensitive": "true"}) == (
        "V",)
    with pytest.raises(ConfigException, match="Id column v of table db.t is not in the table's schema"):
        of(**{"iceberg.tables.default-id-columns": "v"})
