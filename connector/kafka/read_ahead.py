"""Reading a range's next batch while the task processes the one in hand.

A task alternates between two kinds of work: reading records (``consume()``
waiting on the fetch queue, then one Python object per record) and
processing a batch (Arrow's JSON or Avro decoding, Parquet encoding), which
runs in C++ with the GIL released. One after the other they leave a core
idle half the time. :class:`ReadAhead` runs the reading in a thread of its
own, one batch ahead of the processing.

Invariants:

* batches come out in the order the reader yields them, and a reader's
  exception comes out where the next batch would have, with its traceback;
* at most one batch waits, read but not yet processed (plus the one the
  thread is reading): memory stays bounded by the read batch size;
* :meth:`ReadAhead.close` returns only once the thread has stopped and the
  reader's generator has been closed in it (its ``finally``, which unassigns
  the consumer, has run): the consumer is then free for the next range. A
  task that stops early (a schema change, its deadline) may have had one batch
  read past where it stopped; it is dropped, and the next read starts from the
  task's own position.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

import pyarrow as pa

_END = object()  # the reader is exhausted
_PUT_WAIT = 0.05  # seconds between checks for a close while the queue is full


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


class ReadAhead:
    """Iterates ``batches`` one batch ahead, read in a thread that owns the generator until :meth:`close`."""

    def __init__(self, batches: Iterator[pa.RecordBatch], name: str = "read-ahead"):
        self._batches = batches
        self._ready: queue.Queue = queue.Queue(maxsize=1)
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._read, name=name, daemon=True)
        self._thread.start()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while True:
            item = self._ready.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item

    def close(self) -> None:
        """Stop reading and wait for the thread (it finishes the ``consume()`` call it is in)."""
        self._closing.set()
        self._thread.join()

    def __enter__(self) -> "ReadAhead":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self) -> None:
        try:
            for batch in self._batches:
                if not self._hand_over(batch):
                    return
            self._hand_over(_END)
        except BaseException as error:  # noqa: BLE001 - re-raised in the task's thread by __iter__
            self._hand_over(_Failed(error))
        finally:
            close = getattr(self._batches, "close", None)
            if close is not None:
                close()  # the reader's own clean-up, in the thread that ran it

    def _hand_over(self, item: object) -> bool:
        """Queue ``item`` for the task; False once the task has closed this reader."""
        while not self._closing.is_set():
            try:
                self._ready.put(item, timeout=_PUT_WAIT)
                return True
            except queue.Full:
                continue
        return False
