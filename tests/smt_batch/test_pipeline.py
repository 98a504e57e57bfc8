"""End to end: TaskPipeline with SMTs on the columnar path writes exactly what the per-record path writes."""

from __future__ import annotations

import json
import logging
import math
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from connector.api.errors import ConnectException
from tests.smt_batch.harness import KAFKA, encode, raw_batch, run_pipeline, sink_props
from tests.smt_batch.strategies import RECORD_STAGES, STAGES, chains, records

SMT3 = {
    "transforms": "insert,rename,mask",
    "transforms.insert.type": f"{KAFKA}.InsertField$Value",
    "transforms.insert.static.field": "source",
    "transforms.insert.static.value": "bench",
    "transforms.rename.type": f"{KAFKA}.ReplaceField$Value",
    "transforms.rename.renames": "name:customer",
    "transforms.mask.type": f"{KAFKA}.MaskField$Value",
    "transforms.mask.fields": "amount",
}


def bench_values(start: int, count: int) -> list[bytes]:
    return [json.dumps({"id": i, "name": f"user-{i % 1000:04d}", "ts": 1_700_000_000_000 + i,
                        "amount": (i % 10000) / 100, "active": i % 2 == 0}).encode()
            for i in range(start, start + count)]


def outcome(root: Path, transforms: dict[str, str], batches, *, columnar: bool, **extra: str):
    props = sink_props(root, transforms=transforms, **extra)
    try:
        tables, pipeline = run_pipeline(props, batches, columnar=columnar)
    except (ConnectException, ValueError) as exc:  # ValueError: pyiceberg rejecting a schema
        return ("error", type(exc).__name__, str(exc)), None
    return ("ok", sorted(tables.items())), pipeline


def assert_same_tables(expected, got) -> None:
    assert got[0] == expected[0], (expected, got)
    if expected[0] == "error":
        assert got == expected
        return
    assert [name for name, _ in got[1]] == [name for name, _ in expected[1]]
    for (_, want), (_, have) in zip(expected[1], got[1]):
        assert have.schema.equals(want.schema, check_metadata=True), (want.schema, have.schema)
        assert have.equals(want) or _nan_marked(have.to_pylist()) == _nan_marked(want.to_pylist()), \
            (want.to_pylist(), have.to_pylist())


def _nan_marked(value):
    """``value`` with NaN (which Table.equals finds unequal to itself) as a marker; e.g. Cast of "NaN"."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _nan_marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_marked(v) for v in value]
    return value


def compare(transforms: dict[str, str], batches, **extra: str):
    """Run both paths, each on its own catalog; the columnar path's outcome and pipeline."""
    with tempfile.TemporaryDirectory() as per_record_root, tempfile.TemporaryDirectory() as columnar_root:
        expected, _ = outcome(Path(per_record_root), transforms, batches, columnar=False, **extra)
        got, pipeline = outcome(Path(columnar_root), transforms, batches, columnar=True, **extra)
    got = (got[0], *(part.replace(columnar_root, per_record_root) if isinstance(part, str) else part
                     for part in got[1:]))
    assert_same_tables(expected, got)
    return got, pipeline


ROUTING = [
    {},
    {"iceberg.tables": "db.a,db.b", "iceberg.tables.route-field": "name",
     "iceberg.table.db.a.route-regex": "[a-c].*", "iceberg.table.db.b.route-regex": ".*[0-9].*"},
    {"iceberg.tables": "db.a,db.b", "iceberg.tables.route-field": "id",
     "iceberg.table.db.a.route-regex": "-.*", "iceberg.table.db.b.route-regex": "[0-9]{1,3}"},
    {"iceberg.tables": "db.a", "iceberg.tables.route-field": "a.q", "iceberg.table.db.a.route-regex": ".+"},
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=chains(stages=STAGES + RECORD_STAGES, max_stages=3), batch=records(max_size=8), evolve=st.booleans(),
       routing=st.sampled_from(ROUTING))
