"""How far a cycle's tasks have read, while they read: so the progress bar moves before the commit.

A task's records come back to the driver only in its commit message, at the end
of the task; a bar fed by commits sat at 0 for a whole cycle and then jumped.
Instead each task sends, a few times a second, the next offset it reached per
partition and the bytes it read, as one small UDP datagram to the driver's
:class:`ProgressFeed`, whose address it finds in :data:`FEED_ENV` (set in the
driver's environment for tasks run there, and in the Spark context's
environment for executors). Datagrams may be lost or late: each carries a
task's totals so far, so the next one corrects it, and the commit settles the
figures. Without the variable (the REST worker, the Spark formats) a task
sends nothing.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from typing import Callable, Mapping

FEED_ENV = "ICEFLOE_PROGRESS_FEED"
#: at most this many datagrams a second per task
SEND_INTERVAL = 0.25


class TaskProgress:
    """A task's side: :meth:`sent` after each batch; a datagram at most every :data:`SEND_INTERVAL` s."""

    def __init__(self, task_id: str, address: str | None = None):
        self.task_id = task_id
        target = address if address is not None else os.environ.get(FEED_ENV)
        host, _, port = (target or "").rpartition(":")
        self._target = (host, int(port)) if host and port.isdigit() else None
        self._socket: socket.socket | None = None
        self._last = 0.0

    def sent(self, next_offsets: Mapping[tuple[str, int], int], bytes_read: Mapping[str, int],
             force: bool = False) -> None:
        if self._target is None:
            return
        now = time.monotonic()
        if not force and now - self._last < SEND_INTERVAL:
            return
        self._last = now
        message = {"task": self.task_id, "offsets": [[t, p, o] for (t, p), o in next_offsets.items()],
                   "bytes": dict(bytes_read)}
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._socket.sendto(json.dumps(message).encode(), self._target)
        except OSError:  # the bar lags; the commit still counts everything
            self._target = None


class ProgressFeed:
    """The driver's side: a UDP socket whose datagrams go to ``on_update(task offsets, task bytes)``."""

    def __init__(self, on_update: Callable[[dict[tuple[str, int], int], dict[str, int]], None] | None = None,
                 host: str = "0.0.0.0"):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind((host, 0))
        self.port = self._socket.getsockname()[1]
        self.on_update = on_update
        self._bytes: dict[str, dict[str, int]] = {}  # per task: bytes read per topic, its latest datagram's
        self._offsets: dict[tuple[str, int], int] = {}  # furthest offset any task reported, per partition
        self._lock = threading.Lock()
        threading.Thread(target=self._receive, name="progress-feed", daemon=True).start()

    def address(self, host: str) -> str:
        """What :data:`FEED_ENV` holds for tasks that reach this driver as ``host``."""
        return f"{host}:{self.port}"

    def forget(self) -> None:
        """Drop what tasks reported (a cycle committed or failed: its figures are the commit's now)."""
        with self._lock:
            self._bytes.clear()
            self._offsets.clear()

    def _receive(self) -> None:
        while True:
            try:
                data = self._socket.recv(65536)
                message = json.loads(data)
                offsets = {(t, int(p)): int(o) for t, p, o in message["offsets"]}
                task_bytes = {str(t): int(n) for t, n in message["bytes"].items()}
            except (OSError, ValueError, KeyError, TypeError):
                continue
            with self._lock:
                for tp, offset in offsets.items():
                    self._offsets[tp] = max(offset, self._offsets.get(tp, offset))
                self._bytes[str(message["task"])] = task_bytes
                reached = dict(self._offsets)
                read: dict[str, int] = {}
                for per_topic in self._bytes.values():
                    for topic, size in per_topic.items():
                        read[topic] = read.get(topic, 0) + size
            if self.on_update is not None:
                self.on_update(reached, read)
