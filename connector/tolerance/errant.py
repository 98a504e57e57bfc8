"""Connect's per-record error handling: ``errors.tolerance``, ``errors.log.*``, errant records for the DLQ.

Mirrors Kafka Connect's ``RetryWithToleranceOperator`` + ``LogReporter`` for a
sink task (``RT/errors/``):

* the stages a record can fail in, by Connect's ``Stage`` names:
  ``KEY_CONVERTER``, ``VALUE_CONVERTER``, ``HEADER_CONVERTER``,
  ``TRANSFORMATION`` (an SMT or its predicate) and ``TASK_PUT`` (the
  record-to-Iceberg conversion of one record: a value that does not fit its
  column, an incompatible schema change; what the Iceberg sink would report
  through Connect's ``ErrantRecordReporter``, with the executing class
  ``org.apache.kafka.connect.sink.SinkTask``);
* with ``errors.tolerance=none`` the first failure fails the task (the code
  that raised it re-raises it unchanged, naming topic, partition and offset);
  with ``all`` the record is skipped and reported: logged when
  ``errors.log.enable`` (Connect's text), and kept as an :class:`ErrantRecord`
  with the **original raw** key, value, headers and timestamp for the
  dead-letter queue (``connector.tolerance.dead_letters``).

Errors that are not about one record (catalog, broker, a bug in a batch form)
are never handled here: they fail the task as before.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar

from connector.api.errors import ConnectException, DataException, RetriableException
from connector.tolerance.backoff import backoff_ms

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger(__name__)

KEY_CONVERTER = "KEY_CONVERTER"
VALUE_CONVERTER = "VALUE_CONVERTER"
HEADER_CONVERTER = "HEADER_CONVERTER"
TRANSFORMATION = "TRANSFORMATION"
TASK_PUT = "TASK_PUT"
#: The executing class Connect's ``WorkerErrantRecordReporter`` names for errors reported from ``put``.
SINK_TASK_CLASS = "org.apache.kafka.connect.sink.SinkTask"

_JAVA_EXCEPTIONS: dict[type, str] = {
    DataException: "org.apache.kafka.connect.errors.DataException",
    RetriableException: "org.apache.kafka.connect.errors.RetriableException",
    ConnectException: "org.apache.kafka.connect.errors.ConnectException",
}
_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}

T = TypeVar("T")


def mark(exc: BaseException, stage: str, executing_class: str, error: BaseException | None = None) -> BaseException:
    """Tag ``exc`` as one record's failure in ``stage`` (returns ``exc``).

    ``exc`` names the record (what the task fails with under ``errors.tolerance=none``);
    ``error`` is what the executing class raised, which Connect logs and puts in the DLQ headers.
    """
    exc.errant_stage = stage  # type: ignore[attr-defined]
    exc.errant_class = executing_class  # type: ignore[attr-defined]
    exc.errant_error = error if error is not None else exc  # type: ignore[attr-defined]
    return exc


def caused_by_a_service(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it wraps) is not about the record but about a service:
    a ``RetriableException`` or the Schema Registry unreachable. Such failures are never tolerated."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, RetriableException) or type(current).__name__ == "SchemaRegistryUnavailableException":
            return True
        current = current.__cause__ or current.__context__
    return False


def stage_of(exc: BaseException) -> str | None:
    """The stage a tagged record failure happened in, None for any other exception."""
    return getattr(exc, "errant_stage", None)


def java_exception_name(exc: BaseException) -> str:
    """The Java FQCN of the Connect exception ``exc`` mirrors, else its Python qualified name."""
    for cls in type(exc).__mro__:
        if cls in _JAVA_EXCEPTIONS:
            return _JAVA_EXCEPTIONS[cls]
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def java_class_name(instance: Any, registry: Mapping[str, str], configured: str | None = None) -> str:
    """The Connect class name of a converter/SMT instance: its Java name when it implements one."""
    if configured and "." in configured and ":" not in configured:
        return configured
    target = f"{type(instance).__module__}:{type(instance).__qualname__}"
    for java_name, python_name in registry.items():
        if python_name == target:
            return java_name
    return configured or target


def stacktrace(exc: BaseException) -> str:
    """``printStackTrace``-like text: ``<class>: <message>``, a ``\tat <function>(<file>:<line>)``
    line per frame (innermost first, as in Java), then ``Caused by: ...`` for the causes."""
    message = str(exc)
    lines = [java_exception_name(exc) + (f": {message}" if message else "")]
    frames = list(traceback.walk_tb(exc.__traceback__))
    for frame, lineno in reversed(frames):
        code = frame.f_code
        lines.append(f"\tat {frame.f_globals.get('__name__', '?')}.{code.co_name}"
                     f"({code.co_filename.rsplit('/', 1)[-1]}:{lineno})")
    text = "\n".join(lines)
    cause = exc.__cause__
    if cause is not None and cause is not exc:
        text += "\nCaused by: " + stacktrace(cause)
    return text


@dataclass(frozen=True)
class RetryPolicy:
    """``errors.retry.timeout`` / ``errors.retry.delay.max.ms`` for one record's converter or SMT stage.

    As ``RetryWithToleranceOperator.execAndRetry``: a service's failure (:func:`caused_by_a_service`) is retried
    with exponential backoff from 300 ms (with jitter, capped by ``max_delay_ms`` and by the time
    left) until ``timeout_ms`` has passed (0: no retry, -1: forever); then it is raised.
    """

    timeout_ms: int = 0
    max_delay_ms: int = 60_000

    def run(self, operation: Callable[[], T], sleep: Callable[[float], None] = time.sleep) -> T:
        if self.timeout_ms == 0:
            return operation()
        began = time.monotonic()
        attempt = 0
        while True:
            try:
                return operation()
            except Exception as exc:
                if not caused_by_a_service(exc):
                    raise
                attempt += 1
                elapsed_ms = (time.monotonic() - began) * 1000
                if self.timeout_ms >= 0 and elapsed_ms >= self.timeout_ms:
                    raise
                delay = backoff_ms(attempt, self.max_delay_ms)
                if self.timeout_ms >= 0:
                    delay = min(delay, self.timeout_ms - elapsed_ms)
                log.warning("Retrying after a transient error (attempt %d, next in %.0f ms): %s", attempt,
                            delay, exc)
                sleep(max(delay, 0) / 1000)

    @staticmethod
    def of(props: Mapping[str, Any]) -> "RetryPolicy":
        return RetryPolicy(int(props.get("errors.retry.timeout", 0)),
                           int(props.get("errors.retry.delay.max.ms", 60_000)))


@dataclass(frozen=True)
class ErrorSettings:
    """The ``errors.*`` keys of a sink connector."""

    tolerance_all: bool = False
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str = ""
    dlq_replication_factor: int = 3
    dlq_context_headers: bool = False

    @staticmethod
    def of(props: Mapping[str, Any]) -> "ErrorSettings":
        def flag(key: str) -> bool:
            return str(props.get(key, "false")).strip().lower() == "true"

        return ErrorSettings(
            tolerance_all=str(props.get("errors.tolerance", "none")).strip().lower() == "all",
            log_enable=flag("errors.log.enable"),
            log_include_messages=flag("errors.log.include.messages"),
            dlq_topic=str(props.get("errors.deadletterqueue.topic.name", "")).strip(),
            dlq_replication_factor=int(props.get("errors.deadletterqueue.topic.replication.factor", 3)),
            dlq_context_headers=flag("errors.deadletterqueue.context.headers.enable"),
        )


@dataclass(frozen=True)
class ErrantRecord:
    """One skipped record: its original raw form and the failure (what the DLQ record is made of)."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    stage: str
    executing_class: str
    exception_class: str
    message: str | None
    stacktrace: str

    @property
    def coordinates(self) -> tuple[str, int, int]:
        return self.topic, self.partition, self.offset