def test_columnar_pipeline_with_smts_equals_per_record(config, batch, evolve, routing):
    extra = {"iceberg.tables.evolve-schema-enabled": "true"} if evolve else {}
    extra.update(routing)
    again = batch.slice(1) if batch.num_rows > 1 else batch  # sliced arrays (offset 1), already-seen offsets
    got, pipeline = compare(config, [batch, again], **extra)
    if pipeline is not None:
        event("columnar batches" if pipeline.batches["columnar"] else "per-record only")


def test_bench_chain_takes_the_columnar_path():
    batches = [raw_batch(bench_values(0, 500)), raw_batch(bench_values(500, 500), first_offset=500)]
    got, pipeline = compare(SMT3, batches)
    table = got[1][0][1]
    assert table.num_rows == 1000
    assert table.column_names == ["id", "customer", "ts", "amount", "active", "source"]
    assert pipeline.path == "columnar with batch SMTs"
    # the first attempt of the first batch asks for the table (per record); everything else is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}


def test_tombstones_are_skipped_and_mixed_kinds_decline():
    values = bench_values(0, 20)
    values[3] = None
    values[7] = b'{"id": 7, "name": 12, "amount": 5}'  # name: a number among strings -> per record
    transforms = {k: v for k, v in SMT3.items() if not k.startswith("transforms.mask")}
    transforms["transforms"] = "insert,rename"
    got, pipeline = compare(transforms, [raw_batch(values[:2]), raw_batch(values, first_offset=2)])
    assert pipeline.batches["declined: a key holds values of different JSON kinds"] == 1


def test_errors_name_the_record_on_both_paths():
    values = bench_values(0, 10)
    values[6] = None  # MaskField fails on a tombstone
    got, _ = compare(SMT3, [raw_batch(values, topic="orders", partition=3, first_offset=40)])
    assert got[0] == "error"
    assert "topic: orders, partition: 3, offset: 46" in got[2]


def test_filter_with_predicate_and_router_then_insert_topic():
    transforms = {
        "transforms": "drop,route,topic",
        "transforms.drop.type": f"{KAFKA}.Filter", "transforms.drop.predicate": "eu",
        "transforms.drop.negate": "true",
        "transforms.route.type": f"{KAFKA}.RegexRouter",
        "transforms.route.regex": "(.*)-eu", "transforms.route.replacement": "$1-europe",
        "transforms.topic.type": f"{KAFKA}.InsertField$Value", "transforms.topic.topic.field": "topic",
        "predicates": "eu", "predicates.eu.type": f"{KAFKA}.predicates.TopicNameMatches",
        "predicates.eu.pattern": ".*-eu",
    }
    values = bench_values(0, 12)
    topics = ["orders-eu" if i % 3 else "orders" for i in range(12)]
    got, pipeline = compare(transforms, [raw_batch(values, topics=topics)])
    assert got[1][0][1].column("topic").to_pylist() == ["orders-europe"] * 8
    assert pipeline.batches["columnar"] == 1


def test_committed_offsets_are_skipped_like_per_record():
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for columnar in (False, True):
            props = sink_props(Path(tmp), transforms=SMT3, **{"iceberg.tables": f"db.t{int(columnar)}"})
            _, pipeline = run_pipeline(props, [raw_batch(bench_values(0, 3))], columnar=columnar)
            state = pipeline.tables.tables[f"db.t{int(columnar)}"]
            state.buffer, state.buffered_rows = [], 0
            state.offsets = {("orders", 0): 105}  # as if an earlier cycle committed up to 105
            before = pipeline.batches["columnar"]
            assert not pipeline.process(raw_batch(bench_values(100, 10), first_offset=100))
            results.append(pa.concat_tables(state.buffer))
            assert pipeline.batches["columnar"] == before + (1 if columnar else 0)
        assert results[0].column("id").to_pylist() == list(range(105, 110))
        assert results[1].equals(results[0])


