"""The one LRU cache: Kafka's ``SynchronizedCache(new LRUCache<>(n))``, for schemas and parsed values."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

SCHEMA_CACHE_SIZE = 16

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """A thread-safe map of the ``max_size`` most recently used entries (``<= 0`` keeps none).

    ``get`` answers None for a missing key, so None is not a useful value to store.
    """

    def __init__(self, max_size: int = SCHEMA_CACHE_SIZE):
        self._max_size = max_size
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return None
            return self._data[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > max(self._max_size, 0):
                self._data.popitem(last=False)

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        value = self.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    # Picklable (a configured chain may be shipped to Spark executors): the entries and the
    # lock are not carried over.
    def __getstate__(self) -> dict:
        return {"max_size": self._max_size}

    def __setstate__(self, state: dict) -> None:
        LRUCache.__init__(self, state["max_size"])
