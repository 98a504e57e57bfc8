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
  must hold exactly the offsets the cycle's tasks saw when they loaded it
  (:meth:`Fence.tasks_saw`): they skipped the records below those. Where no
  task of a partition loaded it, it must hold nothing beyond where the cycle
  started reading.

Otherwise another writer — a second icefloe job of the same connector, a Java
sink that was not stopped — committed part of what this cycle read, and the
commit is refused with :class:`FencedException`, naming the table, topic,
partition and both positions. Nothing of the refused table is committed; the
job fails, and a rerun resumes from the tables (nothing duplicated, nothing
lost). The check runs on the head each commit attempt loads, and the append
asserts that head (pyiceberg's ``AssertRefSnapshotId``; pyiceberg never
rebuilds it on a newer head: ``connector/iceberg/branches.py``), so a writer
racing between the check and the commit makes the attempt fail and the retry
see it. This is the guarantee Apache's sink gives from 1.11 ("stale offsets").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from pyiceberg.exceptions import NoSuchTableError

from connector.api.errors import ConnectException
from connector.api.record import TopicPartition


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
    # table → partition → every next offset (None: none) the cycle's tasks saw it hold when they loaded it
    seen: dict[str, dict[TopicPartition, set[int | None]]] = field(default_factory=dict)

    def tasks_saw(self, offsets_seen: Iterable[Mapping[str, list[dict[TopicPartition, int | None]]]]) -> None:
        """Add what the cycle's tasks saw (each a ``TaskResult.offsets_seen``)."""
        for per_table in offsets_seen:
            for table_name, views in per_table.items():
                table_seen = self.seen.setdefault(table_name, {})
                for view in views:
                    for tp, offset in view.items():
                        table_seen.setdefault(tp, set()).add(offset)

    def check(self, table_name: str, found_source: Mapping[TopicPartition, int], found_java: Mapping[str, str],
              covered: Iterable[TopicPartition]) -> None:
        note = self.tables.get(table_name)
        seen = self.seen.get(table_name, {})
        moved: list[str] = []
        for tp in sorted(covered):
            found = found_source.get(tp)
            if note is not None:
                expected = note.source.get(tp)
                if found != expected:
                    moved.append(f"topic {tp[0]} partition {tp[1]}: expected {_at(expected)}, found {_at(found)}")
            elif tp in seen:
                moved += [f"topic {tp[0]} partition {tp[1]}: its tasks saw {_at(offset)}, found {_at(found)}"
                          for offset in sorted(seen[tp], key=lambda o: -1 if o is None else o) if offset != found]
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


def _at(offset: int | None) -> str:
    return "no offset" if offset is None else f"next offset {offset}"


def capture(catalog, config, table_names: Iterable[str], start: Mapping[TopicPartition, int],
            loaded: Mapping[str, Any] | None = None) -> Fence:
    """Note every existing table of ``table_names`` as it is now.

    ``loaded``: tables already loaded where ``start`` was read from (None: the table did not exist),
    noted as they were then: the heads the cycle's start positions came from.
    """
    from connector.iceberg.snapshot_offsets import committed_offsets, java_control_properties, java_keys

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
