"""librdkafka's own log, through icefloe's logging, a repeated line once with a count.

Left alone, librdkafka writes to stderr: while a broker is unreachable every
client repeats ``Connect to ipv4#127.0.0.1:9999 failed: Connection refused``
about 16 times a second, and a job buried its own lines under thousands of
them. Every client icefloe makes gets :func:`librdkafka_log` as its ``logger``
(confluent-kafka then hands it the lines the client's ``poll``/``consume``
serve). Lines go to the ``icefloe.librdkafka`` logger; a line that says what
an earlier one said (whichever client said it) is counted instead, and the
count is logged with the line again once a minute at most while it repeats.
A broker that cannot be connected to is a warning, not an error: the job
decides whether that is fatal (connector/kafka/reachability.py, the retries of
connector/tolerance/transient.py) and says so in its own line.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any, Callable

LOGGER_NAME = "icefloe.librdkafka"
REPEAT_INTERVAL_SECONDS = 60.0

#: What varies between two lines that say the same thing: the client's name and the timings.
_VARYING = re.compile(r"\s*\(after \d+ms.*\)\s*$|\[thrd:[^\]]*\]:\s*")
#: librdkafka facilities of a broker connection failing: a warning, the job decides what it means.
_CONNECTION_FACILITIES = frozenset({"FAIL", "ERROR", "BROKERFAIL"})


class LibrdkafkaLog:
    """A ``logger`` for confluent-kafka clients: forwards to Python logging, counting repeats."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, interval: float = REPEAT_INTERVAL_SECONDS):
        self._log = logging.getLogger(LOGGER_NAME)
        self._clock = clock
        self._interval = interval
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, int]] = {}  # line → (when last logged, repeats since)

    def log(self, level: int, fmt: str, *args: Any) -> None:
        """Called by confluent-kafka with ``("%s [%s] %s", facility, client name, text)``."""
        facility, text = (str(args[0]), str(args[2])) if len(args) == 3 else ("", fmt % args if args else fmt)
        line = _VARYING.sub(" ", text).strip()
        if facility in _CONNECTION_FACILITIES and level > logging.WARNING:
            level = logging.WARNING
        if not self._log.isEnabledFor(level):
            return
        repeats = self._count(f"{facility} {line}")
        if repeats is None:
            return
        suffix = f" (and {repeats} more time(s) in the last {self._interval:.0f}s)" if repeats else ""
        self._log.log(level, "librdkafka %s: %s%s", facility, line, suffix)

    def _count(self, key: str) -> int | None:
        """None when ``key`` was logged less than an interval ago (counted); else the repeats to report."""
        now = self._clock()
        with self._lock:
            last, repeats = self._seen.get(key, (None, 0))
            if last is not None and now - last < self._interval:
                self._seen[key] = (last, repeats + 1)
                return None
            self._seen[key] = (now, 0)
            if len(self._seen) > 10_000:  # a long-lived worker meets many distinct lines; forget the oldest
                for stale in sorted(self._seen, key=lambda k: self._seen[k][0])[:5_000]:
                    del self._seen[stale]
            return repeats

    def __reduce__(self) -> tuple[Callable[[], LibrdkafkaLog], tuple[()]]:
        # A client config may travel to a Spark executor: there it is that process's own instance.
        return librdkafka_log, ()


_INSTANCE = LibrdkafkaLog()


def librdkafka_log() -> LibrdkafkaLog:
    """The process's one bridge (so a line repeated by many short-lived clients is still counted once)."""
    return _INSTANCE
