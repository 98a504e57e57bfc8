"""plan_ranges: offset ranges into task slots (property tests with hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.kafka.offsets import OffsetRange, bounded_end, plan_ranges

partitions = st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 5))


@st.composite
def start_end(draw):
    """A start and an end offset for a random set of partitions (start <= end)."""
    keys = draw(st.lists(partitions, unique=True, max_size=12))
    start, end = {}, {}
    for key in keys:
        first = draw(st.integers(0, 10_000))
        start[key] = first
        end[key] = first + draw(st.one_of(st.just(0), st.integers(1, 50), st.integers(1, 100_000)))
    return start, end


def tiles(pieces, start, end):
    """Whether sorted ``pieces`` of one partition cover ``start..end`` exactly once."""
    position = start
    for rng in pieces:
        if rng.start != position or rng.end <= rng.start:
            return False
        position = rng.end
    return position == end


@settings(max_examples=300, deadline=None)
@given(start_end(), st.integers(1, 16), st.booleans())
def test_plan_exactly_partitions_the_input(bounds, max_tasks, split_large):
    start, end = bounds
    groups = plan_ranges(start, end, max_tasks=max_tasks, split_large=split_large)
    assert len(groups) <= max_tasks
    assert all(group for group in groups), "no empty task slots"
    by_partition = {}
    for rng in sorted(rng for group in groups for rng in group):
        by_partition.setdefault(rng.key, []).append(rng)
    nonempty = {key for key, last in end.items() if last > start[key]}
    assert set(by_partition) == nonempty, "empty ranges dropped, all others planned"
    for key, pieces in by_partition.items():
        assert tiles(pieces, start[key], end[key]), f"{key}: {pieces}"


@settings(max_examples=200, deadline=None)
@given(start_end(), st.integers(1, 16))
def test_without_split_each_partition_is_one_range_in_one_slot(bounds, max_tasks):
    start, end = bounds
    groups = plan_ranges(start, end, max_tasks=max_tasks, split_large=False)
    ranges = [rng for group in groups for rng in group]
    assert sorted(ranges) == sorted(
        OffsetRange(t, p, start[(t, p)], e) for (t, p), e in end.items() if e > start[(t, p)]
    )
    assert len(groups) == min(max_tasks, len(ranges))


@settings(max_examples=200, deadline=None)
@given(start_end(), st.integers(1, 16))
def test_split_balances_record_counts_within_one(bounds, max_tasks):
    start, end = bounds
    groups = plan_ranges(start, end, max_tasks=max_tasks, split_large=True)
    loads = [sum(rng.count for rng in group) for group in groups]
    if loads:
        assert max(loads) - min(loads) <= 1
        total = sum(e - start[k] for k, e in end.items())
        assert len(groups) == min(max_tasks, total)


def test_split_lets_one_partition_use_every_task():
    groups = plan_ranges({("t", 0): 100}, {("t", 0): 1100}, max_tasks=4, split_large=True)
    assert groups == [
        [OffsetRange("t", 0, 100, 350)],
        [OffsetRange("t", 0, 350, 600)],
        [OffsetRange("t", 0, 600, 850)],
        [OffsetRange("t", 0, 850, 1100)],
    ]


def test_without_split_largest_first_balancing():
    start = {("t", p): 0 for p in range(4)}
    end = {("t", 0): 100, ("t", 1): 60, ("t", 2): 50, ("t", 3): 0}
    groups = plan_ranges(start, end, max_tasks=2, split_large=False)
    assert groups == [
        [OffsetRange("t", 0, 0, 100)],
        [OffsetRange("t", 1, 0, 60), OffsetRange("t", 2, 0, 50)],
    ]


def test_nothing_to_read_plans_no_tasks():
    assert plan_ranges({("t", 0): 5}, {("t", 0): 5}, max_tasks=3, split_large=True) == []
    assert plan_ranges({}, {}, max_tasks=3, split_large=False) == []


@pytest.mark.parametrize(
    "start, end, max_tasks, message",
    [
        ({}, {("t", 0): 5}, 1, r"No start offset for t\[0\]"),
        ({("t", 0): 9}, {("t", 0): 5}, 1, r"t\[0\]: start offset 9 is beyond the end offset 5"),
        ({("t", 0): 0}, {("t", 0): 5}, 0, "max_tasks"),
    ],
)
def test_invalid_plans(start, end, max_tasks, message):
    with pytest.raises(ValueError, match=message):
        plan_ranges(start, end, max_tasks=max_tasks, split_large=False)


def test_offset_range_is_frozen():
    rng = OffsetRange("t", 0, 1, 5)
    assert rng.count == 4 and rng.key == ("t", 0)
    with pytest.raises(AttributeError):
        rng.start = 2  # type: ignore[misc]


def test_small_backfills_are_not_split_below_the_minimum():
    start, end = {("t", 0): 0, ("t", 1): 0}, {("t", 0): 10, ("t", 1): 5}
    groups = plan_ranges(start, end, max_tasks=4, split_large=True, min_split_records=1000)
    assert groups == [[OffsetRange("t", 0, 0, 10)], [OffsetRange("t", 1, 0, 5)]]
    big = plan_ranges({("t", 0): 0}, {("t", 0): 3000}, max_tasks=4, split_large=True, min_split_records=1000)
    assert [sum(r.count for r in g) for g in big] == [1000, 1000, 1000]


# --- one cycle's share of a backlog (icefloe.commit.max-records) ---------------------------------------

@given(st.dictionaries(st.tuples(st.sampled_from("ab"), st.integers(0, 3)),
                       st.tuples(st.integers(0, 1000), st.integers(0, 1000)), max_size=6),
       st.integers(0, 3000))
def test_bounded_end_covers_at_most_the_budget_fairly(ranges, max_records):
    start = {tp: min(a, b) for tp, (a, b) in ranges.items()}
    end = {tp: max(a, b) for tp, (a, b) in ranges.items()}
    bounded = bounded_end(start, end, max_records)
    assert set(bounded) == set(end)
    assert all(start[tp] <= bounded[tp] <= end[tp] for tp in end)
    covered = sum(bounded[tp] - start[tp] for tp in end)
    backlog = sum(end[tp] - start[tp] for tp in end)
    if max_records == 0:
        assert bounded == end
    else:
        assert covered == min(backlog, max_records)  # the whole budget is used while there is backlog
        pending = [tp for tp in end if end[tp] > start[tp]]
        if max_records >= len(pending):
            assert all(bounded[tp] > start[tp] for tp in pending)  # every partition moves on
        shares = [bounded[tp] - start[tp] for tp in pending if bounded[tp] < end[tp]]
        assert not shares or max(shares) - min(shares) <= 1  # the capped ones split the budget evenly


def test_bounded_end_keeps_partitions_without_a_start():
    assert bounded_end({("a", 0): 5}, {("a", 0): 100, ("b", 0): 7}, 10) == {("a", 0): 15, ("b", 0): 7}
