"""The Python daemon of icefloe's executors (``spark.python.daemon.module``): PySpark's own, warmed.

Spark starts one daemon per executor and forks a Python worker from it for
each task slot. PySpark's daemon imports next to nothing, so every forked
worker then imports pyspark's worker (from ``pyspark.zip``, compiled from
source each time, since zip imports cache no bytecode) and, on its first
task, pyarrow, confluent-kafka, pyiceberg and icefloe: 1.5 to 3 s of CPU per
worker, paid again by each one. Imported here once, before the daemon
forks, they come to every worker for free (shared copy-on-write), so a cold
executor's workers start at once and share those pages.

Only imports happen before the fork: no thread pool, consumer or file is
opened here (a forked child must not inherit running threads). The imported
objects are then frozen out of the cyclic garbage collector
(:func:`connector.gc_tuning.freeze_startup_objects`).
"""

from __future__ import annotations

import pyspark.worker  # noqa: F401 - the module every forked worker runs
from pyspark.daemon import manager

import connector.task  # noqa: F401 - a task's modules, imported before the fork
from connector.gc_tuning import freeze_startup_objects

if __name__ == "__main__":
    freeze_startup_objects()
    manager()
