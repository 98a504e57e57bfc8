"""The worker's herder: every connector's config, target state and job, behind the REST API.

Connect's herder semantics on one process: configs and target states are kept
in the store (SQLite in the data dir) and come back on start; each connector
runs as a continuous job over the worker's one Spark session
(:mod:`connector.herder.connector_runtime`). Every method is synchronous and
thread-safe: the store lock guards which connectors exist, each connector's own
lock serializes changes to it, so concurrent updates of one connector apply
one after the other and a connector never keeps running under an old config.
Errors are raised as :mod:`connector.herder.errors` with Connect's messages.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from connector.config.providers import ConfigProviders
from connector.herder.common import HerderCommon, halt_all, patched, restart_on, restart_task_on, task_config
from connector.herder.connector_runtime import ConnectorRuntime
from connector.herder.errors import AlreadyExistsError, BadRequestError, NotFoundError, StartingError
from connector.herder.sink_offsets import not_stopped_message
from connector.herder.states import RUNNING, STOPPED
from connector.herder.store import ConnectorStore
from connector.spark.runner import SparkTaskRunner

log = logging.getLogger(__name__)

WORKER_STARTING = "The worker is still starting: its stored connectors are not loaded yet. Retry in a moment."



class Herder(HerderCommon):
    """All connectors of one worker. See the module doc; method contracts are in docs/rest-api.md."""

    def __init__(self, worker: dict[str, str], *, data_dir: Path, spark: Any, worker_id: str,
                 providers: ConfigProviders | None = None):
        self.worker = dict(worker)
        self.worker_id = worker_id
        self.data_dir = Path(data_dir)
        self.providers = providers if providers is not None else ConfigProviders.from_worker(worker)
        self._spark = spark
        self.runner = SparkTaskRunner(spark, isolate_failures=True)
        self._lock = threading.Lock()  # which connectors exist, and the store
        self._runtimes: dict[str, ConnectorRuntime] = {}
        self._store: ConnectorStore | None = None
        self._started = False
        self._cluster_id: str | None = None

    # --- worker -----------------------------------------------------------------------------

    def start(self) -> None:
        """Load the store and bring every connector back in its target state."""
        with self._lock:
            self._store = ConnectorStore(self.data_dir)
            for stored in self._store.load():
                runtime = self._new_runtime(stored.name, stored.config, stored.target_state)
                runtime.topics.update(self._store.active_topics(stored.name))
                self._runtimes[stored.name] = runtime
                runtime.apply(stored.target_state)
            self._started = True
        log.info("Herder started with %d connector(s)", len(self._runtimes))

    def shutdown(self) -> None:
        """End every job after its in-flight commit (all signalled first, then awaited)."""
        with self._lock:
            runtimes = list(self._runtimes.values())
            self._started = False
        halt_all(runtimes)
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    # --- configs ----------------------------------------------------------------------------

    def connector_names(self) -> list[str]:
        with self._lock:
            self._check_loaded()
            return list(self._runtimes)

    def connector_info(self, name: str) -> dict:
        runtime = self._get(name, f"Connector {name} not found")
        return {"name": name, "config": dict(runtime.config),
                "tasks": [{"connector": name, "task": task} for task in runtime.task_ids()], "type": "sink"}

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._get(name, f"Connector {name} not found").config)

    def create_connector(self, name: str, config: dict[str, str], initial_state: str | None = None) -> dict:
        config = self._checked(name, config)
        target = initial_state or RUNNING
        with self._lock:
            if name in self._runtimes:
                raise AlreadyExistsError(f"Connector {name} already exists")
            self._create(name, config, target)
        return self.connector_info(name)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, dict]:
        """Create or replace; (created?, ConnectorInfo). A running connector restarts under the new config."""
        config = self._checked(name, config)
        while True:
            with self._lock:
                runtime = self._runtimes.get(name)
                if runtime is None:
                    self._create(name, config, RUNNING)
            if runtime is None:  # answered outside the lock: connector_info takes it too
                return True, self.connector_info(name)
            with runtime.lock:
                if self._runtimes.get(name) is not runtime:
                    continue  # deleted meanwhile: create it again
                self._require_store().put(name, config, runtime.target_state)
                runtime.update_config(config)
                return False, self.connector_info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> dict:
        """Merge ``patch`` into the config (``None`` removes a key) and apply it like a PUT."""
        runtime = self._get(name, f"Connector {name} not found")
        with runtime.lock:
            config = self._checked(name, patched(runtime.config, patch))
            self._require_store().put(name, config, runtime.target_state)
            runtime.update_config(config)
        return self.connector_info(name)

    def _create(self, name: str, config: dict[str, str], target: str) -> None:
        """Store and start a new connector (caller holds the store lock)."""
        self._require_store().put(name, config, target)
        runtime = self._new_runtime(name, config, target)
        self._runtimes[name] = runtime
        runtime.apply(target)

    def _new_runtime(self, name: str, config: dict[str, str], target: str) -> ConnectorRuntime:
        def remember(topics: set[str]) -> None:
            store = self._store
            try:
                if store is not None:
                    store.add_active_topics(name, topics)
            except sqlite3.Error as exc:  # topic tracking must not fail the connector
                log.warning("Could not record the active topics of %s: %s", name, exc)

        return ConnectorRuntime(name, config, target, worker=self.worker, runner=self.runner,
                                worker_id=self.worker_id, resolve=self._resolve, on_topics=remember)

    # --- validation and config providers ----------------------------------------------------

    def _resolve(self, config: dict[str, str]) -> dict[str, str]:
        """The config a job runs with: placeholders resolved now, never written back."""
        return self.providers.resolve(config)

    # --- states -----------------------------------------------------------------------------

    def connector_status(self, name: str) -> dict:
        return self._get(name, f"No status found for connector {name}").status()

    def task_status(self, name: str, task: int) -> dict:
        runtime = self._get(name, f"No status found for task {name}-{task}")
        status = runtime.task_status(task)
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        return status

    def maintenance(self, name: str) -> dict:
        """icefloe's own: the connector's table maintenance, per table (docs/rest-api.md)."""
        return self._get(name, f"Connector {name} not found").maintenance_status()

    def task_configs(self, name: str) -> list[dict]:
        runtime = self._get(name, f"Connector {name} not found")
        return [{"id": {"connector": name, "task": task}, "config": task_config(runtime.config)}
                for task in runtime.task_ids()]

    # --- lifecycle --------------------------------------------------------------------------

    def _set_target(self, name: str, target: str) -> None:
        runtime = self._get(name, f"Unknown connector {name}")
        with runtime.lock:
            if runtime.target_state == target:
                return  # idempotent, as in Connect (a FAILED connector is not restarted by resume)
            self._require_store().set_target_state(name, target)
            runtime.apply(target)

    def restart_connector(self, name: str, include_tasks: bool = False, only_failed: bool = False) -> dict | None:
        """None (204) for a plain restart; otherwise the status with RESTARTING instances (202)."""
        return restart_on(self._get(name, f"Unknown connector: {name}"), include_tasks, only_failed)

    def restart_task(self, name: str, task: int) -> None:
        restart_task_on(self._get(name, f"Unknown connector: {name}"), task)

    def delete_connector(self, name: str) -> None:
        runtime = self._get(name, f"Connector {name} not found")
        with runtime.lock:
            if self._runtimes.get(name) is not runtime:
                raise NotFoundError(f"Connector {name} not found")
            runtime.close()  # first, so that its last cycle cannot record anything for the deleted name
            with self._lock:
                self._require_store().delete(name)
                del self._runtimes[name]

    # --- topics -----------------------------------------------------------------------------

    def active_topics(self, name: str) -> dict:
        self._check_tracking()
        with self._lock:
            runtime = self._runtimes.get(name)
        topics = runtime.active_topics() if runtime is not None else []
        return {name: {"topics": topics}}

    def reset_active_topics(self, name: str) -> None:
        self._check_tracking(reset=True)
        with self._lock:
            runtime = self._runtimes.get(name)
            if runtime is not None:
                self._require_store().reset_active_topics(name)
                runtime.reset_active_topics()

    # --- offsets ----------------------------------------------------------------------------

    @contextmanager
    def _while_stopped(self, name: str) -> Iterator[dict[str, str]]:
        runtime = self._get(name, f"Connector {name} not found")
        with runtime.lock:
            if runtime.target_state != STOPPED or runtime.alive:
                raise BadRequestError(not_stopped_message(runtime.name))
            yield dict(runtime.config)

    # --- helpers ----------------------------------------------------------------------------

    def _get(self, name: str, not_found: str) -> ConnectorRuntime:
        with self._lock:
            self._check_loaded()
            runtime = self._runtimes.get(name)
        if runtime is None:
            raise NotFoundError(not_found)
        return runtime

    def _require_store(self) -> ConnectorStore:
        self._check_loaded()
        assert self._store is not None  # loaded
        return self._store

    def _check_loaded(self) -> None:
        """Connectors are not known before the store is loaded: a request then is told to come back."""
        if self._store is None:
            raise StartingError(WORKER_STARTING)

