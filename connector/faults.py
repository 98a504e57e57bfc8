"""Named fault-injection points, for the fault tests only.

``ICEFLOE_FAULT_POINT=<name>[:<n>]`` makes a process SIGKILL the ``n``-th time
(default: the first) it reaches the point ``<name>``. What is killed:
``ICEFLOE_FAULT_KILL=job`` (the default) kills the ``icefloe`` driver (``python
-m connector.cli`` or the ``icefloe`` script; the topmost such ancestor, found
through ``/proc``, Linux only) with its whole process group when it leads one
(start it with Popen's ``start_new_session``; never the group of a test runner
or shell that started it), even when the point
is reached in an executor's Python worker: a crash of the job (its Spark JVM
exits when the driver is gone); ``self`` kills only the process that reached the
point (e.g. one executor Python worker mid-task); ``executor`` kills the Spark executor JVM that
started the process (a lost executor, as when a Spark worker host dies; on a cluster, give the
variables to the executors with ``spark.executorEnv.*``). ``ICEFLOE_FAULT_ONCE=<file>``: only the first
process to get there fires (it creates the file), not the workers that retry. Outside an ``icefloe`` driver
``job`` kills only the process itself. Unset, a point costs one environment
lookup. Not a user setting: documented in docs/operations.md ("Fault tests").

Points: ``cycle.before-tasks``, ``cycle.after-files`` (tasks done, before the
catalog commit), ``cycle.between-table-commits``, ``cycle.before-group-mirror``,
``dlq.during-writes`` (a task's DLQ producer, after its first record),
``task.mid-batch`` (a task, after it processed a batch),
``replay.after-dlq-writes``, ``replay.after-table-commit``, ``compaction.before-commit`` (a
maintenance compaction wrote a group's new file and has not committed it).
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
    if _hits[name] >= (int(count) if count.isdigit() else 1) and _first_time():
        kill = os.environ.get("ICEFLOE_FAULT_KILL", "job")
        if kill == "executor":
            executor = _ancestor(b"CoarseGrainedExecutorBackend")
            os.kill(executor if executor is not None else os.getpid(), signal.SIGKILL)
        driver = None if kill == "self" else _driver()
        if driver is not None and os.getpgid(driver) == driver:  # the driver leads its own group: the job's
            os.killpg(driver, signal.SIGKILL)
        elif driver is not None:  # never the group of whatever started the driver (a test runner, a shell)
            os.kill(driver, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)


def _first_time() -> bool:
    """Without ``ICEFLOE_FAULT_ONCE``: always. With it (a file path): only for the process that creates it."""
    marker = os.environ.get("ICEFLOE_FAULT_ONCE")
    if not marker:
        return True
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _ancestor(marker: bytes) -> int | None:
    """The pid of the nearest process above this one whose command line holds ``marker``."""
    pid = os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                pid = int(stat.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if marker in cmdline.read():
                    return pid
        except (OSError, ValueError, IndexError):
            return None
    return None


def _driver() -> int | None:
    """The pid of the topmost ``icefloe`` driver process among this process and its ancestors."""
    found, pid = None, os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
            with open(f"/proc/{pid}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if b"connector.cli" in argv or (len(argv) > 1 and argv[1].endswith(b"/icefloe")):
            found = pid
        pid = parent
    return found
