"""What both herders (standalone and distributed) do the same way: the answers that only read the worker's
properties, the rules they share (a config's name, validation, a PATCH, topic tracking, restarting a connector
that runs here, a connector's offsets and the DLQ replay, a task's config) and the server info."""

from __future__ import annotations

import logging
import subprocess
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Mapping

from connector.config.providers import ConfigProviders
from connector.config.sink_config import SinkConfig
from connector.herder.connector_runtime import ConnectorRuntime
from connector.herder.errors import BadRequestError, ForbiddenError, NotFoundError
from connector.herder.plugins import version
from connector.herder.sink_offsets import alter_answer, offsets_answer, parse_alter_request, reset_answer
from connector.herder.states import FAILED, RUNNING, STOPPED
from connector.herder.validation import invalid_config_message, plugin_config_keys, validate_connector_config

log = logging.getLogger(__name__)


class HerderCommon:
    """Mixed into both herders; they provide ``worker``, ``providers``, ``_cluster_id``, ``_started``, ``_spark``,
    ``_set_target``, ``task_configs``, ``connector_config`` and ``_while_stopped``."""

    worker: dict[str, str]
    providers: ConfigProviders
    _cluster_id: str | None
    _started: bool  # the connectors are known (loaded, or read from the config topic)
    _spark: Any  # the SparkSession, or a Future of it while it starts
    _set_target: Callable[[str, str], None]  # each herder's own: how a target state is recorded
    task_configs: Callable[[str], list[dict[str, Any]]]
    connector_config: Callable[[str], dict[str, str]]  # a 404 for an unknown connector
    # The config of a STOPPED connector whose job has ended (else a 400), held unchanged while offsets are written.
    _while_stopped: Callable[[str], ContextManager[dict[str, str]]]

    def ready(self) -> bool:
        """True once the connectors are known and the Spark session is up."""
        if not self._started:
            return False
        if isinstance(self._spark, Future):
            return self._spark.done() and self._spark.exception() is None
        return True

    def server_info(self) -> dict:
        if self._cluster_id is None:
            self._cluster_id = kafka_cluster_id(self.worker)
        return {"version": version(), "commit": commit(), "kafka_cluster_id": self._cluster_id}

    def validate(self, config: dict[str, str]) -> dict:
        return validate_connector_config(config, self.worker, self.providers)

    def _checked(self, name: str, config: dict[str, str]) -> dict[str, str]:
        """``config`` named ``name`` (the URL's), or a 400 when it names another connector or is invalid."""
        config = self._named(name, config)
        check_config(config, self.worker, self.providers)
        return config

    @staticmethod
    def plugin_config(plugin: str) -> list[dict]:
        return plugin_config_keys(plugin)

    def pause(self, name: str) -> None:
        self._set_target(name, "PAUSED")

    def resume(self, name: str) -> None:
        self._set_target(name, RUNNING)

    def stop(self, name: str) -> None:
        self._set_target(name, STOPPED)

    def tasks_config(self, name: str) -> dict:
        return {f"{name}-{entry['id']['task']}": entry["config"] for entry in self.task_configs(name)}

    @staticmethod
    def _named(name: str, config: dict[str, str]) -> dict[str, str]:
        given = config.get("name")
        if given is not None and given != name:
            raise BadRequestError(f"Connector name configuration ({given}) doesn't match connector name "
                                  f"in the URL ({name})")
        return dict(config) if given is not None else {**config, "name": name}

    def _check_tracking(self, reset: bool = False) -> None:
        check_tracking(self.worker, reset)

    # --- offsets and the dead letter queue ----------------------------------------------------

    def offsets(self, name: str) -> dict:
        return offsets_answer(self._sink_config(self.connector_config(name)))

    def alter_offsets(self, name: str, body: dict) -> dict:
        changes = parse_alter_request(body)
        with self._while_stopped(name) as config:
            return alter_answer(self._sink_config(config), changes)

    def reset_offsets(self, name: str) -> dict:
        with self._while_stopped(name) as config:
            return reset_answer(self._sink_config(config))

    def replay_dlq(self, name: str) -> dict:
        """``icefloe dlq replay`` with the connector's current config (it may keep running meanwhile)."""
        return replay_answer(self._sink_config(self.connector_config(name)))

    def _sink_config(self, config: dict[str, str]) -> SinkConfig:
        """The config a job would run with: placeholders resolved now, never written back."""
        return SinkConfig.parse(self.providers.resolve(dict(config)), self.worker)



