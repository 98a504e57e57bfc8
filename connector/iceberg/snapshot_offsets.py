"""Source offsets kept in Iceberg snapshot summaries: the table is the source of truth for progress.

Each commit writes, per source topic, the property

    kafka.connect.offsets.<topic>.<group-id> = {"<partition>": <next offset>, ...}

(the key shape and JSON value of the Iceberg Kafka Connect sink's offset
properties), plus ``kafka.connect.commit-id`` and, when every covered partition
had timestamps, ``kafka.connect.valid-through-ts``. Maintenance snapshots
(compaction, expiry) carry no offsets, so readers walk back through the
snapshot ancestry to the newest snapshot that has them.

The Java sinks write the same key shape for a different thing:
``kafka.connect.offsets.<control-topic>.<group>`` holds the next offsets of
the *control topic* their coordinator has committed to the table (Apache:
group ``connect-<name>``; Tabular: ``cg-control-<name>``). :class:`JavaKeys`
names those keys. They are never read as source offsets: a snapshot whose only
offsets are such a key is a Java sink's commit, after which the table holds no
icefloe source offsets (so :func:`committed_offsets` stops there and answers
empty, and the takeover decides where to resume). icefloe carries the newest
value of each such key into its own snapshots unchanged, so a rollback to the
Java sink finds its control-topic position even after old snapshots expire.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Mapping

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot, ancestors_of

from connector.api.record import TopicPartition

if TYPE_CHECKING:
    from connector.config.sink_config import SinkConfig

OFFSETS_PREFIX = "kafka.connect.offsets."
COMMIT_ID = "kafka.connect.commit-id"
VALID_THROUGH_TS = "kafka.connect.valid-through-ts"
# Written by an offsets reset (the REST worker's DELETE .../offsets) on a snapshot that keeps no
# offsets for the group: readers stop there instead of walking back to older offsets.
OFFSETS_RESET_PREFIX = "icefloe.offsets-reset."
DEFAULT_CONTROL_TOPIC = "control-iceberg"


@dataclass(frozen=True)
class JavaKeys:
    """The snapshot keys the Java sinks of one connector write: control-topic offsets, per group."""

    control_topic: str
    groups: tuple[str, ...]

    def keys(self) -> frozenset[str]:
        return frozenset(offsets_key(self.control_topic, group) for group in self.groups)


def tabular_control_group(config: "SinkConfig") -> str:
    """Tabular's source-offsets group (and its snapshot-key suffix): ``iceberg.control.group-id``."""
    return config.iceberg.control_group_id or f"cg-control-{config.name}"


def java_keys(config: "SinkConfig") -> JavaKeys:
    """The control-topic keys the Apache (``connect-<name>``) and Tabular sinks of ``config`` write."""
    groups = tuple(dict.fromkeys((config.group_id, tabular_control_group(config))))
    return JavaKeys(config.iceberg.control_topic, groups)


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


def committed_offsets(table: Table, group_id: str, branch: str | None = None,
                      java: JavaKeys | None = None) -> dict[TopicPartition, int]:
    """Next source offsets recorded by the newest snapshot (on ``branch``) that carries any for ``group_id``.

    A snapshot carrying only a Java sink's control-topic key (``java``; by default
    the default control topic for ``group_id``) ends the walk with no offsets:
    the Java sink committed after the last icefloe commit.
    """
    control = (java or JavaKeys(DEFAULT_CONTROL_TOPIC, (group_id,))).keys()
    suffix = "." + group_id
    for summary in summaries(table, branch):
        found = {
            key[len(OFFSETS_PREFIX):-len(suffix)]: value
            for key, value in summary.items()
            if key.startswith(OFFSETS_PREFIX) and key.endswith(suffix) and key not in control
        }
        if found:
            return _decode(found)
        if offsets_reset_key(group_id) in summary or any(key in summary for key in control):
            return {}
    return {}


def java_snapshot_is_newest(table: Table, group_id: str, java: JavaKeys, branch: str | None = None) -> bool:
    """Whether the newest snapshot with offsets for the connector is a Java sink's (control-topic key only)."""
    control = java.keys()
    suffix = "." + group_id
    for summary in summaries(table, branch):
        if any(key.startswith(OFFSETS_PREFIX) and key.endswith(suffix) and key not in control for key in summary):
            return False
        if offsets_reset_key(group_id) in summary:
            return False
        if any(key in summary for key in control):
            return True
    return False


def java_control_properties(table: Table, java: JavaKeys, branch: str | None = None) -> dict[str, str]:
    """Each Java control-topic key's newest value on ``branch`` (what the Java coordinator would read)."""
    wanted = set(java.keys())
    found: dict[str, str] = {}
    for summary in summaries(table, branch):
        for key in list(wanted):
            if key in summary:
                found[key] = summary[key]
                wanted.discard(key)
        if not wanted:
            break
    return found


def control_offsets(table: Table, java: JavaKeys, branch: str | None = None) -> dict[str, dict[int, int]]:
    """Per Java group, the control-topic next offsets per control partition committed to ``table``."""
    out: dict[str, dict[int, int]] = {}
    for key, text in java_control_properties(table, java, branch).items():
        group = key[len(offsets_key(java.control_topic, "")):]
        out[group] = {int(p): int(o) for p, o in json.loads(text).items()}
    return out


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
