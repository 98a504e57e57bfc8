"""The key index's rules (connector/commit/key_index.py): which segment wins a key, which rows go."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.commit.key_index import FILE, OLD, POS, SEGMENT, rows_to_delete, winners, without
from connector.data.convert.changes import DELETED, OFFSET, PARTITION, TOPIC


def keys_table(rows: list[tuple]) -> pa.Table:
    """A segment's keys from (id, topic, partition, offset, deleted) tuples."""
    ids, topics, partitions, offsets, deleted = zip(*rows) if rows else ([], [], [], [], [])
    return pa.table({"id": pa.array(ids, pa.int64()), TOPIC: pa.array(topics, pa.string()),
                     PARTITION: pa.array(partitions, pa.int32()), OFFSET: pa.array(offsets, pa.int64()),
                     DELETED: pa.array(deleted, pa.bool_())})


def located(rows: list[tuple]) -> pa.Table:
    """Index rows from (id, file, pos, segment) tuples."""
    ids, files, positions, segments = zip(*rows) if rows else ([], [], [], [])
    return pa.table({"id": pa.array(ids, pa.int64()), FILE: pa.array(files, pa.string()),
                     POS: pa.array(positions, pa.int64()), SEGMENT: pa.array(segments, pa.int32())})


def as_dict(won: pa.Table) -> dict:
    return {k: (s, d) for k, s, d in zip(won.column("id").to_pylist(), won.column(SEGMENT).to_pylist(),
                                         won.column(DELETED).to_pylist())}


def test_the_latest_record_wins_by_topic_then_partition_then_offset():
    first = keys_table([(1, "t", 0, 50, False), (2, "t", 1, 7, False), (3, "a", 9, 900, False)])
    second = keys_table([(1, "t", 0, 60, True), (2, "t", 0, 99, False), (3, "b", 0, 1, False)])
    won = as_dict(winners([first, second], ["id"]))
    assert won == {1: (1, True),  # a later offset of the same partition: the delete wins
                   2: (0, False),  # partition 1 comes after partition 0, whatever the offsets
                   3: (1, False)}  # topic b comes after topic a


def test_rows_of_changed_keys_go_except_the_winners_own_row():
    won = winners([keys_table([(1, "t", 0, 5, False), (2, "t", 0, 6, True)]),
                   keys_table([(1, "t", 0, 4, False)])], ["id"])
    rows = located([(1, "old", 0, OLD), (2, "old", 1, OLD), (3, "old", 2, OLD),  # 3 is not changed
                    (1, "new0", 0, 0), (1, "new1", 0, 1)])
    gone = rows_to_delete(rows, won, ["id"])
    assert sorted(zip(gone.column(FILE).to_pylist(), gone.column(POS).to_pylist())) == [
        ("new1", 0), ("old", 0), ("old", 1)]


def test_without_drops_exactly_the_deleted_positions():
    rows = located([(1, "f", 0, OLD), (2, "f", 1, OLD), (3, "g", 0, OLD)])
    left = without(rows, pa.table({FILE: ["f", "g"], POS: pa.array([1, 5], pa.int64())}))
    assert sorted(left.column("id").to_pylist()) == [1, 3]


# --- against a model: a table of keys changed by commits of several segments ------------------------------

CHANGE = st.tuples(st.integers(0, 6), st.integers(0, 2), st.booleans())  # key, partition, delete


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.lists(CHANGE, max_size=6), max_size=3), max_size=5))
def test_commits_leave_one_row_per_live_key_holding_its_latest_version(commits):
    """Each commit: segments of (key, partition, delete) records, in offset order within each segment.
    Within a commit a key's latest record is its greatest (partition, offset); a later commit replaces
    an earlier one. The table must hold one row per key whose latest record is not a delete: that one's."""
    offsets = {p: 0 for p in range(3)}
    latest: dict[int, tuple] = {}  # the model: key → (partition, offset, deleted) of its latest record
    live = located([])  # the table: (key, file, pos) of live rows; a row's file names its record
    for number, segments in enumerate(commits):
        keys, written = [], []
        this_commit: dict[int, tuple] = {}
        for index, records in enumerate(segments):
            per_key: dict[int, tuple] = {}
            for key, partition, delete in records:
                offsets[partition] += 1
                position = ("t", partition, offsets[partition])
                per_key[key] = max(per_key.get(key, (None, -1, -1, False)), (key, *position[1:], delete),
                                   key=lambda r: (r[1], r[2]))
                if position[1:] > this_commit.get(key, (-1, -1, False))[:2]:
                    this_commit[key] = (partition, offsets[partition], delete)
            keys.append(keys_table([(k, "t", p, o, d) for k, p, o, d in per_key.values()]))
            written += [(k, f"{number}-{index}-{p}-{o}", 0, index) for k, p, o, d in per_key.values() if not d]
        latest.update(this_commit)
        won = winners(keys, ["id"])
        candidates = pa.concat_tables([live, located(written)])
        gone = rows_to_delete(candidates, won, ["id"])
        live = without(candidates, gone)
        live = live.set_column(live.schema.get_field_index(SEGMENT), SEGMENT,
                               pa.array([OLD] * live.num_rows, pa.int32()))
    expected = {k: f"-{p}-{o}" for k, (p, o, d) in latest.items() if not d}
    got = dict(zip(live.column("id").to_pylist(), live.column(FILE).to_pylist()))
    assert len(got) == live.num_rows, "one row per key"
    assert set(got) == set(expected)
    for key, file in got.items():
        assert file.endswith(expected[key]), (key, file, expected[key])


def test_keys_of_a_segment_flushed_before_the_id_column_was_widened_still_match():
    narrow = keys_table([(1, "t", 0, 5, False)])
    narrow = narrow.set_column(0, "id", pa.array([1], pa.int32()))
    gone = rows_to_delete(located([(1, "old", 0, OLD)]), winners([narrow], ["id"]), ["id"])
    assert gone.column(FILE).to_pylist() == ["old"]
