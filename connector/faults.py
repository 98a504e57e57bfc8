"""Named fault-injection points, for the fault tests only.

``ICEFLOE_FAULT_POINT=<name>[:<n>]`` makes the process **SIGKILL its whole process
group** (driver, Spark JVM and Python workers: a crash of the job) the ``n``-th
time (default: first) the point ``<name>`` is reached in a process. Unset, a point
costs one environment lookup. Not a user setting: documented in docs/operations.md
("Fault tests") so nobody is surprised to find it.

Points: ``cycle.before-tasks``, ``cycle.after-files`` (tasks done, before the
catalog commit), ``cycle.between-table-commits``, ``cycle.before-group-mirror``,
``dlq.during-writes`` (a task's DLQ producer, after its first record),
``replay.after-dlq-writes``, ``replay.after-table-commit``.
"""

from __future__ import annotations

import os
import signal

ENV = "ICEFLOE_FAULT_POINT"
_hits: dict[str, int] = {}


def fault_point(name: str) -> None:
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    point, _, count = wanted.partition(":")
    if point != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= (int(count) if count.isdigit() else 1):
        os.killpg(os.getpgrp(), signal.SIGKILL)
