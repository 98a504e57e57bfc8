"""Dynamic routing to a table that does not exist, without auto-create: skipped and counted, as in Java."""

from __future__ import annotations

import json
import logging

import pyarrow as pa
import pytest
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from connector.api.errors import ConfigException, DataException
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.kafka.range_reader import RAW_SCHEMA
from connector.task import new_pipeline
from tests.integration.harness import sink_props, unique


def _batch(values) -> pa.RecordBatch:
    n = len(values)
    return pa.RecordBatch.from_pydict({
        "topic": ["t"] * n, "partition": [0] * n, "offset": list(range(n)),
        "timestamp": [1_700_000_000_000] * n, "timestamp_type": [1] * n,
        "key": [None] * n, "value": [json.dumps(v).encode() for v in values], "headers": [[]] * n,
    }, schema=RAW_SCHEMA)


def _props(tmp_path, **extra):
    props = sink_props(unique("dyn"), "t", "", tmp_path, **{
        "iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "dest",
        "iceberg.tables.auto-create-enabled": "false", **extra})
    del props["iceberg.tables"]
    return props


def test_records_for_a_missing_table_are_skipped_and_counted(tmp_path, caplog):
    config = SinkConfig.parse(_props(tmp_path))
    catalog = load_catalog(config.props)
    catalog.create_namespace_if_not_exists("db")
    catalog.create_table("db.here", Schema(NestedField(1, "id", LongType(), required=False),
                                           NestedField(2, "dest", StringType(), required=False)))
    values = [{"id": i, "dest": "db.here" if i % 3 else "db.gone"} for i in range(30)]
    pipeline = new_pipeline(config, "task-0")
    with caplog.at_level(logging.WARNING):
        for start in (0, 15):
            assert not pipeline.process(_batch(values[start:start + 15]))
        files, rows = pipeline.close()
    assert rows == {"db.here": 20}
    assert pipeline.tables.missing.skipped == {"db.gone": 10}
    logged = [r.getMessage() for r in caplog.records if "db.gone" in r.getMessage()]
    assert logged and "skipped" in logged[0] and "10 record(s)" in logged[-1]


def test_static_tables_still_must_exist(tmp_path):
    props = sink_props(unique("static"), "t", "db.absent", tmp_path, **{"iceberg.tables.auto-create-enabled": "false"})
    pipeline = new_pipeline(SinkConfig.parse(props), "task-0")
    with pytest.raises(ConfigException, match="Table db.absent does not exist"):
        pipeline.process(_batch([{"id": 1}]))


def test_a_route_value_that_names_no_table_is_the_records_failure(tmp_path):
    config = SinkConfig.parse(_props(tmp_path, **{"errors.tolerance": "all"}))
    catalog = load_catalog(config.props)
    catalog.create_namespace_if_not_exists("db")
    catalog.create_table("db.here", Schema(NestedField(1, "id", LongType(), required=False),
                                           NestedField(2, "dest", StringType(), required=False)))
    pipeline = new_pipeline(config, "task-0")
    pipeline.process(_batch([{"id": 0, "dest": "db.here"}, {"id": 1, "dest": "db.ev/ents"},
                             {"id": 2, "dest": "events"}, {"id": 3, "dest": "db.here"}]))
    _files, rows = pipeline.close()
    assert rows == {"db.here": 2}
    errant = sorted((r.offset, r.stage, r.message) for r in pipeline.take_errant())
    assert [(offset, stage) for offset, stage, _ in errant] == [(1, "TASK_PUT"), (2, "TASK_PUT")]
    assert "'db.ev/ents' of route field dest does not name a table" in errant[0][2]
    assert "no namespace" in errant[1][2]


def test_without_tolerance_the_task_fails_naming_the_record_and_the_value(tmp_path):
    pipeline = new_pipeline(SinkConfig.parse(_props(tmp_path)), "task-0")
    with pytest.raises(DataException,
                       match=r"'db\.\.x' of route field dest does not name a table: .*empty part.*offset: 0"):
        pipeline.process(_batch([{"id": 0, "dest": "db..x"}]))
