"""Kafka Connect 3.9's REST API as a FastAPI app (``ConnectorsResource``, ``ConnectorPluginsResource``,
``LoggingResource``, ``RootResource``).

The app checks the shape of what it is sent (JSON, objects, ``name``, ``config``,
``initial_state``, query flags) and answers in Connect's exact forms: JSON key
order, ``Location`` headers, empty bodies on 202/204. Everything about
connectors — state rules, validation, Connect's error texts — is the herder's;
its methods are synchronous, so they run in the thread pool. Bodies are parsed
here rather than by FastAPI so a bad body is a 400 in Connect's error shape,
never FastAPI's 422.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Protocol
from urllib.parse import quote

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from connector.api.java.value_of import java_str
from connector.herder import plugins
from connector.herder.errors import BadRequestError, ConnectRestError, NotFoundError
from connector.herder.validation import invalid_config_message, require_known_connector
from connector.rest.errors import install_error_handlers
from connector.rest.loggers import Loggers

INITIAL_STATES = ("RUNNING", "PAUSED", "STOPPED")
_CREATE_SHAPE = 'expected {"name": "...", "config": {...}}'
_HEALTHY = "Worker has completed startup and is ready to handle requests."
_STARTING = "Worker is still starting up."
_UNHEALTHY = "Worker was unable to handle this request and may be unable to handle other requests."


class HerderApi(Protocol):
    """What the REST layer calls (connector/herder/herder.py implements it)."""

    def ready(self) -> bool: ...
    def server_info(self) -> dict: ...
    def connector_names(self) -> list[str]: ...
    def connector_info(self, name: str) -> dict: ...
    def connector_config(self, name: str) -> dict[str, str]: ...
    def create_connector(self, name: str, config: dict[str, str], initial_state: str | None) -> dict: ...
    def put_connector_config(self, name: str, config: dict[str, str]) -> tuple[bool, dict]: ...
    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> dict: ...
    def connector_status(self, name: str) -> dict: ...
    def task_status(self, name: str, task: int) -> dict: ...
    def task_configs(self, name: str) -> list[dict]: ...
    def tasks_config(self, name: str) -> dict: ...
    def restart_connector(self, name: str, include_tasks: bool, only_failed: bool) -> dict | None: ...
    def restart_task(self, name: str, task: int) -> None: ...
    def pause(self, name: str) -> None: ...
    def resume(self, name: str) -> None: ...
    def stop(self, name: str) -> None: ...
    def delete_connector(self, name: str) -> None: ...
    def active_topics(self, name: str) -> dict: ...
    def reset_active_topics(self, name: str) -> None: ...
    def offsets(self, name: str) -> dict: ...
    def alter_offsets(self, name: str, body: dict) -> dict: ...
    def reset_offsets(self, name: str) -> dict: ...
    def replay_dlq(self, name: str) -> dict: ...
    def maintenance(self, name: str) -> dict: ...
    def validate(self, config: dict[str, str]) -> dict: ...
    def plugin_config(self, plugin: str) -> list[dict]: ...


def create_app(herder: HerderApi, worker: dict[str, str]) -> FastAPI:
    """The worker's REST app; ``worker`` is the worker's properties (for what the app itself reads)."""
    app = FastAPI(title="icefloe Connect REST API", docs_url=None, redoc_url=None, openapi_url=None,
                  redirect_slashes=False)
    app.state.herder = herder
    app.state.worker = worker
    app.state.loggers = Loggers()
    install_error_handlers(app)
    _root_routes(app, herder)
    _connector_routes(app, herder)
    _task_and_state_routes(app, herder)
    _offset_routes(app, herder)
    _name_routes(app, herder)
    _plugin_routes(app, herder)
    _logger_routes(app, app.state.loggers)
    return app


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return await run_in_threadpool(fn, *args)


def _empty(status: int) -> Response:
    return Response(status_code=status)


# --- bodies ----------------------------------------------------------------------------------


async def _json_object(request: Request, what: str) -> dict[str, Any]:
    """The body as a JSON object, or a 400 saying what is wrong with it."""
    raw = await request.body()
    if not raw.strip():
        raise BadRequestError(f"Request body is empty: {what}")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise BadRequestError(f"Malformed JSON in request body: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequestError(f"Request body must be a JSON object, not {_json_kind(body)}: {what}")
    return body


#: What a JSON value is called in a 400's message, by its Python type (bool before int: a bool is an int).
_JSON_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"), (bool, "a boolean"), ((int, float), "a number"), (str, "a string"), (list, "an array"),
)


def _json_kind(value: Any) -> str:
    return next((kind for types, kind in _JSON_KINDS if isinstance(value, types)), "an object")


def _text(value: Any) -> str:
    """A JSON scalar as Connect's Jackson reads it into a String (``true``, ``1``, ``1.5``)."""
    return java_str(value)


