"""The one commit path (connector/commit/commit.py): aggregation, schema rounds, table commits."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyiceberg.exceptions import CommitFailedException

from connector.api.errors import ConnectException
from connector.commit import commit
from connector.commit.commit import MAX_SCHEMA_ROUNDS, CommitBatch, commit_table, schema_rounds
from connector.commit.messages import TaskResult
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.data.write.table_writer import SchemaNeeds
from connector.iceberg.snapshot_offsets import COMMIT_ID, committed_offsets
from connector.kafka.range_reader import RAW_SCHEMA
from connector.task import new_pipeline
from tests.integration.harness import sink_props, table_rows, unique

PARTITIONS = st.sampled_from([("a", 0), ("a", 1), ("b", 0)])
TIMESTAMP = st.one_of(st.none(), st.integers(0, 10**13))


@st.composite
def task_results(draw) -> TaskResult:
    result = TaskResult(task_id=draw(st.text(max_size=3)))
    for tp in draw(st.lists(PARTITIONS, unique=True)):
        result.next_offsets[tp] = draw(st.integers(0, 1000))
        result.max_timestamps[tp] = draw(TIMESTAMP)
    result.records_read = draw(st.integers(0, 100))
    for table in draw(st.lists(st.sampled_from(["db.x", "db.y"]), unique=True)):
        result.data_files[table] = [f"{result.task_id}-{table}-{i}" for i in range(draw(st.integers(0, 2)))]
        result.records_written[table] = draw(st.integers(0, 50))
    return result


@given(st.lists(task_results(), max_size=5))
def test_commit_batch_aggregates_like_the_per_partition_rules(results):
    batch = CommitBatch.of(results)
    assert batch.records_read == sum(r.records_read for r in results)
    for table in {t for r in results for t in r.data_files}:
        assert batch.files[table] == [f for r in results for f in r.data_files.get(table, [])]
        assert batch.rows[table] == sum(r.records_written.get(table, 0) for r in results)
    seen = {tp for r in results for tp in r.next_offsets}
    assert set(batch.next_offsets) == seen
    for tp in seen:
        assert batch.next_offsets[tp] == max(r.next_offsets[tp] for r in results if tp in r.next_offsets)
        stamps = [r.max_timestamps[tp] for r in results if tp in r.max_timestamps]
        assert batch.max_timestamps[tp] == (None if None in stamps else max(stamps))
    # valid-through: the oldest of the partitions' newest timestamps, only when every covered one has one
    expected = None
    if seen and all(batch.max_timestamps[tp] is not None for tp in seen):
        expected = min(batch.max_timestamps[tp] for tp in seen)
    assert batch.valid_through(seen) == expected
    assert batch.valid_through(seen | {("c", 9)}) is None  # a covered partition without a timestamp


def test_schema_rounds_apply_needs_between_rounds_and_give_up_when_they_never_settle(monkeypatch):
    applied = []
    monkeypatch.setattr(commit, "apply_schema_needs", lambda catalog, config, creates, updates: applied.append(
        sorted(creates)))

    def run(work):
        needs = SchemaNeeds(create={f"db.t{work}": object()}) if work < 3 else SchemaNeeds()
        return needs, (work + 1 if work < 3 else None)

    assert schema_rounds(None, None, 0, run) == 4
    assert applied == [["db.t0"], ["db.t1"], ["db.t2"]]
    with pytest.raises(ConnectException, match=f"Gave up after {MAX_SCHEMA_ROUNDS} rounds"):
        schema_rounds(None, None, 0, lambda work: (SchemaNeeds(create={"db.t": object()}), work))


# --- commits against a real SQL catalog ---------------------------------------------------------------


def _batch(offsets, values) -> pa.RecordBatch:
    n = len(offsets)
    return pa.RecordBatch.from_pydict({
        "topic": ["t"] * n, "partition": [0] * n, "offset": list(offsets),
        "timestamp": [1_700_000_000_000 + o for o in offsets], "timestamp_type": [1] * n,
        "key": [None] * n, "value": [json.dumps(v).encode() for v in values], "headers": [[]] * n,
    }, schema=RAW_SCHEMA)


def _written(config: SinkConfig, offsets) -> list:
    """Files of one task that wrote ``offsets`` (creating the table first if needed)."""
    pipeline = new_pipeline(config, unique("task"))
    batch = _batch(offsets, [{"id": o} for o in offsets])
    schema_rounds(pipeline.catalog, config, batch, lambda b: _process(pipeline, b))
    files, _ = pipeline.close()
    return files["db.events"]


def _process(pipeline, batch):
    needs = pipeline.process(batch)
    if needs:
        pipeline.forget_tables(needs.tables)
        return needs, batch
    return needs, None


@pytest.fixture
def config(tmp_path) -> SinkConfig:
    return SinkConfig.parse(sink_props(unique("commit"), "t", "db.events", tmp_path))


def test_offsets_never_move_backwards(config):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 10)), {("t", 0): 10}, "c1", None)
    # a commit that covers less (files of an older range, say) keeps the table's higher offset
    commit_table(catalog, config, "db.events", [], {("t", 0): 4, ("t", 1): 7}, "c2", None)
    table = catalog.load_table("db.events")
    assert committed_offsets(table, config.group_id) == {("t", 0): 10, ("t", 1): 7}
    assert table.current_snapshot().summary.additional_properties[COMMIT_ID] == "c2"


def test_a_commit_that_loses_the_race_to_another_writer_lands_on_the_new_head(config, monkeypatch):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 5)), {("t", 0): 5}, "c1", None)
    stale = catalog.load_table("db.events")
    other = catalog.load_table("db.events")  # another writer appends after we loaded the table
    other.append(pa.Table.from_pylist([{"id": 1000}], schema=other.schema().as_arrow()))
    real_load = catalog.load_table
    loads = []

    def load_table(name):  # the commit's first load sees the head from before the other writer's append
        loads.append(name)
        return stale if len(loads) == 1 else real_load(name)

    monkeypatch.setattr(catalog, "load_table", load_table)
    commit_table(catalog, config, "db.events", _written(config, range(5, 8)), {("t", 0): 8}, "c2", None)
    rows = sorted(r["id"] for r in table_rows(config.props, "db.events"))
    assert rows == [0, 1, 2, 3, 4, 5, 6, 7, 1000]
    assert committed_offsets(real_load("db.events"), config.group_id) == {("t", 0): 8}


def test_a_commit_is_retried_when_the_catalog_keeps_refusing_it_for_a_while(config, monkeypatch):
    catalog = load_catalog(config.props)
    refusals = []
    real_append = commit._append

    def busy_branch(*args, **kwargs):
        if len(refusals) < 2:
            refusals.append(1)
            raise CommitFailedException("branch main has changed")
        return real_append(*args, **kwargs)

    monkeypatch.setattr(commit, "_append", busy_branch)
    monkeypatch.setattr(commit, "COMMIT_BACKOFF_SECONDS", (0.0, 0.0))
    commit_table(catalog, config, "db.events", _written(config, range(0, 3)), {("t", 0): 3}, "c1", None)
    assert len(refusals) == 2
    assert sorted(r["id"] for r in table_rows(config.props, "db.events")) == [0, 1, 2]


def test_a_commit_that_keeps_conflicting_fails_naming_the_table(config, monkeypatch):
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 2)), {("t", 0): 2}, "c1", None)

    def conflict(*args, **kwargs):
        raise CommitFailedException("branch main has changed")

    monkeypatch.setattr(commit, "_append", conflict)
    monkeypatch.setattr(commit, "COMMIT_BACKOFF_SECONDS", (0.0, 0.0))
    with pytest.raises(ConnectException, match=r"Could not commit to db.events after \d+ attempts"):
        commit_table(catalog, config, "db.events", [], {("t", 0): 3}, "c2", None)
