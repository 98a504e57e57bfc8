"""One row per key per flush: the latest record of each key wins (topic, partition, offset order)."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType, StructType

from connector.data.convert.changes import DELETED, OFFSET, PARTITION, TOPIC
from connector.data.convert.collapse import POSITIONS_SCHEMA, collapse, positions_table
from connector.data.convert.column_paths import resolve

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType(), required=True),
    NestedField(3, "v", StringType(), required=False),
    NestedField(4, "acct", StructType(NestedField(5, "no", LongType(), required=True)), required=True),
)
ID = (resolve(SCHEMA, "id"),)


def _rows(records) -> tuple[pa.Table, pa.Table]:
    """records: (topic, partition, offset, id, region, v, deleted)."""
    topics, partitions, offsets, ids, regions, values, deleted = (list(c) for c in zip(*records))
    data = pa.table({"id": pa.array(ids, pa.int64()), "region": regions, "v": values,
                     "acct": pa.array([{"no": i % 3} for i in ids], pa.struct([("no", pa.int64())]))})
    positions = positions_table(pa.array(topics), pa.array(partitions), pa.array(offsets), pa.array(deleted))
    return data, positions


def _collapsed(records, keys=ID):
    data, positions = _rows(records)
    result = collapse(data, positions, keys)
    return result.rows, result.keys


def test_several_updates_of_one_key_keep_the_last():
    rows, keys = _collapsed([("t", 0, 5, 1, "eu", "a", False), ("t", 0, 6, 1, "eu", "b", False),
                             ("t", 0, 7, 2, "eu", "x", False), ("t", 0, 8, 1, "eu", "c", False)])
    assert rows.to_pydict()["v"] == ["x", "c"]
    assert keys.to_pydict() == {"id": [2, 1], TOPIC: ["t", "t"], PARTITION: [0, 0], OFFSET: [7, 8],
                                DELETED: [False, False]}
    assert keys.schema.names == ["id", *POSITIONS_SCHEMA.names]
    assert [keys.schema.field(n).type for n in POSITIONS_SCHEMA.names] == list(POSITIONS_SCHEMA.types)


def test_the_order_is_the_source_position_not_the_row_order():
    rows, keys = _collapsed([("t", 0, 9, 1, "eu", "late", False), ("t", 0, 3, 1, "eu", "early", False)])
    assert rows.column("v").to_pylist() == ["late"] and keys.column(OFFSET).to_pylist() == [9]


def test_a_delete_after_an_insert_deletes_and_an_insert_after_a_delete_writes():
    rows, keys = _collapsed([("t", 0, 1, 1, "eu", "a", False), ("t", 0, 2, 1, "eu", "a", True),
                             ("t", 0, 3, 2, "eu", "b", True), ("t", 0, 4, 2, "eu", "b2", False)])
    assert rows.column("v").to_pylist() == ["b2"]
    assert sorted(zip(keys.column("id").to_pylist(), keys.column(DELETED).to_pylist())) == [(1, True), (2, False)]


def test_two_partitions_order_by_topic_then_partition_then_offset():
    rows, keys = _collapsed([("t", 1, 1, 1, "eu", "p1", False), ("t", 0, 100, 1, "eu", "p0", False),
                             ("a", 5, 900, 2, "eu", "topic a", False), ("b", 0, 0, 2, "eu", "topic b", False)])
    assert sorted(rows.column("v").to_pylist()) == ["p1", "topic b"]
    assert sorted(zip(keys.column("id").to_pylist(), keys.column(TOPIC).to_pylist(),
                      keys.column(PARTITION).to_pylist())) == [(1, "t", 1), (2, "b", 0)]


def test_multi_column_and_nested_keys():
    records = [("t", 0, 1, 1, "eu", "a", False), ("t", 0, 2, 1, "us", "b", False), ("t", 0, 3, 1, "eu", "c", False),
               ("t", 0, 4, 4, "eu", "d", False)]  # acct.no = id % 3: ids 1 and 4 share acct.no 1
    rows, keys = _collapsed(records, (resolve(SCHEMA, "id"), resolve(SCHEMA, "region")))
    assert sorted(rows.column("v").to_pylist()) == ["b", "c", "d"]
    assert keys.schema.names[:2] == ["id", "region"]
    rows, keys = _collapsed(records, (resolve(SCHEMA, "acct.no"),))
    assert rows.column("v").to_pylist() == ["d"]
    assert keys.to_pydict()["acct.no"] == [1]


# --- the property: the collapse equals a plain Python model --------------------------------------


@st.composite
def records(draw):
    """Random op sequences over a few keys, topics and partitions (offsets unique per partition)."""
    count = draw(st.integers(1, 40))
    next_offset: dict[tuple[str, int], int] = {}
    out = []
    for _ in range(count):
        topic, partition = draw(st.sampled_from(["a", "b", "é"])), draw(st.integers(0, 2))
        offset = next_offset.get((topic, partition), 0) + draw(st.integers(0, 3))
        next_offset[(topic, partition)] = offset + 1
        key = draw(st.integers(0, 4))
        out.append((topic, partition, offset, key, draw(st.sampled_from(["eu", "us"])), f"v{len(out)}",
                    draw(st.booleans())))
    return draw(st.permutations(out))


def _model(records):
    latest: dict = {}
    for record in sorted(records, key=lambda r: (r[0].encode(), r[1], r[2])):
        latest[record[3]] = record
    return latest


@settings(max_examples=200, deadline=None)
@given(records())
def test_the_collapse_is_the_latest_record_of_each_key(recs):
    rows, keys = _collapsed(recs)
    expected = _model(recs)
    assert sorted(keys.column("id").to_pylist()) == sorted(expected)
    for key, topic, partition, offset, deleted in zip(*(keys.column(n).to_pylist() for n in keys.schema.names)):
        assert (topic, partition, offset, deleted) == (expected[key][0], expected[key][1], expected[key][2],
                                                       expected[key][6])
    assert sorted(zip(rows.column("id").to_pylist(), rows.column("v").to_pylist())) == sorted(
        (k, r[5]) for k, r in expected.items() if not r[6])


def test_rows_buffered_in_several_chunks_collapse_alike():
    first, first_positions = _rows([("t", 0, 1, 1, "eu", "a", False), ("t", 0, 2, 2, "eu", "b", False)])
    second, second_positions = _rows([("t", 0, 3, 1, "eu", "c", False), ("t", 0, 4, 2, "eu", "d", True)])
    data, positions = pa.concat_tables([first, second]), pa.concat_tables([first_positions, second_positions])
    assert data.column("id").num_chunks == 2
    result = collapse(data, positions, (resolve(SCHEMA, "id"), resolve(SCHEMA, "acct.no")))
    assert result.rows.column("v").to_pylist() == ["c"]
    assert result.keys.to_pydict()["acct.no"] == [1, 2] and result.keys.column(DELETED).to_pylist() == [False, True]
