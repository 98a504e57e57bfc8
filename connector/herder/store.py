"""The worker's connector store: configs as submitted and target states, in SQLite under the data dir.

Each connector is one row (name, config JSON with its placeholders unresolved,
target state, creation order), plus the topics it has read (Connect's active
topics, which survive a restart as they do in Connect's status topic). Every change is one transaction, so a config is
never half-written and a worker killed at any moment comes back with the last
complete change.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS connectors (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    config TEXT NOT NULL,
    target_state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS active_topics (
    name TEXT NOT NULL,
    topic TEXT NOT NULL,
    PRIMARY KEY (name, topic)
)
"""


@dataclass(frozen=True)
class StoredConnector:
    name: str
    config: dict[str, str]
    target_state: str


class ConnectorStore:
    """Connector configs and target states, one SQLite file (``worker.db``) in ``data_dir``."""

    def __init__(self, data_dir: Path):
        data_dir.mkdir(parents=True, exist_ok=True)
        self.path = data_dir / "worker.db"
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)

    def load(self) -> list[StoredConnector]:
        """Every connector, in creation order."""
        with self._lock:
            rows = self._db.execute("SELECT name, config, target_state FROM connectors ORDER BY seq").fetchall()
        return [StoredConnector(name, json.loads(config), state) for name, config, state in rows]

    def put(self, name: str, config: dict[str, str], target_state: str) -> None:
        """Create or replace a connector (a replacement keeps its creation order)."""
        text = json.dumps(config)
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT INTO connectors (name, config, target_state) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET config = excluded.config, target_state = excluded.target_state",
                (name, text, target_state))

    def set_target_state(self, name: str, target_state: str) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("UPDATE connectors SET target_state = ? WHERE name = ?", (target_state, name))

    def delete(self, name: str) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM connectors WHERE name = ?", (name,))
            self._db.execute("DELETE FROM active_topics WHERE name = ?", (name,))

    def active_topics(self, name: str) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT topic FROM active_topics WHERE name = ? ORDER BY topic", (name,))
            return [topic for (topic,) in rows.fetchall()]

    def add_active_topics(self, name: str, topics: Iterable[str]) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR IGNORE INTO active_topics (name, topic) VALUES (?, ?)",
                                 [(name, topic) for topic in topics])

    def reset_active_topics(self, name: str) -> None:
        with self._lock, self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("DELETE FROM active_topics WHERE name = ?", (name,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
