"""Which Schema Registry schema each decoded value was written with.

When the value converter can tell which registry schema a value was written
with (``schema_id_of``: the Confluent Avro, JSON Schema and Protobuf
converters), the task's decoder records it here, outside the ``SinkRecord``
(whose fields stay Connect's). One :class:`RegistrySchemaIds` belongs to one
task pipeline and travels explicitly to what reads it:

* by the record's Kafka coordinates (:meth:`RegistrySchemaIds.of_record`) —
  the id of any record the task decoded, whatever SMTs did to it since;
  errors use it to name the id of a failing record;
* by the Connect value schema (:meth:`RegistrySchemaIds.of_schema`) — these
  converters return one cached Connect schema object per registry schema id,
  so it tells which (topic, schema id) produced a schema that reaches the sink
  unchanged (an SMT that rewrites the value schema makes a new one, unknown
  here); schema evolution records those ids on the table
  (docs/schema-evolution.md).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

from connector.api.lru import LRUCache
from connector.api.record import SinkRecord

if TYPE_CHECKING:
    from connector.api.schema import Schema


class _Runs:
    """One partition's schema ids as runs: ``starts[i]`` is the first offset written with ``ids[i]``."""

    __slots__ = ("starts", "ids", "last")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ids: list[int | None] = []
        self.last = -1


class RegistrySchemaIds:
    """Which Schema Registry schema the values decoded in this process were written with.

    Per partition the ids are kept as runs of offsets (a new run only where the
    id changes), so memory follows the number of schema switches, not records.
    Re-reading a partition from an earlier offset (a re-run after a schema
    change) replaces what was recorded from there on.
    """

    MAX_RUNS = 10_000     # per partition; the oldest half is dropped beyond this
    MAX_SCHEMAS = 1_000   # Connect schemas remembered (least recently seen dropped)

    def __init__(self) -> None:
        self._runs: dict[tuple[str, int], _Runs] = {}
        self._schemas: LRUCache[Schema, tuple[str, int]] = LRUCache(self.MAX_SCHEMAS)
        self._last_schema: Schema | None = None

    def record(self, topic: str, partition: int, offset: int, schema_id: int | None,
               schema: "Schema | None" = None) -> None:
        """The value at ``topic``/``partition``/``offset`` was written with ``schema_id`` and decoded to ``schema``."""
        runs = self._runs.get((topic, partition))
        if runs is None:
            runs = self._runs[(topic, partition)] = _Runs()
        if offset <= runs.last:  # read again from an earlier offset
            while runs.starts and runs.starts[-1] >= offset:
                runs.starts.pop()
                runs.ids.pop()
        if not runs.ids or runs.ids[-1] != schema_id:
            runs.starts.append(offset)
            runs.ids.append(schema_id)
            if len(runs.starts) > self.MAX_RUNS:
                del runs.starts[: self.MAX_RUNS // 2], runs.ids[: self.MAX_RUNS // 2]
        runs.last = offset
        if schema is not None and schema_id is not None and schema is not self._last_schema:
            self._last_schema = schema
            self._schemas.put(schema, (topic, schema_id))

    def get(self, topic: str | None, partition: int | None, offset: int | None) -> int | None:
        """The schema id recorded for a value, or None (not recorded, null, or not registry-framed)."""
        runs = self._runs.get((topic, partition))  # type: ignore[arg-type]
        if runs is None or offset is None or offset > runs.last:
            return None
        index = bisect.bisect_right(runs.starts, offset) - 1
        return runs.ids[index] if index >= 0 else None

    def of_record(self, record: SinkRecord) -> int | None:
        """The value schema id of a decoded record (by its original coordinates, so SMTs don't matter)."""
        return self.get(record.original_topic, record.original_kafka_partition, record.original_kafka_offset)

    def of_schema(self, schema: "Schema | None") -> tuple[str, int] | None:
        """(topic, schema id) of a Connect value schema a registry converter returned, else None."""
        if schema is None:
            return None
        return self._schemas.get(schema)

    def clear(self) -> None:
        self._runs.clear()
        self._schemas.clear()
        self._last_schema = None