def test_forced_per_record_by_environment(monkeypatch, caplog):
    monkeypatch.setenv("ICEFLOE_COLUMNAR", "false")
    with tempfile.TemporaryDirectory() as tmp, caplog.at_level(logging.INFO, logger="connector.data.pipeline"):
        _, pipeline = run_pipeline(sink_props(Path(tmp), transforms=SMT3), [raw_batch(bench_values(0, 5))],
                                   columnar=None)
    assert pipeline.batch_chain is None and pipeline.path == "per-record"
    assert pipeline.batches == {"per-record": 2}


def test_log_line_says_which_path_and_why(caplog):
    chain = {"transforms": "h", "transforms.h.type": f"{KAFKA}.InsertHeader",
             "transforms.h.header": "x", "transforms.h.value.literal": "y"}
    with tempfile.TemporaryDirectory() as tmp, caplog.at_level(logging.INFO, logger="connector.data.pipeline"):
        run_pipeline(sink_props(Path(tmp), transforms=SMT3), [], columnar=True)
        run_pipeline(sink_props(Path(tmp), transforms=chain), [], columnar=True)
    messages = [r.getMessage() for r in caplog.records]
    assert any("columnar with batch SMTs path (transforms: " in m and "InsertField$Value" in m for m in messages)
    assert any("per-record path (transformation 'h'" in m and "has no batch form" in m for m in messages)


@pytest.mark.parametrize("value", [encode({"id": 1, "name": "a"}), None])
def test_empty_and_tombstone_only_batches(value):
    compare(SMT3 if value else {"transforms": "h", "transforms.h.type": f"{KAFKA}.HoistField$Value",
                                "transforms.h.field": "v"},
            [raw_batch([value, value])])


def test_routing_by_field_and_dynamically_without_transforms():
    values = [encode({"id": i, "dest": ["db.x", "DB.Y", None][i % 3], "n": i % 4}) for i in range(30)]
    dynamic = {"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "dest"}
    got, pipeline = compare({}, [raw_batch(values[:3]), raw_batch(values, first_offset=3)], **{
        "iceberg.tables": "", **dynamic})
    assert [name for name, _ in got[1]] == ["db.x", "db.y"]
    assert pipeline.path == "columnar with batch SMTs" and pipeline.batches["columnar"] >= 1
    by_number = {"iceberg.tables": "db.even,db.odd", "iceberg.tables.route-field": "n",
                 "iceberg.table.db.even.route-regex": "[02]", "iceberg.table.db.odd.route-regex": "[13]"}
    got, pipeline = compare(SMT3, [raw_batch(values[:3]), raw_batch(values, first_offset=3)], **by_number)
    assert [(name, t.num_rows) for name, t in got[1]] == [("db.even", 17), ("db.odd", 16)]
    assert pipeline.batches["columnar"] >= 1


# --- stages without a batch form, run record by record inside a batch chain -------------------------

PLUGIN = "tests.smt_iceberg.example_plugins:UppercaseField"


def _with_stage_without_batch_form(stage: dict[str, str]) -> dict[str, str]:
    """SMT3 with ``stage`` (no batch form) between InsertField and ReplaceField."""
    chain = {k: v for k, v in SMT3.items() if k != "transforms"}
    chain["transforms"] = "insert,plugin,rename,mask"
    chain.update({f"transforms.plugin.{k}": v for k, v in stage.items()})
    return chain


@pytest.mark.parametrize("stage", [
    {"type": PLUGIN, "field": "name"},
    {"type": "org.apache.iceberg.connect.transforms.KafkaMetadataTransform", "nested": "true"},
    {"type": "org.apache.iceberg.connect.transforms.CopyValue", "source.field": "id", "target.field": "id2"},
])
def test_a_stage_without_batch_form_runs_per_record_for_that_stage_only(stage):
    got, pipeline = compare(_with_stage_without_batch_form(stage), [raw_batch(bench_values(0, 300)),
                                                                   raw_batch(bench_values(300, 300), first_offset=300)])
    assert pipeline.path == "columnar with batch SMTs"
    assert pipeline.batch_chain.per_record_stages == ["plugin"]
    # the first attempt of the first batch asks for the table (per record); everything else is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}


def test_after_a_batch_stage_null_valued_keys_make_the_per_record_stage_decline():
    values = bench_values(0, 5)
    values[2] = json.dumps({"id": 2, "name": None, "ts": 3, "amount": 1.5, "active": True}).encode()
    got, pipeline = compare(_with_stage_without_batch_form({"type": PLUGIN, "field": "name"}),
                            [raw_batch(bench_values(10, 2), first_offset=10), raw_batch(values)])
    reason = "transforms (example_plugins:UppercaseField: null-valued keys reach a per-record stage)"
    assert pipeline.batches[f"declined: {reason}"] == 1


def test_a_per_record_stage_first_decodes_the_raw_json_exactly():
    chain = {"transforms": "plugin,mask", "transforms.plugin.type": PLUGIN, "transforms.plugin.field": "name",
             "transforms.mask.type": f"{KAFKA}.MaskField$Value", "transforms.mask.fields": "amount"}
    values = [json.dumps({"id": i, "name": None if i % 2 else f"n{i}", "amount": i}).encode() for i in range(6)]
    got, pipeline = compare(chain, [raw_batch(values[:1]), raw_batch(values[1:], first_offset=1)])
    # nulls are no obstacle: the values come from the JSON text (only the table's creation declined)
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}


