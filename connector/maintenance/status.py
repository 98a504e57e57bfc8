"""What maintenance did: a round's report, and the state a connector shows through the REST worker
(``GET /connectors/{name}/maintenance``).

A :class:`~connector.maintenance.runner.Maintainer` with a status tells it when
a round starts, which table and step it is on, and what the round did. The
status keeps, per table, the last round that ran a step on it (when, how it
ended, what it rewrote, expired and deleted, its errors), the last compaction
that committed, and totals since the connector started on this worker. It
belongs to the connector, not to one job: a paused and resumed connector
still shows its last round. The REST thread reads while the job thread
writes, so every method holds the lock and :meth:`MaintenanceStatus.as_dict`
answers a copy.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from connector.maintenance.compaction import CompactionReport
from connector.maintenance.expiry import ExpiryReport

SUCCEEDED, FAILED, UNFINISHED = "succeeded", "failed", "unfinished"
_ERROR_CHARS = 1000  # an error's text is shown, not its trace (the worker's log has the trace)


@dataclass(frozen=True)
class StepFailure:
    """A step of a round that failed on one table (the round went on with the next)."""

    table: str
    step: str
    error: str  # the exception's class and message

    @classmethod
    def of(cls, table: str, step: str, exc: BaseException) -> StepFailure:
        return cls(table, step, f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS])


@dataclass
class TableMaintenance:
    """What a round did to one table, and the table's state after it."""

    compaction: CompactionReport | None = None
    expiry: ExpiryReport | None = None
    orphans_deleted: int = 0
    manifests: tuple[int, int] = (0, 0)  # data manifests of the head before and after the manifest rewrite
    data_files: int = 0
    total_file_size: int = 0
    snapshots: int = 0

    @property
    def average_file_size(self) -> float:
        return self.total_file_size / self.data_files if self.data_files else 0.0


@dataclass
class MaintenanceReport:
    tables: dict[str, TableMaintenance] = field(default_factory=dict)
    finished: bool = True  # False: the budget ran out, the next round resumes
    seconds: float = 0.0


def timestamp(seconds: float) -> str:
    """``2025-06-01T12:00:00.123Z``: UTC, milliseconds."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class MaintenanceStatus:
    """One connector's maintenance state, updated by its jobs' maintainers. See the module doc."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock  # wall time, for the timestamps shown
        self._lock = threading.Lock()
        self.enabled: bool | None = None  # None until a job said (its parsed icefloe.maintenance.enabled)
        self._round_started: float | None = None  # set while a round runs
        self._current: tuple[str, str] | None = None  # (table, step) running now
        self._round_tables: set[str] = set()  # tables a step of the running round started on
        self._compaction_started: dict[str, float] = {}  # table → when the running round's compaction began
        self._last_round: dict[str, Any] | None = None
        self._tables: dict[str, dict[str, Any]] = {}

    def attach(self, enabled: bool, tables: Iterable[str]) -> None:
        """A job starts with this maintainer config and these static tables."""
        with self._lock:
            self.enabled = enabled
            for table in tables:
                self._table(table)

    def round_started(self, tables: Iterable[str]) -> None:
        with self._lock:
            self._round_started = self.clock()
            self._round_tables = set()
            self._compaction_started = {}
            for table in tables:
                self._table(table)

    def step_started(self, table: str, step: str) -> None:
        with self._lock:
            self._current = (table, step)
            self._round_tables.add(table)
            if step == "compact":
                self._compaction_started[table] = self.clock()
            self._table(table)

    def round_done(self, report: MaintenanceReport, failures: list[StepFailure], unfinished_table: str | None) -> None:
        """The round ended (``unfinished_table``: where the budget or a stop cut it short, if it was)."""
        with self._lock:
            started = self._round_started if self._round_started is not None else self.clock()
            self._round_started, self._current = None, None
            errors = [{"table": f.table, "step": f.step, "error": f.error} for f in failures]
            outcome = FAILED if failures else SUCCEEDED if report.finished else UNFINISHED
            self._last_round = {"started": timestamp(started), "seconds": round(report.seconds, 3),
                                "outcome": outcome, "errors": errors}
            touched = self._round_tables | set(report.tables) | {f.table for f in failures}
            for table in sorted(touched):
                mine = [f for f in failures if f.table == table]
                done = report.tables.get(table)
                self._table_done(table, started, done, mine, unfinished=table == unfinished_table)

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            running = self._round_started is not None
            tables = {}
            for name, entry in self._tables.items():
                now_on = running and self._current is not None and self._current[0] == name
                tables[name] = {"running": now_on, "step": self._current[1] if now_on and self._current else None,
                                **_copy(entry)}
            return {"enabled": self.enabled, "running": running,
                    "round_started": timestamp(self._round_started) if running and self._round_started else None,
                    "last_round": _copy(self._last_round), "tables": tables}

    # --- per table (the caller holds the lock) --------------------------------------------------

    def _table(self, table: str) -> dict[str, Any]:
        return self._tables.setdefault(table, {"last_round": None, "last_compaction": None, "table": None,
                                               "totals": {"files_rewritten": 0, "bytes_rewritten": 0,
                                                          "snapshots_expired": 0, "files_deleted": 0}})

    def _table_done(self, table: str, started: float, done: TableMaintenance | None,
                    failures: list[StepFailure], *, unfinished: bool) -> None:
        entry = self._table(table)
        compaction = done.compaction if done is not None else None
        expiry = done.expiry if done is not None else None
        rewritten = compaction.files_removed if compaction else 0
        rewritten_bytes = compaction.bytes_rewritten if compaction else 0
        expired = expiry.expired if expiry else 0
        deleted = (expiry.files_deleted if expiry else 0) + \
            (done.orphans_deleted if done is not None else 0)
        outcome = FAILED if failures else UNFINISHED if unfinished else SUCCEEDED
        entry["last_round"] = {
            "started": timestamp(started), "outcome": outcome,
            "errors": [{"step": f.step, "error": f.error} for f in failures],
            "files_rewritten": rewritten, "bytes_rewritten": rewritten_bytes,
            "delete_files_applied": compaction.delete_files_removed if compaction else 0,
            "snapshots_expired": expired, "files_deleted": deleted}
        if compaction is not None and compaction.groups:  # a compaction that committed
            began = self._compaction_started.get(table, started)
            entry["last_compaction"] = {
                "started": timestamp(began), "seconds": round(compaction.seconds, 3),
                "files_rewritten": rewritten, "bytes_rewritten": rewritten_bytes,
                "delete_files_applied": compaction.delete_files_removed, "files_written": compaction.files_added,
                "snapshots": list(compaction.snapshots)}
        if done is not None and done.snapshots:  # described after the round (none: the table is gone)
            entry["table"] = {"data_files": done.data_files,
                              "average_file_size_bytes": round(done.average_file_size),
                              "snapshots": done.snapshots}
        totals = entry["totals"]
        totals["files_rewritten"] += rewritten
        totals["bytes_rewritten"] += rewritten_bytes
        totals["snapshots_expired"] += expired
        totals["files_deleted"] += deleted


def _copy(value: Any) -> Any:
    """A deep copy of the JSON-like state (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
