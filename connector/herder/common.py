"""What both herders (standalone and distributed) do the same way: the answers that only read the worker's
properties, the rules they share (a config's name, validation, topic tracking, restarting a connector that
runs here, the DLQ replay, a task's config) and the server info."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Any, Callable

from connector.config.providers import ConfigProviders
from connector.config.sink_config import SinkConfig
from connector.herder.connector_runtime import ConnectorRuntime
from connector.herder.errors import BadRequestError, ForbiddenError
from connector.herder.plugins import version
from connector.herder.states import FAILED, RUNNING, STOPPED
from connector.herder.validation import invalid_config_message, plugin_config_keys, validate_connector_config

log = logging.getLogger(__name__)


class HerderCommon:
    """Mixed into both herders; they provide ``worker``, ``providers``, ``_cluster_id``, ``_set_target`` and
    ``task_configs``."""

    worker: dict[str, str]
    providers: ConfigProviders
    _cluster_id: str | None
    _set_target: Callable[[str, str], None]  # each herder's own: how a target state is recorded
    task_configs: Callable[[str], list[dict[str, Any]]]

    def server_info(self) -> dict:
        if self._cluster_id is None:
            self._cluster_id = kafka_cluster_id(self.worker)
        return {"version": version(), "commit": commit(), "kafka_cluster_id": self._cluster_id}

    def validate(self, config: dict[str, str]) -> dict:
        return validate_connector_config(config, self.worker, self.providers)

    def _validate(self, config: dict[str, str]) -> None:
        check_config(config, self.worker, self.providers)

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