def _string_map(body: Any, where: str, allow_null: bool = False) -> dict[str, Any]:
    """A flat ``{str: str}`` config (``null`` kept only where it means "remove")."""
    if not isinstance(body, dict):
        raise BadRequestError(f"{where} must be a JSON object of strings, not {_json_kind(body)}")
    config: dict[str, Any] = {}
    nulls = []
    for key, value in body.items():
        if value is None:
            if not allow_null:
                nulls.append(key)
            config[key] = None
        elif isinstance(value, (dict, list)):
            raise BadRequestError(f"Invalid value for configuration {key}: expected a string, "
                                  f"not {_json_kind(value)}")
        else:
            config[key] = _text(value)
    if nulls:
        message = invalid_config_message({"error_count": len(nulls), "configs": [
            {"value": {"errors": ["Null value can not be supplied as the configuration value."]}} for _ in nulls]})
        raise BadRequestError(message or "")
    return config


def _check_name(name: str, config: dict[str, Any]) -> None:
    """``checkAndPutConnectorConfigName``: the config's name must be the URL's; absent, it is set."""
    included = config.get("name")
    if included is not None:
        if included != name:
            raise BadRequestError(f"Connector name configuration ({included}) doesn't match connector name "
                                  f"in the URL ({name})")
    else:
        config["name"] = name


def _location(request: Request, name: str) -> str:
    return f"{str(request.base_url).rstrip('/')}/connectors/{quote(name)}"


def _flag(request: Request, name: str, default: bool) -> bool:
    """A boolean query parameter as Jersey reads one: ``true`` in any case, anything else false."""
    value = request.query_params.get(name)
    return default if value is None else value.lower() == "true"


def _task_id(text: str) -> int:
    """Jersey matches ``{task}`` only as an int; anything else is no route at all."""
    stripped = text[1:] if text[:1] in "+-" else text
    if not stripped.isascii() or not stripped.isdigit() or not -2**31 <= int(text) < 2**31:
        raise HTTPException(404)
    return int(text)


# --- routes ----------------------------------------------------------------------------------


def _root_routes(app: FastAPI, herder: HerderApi) -> None:
    @app.get("/")
    async def server_info() -> Any:
        return await _call(herder.server_info)

    @app.get("/health")
    async def health(request: Request) -> Any:
        failure = getattr(request.app.state, "startup_error", None)
        if failure is not None:  # set by the server when the herder or Spark could not start
            return JSONResponse({"status": "unhealthy", "message": f"{_UNHEALTHY} {failure}"}, status_code=500)
        if not await _call(herder.ready):
            return JSONResponse({"status": "starting", "message": _STARTING}, status_code=503)
        return {"status": "healthy", "message": _HEALTHY}


