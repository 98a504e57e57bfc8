"""An in-memory herder with the real one's interface and Connect's texts, for the REST layer's tests.

It keeps configs and target states in dicts and reports every task as being in
its connector's target state; validation is the real one
(``connector.herder.validation``), so create/update answers are the worker's.
"""

from __future__ import annotations

import threading

from connector.herder.errors import AlreadyExistsError, BadRequestError, NotFoundError
from connector.herder.validation import invalid_config_message, plugin_config_keys, validate_connector_config

WORKER_ID = "127.0.0.1:8083"


class FakeHerder:
    worker_id = WORKER_ID

    def __init__(self, ready: bool = True):
        self._ready = ready
        self._lock = threading.RLock()
        self.configs: dict[str, dict[str, str]] = {}
        self.targets: dict[str, str] = {}
        self.topics: dict[str, list[str]] = {}
        self.committed: dict[str, dict[tuple[str, int], int]] = {}

    # --- worker ----------------------------------------------------------------------------

    def ready(self) -> bool:
        return self._ready

    def server_info(self) -> dict:
        return {"version": "3.9.0", "commit": "icefloe", "kafka_cluster_id": "tansu_cluster"}

    def start(self) -> None:
        self._ready = True

    def shutdown(self) -> None:
        pass

    # --- configs ---------------------------------------------------------------------------

    def connector_names(self) -> list[str]:
        with self._lock:
            return list(self.configs)

    def _config(self, name: str, message: str) -> dict[str, str]:
        if name not in self.configs:
            raise NotFoundError(message)
        return self.configs[name]

    def connector_info(self, name: str) -> dict:
        with self._lock:
            config = self._config(name, f"Connector {name} not found")
            return {"name": name, "config": dict(config),
                    "tasks": [{"connector": name, "task": t} for t in self._task_ids(name)], "type": "sink"}

    def connector_config(self, name: str) -> dict[str, str]:
        with self._lock:
            return dict(self._config(name, f"Connector {name} not found"))

    def _validated(self, config: dict[str, str]) -> None:
        message = invalid_config_message(validate_connector_config(config, {}))
        if message:
            raise BadRequestError(message)

    def create_connector(self, name: str, config: dict[str, str], initial_state: str | None) -> dict:
        with self._lock:
            if name in self.configs:
                raise AlreadyExistsError(f"Connector {name} already exists")
            self._validated(config)
            self.configs[name] = dict(config)
            self.targets[name] = initial_state or "RUNNING"
            self.topics[name] = [t for t in config.get("topics", "").split(",") if t]
            self.committed[name] = {(t, 0): 3 for t in self.topics[name]}
            return self.connector_info(name)

    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, dict]:
        with self._lock:
            if config.get("name", name) != name:
                raise BadRequestError(f"Connector name configuration ({config['name']}) doesn't match connector "
                                      f"name in the URL ({name})")
            if name not in self.configs:
                return True, self.create_connector(name, config, None)
            self._validated(config)
            self.configs[name] = dict(config)
            return False, self.connector_info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> dict:
        with self._lock:
            config = dict(self._config(name, f"Connector {name} not found"))
            for key, value in patch.items():
                if value is None:
                    config.pop(key, None)
                else:
                    config[key] = value
            self._validated(config)
            self.configs[name] = config
            return self.connector_info(name)

    # --- states ----------------------------------------------------------------------------

    def _task_ids(self, name: str) -> list[int]:
        if self.targets[name] == "STOPPED":
            return []
        return list(range(int(self.configs[name].get("tasks.max", "1"))))

    def _state(self, name: str) -> dict:
        return {"state": self.targets[name], "worker_id": WORKER_ID}

    def connector_status(self, name: str) -> dict:
        with self._lock:
            self._config(name, f"No status found for connector {name}")
            return {"name": name, "connector": self._state(name),
                    "tasks": [{"id": t, **self._state(name)} for t in self._task_ids(name)], "type": "sink"}

    def task_status(self, name: str, task: int) -> dict:
        with self._lock:
            if name not in self.configs or task not in self._task_ids(name):
                raise NotFoundError(f"No status found for task {name}-{task}")
            return {"id": task, **self._state(name)}

    def task_configs(self, name: str) -> list[dict]:
        with self._lock:
            config = self._config(name, f"Connector {name} not found")
            task_config = {**config, "task.class": config["connector.class"].removesuffix("Connector") + "Task"}
            return [{"id": {"connector": name, "task": t}, "config": task_config} for t in self._task_ids(name)]

    def tasks_config(self, name: str) -> dict:
        with self._lock:
            return {f"{name}-{entry['id']['task']}": entry["config"] for entry in self.task_configs(name)}

    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> dict | None:
        with self._lock:
            self._config(name, f"Unknown connector: {name}")
            if not include_tasks and not only_failed:
                return None
            restarting = {"state": "RESTARTING", "worker_id": WORKER_ID}
            tasks = [{"id": t, **restarting} for t in self._task_ids(name)] if include_tasks and not only_failed \
                else [{"id": t, **self._state(name)} for t in self._task_ids(name)]
            connector = self._state(name) if only_failed else restarting
            return {"name": name, "connector": connector, "tasks": tasks, "type": "sink"}

    def restart_task(self, name: str, task: int) -> None:
        with self._lock:
            if name not in self.configs or task not in self._task_ids(name):
                raise NotFoundError(f"Task {name}-{task} not found")

    def _target(self, name: str, state: str) -> None:
        with self._lock:
            self._config(name, f"Unknown connector {name}")
            self.targets[name] = state

    def pause(self, name: str) -> None:
        self._target(name, "PAUSED")

    def resume(self, name: str) -> None:
        self._target(name, "RUNNING")

    def stop(self, name: str) -> None:
        self._target(name, "STOPPED")

    def delete_connector(self, name: str) -> None:
        with self._lock:
            self._config(name, f"Connector {name} not found")
            for store in (self.configs, self.targets, self.topics, self.committed):
                store.pop(name, None)  # type: ignore[attr-defined]

    # --- topics and offsets ----------------------------------------------------------------

    def active_topics(self, name: str) -> dict:
        with self._lock:
            self._config(name, f"Connector {name} not found")
            return {name: {"topics": list(self.topics[name])}}

    def reset_active_topics(self, name: str) -> None:
        with self._lock:
            self._config(name, f"Connector {name} not found")
            self.topics[name] = []

    def offsets(self, name: str) -> dict:
        with self._lock:
            self._config(name, f"Connector {name} not found")
            return {"offsets": [{"partition": {"kafka_partition": p, "kafka_topic": t}, "offset": {"kafka_offset": o}}
                                for (t, p), o in self.committed[name].items()]}

    def _require_stopped(self, name: str) -> None:
        self._config(name, f"Connector {name} not found")
        if self.targets[name] != "STOPPED":
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")

    def alter_offsets(self, name: str, body: dict) -> dict:
        with self._lock:
            self._require_stopped(name)
            for entry in body["offsets"]:
                partition = entry["partition"]
                key = (str(partition.get("kafka_topic")), int(partition.get("kafka_partition", 0)))
                if entry.get("offset") is None:
                    self.committed[name].pop(key, None)
                else:
                    self.committed[name][key] = int(entry["offset"]["kafka_offset"])
            return {"message": "The offsets for this connector have been altered successfully"}

    def replay_dlq(self, name: str) -> dict:
        with self._lock:
            self._config(name, f"Connector {name} not found")
            return {"connector": name, "dlq": "", "records": 0, "replayed": {}, "failed_again": 0, "skipped": {},
                    "position": {}}

    def maintenance(self, name: str) -> dict:
        with self._lock:
            self._config(name, f"Connector {name} not found")
            return {"name": name, "enabled": True, "running": False, "round_started": None, "last_round": None,
                    "tables": {}}

    def reset_offsets(self, name: str) -> dict:
        with self._lock:
            self._require_stopped(name)
            self.committed[name] = {}
            return {"message": "The offsets for this connector have been reset successfully"}

    # --- plugins ---------------------------------------------------------------------------

    def validate(self, config: dict[str, str]) -> dict:
        return validate_connector_config(config, {})

    def plugin_config(self, plugin: str) -> list[dict]:
        return plugin_config_keys(plugin)
