"""Dynamic routing to a table that does not exist and may not be created: the records are skipped.

As the Java sinks do (their ``NoOpWriter``), with ``iceberg.tables.dynamic-enabled``
and without ``auto-create-enabled`` a record whose route names a missing
table is dropped, its offset still counted as processed. Each task counts the
skipped records per table and logs them: at the first one, then at most once a
minute per table, and a summary when the task closes.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)

LOG_EVERY_SECONDS = 60.0


class MissingTables:
    """Skipped records per missing table, for one task."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self.skipped: dict[str, int] = {}
        self._logged: dict[str, tuple[float, int]] = {}  # table → (when, count at that time)

    def skip(self, table_name: str, records: int) -> None:
        self.skipped[table_name] = self.skipped.get(table_name, 0) + records
        now = time.monotonic()
        last = self._logged.get(table_name)
        if last is None or now - last[0] >= LOG_EVERY_SECONDS:
            log.warning("Task %s: %d record(s) routed to table %s skipped so far: the table does not exist and "
                        "iceberg.tables.auto-create-enabled is false", self.task_id, self.skipped[table_name],
                        table_name)
            self._logged[table_name] = (now, self.skipped[table_name])

    def __contains__(self, table_name: str) -> bool:
        return table_name in self.skipped

    def close(self) -> None:
        for table_name, count in sorted(self.skipped.items()):
            if self._logged.get(table_name, (0.0, -1))[1] != count:
                log.warning("Task %s: %d record(s) routed to table %s skipped: the table does not exist",
                            self.task_id, count, table_name)