def _connector_routes(app: FastAPI, herder: HerderApi) -> None:
    @app.get("/connectors")
    async def list_connectors(request: Request) -> Any:
        names = await _call(herder.connector_names)
        expand = request.query_params.getlist("expand")
        if "expand" not in request.query_params:
            return names
        return await _call(_expanded, herder, names, expand)

    @app.post("/connectors")
    async def create_connector(request: Request) -> Any:
        body = await _json_object(request, _CREATE_SHAPE)
        name = body.get("name")
        if isinstance(name, (dict, list)):
            raise BadRequestError(f"Invalid connector name in the request body: {_CREATE_SHAPE}")
        # As Connect: no name is the empty name, which the config's validation then refuses by its key.
        name = "" if name is None else _text(name).strip()
        if body.get("config") is None:
            raise BadRequestError(f"Missing connector config in the request body: {_CREATE_SHAPE}")
        config = _string_map(body["config"], "The connector config")
        _check_name(name, config)
        require_known_connector(config)
        state = body.get("initial_state")
        if state is not None:
            if not isinstance(state, str) or state.upper() not in INITIAL_STATES:
                raise BadRequestError(f"Invalid initial_state {json.dumps(state)}: expected one of "
                                      f"{', '.join(INITIAL_STATES)}")
            state = state.upper()
        info = await _call(herder.create_connector, name, config, state)
        return JSONResponse(info, status_code=201, headers={"Location": _location(request, name)})

    @app.put("/connectors/{name}/config")
    async def put_config(name: str, request: Request) -> Any:
        config = _string_map(await _json_object(request, "expected the connector config"), "The connector config")
        _check_name(name, config)
        require_known_connector(config)
        created, info = await _call(herder.put_connector_config, name, config)
        if created:
            return JSONResponse(info, status_code=201, headers={"Location": _location(request, name)})
        return info

    @app.patch("/connectors/{name}/config")
    async def patch_config(name: str, request: Request) -> Any:
        patch = _string_map(await _json_object(request, "expected the config keys to change"),
                            "The config patch", allow_null=True)
        return await _call(herder.patch_connector_config, name, patch)


def _expanded(herder: HerderApi, names: list[str], expand: list[str]) -> dict[str, dict]:
    """``?expand=status&expand=info``; a connector deleted meanwhile is skipped, as Connect does."""
    out: dict[str, dict] = {}
    for name in names:
        try:
            entry: dict[str, Any] = {}
            if "status" in expand:
                entry["status"] = herder.connector_status(name)
            if "info" in expand:
                entry["info"] = herder.connector_info(name)
        except NotFoundError:
            continue
        out[name] = entry
    return out


def _task_and_state_routes(app: FastAPI, herder: HerderApi) -> None:
    @app.get("/connectors/{name}/tasks/{task}/status")
    async def task_status(name: str, task: str) -> Any:
        return await _call(herder.task_status, name, _task_id(task))

    @app.post("/connectors/{name}/tasks/{task}/restart")
    async def restart_task(name: str, task: str) -> Any:
        await _call(herder.restart_task, name, _task_id(task))
        return _empty(204)

    @app.post("/connectors/{name}/restart")
    async def restart(name: str, request: Request) -> Any:
        include_tasks = _flag(request, "includeTasks", False)
        only_failed = _flag(request, "onlyFailed", False)
        result = await _call(herder.restart_connector, name, include_tasks, only_failed)
        return _empty(204) if result is None else JSONResponse(result, status_code=202)


def _offset_routes(app: FastAPI, herder: HerderApi) -> None:
    @app.patch("/connectors/{name}/offsets")
    async def alter_offsets(name: str, request: Request) -> Any:
        body = await _json_object(request, 'expected {"offsets": [{"partition": {...}, "offset": {...}}]}')
        entries = body.get("offsets")
        if not entries:
            raise BadRequestError("Partitions / offsets need to be provided for an alter offsets request")
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise BadRequestError('"offsets" must be a list of {"partition": {...}, "offset": {...}} objects')
        for entry in entries:
            if not isinstance(entry.get("partition"), dict):
                raise BadRequestError('Each entry of "offsets" needs a "partition" object')
            if entry.get("offset") is not None and not isinstance(entry["offset"], dict):
                raise BadRequestError('The "offset" of an entry must be an object or null')
        return await _call(herder.alter_offsets, name, body)


