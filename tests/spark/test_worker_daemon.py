"""Executors fork their Python workers from icefloe's daemon, which has imported a task's modules already
and frozen them out of the cyclic garbage collector, whose young generation it let grow."""

from __future__ import annotations

import gc
import os
import sys

import pytest

from connector.gc_tuning import YOUNG_THRESHOLD

pytestmark = pytest.mark.integration


def _worker_facts(_slot: int) -> tuple[str, bool, int, int]:
    """Runs on an executor: the command line of the process this worker was forked from, whether
    a task's modules were in memory before this function imported anything, how many objects
    the cyclic garbage collector leaves alone (frozen) and how many new ones it lets pile up."""
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
        parent = handle.read().replace(b"\0", b" ").decode()
    imported = "connector.task" in sys.modules and "pyiceberg.table" in sys.modules
    return parent, imported, gc.get_freeze_count(), gc.get_threshold()[0]


def test_python_workers_are_forked_from_the_warm_daemon(spark):
    facts = spark.sparkContext.parallelize(range(2), 2).map(_worker_facts).collect()

    for parent, imported, frozen, young_threshold in facts:
        assert "-m connector.spark.worker_daemon" in parent
        assert imported
        assert frozen > 50_000  # the startup heap: pyarrow, pyiceberg, confluent-kafka, icefloe
        assert young_threshold == YOUNG_THRESHOLD  # not a collection every 700 Kafka messages
