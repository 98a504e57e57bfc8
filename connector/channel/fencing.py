"""The fence: a commit lands only if the table's offsets are still those its cycle started from.

At the start of a cycle the coordinator notes, for every table it can name
(the static tables, and the tables it committed to before), the table's source
offsets and the Java sinks' control-topic keys (:func:`capture`), from the
very heads the cycle's start positions were read from (no second load: a
writer committing in between is caught too). When the
cycle commits a table, :meth:`Fence.check` compares what the table holds now
with that note, for the partitions the cycle covers:

* a noted table must hold exactly the noted offsets and Java keys;
* a table not noted (created during the cycle, or a dynamic table first met)
  must hold nothing beyond where the cycle started reading — unless the
  snapshot that recorded its offsets is older than the cycle (the tasks, which
  open a table after the cycle starts, saw those offsets and skipped what they
  cover).

Otherwise another writer — a second icefloe job of the same connector, a Java
sink that was not stopped — committed part of what this cycle read, and the
commit is refused with :class:`FencedException`, naming the table, topic,
partition and both positions. Nothing of the refused table is committed; the
job fails, and a rerun resumes from the tables (nothing duplicated, nothing
lost). The check runs on the head each commit attempt loads, and the append
asserts that head (pyiceberg's ``AssertRefSnapshotId``), so a writer racing
between the check and the commit makes the attempt fail and the retry see it.
This is the guarantee Apache's sink gives from 1.11 ("stale offsets").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from pyiceberg.exceptions import NoSuchTableError

from connector.api.errors import ConnectException
from connector.kafka.offsets import TopicPartition


class FencedException(ConnectException):
    """Another writer moved a table's offsets during this cycle: the commit was refused."""


@dataclass(frozen=True)
class TableNote:
    source: dict[TopicPartition, int]
    java: dict[str, str]  # Java control-topic key → value


@dataclass
class Fence:
    """What each table held when the cycle started, and where the cycle started reading."""

    start: dict[TopicPartition, int]
    tables: dict[str, TableNote] = field(default_factory=dict)
    started_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    def check(self, table_name: str, found_source: Mapping[TopicPartition, int], found_java: Mapping[str, str],
              covered: Iterable[TopicPartition], offsets_written_ms: int | None = None) -> None:
        """``offsets_written_ms``: when the snapshot that recorded ``found_source`` was committed."""
        note = self.tables.get(table_name)
        if note is None and offsets_written_ms is not None and offsets_written_ms < self.started_ms:
            note = TableNote(dict(found_source), dict(found_java))  # there before the cycle: seen by its tasks
        moved: list[str] = []
        for tp in sorted(covered):
            found = found_source.get(tp)
            if note is not None:
                expected = note.source.get(tp)
                if found != expected:
                    moved.append(f"topic {tp[0]} partition {tp[1]}: expected {_at(expected)}, found {_at(found)}")
            elif found is not None and tp in self.start and found > self.start[tp]:
                moved.append(f"topic {tp[0]} partition {tp[1]}: expected at most {self.start[tp]}, found {found}")
        if note is not None:
            for key in sorted(set(note.java) | set(found_java)):
                if note.java.get(key) != found_java.get(key):
                    moved.append(f"Java sink key {key}: expected {note.java.get(key) or 'none'}, "
                                 f"found {found_java.get(key) or 'none'}")
        if moved:
            raise FencedException(
                f"Commit to {table_name} refused: another writer moved its offsets since this cycle started "
                f"({'; '.join(moved)}). Another job of this connector, or a Kafka Connect sink that was not "
                f"stopped, is writing to the table; stop it. Nothing of this cycle was committed to "
                f"{table_name}; the next run resumes from the table's offsets.")


def offsets_written_ms(table, group_id: str, branch: str | None) -> int | None:
    """When the newest snapshot (on ``branch``) carrying offsets of ``group_id`` was committed."""
    from pyiceberg.table.snapshots import ancestors_of

    from connector.channel.offsets import OFFSETS_PREFIX, branch_head

    suffix = "." + group_id
    for snapshot in ancestors_of(branch_head(table, branch), table.metadata):
        summary = snapshot.summary.additional_properties if snapshot.summary else {}
        if any(k.startswith(OFFSETS_PREFIX) and k.endswith(suffix) for k in summary):
            return snapshot.timestamp_ms
    return None


def _at(offset: int | None) -> str:
    return "no offset" if offset is None else f"next offset {offset}"


def capture(catalog, config, table_names: Iterable[str], start: Mapping[TopicPartition, int],
            loaded: Mapping[str, Any] | None = None) -> Fence:
    """Note every existing table of ``table_names`` as it is now.

    ``loaded``: tables already loaded where ``start`` was read from (None: the table did not exist),
    noted as they were then: the heads the cycle's start positions came from.
    """
    from connector.channel.offsets import committed_offsets, java_control_properties, java_keys

    java = java_keys(config)
    fence = Fence(start=dict(start))
    loaded = loaded or {}
    for table_name in sorted(set(table_names)):
        table = loaded[table_name] if table_name in loaded else _load(catalog, table_name)
        if table is None:
            continue
        branch = config.iceberg.table_config(table_name).commit_branch
        fence.tables[table_name] = TableNote(committed_offsets(table, config.group_id, branch, java),
                                             java_control_properties(table, java, branch))
    return fence


def _load(catalog, table_name: str) -> Any:
    """The table, None when it does not exist."""
    try:
        return catalog.load_table(table_name)
    except NoSuchTableError:
        return None