#: The routes that only hand the connector's name to one herder method: HTTP method, path, the herder's
#: method, and the status of the empty answer (None: the herder's answer is the body).
_NAME_ROUTES: tuple[tuple[str, str, str, int | None], ...] = (
    ("GET", "/connectors/{name}", "connector_info", None),
    ("DELETE", "/connectors/{name}", "delete_connector", 204),
    ("GET", "/connectors/{name}/config", "connector_config", None),
    ("GET", "/connectors/{name}/topics", "active_topics", None),
    ("PUT", "/connectors/{name}/topics/reset", "reset_active_topics", 202),
    ("GET", "/connectors/{name}/status", "connector_status", None),
    ("GET", "/connectors/{name}/tasks", "task_configs", None),
    ("GET", "/connectors/{name}/tasks-config", "tasks_config", None),
    ("PUT", "/connectors/{name}/pause", "pause", 202),
    ("PUT", "/connectors/{name}/resume", "resume", 202),
    ("PUT", "/connectors/{name}/stop", "stop", 204),
    ("GET", "/connectors/{name}/offsets", "offsets", None),
    ("DELETE", "/connectors/{name}/offsets", "reset_offsets", None),
    # icefloe's own: `icefloe dlq replay` for a connector of this worker (docs/operations.md)
    ("POST", "/connectors/{name}/dlq/replay", "replay_dlq", None),
    # icefloe's own: the connector's table maintenance (a path Connect does not have, so its clients and the
    # byte-exact status answers are untouched; docs/rest-api.md)
    ("GET", "/connectors/{name}/maintenance", "maintenance", None),
)


def _name_routes(app: FastAPI, herder: HerderApi) -> None:
    for method, path, herder_method, empty_status in _NAME_ROUTES:
        app.add_api_route(path, _name_endpoint(herder, herder_method, empty_status), methods=[method],
                          name=herder_method)


def _name_endpoint(herder: HerderApi, herder_method: str, empty_status: int | None) -> Callable[..., Any]:
    async def endpoint(name: str) -> Any:
        answer = await _call(getattr(herder, herder_method), name)
        return answer if empty_status is None else _empty(empty_status)

    return endpoint


def _plugin_routes(app: FastAPI, herder: HerderApi) -> None:
    @app.get("/connector-plugins")
    async def list_plugins(request: Request) -> Any:
        return await _call(plugins.all_plugins, _flag(request, "connectorsOnly", True))

    @app.get("/connector-plugins/{plugin}/config")
    async def plugin_config(plugin: str) -> Any:
        return await _call(herder.plugin_config, plugin)

    @app.put("/connector-plugins/{plugin}/config/validate")
    async def validate(plugin: str, request: Request) -> Any:
        config = _string_map(await _json_object(request, "expected the connector config"), "The connector config",
                             allow_null=True)
        included = config.get("connector.class")
        if included is None:
            shown = ", ".join(f"{k}={'null' if v is None else v}" for k, v in config.items())
            raise BadRequestError(f"Connector config {{{shown}}} contains no connector type")
        if not _normalized(included).endswith(_normalized(plugin)):
            raise BadRequestError(f"Included connector type {included} does not match request type {plugin}")
        return await _call(herder.validate, config)


def _normalized(plugin: str) -> str:
    """Connect's ``normalizedPluginName``: a trailing ``Connector`` removed."""
    suffix = "Connector"
    return plugin[: -len(suffix)] if plugin.endswith(suffix) and len(plugin) > len(suffix) else plugin


def _logger_routes(app: FastAPI, loggers: Loggers) -> None:
    @app.get("/admin/loggers")
    async def all_levels() -> Any:
        return loggers.all_levels()

    @app.get("/admin/loggers/{logger}")
    async def level(logger: str) -> Any:
        return loggers.level(logger)

    @app.put("/admin/loggers/{logger}")
    async def set_level(logger: str, request: Request) -> Any:
        body = await _json_object(request, 'expected {"level": "DEBUG"}')
        level_value = body.get("level")
        if isinstance(level_value, (dict, list)):
            raise BadRequestError("The 'level' parameter must be a string such as \"DEBUG\"")
        changed = loggers.set_level(logger, level_value)
        if (request.query_params.get("scope") or "worker").lower() == "cluster":
            return _empty(204)  # one worker is the whole cluster: applied here, as every worker would
        return changed


__all__ = ["create_app", "HerderApi", "ConnectRestError"]