def test_chains_that_change_keys_or_headers_run_per_record(caplog):
    chain = {"transforms": "insert,key", "transforms.insert.type": f"{KAFKA}.InsertField$Value",
             "transforms.insert.static.field": "s", "transforms.insert.static.value": "v",
             "transforms.key.type": f"{KAFKA}.ValueToKey", "transforms.key.fields": "id"}
    with tempfile.TemporaryDirectory() as tmp, caplog.at_level(logging.INFO, logger="connector.data.pipeline"):
        _, pipeline = run_pipeline(sink_props(Path(tmp), transforms=chain), [raw_batch(bench_values(0, 3))],
                                   columnar=True)
    assert pipeline.path == "per-record" and pipeline.batch_chain is None
    assert any("transformation 'key'" in r.getMessage() and "has no batch form" in r.getMessage()
               for r in caplog.records)


class _KeyFromId:
    """A user plugin that sets the key: the batch form cannot keep it, so its chains run per record."""

    calls = 0

    def configure(self, config: dict) -> None:
        pass

    def apply(self, record):
        _KeyFromId.calls += 1
        return record.new_record(record.topic, record.kafka_partition, None, str(record.value.get("id")),
                                 record.value_schema, record.value, record.timestamp)

    def close(self) -> None:
        pass


def test_a_per_record_stage_that_changes_keys_makes_later_batches_decline_before_any_work():
    chain = {"transforms": "insert,key", "transforms.insert.type": f"{KAFKA}.InsertField$Value",
             "transforms.insert.static.field": "s", "transforms.insert.static.value": "v",
             "transforms.key.type": f"{__name__}:_KeyFromId"}
    _KeyFromId.calls = 0
    got, pipeline = compare(chain, [raw_batch(bench_values(i * 5, 5), first_offset=i * 5) for i in range(4)])
    reason = f"declined: transforms ({__name__.rsplit('.', 1)[-1]}:_KeyFromId: a per-record stage changes keys)"
    # every attempt (4 batches, the first one twice: it asked for the table) declined for that reason
    assert pipeline.batches[reason] == pipeline.batches["per-record"] == 5
    # per record on both runs (25 records), plus one batch tried column-wise (5) before the stage was known
    assert _KeyFromId.calls == 25 + 25 + 5
