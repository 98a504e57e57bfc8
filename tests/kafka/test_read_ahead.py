"""ReadAhead: a range's batches read one ahead in a thread, in order, errors where they happened,
and the reader's clean-up done before close() returns (the consumer is then free again)."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.kafka.range_reader import RangeReadError
from connector.kafka.read_ahead import ReadAhead


class Reader:
    """A batch generator that records how far it was pulled and where its clean-up ran."""

    def __init__(self, items, fail_after: int | None = None, pause: float = 0.0):
        self.items = list(items)
        self.fail_after = fail_after
        self.pause = pause
        self.pulled = 0
        self.cleaned_up_in: str | None = None

    def __iter__(self):
        try:
            for index, item in enumerate(self.items):
                if self.fail_after is not None and index == self.fail_after:
                    raise RangeReadError(f"t[0] at offset {index}: broker gone")
                time.sleep(self.pause)
                self.pulled += 1
                yield item
        finally:
            self.cleaned_up_in = threading.current_thread().name


@given(st.lists(st.integers(), max_size=50))
def test_every_batch_comes_out_once_in_order(items):
    reader = Reader(items)
    with ReadAhead(iter(reader)) as ahead:
        assert list(ahead) == items
    assert reader.cleaned_up_in == "read-ahead"


@given(st.lists(st.integers(), min_size=1, max_size=20), st.data())
def test_an_error_comes_out_after_the_batches_before_it(items, data):
    fail_after = data.draw(st.integers(0, len(items) - 1))
    reader = Reader(items, fail_after=fail_after)
    seen = []
    with ReadAhead(iter(reader)) as ahead, pytest.raises(RangeReadError, match="broker gone"):
        for item in ahead:
            seen.append(item)
    assert seen == items[:fail_after]


def test_closing_early_reads_at_most_two_batches_past_the_last_one_taken_and_cleans_up_first():
    reader = Reader(range(1000))
    ahead = ReadAhead(iter(reader), name="ahead-t")
    taken = []
    for item in ahead:
        taken.append(item)
        if len(taken) == 3:
            break
    time.sleep(0.2)  # give the thread every chance to run ahead
    ahead.close()

    assert taken == [0, 1, 2]
    assert reader.pulled <= len(taken) + 2  # one queued, one in the thread's hands
    assert reader.cleaned_up_in == "ahead-t"  # the generator's finally ran in its thread, before close() returned


def test_close_returns_while_the_thread_waits_to_hand_over_a_batch():
    reader = Reader(range(10))
    ahead = ReadAhead(iter(reader))
    time.sleep(0.1)  # the queue is full and the thread holds the next batch
    began = time.monotonic()
    ahead.close()
    assert time.monotonic() - began < 1
    assert reader.cleaned_up_in is not None


def test_the_next_batch_is_read_while_the_task_holds_this_one():
    reader = Reader(range(5))
    with ReadAhead(iter(reader)) as ahead:
        batches = iter(ahead)
        assert next(batches) == 0
        deadline = time.monotonic() + 10
        while reader.pulled < 2 and time.monotonic() < deadline:  # the task is still "processing" batch 0
            time.sleep(0.01)
        assert reader.pulled >= 2
        assert list(batches) == [1, 2, 3, 4]
