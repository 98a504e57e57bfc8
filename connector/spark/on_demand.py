"""A Spark session started in the background, and only once something needs it.

``icefloe run`` does not know at start whether it needs Spark at all: a cycle
of at most ``icefloe.driver.max-records`` offsets runs its tasks in the driver
(:func:`connector.spark.runner.runs_in_driver`). Starting a JVM for such a run
costs seconds and memory for nothing, and its start-up lines would print in
the middle of the run's own output. So the job asks for the session as soon
as it knows a cycle is larger, right after reading where each partition
resumes and before it probes the first records and creates tables: the JVM
then starts while the driver does that work, as it did when every run started
it at once.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any, Callable


def start_in_background(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """``function(*args, **kwargs)`` in a daemon thread: exiting never waits for it.

    Started off the main thread, PySpark also leaves SIGINT to the job's stop signal:
    Ctrl-C finishes the commit in flight.
    """
    future: Future = Future()

    def run() -> None:
        try:
            future.set_result(function(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on the future
            future.set_exception(exc)

    threading.Thread(target=run, name="spark-start", daemon=True).start()
    return future


class OnDemandSession:
    """Starts a session with ``build()`` in the background on the first :meth:`start`, never before.

    It is never stopped from Python: its JVM stops itself once this process exits (``icefloe run``).
    """

    def __init__(self, build: Callable[[], Any]):
        self._build = build
        self._future: Future | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self._future is not None

    def start(self) -> Future:
        """The session starting (or up); starts it unless that was done already."""
        with self._lock:
            if self._future is None:
                self._future = start_in_background(self._build)
            return self._future
