"""The task pipeline's own rules: the committed-offset filter, the rows a table gets, strategies."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from connector.api.record import SinkRecord
from connector.data.table_rows import RAW_JSON, RECORDS, TableRows, not_committed

TOPICS = st.sampled_from(["a", "b"])


@st.composite
def rows_and_offsets(draw):
    coordinates = draw(st.lists(st.tuples(TOPICS, st.integers(0, 2), st.integers(0, 50)), max_size=40))
    committed = draw(st.dictionaries(st.tuples(TOPICS, st.integers(0, 2)), st.integers(0, 50), max_size=6))
    return coordinates, committed


def _rows(coordinates) -> TableRows:
    topics, partitions, offsets = zip(*coordinates) if coordinates else ((), (), ())
    return TableRows(RAW_JSON, pa.array([b"{}"] * len(coordinates), pa.binary()),
                     pa.array(topics, pa.string()), pa.array(partitions, pa.int32()), pa.array(offsets, pa.int64()))


@given(rows_and_offsets())
def test_the_committed_filter_keeps_exactly_the_rows_at_or_after_their_partitions_offset(case):
    coordinates, committed = case
    mask = not_committed(_rows(coordinates), committed)
    expected = [offset >= committed.get((topic, partition), -1) for topic, partition, offset in coordinates]
    assert (mask.to_pylist() if mask is not None else [True] * len(coordinates)) == expected


def test_rows_of_records_keep_the_original_coordinates_through_smts():
    record = SinkRecord(topic="orders", kafka_partition=3, key=None, key_schema=None, value={"a": 1},
                        value_schema=None, kafka_offset=41)
    routed = record.new_record("elsewhere", 0, None, None, None, {"a": 1}, None)  # as RegexRouter would
    rows = TableRows.of_records([routed, record])
    assert rows.form == RECORDS
    assert rows.topics.to_pylist() == ["orders", "orders"] and rows.partitions.to_pylist() == [3, 3]
    assert rows.where(0) == "topic: orders, partition: 3, offset: 41"
    kept = rows.filter(pa.array([False, True]))
    assert kept.values == [record] and kept.offsets.to_pylist() == [41]
