"""What every snapshot icefloe commits says about itself, as Iceberg's Java writers say it.

Java's ``SnapshotProducer`` gives each snapshot, besides the operation and the
added/deleted counts and totals, ``changed-partition-count`` (``0`` when no
file changed; an unpartitioned table's files count as one partition) and its
``EnvironmentContext``: ``iceberg-version`` and the engine's ``engine-name``
and ``engine-version`` (the Java Kafka Connect sink writes ``kafka-connect``
and its Kafka version). icefloe writes ``engine-name=icefloe``, its version,
and the Iceberg library it commits with (``PyIceberg <version>``) as
``iceberg-version``. Readers that look at them (audit tools, the Spark and
Flink incremental readers, which look at the operation) then tell icefloe's
snapshots apart and treat them as they treat Java's.

Every snapshot producer icefloe uses passes its summary through
:func:`as_java_writes`: the fast append (:mod:`connector.iceberg.branches`), the
row delta (:mod:`connector.iceberg.row_delta`) and the manifest rewrite
(:mod:`connector.commit.commit`).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata
from typing import Mapping

from pyiceberg.table.snapshots import Operation, Summary, update_snapshot_summaries

ENGINE_NAME = "icefloe"
CHANGED_PARTITION_COUNT = "changed-partition-count"
_FILE_CHANGES = ("added-data-files", "deleted-data-files", "added-delete-files", "removed-delete-files")


@lru_cache(maxsize=1)
def environment() -> dict[str, str]:
    """The writer's identity, as Java's ``EnvironmentContext`` puts it in every summary."""
    return {"engine-name": ENGINE_NAME, "engine-version": _version("icefloe"),
            "iceberg-version": f"PyIceberg {_version('pyiceberg')}"}


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:  # run from a source tree without an install
        return "unknown"


def as_java_writes(summary: Summary) -> Summary:
    """``summary`` with the fields Java writes that pyiceberg leaves out (see the module)."""
    if CHANGED_PARTITION_COUNT not in summary.additional_properties:
        # pyiceberg counts partitions only for partitioned files: absent with files changed means
        # they were all unpartitioned, which Java counts as one partition
        changed = any(int(summary.additional_properties.get(key, "0")) > 0 for key in _FILE_CHANGES)
        summary[CHANGED_PARTITION_COUNT] = "1" if changed else "0"
    for key, value in environment().items():
        summary.additional_properties.setdefault(key, value)
    return summary


def with_totals(operation: Operation, properties: Mapping[str, str], previous: Summary | None) -> Summary:
    """A summary of ``operation`` with ``properties`` and the totals carried on from ``previous``.

    pyiceberg computes totals for append, overwrite and delete only; a ``replace`` (a rewrite)
    totals the same way (its added and deleted counts cancel out, but for deleted rows it drops).
    """
    counted = update_snapshot_summaries(Summary(operation=Operation.OVERWRITE, **properties), previous)
    return as_java_writes(Summary(operation=operation, **counted.additional_properties))
