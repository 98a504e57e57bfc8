"""Executors fork their Python workers from icefloe's daemon, which has imported a task's modules already."""

from __future__ import annotations

import os
import sys

import pytest

pytestmark = pytest.mark.integration


def _worker_facts(_slot: int) -> tuple[str, bool]:
    """Runs on an executor: the command line of the process this worker was forked from, and whether
    a task's modules were in memory before this function imported anything."""
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
        parent = handle.read().replace(b"\0", b" ").decode()
    return parent, "connector.channel.worker" in sys.modules and "pyiceberg.table" in sys.modules


def test_python_workers_are_forked_from_the_warm_daemon(spark):
    facts = spark.sparkContext.parallelize(range(2), 2).map(_worker_facts).collect()

    for parent, imported in facts:
        assert "-m connector.spark.worker_daemon" in parent
        assert imported
