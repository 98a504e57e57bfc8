"""A small, faithful stand-in for a Kafka Connect 3.9 worker's REST API, for the deploy tests.

It keeps configs in memory and answers the calls a deploy makes with Connect's own
shapes (../shared/reference/connect-3.9-rest-exchanges.json): ``ConnectorInfo`` with
201 + ``Location`` on create and 200 on update, ``ConnectorStateInfo``, 204 on delete,
``{"error_code", "message"}`` errors with Connect's texts. A config with ``"fail": "true"``
gets a FAILED task with a Java-style trace, one with ``"stuck": "true"`` never gets its
tasks; right after a PUT the tasks are not assigned yet (``"tasks": []``), as on a real
worker, so a deploy has to wait for them.
"""

from __future__ import annotations

import base64
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

WORKER_ID = "127.0.0.1:8083"
ICEBERG_SINK = "org.apache.iceberg.connect.IcebergSinkConnector"
FAIL_TRACE = (
    "org.apache.kafka.connect.errors.ConnectException: Exiting WorkerSinkTask due to unrecoverable exception.\n"
    "\tat org.apache.kafka.connect.runtime.WorkerSinkTask.deliverMessages(WorkerSinkTask.java:636)\n"
    "Caused by: org.apache.iceberg.exceptions.NoSuchTableException: Table does not exist: demo.missing\n"
)


@dataclass
class FakeWorker:
    credentials: tuple[str, str] | None = None
    configs: dict[str, dict[str, str]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    paused: set[str] = field(default_factory=set)  # as after PUT .../pause
    stopped: set[str] = field(default_factory=set)  # as after PUT .../stop: no tasks
    stop_delay: int = 0  # status reads that still show tasks after a stop
    _fresh: set[str] = field(default_factory=set)  # PUT since the last status read: tasks not assigned yet

    def count(self, method: str, prefix: str = "/") -> int:
        return sum(1 for m, p in self.requests if m == method and p.startswith(prefix))


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error_code": status, "message": message}, status_code=status)


def _java_map(config: dict[str, str]) -> str:
    """How Connect renders a config in "contains no connector type" (a Java Map's toString)."""
    return "{" + ", ".join(f"{k}={v}" for k, v in config.items()) + "}"


def _info(name: str, config: dict[str, str]) -> dict[str, Any]:
    tasks = [{"connector": name, "task": t} for t in range(int(config.get("tasks.max", "1")))]
    return {"name": name, "config": config, "tasks": tasks, "type": "sink"}


def build_app(worker: FakeWorker) -> FastAPI:
    app = FastAPI()

    @app.middleware("http")
    async def record_and_authenticate(request: Request, call_next):
        worker.requests.append((request.method, request.url.path))
        header = request.headers.get("authorization")
        worker.authorizations.append(header)
        if worker.credentials is not None:
            expected = "Basic " + base64.b64encode(":".join(worker.credentials).encode()).decode()
            if header != expected:
                return _error(401, "User cannot access the resource.")
        return await call_next(request)

    @app.exception_handler(StarletteHTTPException)
    async def connect_shaped(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        text = {404: "HTTP 404 Not Found", 405: "HTTP 405 Method Not Allowed"}.get(exc.status_code, str(exc.detail))
        return _error(exc.status_code, text)

    @app.get("/connectors")
    def names() -> list[str]:
        return list(worker.configs)

    @app.get("/connectors/{name}/config")
    def get_config(name: str):
        if name not in worker.configs:
            return _error(404, f"Connector {name} not found")
        return worker.configs[name]

    @app.put("/connectors/{name}/config")
    async def put_config(name: str, request: Request):
        config = {str(k): str(v) for k, v in (await request.json()).items()}
        if "connector.class" not in config:
            return _error(400, f"Connector config {_java_map(config)} contains no connector type")
        if config.get("name", name) != name:
            return _error(400, f"Connector name configuration ({config['name']}) doesn't match connector "
                               f"name in the URL ({name})")
        if config.get("tasks.max", "1").strip() in ("0", "-1"):
            return _error(400, "Connector configuration is invalid and contains the following 1 error(s):\n"
                               f"Invalid value {config['tasks.max']} for configuration tasks.max: "
                               "Value must be at least 1\n"
                               "You can also find the above list of errors at the endpoint "
                               "`/connector-plugins/{connectorType}/config/validate`")
        config.setdefault("name", name)
        created = name not in worker.configs
        worker.configs[name] = config
        worker._fresh.add(name)
        if created:
            return JSONResponse(_info(name, config), status_code=201,
                                headers={"Location": f"{request.base_url}connectors/{name}"})
        return _info(name, config)

    @app.get("/connectors/{name}/status")
    def status(name: str):
        if name not in worker.configs:
            return _error(404, f"No status found for connector {name}")
        config = worker.configs[name]
        connector = {"state": "RUNNING", "worker_id": WORKER_ID}
        if name in worker.stopped and worker.stop_delay <= 0:
            return {"name": name, "connector": {"state": "STOPPED", "worker_id": WORKER_ID}, "tasks": [],
                    "type": "sink"}
        worker.stop_delay -= 1 if name in worker.stopped else 0
        if name in worker._fresh or config.get("stuck") == "true":
            worker._fresh.discard(name)
            return {"name": name, "connector": connector, "tasks": [], "type": "sink"}
        state = "PAUSED" if name in worker.paused else "RUNNING"
        connector["state"] = state
        tasks: list[dict[str, Any]] = [{"id": t, "state": state, "worker_id": WORKER_ID}
                                       for t in range(int(config.get("tasks.max", "1")))]
        if config.get("fail") == "true":
            tasks[0] = {"id": 0, "state": "FAILED", "worker_id": WORKER_ID, "trace": FAIL_TRACE}
        return {"name": name, "connector": connector, "tasks": tasks, "type": "sink"}

    @app.put("/connectors/{name}/stop")
    def stop(name: str):
        if name not in worker.configs:
            return _error(404, f"Connector {name} not found")
        worker.stopped.add(name)
        return Response(status_code=202)

    @app.delete("/connectors/{name}")
    def delete(name: str):
        if worker.configs.pop(name, None) is None:
            return _error(404, f"Connector {name} not found")
        return Response(status_code=204)

    @app.get("/connector-plugins/{plugin}/config")
    def plugin_config(plugin: str):
        if plugin != ICEBERG_SINK:
            return _error(404, f"Unknown plugin {plugin}.")
        # Only the keys the deploy looks at; the fake's one PASSWORD key has a name no heuristic would catch.
        return [
            {"name": "iceberg.catalog.uri", "type": "STRING", "required": False, "default_value": None,
             "importance": "HIGH", "documentation": "", "group": None, "width": "NONE",
             "display_name": "iceberg.catalog.uri", "dependents": [], "order": -1},
            {"name": "iceberg.catalog.jdbc.pw", "type": "PASSWORD", "required": False, "default_value": None,
             "importance": "HIGH", "documentation": "", "group": None, "width": "NONE",
             "display_name": "iceberg.catalog.jdbc.pw", "dependents": [], "order": -1},
        ]

    return app


class RunningFake:
    """The fake served by uvicorn on a free loopback port, in a thread."""

    def __init__(self, worker: FakeWorker):
        self.worker = worker
        # Bound here and handed to uvicorn, so no other process can take the port in between.
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        config = uvicorn.Config(build_app(worker), host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RunningFake:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the fake Connect worker did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.socket.close()
