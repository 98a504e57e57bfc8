"""Helpers for the batch SMT tests: raw batches, the per-record reference, pipelines on a temp catalog."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

import pyarrow as pa

import converters
from connector.api.declined import Declined
from connector.api.record import Header, SinkRecord, TimestampType
from connector.data.convert.json_rows import parse_json_objects
from connector.kafka.range_reader import RAW_SCHEMA
from smt.batch import ALL, BatchTransformationChain, RecordBatchView, Values, normalized
from smt.chain import TransformationChain

KAFKA = "org.apache.kafka.connect.transforms"
JSON = converters.load("org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "false"})


def encode(value: Any) -> bytes | None:
    return None if value is None else json.dumps(value, separators=(",", ":")).encode()


def raw_batch(values: Sequence[bytes | None], *, topic: str = "orders", partition: int = 0,
              first_offset: int = 0, timestamps: Sequence[int | None] | None = None,
              headers: Sequence[list[tuple[str, bytes | None]]] | None = None,
              topics: Sequence[str] | None = None) -> pa.RecordBatch:
    """A batch shaped like the range reader's (``RAW_SCHEMA``)."""
    n = len(values)
    timestamps = list(timestamps) if timestamps is not None else [1_700_000_000_000 + i for i in range(n)]
    headers = list(headers) if headers is not None else [[] for _ in range(n)]
    return pa.RecordBatch.from_arrays([
        pa.array(list(topics) if topics is not None else [topic] * n, pa.string()),
        pa.array([partition] * n, pa.int32()),
        pa.array(range(first_offset, first_offset + n), pa.int64()),
        pa.array(timestamps, pa.int64()),
        pa.array([0 if t is None else 1 for t in timestamps], pa.int8()),
        pa.array([None] * n, pa.binary()),
        pa.array(list(values), pa.binary()),
        pa.array([[{"key": k, "value": v} for k, v in h] for h in headers], RAW_SCHEMA.field("headers").type),
    ], schema=RAW_SCHEMA)


def records_of(batch: pa.RecordBatch) -> list[SinkRecord]:
    """What the per-record path's decoder makes of a raw batch (schemaless JSON values)."""
    rows = batch.to_pylist()
    return [
        SinkRecord(topic=r["topic"], kafka_partition=r["partition"], key_schema=None, key=None,
                   value_schema=None, value=JSON.to_connect_data(r["topic"], r["value"]).value,
                   kafka_offset=r["offset"], timestamp=r["timestamp"],
                   timestamp_type=TimestampType(r["timestamp_type"]),
                   headers=tuple(Header(h["key"], h["value"]) for h in r["headers"]))
        for r in rows
    ]


def chain_of(config: dict[str, Any]) -> TransformationChain:
    return TransformationChain.from_config(config)


def per_record(chain: TransformationChain, batch: pa.RecordBatch):
    """("ok", [(offset, topic, value)]) or ("error", message) from the per-record chain."""
    out = []
    try:
        for record in records_of(batch):
            result = chain.apply(record)
            if result is not None:
                out.append((result.kafka_offset, result.topic, result.value))
    except Exception as exc:  # noqa: BLE001
        return ("error", f"{type(exc).__name__}: {exc}")
    return ("ok", out)


def view_of(batch: pa.RecordBatch) -> RecordBatchView:
    """The batch's view; Declined if its values are not parsed column-wise."""
    parsed = parse_json_objects(batch.column("value"))
    return RecordBatchView.from_raw(batch, Values.from_json(parsed.array, parsed.loose))


def batched(chain: TransformationChain, batch: pa.RecordBatch):
    """("ok", rows, loose) from the batch chain, or ("declined", reason)."""
    batch_chain = BatchTransformationChain.from_chain(chain)
    assert batch_chain is not None, chain
    try:
        view = view_of(batch)
    except Declined as declined:
        return ("declined", f"parse: {declined.reason}")
    try:
        out = batch_chain.apply(view)
    except Declined as declined:
        return ("declined", declined.reason)
    rows = list(zip(out.offset.to_pylist(), out.topics(), out.values()))
    return ("ok", rows, out.loose_fields() if out.value.is_map else out.value.loose)


def comparable(rows, loose: frozenset = frozenset()):
    """Rows with values normalized (modulo null-valued keys; loose fields as numbers)."""
    result = []
    for offset, topic, value in rows:
        if ALL in loose:
            norm = normalized(value, True)
        elif isinstance(value, dict):
            norm = {k: normalized(v, k in loose) for k, v in value.items() if v is not None}
        else:
            norm = normalized(value)
        result.append((offset, topic, norm))
    return result


def assert_batch_equals_per_record(config: dict[str, Any], batch: pa.RecordBatch) -> str:
    """The batch chain's result equals the per-record chain's, or the batch declined. Returns the outcome."""
    chain = chain_of(config)
    expected = per_record(chain, batch)
    got = batched(chain, batch)
    if got[0] == "declined":
        return "declined"
    assert expected[0] == "ok", f"per-record failed ({expected[1]}) but the batch path did not decline"
    assert comparable(got[1], got[2]) == comparable(expected[1], got[2])
    return "ok"


# --- pipelines on a temporary catalog ------------------------------------------------------------


def sink_props(root: Path, *, transforms: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    return {
        "name": "smt-batch", "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": "orders",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "iceberg.tables": "db.t", "iceberg.tables.auto-create-enabled": "true",
        "iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{root}/catalog.db",
        "iceberg.catalog.warehouse": f"file://{root}/warehouse",
        **(transforms or {}), **extra,
    }


def run_pipeline(props: dict[str, str], batches: Sequence[pa.RecordBatch], *, columnar: bool):
    """Feed batches to a TaskPipeline, creating/evolving tables inline; the buffered rows per table."""
    from connector.config.sink_config import SinkConfig
    from connector.task import new_pipeline

    config = SinkConfig.parse(props, {"bootstrap.servers": "unused:9092"})
    pipeline = new_pipeline(config, "task-0", columnar=columnar)
    for batch in batches:
        for _ in range(5):
            needs = pipeline.process(batch)
            if not needs:
                break
            apply_needs(pipeline, needs)
            pipeline.forget_tables(needs.tables)
        else:
            raise ValueError("schema needs did not settle")
    tables = {}
    for name, state in pipeline.tables.tables.items():
        if state is not None and state.buffer:
            tables[name] = pa.concat_tables(state.buffer)
    return tables, pipeline


def apply_needs(pipeline, needs) -> None:
    from connector.commit.schema_changes import apply_schema_needs

    apply_schema_needs(pipeline.catalog, pipeline.config, needs.create, needs.updates)




def per_record_and_columnar(props_at: Callable[[Path], dict[str, str]], batches: Sequence[pa.RecordBatch]):
    """Both strategies over ``batches``, each on its own catalog: [(outcome, pipeline)] per-record first.

    An outcome is ("ok", sorted tables) or ("error", exception type): both strategies must fail alike.
    """
    outcomes = []
    for columnar in (False, True):
        with tempfile.TemporaryDirectory() as root:
            try:
                tables, pipeline = run_pipeline(props_at(Path(root)), batches, columnar=columnar)
                outcomes.append((("ok", sorted(tables.items())), pipeline))
            except Exception as exc:  # noqa: BLE001 - whatever one strategy raises, the other must too
                outcomes.append((("error", type(exc).__name__), None))
    return outcomes