def task_number(task_id: str) -> int:
    """Connect's task number of an icefloe task id (``<name>-<cycle>-<round>-<n>``); 0 when it has none."""
    tail = task_id.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


@dataclass
class ErrorHandler:
    """Tolerates or fails record errors for one task; collects the errant records of the batch in hand.

    The pipeline calls :meth:`begin` per raw batch, :meth:`fail` for each record
    error (which raises it again under ``errors.tolerance=none``), and the task
    takes the batch's errant records with :meth:`take` once the batch is kept
    (a batch that must be processed again after a schema change drops them:
    :meth:`discard`).
    """

    settings: ErrorSettings
    connector_name: str
    task_id: str
    staged: list[tuple[tuple[str, int, int], str, str, str, str | None, str]] = field(default_factory=list)
    failed: set[tuple[str, int, int]] = field(default_factory=set)
    _batch: Any = None
    _rows: dict[tuple[str, int, int], int] | None = None

    @property
    def tolerant(self) -> bool:
        return self.settings.tolerance_all

    def begin(self, batch: "pa.RecordBatch") -> None:
        self._batch, self._rows = batch, None
        self.staged, self.failed = [], set()

    def fail(self, exc: BaseException, coordinates: tuple[str, int, int]) -> None:
        """Handle one record's failure; re-raises ``exc`` unless errors are tolerated."""
        if not self.tolerant or stage_of(exc) is None or caused_by_a_service(exc):
            raise exc
        if coordinates in self.failed:
            return
        error: BaseException = getattr(exc, "errant_error", exc)
        stage, executing_class = exc.errant_stage, exc.errant_class  # type: ignore[attr-defined]
        if self.settings.log_enable:
            log.error(self.log_message(stage, executing_class, self._row(coordinates)), exc_info=error)
        self.failed.add(coordinates)
        message = str(error)
        self.staged.append((
            coordinates, stage, executing_class, java_exception_name(error),
            message if message or not isinstance(error, ConnectException) else None,
            stacktrace(error) if self.settings.dlq_context_headers else "",
        ))

    def take(self) -> list[ErrantRecord]:
        """The batch's errant records, in offset order (as Connect meets them), and forget them.

        Their raw key, value, headers and timestamp are taken from the batch in hand at once.
        """
        staged, self.staged, self.failed = sorted(self.staged), [], set()
        if not staged:
            return []
        rows = self._batch.take(_int64_array(self._positions([entry[0] for entry in staged]))).to_pylist()
        return [
            ErrantRecord(
                topic=row["topic"], partition=row["partition"], offset=row["offset"], timestamp=row["timestamp"],
                timestamp_type=row["timestamp_type"], key=row["key"], value=row["value"],
                headers=tuple((h["key"], h["value"]) for h in row["headers"] or ()),
                stage=stage, executing_class=executing_class, exception_class=exception_class, message=message,
                stacktrace=trace,
            )
            for row, (_, stage, executing_class, exception_class, message, trace) in zip(rows, staged)
        ]

    def discard(self) -> None:
        self.staged, self.failed = [], set()

    def connector_task_id(self) -> str:
        return f"{self.connector_name}-{task_number(self.task_id)}"

    def log_message(self, stage: str, executing_class: str, row: Mapping[str, Any]) -> str:
        """``LogReporter``'s text (``ProcessingContext.toString(includeMessage)``)."""
        text = (f"Error encountered in task {self.connector_task_id()}. Executing stage '{stage}' "
                f"with class '{executing_class}'")
        if self.settings.log_include_messages:
            text += f", where consumed record is {{topic='{row['topic']}', partition={row['partition']}, " \
                    f"offset={row['offset']}"
            kind = _TIMESTAMP_TYPES.get(row["timestamp_type"])
            if kind is not None:
                text += f", timestamp={row['timestamp']}, timestampType={kind}"
            text += "}"
        return text + "."

    def _positions(self, coordinates: list[tuple[str, int, int]]) -> list[int]:
        """Batch rows of ``coordinates``: by binary search in a one-partition batch in offset order."""
        import numpy as np

        batch = self._batch
        if batch is not None and self._rows is None and batch.num_rows:
            offsets = batch.column("offset").to_numpy(zero_copy_only=False)
            first = (batch.column("topic")[0].as_py(), batch.column("partition")[0].as_py())
            if all((t, p) == first for t, p, _ in coordinates) and \
                    batch.column("topic").unique().to_pylist() == [first[0]] and \
                    batch.column("partition").unique().to_pylist() == [first[1]] and \
                    bool(np.all(np.diff(offsets) > 0)):
                wanted = np.array([o for _, _, o in coordinates], dtype=np.int64)
                return np.searchsorted(offsets, wanted).tolist()
        self._index_rows()
        assert self._rows is not None
        return [self._rows[c] for c in coordinates]

    def _index_rows(self) -> None:
        batch = self._batch
        if batch is None:
            raise ConnectException("No batch in hand for the failed records")
        if self._rows is None:
            columns = zip(*(batch.column(n).to_pylist() for n in ("topic", "partition", "offset")))
            self._rows = {(t, p, o): i for i, (t, p, o) in enumerate(columns)}

    def _row(self, coordinates: tuple[str, int, int]) -> dict[str, Any]:
        self._index_rows()
        assert self._rows is not None
        return self._batch.slice(self._rows[coordinates], 1).to_pylist()[0]


def _int64_array(values: list[int]) -> Any:
    import pyarrow as pa

    return pa.array(values, pa.int64())

