"""Source offsets kept in Iceberg snapshot summaries: the table is the source of truth for progress.

Each commit writes, per source topic, the property

    kafka.connect.offsets.<topic>.<group-id> = {"<partition>": <next offset>, ...}

(the key shape and JSON value of the Iceberg Kafka Connect sink's offset
properties), plus ``kafka.connect.commit-id`` and, when every covered partition
had timestamps, ``kafka.connect.valid-through-ts``. Maintenance snapshots
(compaction, expiry) carry no offsets, so readers walk back through the
snapshot ancestry to the newest snapshot that has them.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Iterator, Mapping

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot, ancestors_of

from connector.kafka.offsets import TopicPartition

OFFSETS_PREFIX = "kafka.connect.offsets."
COMMIT_ID = "kafka.connect.commit-id"
VALID_THROUGH_TS = "kafka.connect.valid-through-ts"
# Written by an offsets reset (the REST worker's DELETE .../offsets) on a snapshot that keeps no
# offsets for the group: readers stop there instead of walking back to older offsets.
OFFSETS_RESET_PREFIX = "icefloe.offsets-reset."



def offsets_key(topic: str, group_id: str) -> str:
    return f"{OFFSETS_PREFIX}{topic}.{group_id}"


def offsets_reset_key(group_id: str) -> str:
    return f"{OFFSETS_RESET_PREFIX}{group_id}"


def branch_head(table: Table, branch: str | None = None) -> Snapshot | None:
    """The newest snapshot of ``branch`` (``main`` when None); None for a table without snapshots."""
    return table.current_snapshot() if branch in (None, "main") else table.snapshot_by_name(branch)


def summaries(table: Table, branch: str | None = None) -> Iterator[dict[str, str]]:
    """The snapshot summaries of ``branch``, newest first, through the snapshot ancestry."""
    for snapshot in ancestors_of(branch_head(table, branch), table.metadata):
        yield snapshot.summary.additional_properties if snapshot.summary else {}


def committed_offsets(table: Table, group_id: str, branch: str | None = None) -> dict[TopicPartition, int]:
    """Next offsets recorded by the newest snapshot (on ``branch``) that carries any for ``group_id``."""
    suffix = "." + group_id
    for summary in summaries(table, branch):
        found = {
            key[len(OFFSETS_PREFIX):-len(suffix)]: value
            for key, value in summary.items()
            if key.startswith(OFFSETS_PREFIX) and key.endswith(suffix)
        }
        if found:
            return _decode(found)
        if offsets_reset_key(group_id) in summary:
            return {}
    return {}


def _decode(by_topic: Mapping[str, str]) -> dict[TopicPartition, int]:
    offsets: dict[TopicPartition, int] = {}
    for topic, text in by_topic.items():
        for partition, offset in json.loads(text).items():
            offsets[(topic, int(partition))] = int(offset)
    return offsets


def summary_properties(
    offsets: Mapping[TopicPartition, int],
    group_id: str,
    commit_id: str,
    valid_through_ms: int | None,
) -> dict[str, str]:
    """Snapshot summary properties for a commit covering ``offsets`` (next offsets)."""
    by_topic: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        by_topic.setdefault(topic, {})[str(partition)] = offset
    props = {offsets_key(topic, group_id): json.dumps(parts, separators=(",", ":"))
             for topic, parts in by_topic.items()}
    props[COMMIT_ID] = commit_id
    if valid_through_ms is not None:
        props[VALID_THROUGH_TS] = format_valid_through(valid_through_ms)
    return props


def format_valid_through(epoch_ms: int) -> str:
    """ISO-8601 UTC like Java's ``OffsetDateTime.toString()`` (e.g. ``2023-05-18T07:14:21.123Z``)."""
    instant = dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.timezone.utc)
    text = instant.strftime("%Y-%m-%dT%H:%M:%S")
    millis = epoch_ms % 1000
    return f"{text}.{millis:03d}Z" if millis else f"{text}Z"
