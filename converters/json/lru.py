"""A small thread-safe LRU cache (Kafka's ``SynchronizedCache(new LRUCache(n))``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRUCache(Generic[K, V]):
    """Keeps the ``max_size`` most recently used entries; ``max_size <= 0`` keeps none."""

    def __init__(self, max_size: int):
        self.max_size = max_size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > max(self.max_size, 0):
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
