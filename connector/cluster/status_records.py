"""The records of Connect's status topic (``KafkaStatusBackingStore``), read and written as Connect 3.9 does.

- ``status-connector-<name>`` and ``status-task-<name>-<n>``:
  ``{"state", "trace", "worker_id", "generation"}`` (``trace`` null when there is none).
- ``status-topic-<topic>:connector-<name>``:
  ``{"topic": {"name", "connector", "task", "discoverTimestamp"}}``, a topic the connector has read
  (Connect's active topics).

A tombstone deletes. As in Connect, a status from an older generation of the group does not replace
one from a newer generation written by another worker (a worker that lost a connector and has not yet
noticed must not overwrite the status of the worker that runs it now).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field

from connector.cluster.config_records import Record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Status:
    state: str
    trace: str | None
    worker_id: str
    generation: int

    def info(self) -> dict:
        """The REST form: ``{"state", "worker_id", "trace"?}``."""
        shown = {"state": self.state, "worker_id": self.worker_id}
        if self.trace:
            shown["trace"] = self.trace
        return shown


@dataclass
class StatusState:
    connectors: dict[str, Status] = field(default_factory=dict)
    tasks: dict[tuple[str, int], Status] = field(default_factory=dict)
    topics: dict[str, set[str]] = field(default_factory=dict)  # connector -> active topics
    max_generation: int = 0  # the highest generation any worker wrote: a new leader counts on from it

    def apply(self, key: str | None, value: bytes | None) -> None:
        if key is None:
            return
        if key.startswith("status-connector-"):
            self._note(_put(self.connectors, key[len("status-connector-"):], value))
        elif key.startswith("status-task-"):
            name, _, number = key[len("status-task-"):].rpartition("-")
            if name and number.isdigit():
                self._note(_put(self.tasks, (name, int(number)), value))
        elif key.startswith("status-topic-"):
            self._topic(key[len("status-topic-"):], value)
        else:
            log.warning("Status topic: ignoring a record with an unknown key %r", key)

    def _note(self, status: Status | None) -> None:
        if status is not None:
            self.max_generation = max(self.max_generation, status.generation)

    def task_statuses(self, name: str) -> dict[int, Status]:
        return {task: status for (connector, task), status in self.tasks.items() if connector == name}

    def _topic(self, rest: str, value: bytes | None) -> None:
        topic, sep, connector = rest.partition(":connector-")
        if not sep:
            return
        if value is None:
            self.topics.get(connector, set()).discard(topic)
        else:
            self.topics.setdefault(connector, set()).add(topic)


def _put(statuses: dict, key: object, value: bytes | None) -> Status | None:
    """Apply one status (or its deletion); the status read, if any."""
    if value is None:
        statuses.pop(key, None)
        return None
    try:
        body = json.loads(value)
        status = Status(str(body["state"]), body.get("trace"), str(body["worker_id"]), int(body.get("generation", 0)))
    except (ValueError, KeyError, TypeError):
        log.warning("Status topic: ignoring an unreadable status %r for %s", value[:200], key)
        return None
    current = statuses.get(key)
    if current is not None and current.worker_id != status.worker_id and current.generation > status.generation:
        return status  # a stale worker's late write
    statuses[key] = status
    return status


# --- records to write ---------------------------------------------------------------------------


def _dump(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _status_value(state: str, trace: str | None, worker_id: str, generation: int) -> bytes:
    return _dump({"state": state, "trace": trace, "worker_id": worker_id, "generation": generation})


def connector_status_record(name: str, status: Status | None) -> Record:
    key = f"status-connector-{name}"
    return key, None if status is None else _status_value(status.state, status.trace, status.worker_id,
                                                         status.generation)


def task_status_record(name: str, task: int, status: Status | None) -> Record:
    key = f"status-task-{name}-{task}"
    return key, None if status is None else _status_value(status.state, status.trace, status.worker_id,
                                                         status.generation)


def topic_record(name: str, topic: str, *, task: int = 0, deleted: bool = False, now_ms: int | None = None) -> Record:
    key = f"status-topic-{topic}:connector-{name}"
    if deleted:
        return key, None
    stamp = int(time.time() * 1000) if now_ms is None else now_ms
    return key, _dump({"topic": {"name": topic, "connector": name, "task": task, "discoverTimestamp": stamp}})