def kafka_cluster_id(worker: dict[str, str]) -> str | None:
    """The cluster id GET / shows (None while the broker cannot be reached: GET / still answers, as Connect's)."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    from connector.kafka.client_config import admin_config

    conf: dict[str, Any] = dict(admin_config(worker, {}, connector_name="worker"))
    try:
        return AdminClient(conf).list_topics(timeout=5).cluster_id
    except KafkaException as exc:
        log.warning("Could not read the Kafka cluster id: %s", exc)
        return None


def check_config(config: dict[str, str], worker: dict[str, str], providers: ConfigProviders) -> None:
    """A config a connector can be created with, or Connect's 400 listing what is wrong."""
    message = invalid_config_message(validate_connector_config(config, worker, providers))
    if message:
        raise BadRequestError(message)


def check_tracking(worker: dict[str, str], reset: bool = False) -> None:
    """Connect's 403s when topic tracking (or resetting it) is turned off."""
    if worker.get("topic.tracking.enable", "true").strip().lower() == "false":
        raise ForbiddenError("Topic tracking is disabled.")
    if reset and worker.get("topic.tracking.allow.reset", "true").strip().lower() == "false":
        raise ForbiddenError("Topic tracking reset is disabled.")


def patched(config: Mapping[str, str], patch: Mapping[str, str | None]) -> dict[str, str]:
    """``config`` with ``patch`` merged in, as ``PATCH /connectors/{name}/config`` does: ``None`` removes a key."""
    merged = dict(config)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def halt_all(runtimes: Iterable[ConnectorRuntime]) -> None:
    """End every job after its in-flight commit: all signalled first, then awaited."""
    runtimes = list(runtimes)
    for runtime in runtimes:
        runtime.signal_stop()
    for runtime in runtimes:
        with runtime.lock:
            runtime.halt()


def restart_on(runtime: ConnectorRuntime, include_tasks: bool, only_failed: bool) -> dict | None:
    """Restart a connector running here: None (204) for a plain restart, else the status with RESTARTING
    instances (202), as Connect answers."""
    with runtime.lock:
        if not include_tasks and not only_failed:
            runtime.restart(connector=True, tasks=set())
            return None
        status = runtime.status()
        connector = not only_failed or status["connector"]["state"] == FAILED
        tasks = {entry["id"] for entry in status["tasks"]
                 if include_tasks and (not only_failed or entry["state"] == FAILED)}
        runtime.mark_restarting(connector, tasks)
        answer = runtime.status()
        runtime.restart(connector, tasks)
    return answer


def restart_task_on(runtime: ConnectorRuntime, task: int) -> None:
    """Restart one task of a connector running here (a 404 for a task it does not have)."""
    with runtime.lock:
        if task not in runtime.task_ids():
            raise NotFoundError(f"Unknown task: {runtime.name}-{task}")
        runtime.restart(connector=False, tasks={task})


def replay_answer(config: SinkConfig) -> dict:
    """``POST /connectors/{name}/dlq/replay``: ``icefloe dlq replay`` with the connector's config."""
    from connector.dlq_replay import DlqReplay, ReplayRefused

    try:
        return DlqReplay(config).run().as_dict()
    except ReplayRefused as exc:
        raise BadRequestError(f"Cannot replay: {exc}") from exc


def task_config(config: dict[str, str]) -> dict[str, str]:
    """A task's config as Connect lists it: the connector's plus ``task.class``."""
    connector_class = config.get("connector.class", "")
    task_class = connector_class[:-len("Connector")] + "Task" if connector_class.endswith("Connector") else ""
    return {**config, "task.class": task_class} if task_class else dict(config)


_COMMIT: list[str] = []


def commit() -> str:
    """The source tree's git commit (16 hex digits, as Connect shows its own), or "unknown"."""
    if not _COMMIT:
        try:
            out = subprocess.run(["git", "rev-parse", "--short=16", "HEAD"], cwd=Path(__file__).parent,
                                 capture_output=True, text=True, timeout=5)
            _COMMIT.append(out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown")
        except OSError:
            _COMMIT.append("unknown")
    return _COMMIT[0]
