"""The distributed worker's herder: connectors shared by a group of workers through Kafka.

The same REST contract as the standalone herder (``connector.herder.herder``),
with the state in Kafka instead of a local file:

- reads (configs, task configs, statuses, active topics) are answered on any
  worker from the config and status topics it reads;
- writes reach the leader (``connector.rest.forwarding`` forwards them from the
  other workers), which checks them with Connect's rules and writes the config
  topic; a write that reaches a worker that is no longer the leader is a 409, as
  in Connect during a rebalance;
- each worker runs the connectors the leader assigned to it
  (:mod:`connector.cluster.assignment`) as standalone ones run, one
  :class:`~connector.herder.connector_runtime.ConnectorRuntime` each, follows
  their configs and target states from the config topic, and publishes their
  statuses to the status topic;
- what only the worker running a connector can do (restarts, the maintenance
  view) is forwarded to that worker, as Connect forwards restarts.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import requests

from connector.cluster import config_records as records
from connector.cluster.assignment import View, assign
from connector.cluster.config_records import ConfigState
from connector.cluster.kafka_log import KafkaLog, ensure_topic
from connector.cluster.membership import Membership, now_ms
from connector.cluster.settings import ClusterSettings, unused_keys
from connector.cluster.status_records import (
    Status,
    StatusState,
    connector_status_record,
    task_status_record,
    topic_record,
)
from connector.config.providers import ConfigProviders
from connector.herder.common import HerderCommon, halt_all, patched, restart_on, restart_task_on, task_config
from connector.herder.connector_runtime import ConnectorRuntime, declared_tasks
from connector.herder.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConflictError,
    ConnectRestError,
    NotFoundError,
    StartingError,
)
from connector.herder.herder import WORKER_STARTING
from connector.herder.sink_offsets import not_stopped_message
from connector.herder.states import RUNNING, STOPPED, connector_state_info
from connector.herder.validation import is_iceberg_connector
from connector.kafka.client_config import admin_config
from connector.spark.runner import SparkTaskRunner

log = logging.getLogger(__name__)

NOT_LEADER = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
NO_LEADER = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."


def not_run_here(connector_class: str) -> str:
    return (f"icefloe does not run connector class {connector_class}: it runs the Iceberg sink "
            "(org.apache.iceberg.connect.IcebergSinkConnector or io.tabular.iceberg.connect.IcebergSinkConnector). "
            "Run this connector on a Kafka Connect cluster of its own, or delete it here.")


class DistributedHerder(HerderCommon):
    """One worker of a group. See the module doc; the REST contract is connector.rest.app.HerderApi."""

    def __init__(self, worker: dict[str, str], *, spark: Any, worker_id: str, url: str,
                 providers: ConfigProviders | None = None):
        self.worker = dict(worker)
        self.worker_id = worker_id
        self.url = url
        self.settings = ClusterSettings.parse(worker)
        self.providers = providers if providers is not None else ConfigProviders.from_worker(worker)
        self._spark = spark
        self.runner = SparkTaskRunner(spark, isolate_failures=True)
        self._client = dict(admin_config(worker, {}, connector_name=f"worker-{self.settings.group_id}"))
        self._lock = threading.RLock()  # the states read from the topics, and the local runtimes
        self.configs = ConfigState()
        self.statuses = StatusState()
        self._runtimes: dict[str, ConnectorRuntime] = {}
        self._topics_lock = threading.Lock()  # a connector's active topics: published, or reset
        self._published: dict[str, tuple] = {}  # what this worker last wrote to the status topic, per key
        self._waiting_since: dict[str, int] = {}  # as the leader: connectors waiting for their old worker
        self._epoch = 0  # the membership epoch this worker's runtimes belong to
        self._wake = threading.Event()
        self._closing = threading.Event()
        self._started = False
        self._cluster_id: str | None = None
        self._thread: threading.Thread | None = None
        self._config_log = KafkaLog(self._client, self.settings.config.name, self._config_record)
        self._status_log = KafkaLog(self._client, self.settings.status.name, self._status_record)
        self.membership = Membership(self._client, self.settings, worker_id, url, running=self._running_names,
                                     on_change=self._wake.set)

    # --- worker -----------------------------------------------------------------------------

    def start(self) -> None:
        """Create the worker topics if missing, read them, join the group and start following it."""
        for note in unused_keys(self.worker):
            log.warning("Worker property %s", note)
        timeout = max(30.0, self.settings.session_timeout_ms / 1000)
        s = self.settings
        for topic in (s.config, s.offsets, s.status, s.members):
            ensure_topic(self._client, topic.name, partitions=topic.partitions, replication=topic.replication,
                         compacted=True, timeout=timeout)
        self._config_log.start(timeout)
        self._status_log.start(timeout)
        self.membership.start(timeout)
        self._started = True
        self._thread = threading.Thread(target=self._follow_loop, name="cluster-herder", daemon=True)
        self._thread.start()
        log.info("Joined worker group %s as %s (%d connector(s) defined)", s.group_id, self.worker_id,
                 len(self.configs.connectors))

    def shutdown(self) -> None:
        """Finish every job's in-flight commit, then leave the group (the others take over at once)."""
        self._closing.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._lock:
            runtimes = list(self._runtimes.values())
        halt_all(runtimes)
        self._started = False
        self.membership.stop()
        self._config_log.stop()
        self._status_log.stop()

    def leader_url(self) -> str | None:
        """The REST URL of the group's leader as this worker sees it (None while there is none)."""
        leader = self.membership.leader()
        return leader.url if leader is not None else None

    def is_leader(self) -> bool:
        return self.membership.is_leader()

    # --- records read from the topics -----------------------------------------------------------

    def _config_record(self, key: str | None, value: bytes | None, _timestamp: int) -> None:
        with self._lock:
            self.configs.apply(key, value)
        self._wake.set()

    def _status_record(self, key: str | None, value: bytes | None, _timestamp: int) -> None:
        with self._lock:
            self.statuses.apply(key, value)
            if value is None and key is not None:
                self._published.pop(key, None)  # deleted by another worker: written again if it holds

    # --- following the group ----------------------------------------------------------------

    def _follow_loop(self) -> None:
        while not self._closing.is_set():
            self._wake.wait(min(1.0, self.settings.heartbeat_interval_ms / 1000))
            self._wake.clear()
            if self._closing.is_set():
                return
            try:
                self._lead()
                self._follow()
                self._restarts()
                self._publish_statuses()
            except Exception:  # noqa: BLE001 - the loop must go on; the next round retries
                log.exception("Following the worker group failed; retrying")
                time.sleep(0.5)

    def _lead(self) -> None:
        """As the leader: assign the connectors again when what it sees changed."""
        member = self.membership
        if not member.is_leader() or time.monotonic() - member.joined < member.settings.heartbeat_interval_ms / 1000:
            return  # a new leader first hears a heartbeat round, so that it knows every live worker
        member.read_to_end()
        live = member.live()
        with self._lock:
            connectors = list(self.configs.connectors)
        current = member.assignment
        view = View(connectors, list(live), {k: v for k, v in current.targets.items() if v is not None},
                    {wid: m.running for wid, m in live.items()}, member.last_seen_ms(), dict(self._waiting_since),
                    now_ms(), self.settings.scheduled_rebalance_delay_ms, self.settings.rebalance_timeout_ms)
        result = assign(view)
        for name, target in result.targets.items():
            if result.run[name] is None and target in live:
                self._waiting_since.setdefault(name, view.now_ms)
            else:
                self._waiting_since.pop(name, None)
        if result.targets != current.targets or result.run != current.run or current.leader != self.worker_id:
            with self._lock:
                floor = self.statuses.max_generation
            record = member.write_assignment(result.targets, result.run, floor)
            log.info("Assignment generation %d over %d live worker(s): %s", record.generation, len(live),
                     _describe(result.run))

    def _follow(self) -> None:
        """Run what the assignment gives this worker, stop what it does not."""
        if self._epoch != self.membership.epoch:
            self._rejoined()
        mine = self._assigned()
        with self._lock:
            gone = [runtime for name, runtime in self._runtimes.items() if name not in mine]
        for runtime in gone:
            runtime.signal_stop()
        for runtime in gone:
            self._drop(runtime)
        for name in mine:
            self._run_assigned(name)

    def _rejoined(self) -> None:
        """This worker was counted gone (frozen, or cut off from Kafka): what it ran may run elsewhere now.
        Stop it all, then follow the assignments written meanwhile, read to their end."""
        with self._lock:
            runtimes = list(self._runtimes.values())
        if runtimes:
            log.warning("Stopping %d connector(s) run before this worker lost its place in the group: %s",
                        len(runtimes), ", ".join(sorted(r.name for r in runtimes)))
        for runtime in runtimes:
            runtime.signal_stop()
        for runtime in runtimes:
            self._drop(runtime)
        self.membership.read_to_end()
        self._epoch = self.membership.epoch

    def _assigned(self) -> set[str]:
        if not self.membership.has_lease():
            return set()
        with self._lock:
            defined = set(self.configs.connectors)
        return set(self.membership.assignment.owned_by(self.worker_id)) & defined

    def _drop(self, runtime: ConnectorRuntime) -> None:
        with runtime.lock:
            runtime.close()
        with self._lock:
            self._runtimes.pop(runtime.name, None)
            deleted = runtime.name not in self.configs.connectors
        if deleted:
            self._delete_statuses(runtime.name, declared_tasks(runtime.config))
        log.info("Connector %s no longer runs on this worker%s", runtime.name, " (deleted)" if deleted else "")

    def _run_assigned(self, name: str) -> None:
        with self._lock:
            config = self.configs.connectors.get(name)
            target = self.configs.target_state(name)
            runtime = self._runtimes.get(name)
        if config is None:
            return
        if runtime is None:
            self.membership.read_to_end()  # the newest assignment first: it may have moved on meanwhile
            if name not in self._assigned():
                return
            self._start_runtime(name, config, target)
        elif runtime.config != config:
            runtime.update_config(config)
        elif runtime.target_state != target:
            with runtime.lock:
                runtime.apply(target)

    def _start_runtime(self, name: str, config: dict[str, str], target: str) -> None:
        runtime = ConnectorRuntime(name, config, target, worker=self.worker, runner=self.runner,
                                   worker_id=self.worker_id, resolve=self.providers.resolve)
        with self._lock:
            runtime.topics.update(self.statuses.topics.get(name, set()))
            self._runtimes[name] = runtime
        connector_class = config.get("connector.class", "")
        if not is_iceberg_connector(connector_class):
            log.error("Connector %s: %s", name, not_run_here(connector_class))
            runtime.target_state = target
            runtime.mark_failed(not_run_here(connector_class))
            return
        log.info("Connector %s now runs on worker %s (%s)", name, self.worker_id, target)
        runtime.apply(target)

    def _restarts(self) -> None:
        """Restart requests from the config topic for connectors this worker runs (others ignore them)."""
        with self._lock:
            requests_ = self.configs.take_restarts()
        for request in requests_:
            with self._lock:
                runtime = self._runtimes.get(request.connector)
            if runtime is not None:
                self._local_restart(runtime, request.include_tasks, request.only_failed)

    # --- statuses -----------------------------------------------------------------------------

    def _running_names(self) -> set[str]:
        with self._lock:
            return {name for name, runtime in self._runtimes.items() if runtime.alive}

    def _publish_statuses(self) -> None:
        generation = self.membership.assignment.generation
        with self._lock:
            runtimes = list(self._runtimes.values())
        for runtime in runtimes:
            status = runtime.status()
            self._publish(*connector_status_record(runtime.name, _status(status["connector"], generation)))
            for task in status["tasks"]:
                self._publish(*task_status_record(runtime.name, task["id"], _status(task, generation)))
            with self._topics_lock:  # not between a reset and its deletions
                for topic in runtime.active_topics():
                    key = f"status-topic-{topic}:connector-{runtime.name}"
                    if key not in self._published:
                        self._publish(*topic_record(runtime.name, topic))

    def _publish(self, key: str, value: bytes | None) -> None:
        """Write a status record unless this worker already wrote the same (generation aside)."""
        seen = _comparable(key, value)
        if self._published.get(key) == seen:
            return
        self._status_log.send(key, value)
        self._published[key] = seen

    def _delete_statuses(self, name: str, tasks: int) -> None:
        with self._lock:
            known = set(self.statuses.task_statuses(name))
            topics = set(self.statuses.topics.get(name, set()))
        for task in sorted(known | set(range(tasks))):
            self._status_log.send(*task_status_record(name, task, None))
        self._status_log.send(*connector_status_record(name, None))
        for topic in sorted(topics):
            self._status_log.send(*topic_record(name, topic, deleted=True))

    # --- configs ----------------------------------------------------------------------------

    def connector_names(self) -> list[str]:
        self._check_started()
        with self._lock:
            return list(self.configs.connectors)

    def connector_info(self, name: str) -> dict:
        config = self.connector_config(name)
        with self._lock:
            tasks = len(self.configs.tasks.get(name, []))
        return {"name": name, "config": config, "tasks": [{"connector": name, "task": t} for t in range(tasks)],
                "type": "sink"}

    def connector_config(self, name: str) -> dict[str, str]:
        self._check_started()
        with self._lock:
            config = self.configs.connectors.get(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return dict(config)

    def create_connector(self, name: str, config: dict[str, str], initial_state: str | None = None) -> dict:
        config = self._checked(name, config)
        with self._leading():
            if name in self.configs.connectors:
                raise AlreadyExistsError(f"Connector {name} already exists")
            target = initial_state or RUNNING
            if initial_state is not None:
                self._config_log.send(*records.target_state_record(name, target))
            self._write_config(name, config, target)
        return self.connector_info(name)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, dict]:
        config = self._checked(name, config)
        with self._leading():
            created = name not in self.configs.connectors
            self._write_config(name, config, self.configs.target_state(name))
        return created, self.connector_info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> dict:
        with self._leading():
            config = self._checked(name, patched(self._existing(name, f"Connector {name} not found"), patch))
            self._write_config(name, config, self.configs.target_state(name))
        return self.connector_info(name)

    def _write_config(self, name: str, config: dict[str, str], target: str) -> None:
        """The connector record, then its task configs (none while STOPPED), as Connect's leader writes them."""
        self._config_log.send(*records.connector_record(name, config))
        self._write_tasks(name, config, target)

    def _write_tasks(self, name: str, config: dict[str, str], target: str) -> None:
        tasks = [] if target == STOPPED else [task_config(config)] * declared_tasks(config)
        if self.configs.tasks.get(name) != tasks:
            for record in records.task_records(name, tasks):
                self._config_log.send(*record)

    # --- lifecycle --------------------------------------------------------------------------

    def _set_target(self, name: str, target: str) -> None:
        with self._leading():
            config = self._existing(name, f"Unknown connector {name}")
            if target == STOPPED:  # Connect: the empty task set first, then the target state
                self._write_tasks(name, config, target)
            self._config_log.send(*records.target_state_record(name, target))
            if target != STOPPED:
                self._write_tasks(name, config, target)

    def delete_connector(self, name: str) -> None:
        with self._leading():
            config = self._existing(name, f"Connector {name} not found")
            self._config_log.send(*records.connector_record(name, None))
            self._config_log.send(*records.target_state_record(name, None))
        self._delete_statuses(name, declared_tasks(config))

    def restart_connector(self, name: str, include_tasks: bool = False, only_failed: bool = False) -> dict | None:
        self._existing(name, f"Unknown connector: {name}")
        with self._lock:
            runtime = self._runtimes.get(name)
        if runtime is not None:
            return self._local_restart(runtime, include_tasks, only_failed)
        query = f"includeTasks={str(include_tasks).lower()}&onlyFailed={str(only_failed).lower()}"
        return self._at_owner(name, "POST", f"/connectors/{name}/restart?{query}")

    def restart_task(self, name: str, task: int) -> None:
        self._existing(name, f"Unknown connector: {name}")
        with self._lock:
            runtime = self._runtimes.get(name)
        if runtime is None:
            self._at_owner(name, "POST", f"/connectors/{name}/tasks/{task}/restart")
            return
        restart_task_on(runtime, task)

    @staticmethod
    def _local_restart(runtime: ConnectorRuntime, include_tasks: bool, only_failed: bool) -> dict | None:
        return restart_on(runtime, include_tasks, only_failed)

    # --- states -----------------------------------------------------------------------------

    def connector_status(self, name: str) -> dict:
        self._check_started()
        with self._lock:
            runtime = self._runtimes.get(name)
            known = name in self.configs.connectors
            connector = self.statuses.connectors.get(name)
            tasks = self.statuses.task_statuses(name)
            task_count = len(self.configs.tasks.get(name, []))
        if runtime is not None:
            return runtime.status()
        if not known or connector is None:
            raise NotFoundError(f"No status found for connector {name}")
        shown = [{"id": task, **status.info()} for task, status in tasks.items() if task < task_count]
        return connector_state_info(name, connector.info(), shown)

    def task_status(self, name: str, task: int) -> dict:
        status = self.connector_status(name) if name in self.connector_names() else None
        for entry in (status or {}).get("tasks", []):
            if entry["id"] == task:
                return entry
        raise NotFoundError(f"No status found for task {name}-{task}")

    def task_configs(self, name: str) -> list[dict]:
        self._existing(name, f"Connector {name} not found")
        with self._lock:
            tasks = list(self.configs.tasks.get(name, []))
        return [{"id": {"connector": name, "task": task}, "config": config} for task, config in enumerate(tasks)]

    def maintenance(self, name: str) -> dict:
        self._existing(name, f"Connector {name} not found")
        with self._lock:
            runtime = self._runtimes.get(name)
        if runtime is not None:
            return runtime.maintenance_status()
        return self._at_owner(name, "GET", f"/connectors/{name}/maintenance") or {}

    # --- topics -----------------------------------------------------------------------------

    def active_topics(self, name: str) -> dict:
        self._check_tracking()
        with self._lock:
            topics = sorted(self.statuses.topics.get(name, set()))
            runtime = self._runtimes.get(name)
        if runtime is not None:
            topics = runtime.active_topics()
        return {name: {"topics": topics}}

    def reset_active_topics(self, name: str) -> None:
        """The worker running the connector forgets its topics and deletes their records: one writer, so a
        topic read just before the reset cannot come back from a status written behind the deletion."""
        self._check_tracking(reset=True)
        with self._lock:
            runtime = self._runtimes.get(name)
            topics = set(self.statuses.topics.get(name, set()))
        if runtime is None and self._owner_url(name) is not None:
            self._at_owner(name, "PUT", f"/connectors/{name}/topics/reset")
            return
        with self._topics_lock:
            if runtime is not None:
                topics |= set(runtime.active_topics())
                runtime.reset_active_topics()
            for topic in sorted(topics):
                self._status_log.send(*topic_record(name, topic, deleted=True))

    # --- offsets ----------------------------------------------------------------------------

    @contextmanager
    def _while_stopped(self, name: str) -> Iterator[dict[str, str]]:
        with self._leading():
            yield self._stopped(name)

    def _stopped(self, name: str) -> dict[str, str]:
        """The config of a connector that is STOPPED: its target, and its job ended (the status its worker
        writes once the job's last commit is done says so, or no live worker runs it)."""
        config = self._existing(name, f"Connector {name} not found")
        if self.configs.target_state(name) != STOPPED:
            raise BadRequestError(not_stopped_message(name))
        if not self._job_ended(name):
            # The worker that ran the job may have written its STOPPED status a moment ago (a request it
            # forwards can follow its own answer that the connector stopped): read the status topic to its
            # end before refusing.
            self._status_log.read_to_end(self.settings.sync_timeout_ms / 1000)
            if not self._job_ended(name):
                raise BadRequestError(not_stopped_message(name))
        return config

    def _job_ended(self, name: str) -> bool:
        with self._lock:
            runtime = self._runtimes.get(name)
            status = self.statuses.connectors.get(name)
        halted = (not runtime.alive) if runtime is not None else (status is not None and status.state == STOPPED)
        return halted or not any(name in member.running for member in self.membership.live().values())

    # --- helpers ----------------------------------------------------------------------------

    def _check_started(self) -> None:
        if not self._started:
            raise StartingError(WORKER_STARTING)

    def _existing(self, name: str, not_found: str) -> dict[str, str]:
        self._check_started()
        with self._lock:
            config = self.configs.connectors.get(name)
        if config is None:
            raise NotFoundError(not_found)
        return dict(config)

    def _leading(self) -> "_Leading":
        return _Leading(self)

    def _owner_url(self, name: str) -> str | None:
        """The REST URL of the live worker that runs ``name``, if another worker does."""
        owner = self.membership.assignment.run.get(name)
        if not owner or owner == self.worker_id or owner not in self.membership.live():
            return None
        return self.membership.url_of(owner)

    def _at_owner(self, name: str, method: str, path: str) -> dict | None:
        """Send a request to the worker that runs ``name`` (already forwarded: it must answer itself)."""
        owner = self.membership.assignment.run.get(name)
        url = self._owner_url(name)
        if url is None:
            raise ConflictError(f"Connector {name} is not running on any worker now (a rebalance may be under "
                                "way); retry in a moment")
        separator = "&" if "?" in path else "?"
        try:
            response = requests.request(method, f"{url}{path}{separator}forward=false", timeout=60)
        except requests.RequestException as exc:
            raise ConnectRestError(f"Could not reach worker {owner}, which runs connector {name}: {exc}") from exc
        if response.status_code >= 400:
            body = response.json() if response.content else {}
            raise ConnectRestError(body.get("message", response.text), status=response.status_code)
        return response.json() if response.content else None


class _Leading:
    """A config write: only the leader makes them, after reading the config topic to its end, one at a time."""

    _serial = threading.Lock()

    def __init__(self, herder: DistributedHerder):
        self.herder = herder

    def __enter__(self) -> None:
        herder = self.herder
        herder._check_started()
        if not herder.is_leader():
            raise ConflictError(NOT_LEADER if herder.leader_url() else NO_LEADER)
        self._serial.acquire()
        try:
            herder._config_log.read_to_end(herder.settings.sync_timeout_ms / 1000)
        except Exception:
            self._serial.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._serial.release()
        self.herder._wake.set()


def _status(info: dict, generation: int) -> Status:
    return Status(info["state"], info.get("trace"), info["worker_id"], generation)


def _comparable(key: str, value: bytes | None) -> tuple:
    if value is None or not key.startswith("status-") or key.startswith("status-topic-"):
        return (value,)
    body = json.loads(value)
    return (body["state"], body.get("trace"), body["worker_id"])


def _describe(run: dict[str, str | None]) -> str:
    return ", ".join(f"{name} -> {owner or '(waiting)'}" for name, owner in sorted(run.items())) or "no connectors"

