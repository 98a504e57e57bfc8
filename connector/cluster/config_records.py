"""The records of Connect's config topic (``KafkaConfigBackingStore``), read and written as Connect 3.9 does.

Keys and JSON values:

- ``connector-<name>``: ``{"properties": {...}}``; a tombstone deletes the connector.
- ``target-state-<name>``: ``{"state": "STARTED"|"PAUSED", "state.v2": "STARTED"|"PAUSED"|"STOPPED"}``
  (``state`` stays readable by workers older than STOPPED, which read PAUSED); none means STARTED.
- ``task-<name>-<n>``: ``{"properties": {...}}``, applied only when ``commit-<name>`` (``{"tasks": N}``)
  follows, so a reader never sees half of a new set of task configs.
- ``restart-connector-<name>``: ``{"include-tasks": bool, "only-failed": bool}``.
- ``session-key`` and ``task-count-record-<name>``: kept by Connect for request signing and exactly-once
  sources; read and ignored here (neither applies to a sink worker that does not sign its requests).

:class:`ConfigState` folds records into the current state; the ``*_record`` functions make the
records to write. Both sides stay byte-for-byte comparable with tests/cluster's Connect fixtures.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

STARTED, PAUSED, STOPPED = "STARTED", "PAUSED", "STOPPED"  # Connect's TargetState names
_REST_STATE = {STARTED: "RUNNING", PAUSED: "PAUSED", STOPPED: "STOPPED"}
_TARGET_OF_REST = {rest: target for target, rest in _REST_STATE.items()}

Record = tuple[str, bytes | None]


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    include_tasks: bool
    only_failed: bool


@dataclass
class ConfigState:
    """What the config topic says now: connectors, their target states and committed task configs."""

    connectors: dict[str, dict[str, str]] = field(default_factory=dict)  # insertion order = creation order
    targets: dict[str, str] = field(default_factory=dict)  # Connect's TargetState names
    tasks: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # committed task configs
    _pending_tasks: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    restarts: list[RestartRequest] = field(default_factory=list)  # unread restart requests, in order

    def apply(self, key: str | None, value: bytes | None) -> str | None:
        """Fold one record in; the name of the connector it changed (None for records of no connector)."""
        if key is None:
            return None
        for prefix, handler in _HANDLERS:
            if key.startswith(prefix):
                return handler(self, key[len(prefix):], _json(key, value))
        log.warning("Config topic: ignoring a record with an unknown key %r", key)
        return None

    def target_state(self, name: str) -> str:
        """The connector's target as the REST API names it: RUNNING, PAUSED or STOPPED."""
        return _REST_STATE[self.targets.get(name, STARTED)]

    def take_restarts(self) -> list[RestartRequest]:
        taken, self.restarts = self.restarts, []
        return taken

    # --- one handler per record kind --------------------------------------------------------

    def _connector(self, name: str, value: dict | None) -> str:
        if value is None:
            self.connectors.pop(name, None)
            self.tasks.pop(name, None)
            self._pending_tasks.pop(name, None)
        else:
            self.connectors.pop(name, None)  # re-insert: a recreated connector counts as new
            self.connectors[name] = _properties(value)
        return name

    def _target(self, name: str, value: dict | None) -> str:
        if value is None:
            self.targets.pop(name, None)
        else:
            state = value.get("state.v2", value.get("state"))
            if state not in _REST_STATE:
                log.warning("Config topic: ignoring target state %r of connector %s", state, name)
                return name
            self.targets[name] = state
        return name

    def _task(self, rest: str, value: dict | None) -> str | None:
        name, _, number = rest.rpartition("-")
        if not name or not number.isdigit():
            log.warning("Config topic: ignoring task record task-%s", rest)
            return None
        if value is not None:
            self._pending_tasks.setdefault(name, {})[int(number)] = _properties(value)
        return None  # applied by the commit record

    def _commit(self, name: str, value: dict | None) -> str:
        if value is None:
            return name
        count = int(value.get("tasks", 0))
        pending = self._pending_tasks.pop(name, {})
        if all(task in pending for task in range(count)):
            self.tasks[name] = [pending[task] for task in range(count)]
        else:  # Connect treats such a commit as inconsistent and waits for the next one
            log.warning("Config topic: commit-%s names %d task(s) without all their configs", name, count)
        return name

    def _restart(self, name: str, value: dict | None) -> str:
        if value is not None:
            self.restarts.append(RestartRequest(name, bool(value.get("include-tasks", False)),
                                                bool(value.get("only-failed", False))))
        return name

    def _ignored(self, _rest: str, _value: dict | None) -> None:
        return None


_HANDLERS = (
    ("connector-", ConfigState._connector),
    ("target-state-", ConfigState._target),
    ("task-count-record-", ConfigState._ignored),
    ("task-", ConfigState._task),
    ("commit-", ConfigState._commit),
    ("restart-connector-", ConfigState._restart),
    ("session-key", ConfigState._ignored),
)


def _json(key: str, value: bytes | None) -> dict | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        log.warning("Config topic: record %s is not JSON; read as a tombstone", key)
        return None
    return parsed if isinstance(parsed, dict) else None


def _properties(value: dict) -> dict[str, str]:
    properties = value.get("properties") or {}
    return {str(k): str(v) for k, v in properties.items() if v is not None}


# --- records to write ---------------------------------------------------------------------------


def _dump(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def connector_record(name: str, config: dict[str, str] | None) -> Record:
    """A connector's config, or its deletion (``None``)."""
    return f"connector-{name}", None if config is None else _dump({"properties": config})


def target_state_record(name: str, rest_state: str | None) -> Record:
    """``rest_state`` is RUNNING, PAUSED or STOPPED; ``None`` deletes the record."""
    if rest_state is None:
        return f"target-state-{name}", None
    target = _TARGET_OF_REST[rest_state]
    # Connect writes PAUSED in the first field for STOPPED, so that older workers pause instead
    legacy = PAUSED if target == STOPPED else target
    return f"target-state-{name}", _dump({"state": legacy, "state.v2": target})


def task_records(name: str, task_configs: list[dict[str, str]]) -> list[Record]:
    """Every task's config, then the commit that makes them current (no tasks: only the commit)."""
    records: list[Record] = [(f"task-{name}-{n}", _dump({"properties": config}))
                             for n, config in enumerate(task_configs)]
    records.append((f"commit-{name}", _dump({"tasks": len(task_configs)})))
    return records


def restart_record(name: str, include_tasks: bool, only_failed: bool) -> Record:
    return f"restart-connector-{name}", _dump({"include-tasks": include_tasks, "only-failed": only_failed})
