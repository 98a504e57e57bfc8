"""A small thread-safe LRU map, the one cache of rebuilt schemas and parsed values."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

SCHEMA_CACHE_SIZE = 16


class LRUCache:
    """A small thread-safe LRU map (``SynchronizedCache(new LRUCache<>(16))``)."""

    def __init__(self, max_size: int = SCHEMA_CACHE_SIZE):
        self._max_size = max_size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return None
            return self._data[key]

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max_size:
                self._data.popitem(last=False)

    def get_or_compute(self, key: Any, compute: Callable[[Any], Any]) -> Any:
        value = self.get(key)
        if value is None:
            value = compute(key)
            self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._data)

    # Picklable (a configured chain may be shipped to Spark executors): the entries and the
    # lock are not carried over.
    def __getstate__(self) -> dict:
        return {"max_size": self._max_size}

    def __setstate__(self, state: dict) -> None:
        LRUCache.__init__(self, state["max_size"])
