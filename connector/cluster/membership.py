"""Who is in the worker group, who leads it, and what the leader assigned: heartbeats on the members topic.

Each worker writes a heartbeat every ``heartbeat.interval.ms`` (key
``worker-<id>``: its REST URL, its incarnation, when that incarnation joined,
the connectors it runs now) and reads everybody's. A worker is live while its
last heartbeat is younger than ``session.timeout.ms``; a clean stop writes a
leaving heartbeat, so the others need not wait. The leader is the live worker
that joined first (ties by id): leadership moves only when its holder goes.
The leader writes the assignment (key ``assignment``) with a generation one
above the highest seen.

A worker whose own heartbeats have not been acknowledged for a session
timeout (frozen, or cut off from Kafka) knows the others count it gone: it
drops its lease, and rejoins as a new incarnation (so it does not take the
lead back on its return) once a heartbeat is acknowledged again.

Why not Kafka's group protocol: docs/architecture.md ("Distributed mode").
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from connector.cluster.kafka_log import KafkaLog
from connector.cluster.settings import ClusterSettings

log = logging.getLogger(__name__)

ASSIGNMENT_KEY = "assignment"
_WORKER_PREFIX = "worker-"


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Member:
    worker_id: str
    url: str
    incarnation: str
    joined_ms: int
    running: frozenset[str]
    seen: float  # time.monotonic() of the heartbeat, from its age when it was read
    seen_ms: int  # the heartbeat's own timestamp
    leaving: bool


@dataclass(frozen=True)
class AssignmentRecord:
    generation: int
    leader: str
    targets: dict[str, str | None] = field(default_factory=dict)
    run: dict[str, str | None] = field(default_factory=dict)

    def owned_by(self, worker_id: str) -> list[str]:
        return [name for name, owner in self.run.items() if owner == worker_id]


class Membership:
    """This worker's heartbeats, and everybody's as read from the members topic."""

    def __init__(self, client_conf: Mapping[str, Any], settings: ClusterSettings, worker_id: str, url: str,
                 running: Callable[[], set[str]], on_change: Callable[[], None]):
        self.settings = settings
        self.worker_id = worker_id
        self.url = url
        self._running = running
        self._on_change = on_change
        self._lock = threading.Lock()
        self._members: dict[str, Member] = {}
        self.assignment = AssignmentRecord(0, "")
        self.max_generation = 0
        self._log = KafkaLog(client_conf, settings.members.name, self._record)
        self._rejoin()
        self._acked = 0.0  # time.monotonic() of the last acknowledged heartbeat
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float) -> None:
        self._log.start(timeout)
        self.heartbeat()
        self._thread = threading.Thread(target=self._beat, name="cluster-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Say goodbye (the others reassign at once, not a session timeout later) and stop."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        try:
            self._send_heartbeat(leaving=True)
        except Exception as exc:  # noqa: BLE001 - the others find out by the session timeout instead
            log.warning("Could not tell the group this worker leaves: %s", exc)
        self._log.stop()

    def _rejoin(self) -> None:
        self.epoch = getattr(self, "epoch", -1) + 1  # the herder drops what it ran under an earlier one
        self.incarnation = uuid.uuid4().hex
        self.joined_ms = now_ms()
        self.joined = time.monotonic()

    # --- heartbeats ------------------------------------------------------------------------

    def _beat(self) -> None:
        interval = self.settings.heartbeat_interval_ms / 1000
        while not self._stop.wait(interval):
            self.heartbeat()

    def heartbeat(self) -> None:
        lost = not self.has_lease()
        try:
            self._send_heartbeat(leaving=False)
        except Exception as exc:  # noqa: BLE001 - the lease runs out if this goes on
            log.warning("Heartbeat to %s failed: %s", self.settings.members.name, exc)
            self._on_change()
            return
        if lost and self._acked:
            log.warning("This worker's heartbeats were not acknowledged for over %d ms: it rejoins the group "
                        "as a new member", self.settings.session_timeout_ms)
            self._rejoin()
            self._send_heartbeat(leaving=False)
        self._acked = time.monotonic()
        self._on_change()

    def _send_heartbeat(self, leaving: bool) -> None:
        body = {"worker_id": self.worker_id, "url": self.url, "incarnation": self.incarnation,
                "joined": self.joined_ms, "running": sorted(self._running()), "leaving": leaving,
                "time": now_ms()}
        self._log.send(_WORKER_PREFIX + self.worker_id, json.dumps(body).encode(),
                       timeout=self.settings.session_timeout_ms / 1000)

    def has_lease(self) -> bool:
        """True while this worker's last acknowledged heartbeat is younger than the session timeout."""
        return self._acked > 0 and time.monotonic() - self._acked < self.settings.session_timeout_ms / 1000

    # --- what the topic says ---------------------------------------------------------------

    def _record(self, key: str | None, value: bytes | None, timestamp_ms: int) -> None:
        if key == ASSIGNMENT_KEY:
            self._assignment_record(value)
        elif key is not None and key.startswith(_WORKER_PREFIX):
            self._heartbeat_record(key[len(_WORKER_PREFIX):], value, timestamp_ms)
        self._on_change()

    def _heartbeat_record(self, worker_id: str, value: bytes | None, timestamp_ms: int) -> None:
        with self._lock:
            if value is None:
                self._members.pop(worker_id, None)
                return
            body = json.loads(value)
            stamp = int(body.get("time", timestamp_ms))
            age = max(0.0, (now_ms() - stamp) / 1000)  # a heartbeat read at start may be old
            self._members[worker_id] = Member(worker_id, str(body["url"]), str(body["incarnation"]),
                                              int(body["joined"]), frozenset(body.get("running", ())),
                                              time.monotonic() - age, stamp, bool(body.get("leaving")))

    def _assignment_record(self, value: bytes | None) -> None:
        if value is None:
            return
        body = json.loads(value)
        record = AssignmentRecord(int(body["generation"]), str(body["leader"]), dict(body.get("targets", {})),
                                  dict(body.get("run", {})))
        with self._lock:
            self.max_generation = max(self.max_generation, record.generation)
            self.assignment = record

    def write_assignment(self, targets: dict[str, str | None], run: dict[str, str | None],
                         floor: int = 0) -> AssignmentRecord:
        """As the leader: publish a new assignment, one generation above any seen (here, or ``floor``: the
        highest in the status topic, where a Connect cluster taken over may have counted further)."""
        record = AssignmentRecord(max(self.max_generation, floor) + 1, self.worker_id, targets, run)
        body = {"generation": record.generation, "leader": record.leader, "targets": targets, "run": run,
                "time": now_ms()}
        self._log.send(ASSIGNMENT_KEY, json.dumps(body).encode(), timeout=self.settings.sync_timeout_ms / 1000)
        return record

    def read_to_end(self) -> None:
        self._log.read_to_end(self.settings.sync_timeout_ms / 1000)

    # --- views -----------------------------------------------------------------------------

    def live(self) -> dict[str, Member]:
        """Live members by worker id (this worker included while it holds its lease)."""
        limit = time.monotonic() - self.settings.session_timeout_ms / 1000
        with self._lock:
            members = dict(self._members)
        live = {wid: m for wid, m in members.items() if not m.leaving and m.seen > limit}
        if not self.has_lease():
            live.pop(self.worker_id, None)
        return live

    def last_seen_ms(self) -> dict[str, int]:
        with self._lock:
            return {wid: m.seen_ms for wid, m in self._members.items()}

    def leader(self) -> Member | None:
        live = self.live()
        return min(live.values(), key=lambda m: (m.joined_ms, m.worker_id)) if live else None

    def is_leader(self) -> bool:
        leader = self.leader()
        return leader is not None and leader.worker_id == self.worker_id and leader.incarnation == self.incarnation

    def url_of(self, worker_id: str) -> str | None:
        with self._lock:
            member = self._members.get(worker_id)
        return member.url if member is not None else None
