"""Named fault-injection points, for the fault tests only.

``ICEFLOE_FAULT_POINT=<name>[:<n>]`` makes a process SIGKILL the ``n``-th time
(default: the first) it reaches the point ``<name>``. What is killed:
``ICEFLOE_FAULT_KILL=session`` (the default) kills the process group of the
session leader: start the job in its own session (``setsid``, Popen's
``start_new_session``) and that is the whole job, driver, Spark JVM and all,
even when the point is reached in an executor's Python worker (a crash of the
job); ``self`` kills only the process that reached the point (e.g. one
executor Python worker mid-task). Unset, a point costs one environment lookup.
Not a user setting: documented in docs/operations.md ("Fault tests") so nobody
is surprised to find it.

Points: ``cycle.before-tasks``, ``cycle.after-files`` (tasks done, before the
catalog commit), ``cycle.between-table-commits``, ``cycle.before-group-mirror``,
``dlq.during-writes`` (a task's DLQ producer, after its first record),
``task.mid-batch`` (a task, after it processed a batch),
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
        if os.environ.get("ICEFLOE_FAULT_KILL", "session") == "self":
            os.kill(os.getpid(), signal.SIGKILL)
        os.killpg(os.getsid(0), signal.SIGKILL)
