"""``icefloe serve``: a Kafka Connect-compatible worker (Connect's ``ConnectDistributed`` entry point).

The worker reads its properties as Connect does, answers HTTP at once (``/health``
says ``starting`` until the herder is ready) while the one Spark session of the
worker starts in the background, and serves every listener with uvicorn.
SIGTERM or Ctrl-C stops the listeners, lets the herder finish each job's
in-flight commit, and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import signal
import socket
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI
from starlette.routing import Route

from connector.api.errors import ConfigException
from connector.rest.app import create_app

log = logging.getLogger("icefloe.worker")

DEFAULT_LISTENER = "http://0.0.0.0:8083"
DEFAULT_DATA_DIR = "./icefloe-worker"


def serve(args: Any) -> int:
    """Run the worker until SIGTERM/SIGINT; 0 on a clean stop, 2 on a bad worker config."""
    try:
        worker = _worker_properties(args)
        listeners = _listeners(worker)
        ssl_options = [_ssl_options(worker, listener) for listener in listeners]
    except ConfigException as exc:
        log.error("Invalid worker configuration: %s", exc)
        return 2
    data_dir = Path(args.data_dir or DEFAULT_DATA_DIR)
    data_dir.mkdir(parents=True, exist_ok=True)
    spark = _start_spark(getattr(args, "spark_conf", None) or [])
    herder = _herder(worker, data_dir, spark, _worker_id(worker, listeners[0]))
    app = create_app(herder, worker)
    try:
        _install_optional(app, worker)
    except ConfigException as exc:
        log.error("Invalid worker configuration: %s", exc)
        _stop_spark(spark)
        return 2
    threading.Thread(target=_start_herder, args=(herder, spark, app), name="herder-start", daemon=True).start()
    servers = [_ListenerServer(uvicorn.Config(app, host=_bind_host(listener), port=listener.port, log_config=None,
                                              lifespan="off", **ssl))
               for listener, ssl in zip(listeners, ssl_options)]
    try:
        asyncio.run(_serve_all(servers, [_advertised_url(worker, listener) for listener in listeners], data_dir))
    finally:
        log.info("Stopping the worker: every job finishes its commit in flight")
        herder.shutdown()
        _stop_spark(spark)
    return 0


# --- worker properties -----------------------------------------------------------------------


def _worker_properties(args: Any) -> dict[str, str]:
    from connector.kafka.client_config import load_worker_properties

    worker = load_worker_properties(args.worker) if getattr(args, "worker", None) else {}
    if getattr(args, "bootstrap_servers", None):
        worker["bootstrap.servers"] = args.bootstrap_servers
    providers = _optional("connector.config.providers")
    if providers is not None and hasattr(providers, "resolve_worker_properties"):
        worker = providers.resolve_worker_properties(worker)
    if "bootstrap.servers" not in worker:
        raise ConfigException("No Kafka cluster given: pass --worker worker.properties (with bootstrap.servers) "
                              "or --bootstrap-servers HOST:PORT")
    return worker


def _optional(module: str) -> Any:
    """A module another part of the worker provides, or None while it does not exist."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


# --- listeners: connector.rest.listeners when present, else a minimal local reading -----------


@dataclass(frozen=True)
class _LocalListener:
    scheme: str
    host: str
    port: int


def _listeners(worker: dict[str, str]) -> list[Any]:
    module = _optional("connector.rest.listeners")
    if module is not None:
        return list(module.listeners(worker))
    return _local_listeners(worker)


def _local_listeners(worker: dict[str, str]) -> list[_LocalListener]:
    """LOCAL FALLBACK until connector.rest.listeners lands: ``listeners`` as a comma-separated list of URLs."""
    found = []
    for text in (worker.get("listeners") or DEFAULT_LISTENER).split(","):
        url = urlsplit(text.strip())
        if url.scheme not in ("http", "https") or url.port is None:
            raise ConfigException("listeners", text.strip(), "expected http://HOST:PORT or https://HOST:PORT")
        found.append(_LocalListener(url.scheme, url.hostname or "0.0.0.0", url.port))
    return found


def _bind_host(listener: Any) -> str:
    """Where uvicorn binds: the listener's ``bind_host`` (every interface for an empty host)."""
    return str(getattr(listener, "bind_host", None) or listener.host or "0.0.0.0")


def _ssl_options(worker: dict[str, str], listener: Any) -> dict[str, Any]:
    if listener.scheme != "https":
        return {}
    module = _optional("connector.rest.listeners")
    if module is None:
        raise ConfigException("listeners", f"https://{listener.host}:{listener.port}",
                              "https listeners need the TLS support of connector.rest.listeners")
    return dict(module.uvicorn_ssl_options(worker, listener))


def _advertised_url(worker: dict[str, str], listener: Any) -> str:
    module = _optional("connector.rest.listeners")
    if module is not None:
        return str(module.advertised_url(worker, listener))
    host = worker.get("rest.advertised.host.name") or _display_host(listener.host)
    port = worker.get("rest.advertised.port") or listener.port
    scheme = worker.get("rest.advertised.listener") or listener.scheme
    return f"{scheme}://{host}:{port}/"


def _worker_id(worker: dict[str, str], listener: Any) -> str:
    module = _optional("connector.rest.listeners")
    if module is not None:
        return str(module.worker_id(worker, listener))
    url = urlsplit(_advertised_url(worker, listener))
    return f"{url.hostname}:{url.port}"


def _display_host(host: str) -> str:
    return socket.getfqdn() if host in ("", "0.0.0.0", "::") else host


# --- optional parts: security, metrics ---------------------------------------------------------


def _install_optional(app: FastAPI, worker: dict[str, str]) -> None:
    security = _optional("connector.rest.security")
    if security is not None:
        security.install_security(app, worker)
    metrics = _optional("connector.metrics")
    if metrics is not None and hasattr(metrics, "metrics_app"):
        mount_metrics(app, metrics.metrics_app())


def mount_metrics(app: FastAPI, metrics_asgi: Any) -> None:
    """Serve ``metrics_asgi`` at ``/metrics``.

    A Route, not a Mount (a Mount answers only ``/metrics/`` and below), and the app
    wrapped in an object: Starlette would take a plain function for a request handler.
    """
    app.router.routes.insert(0, Route("/metrics", endpoint=_Asgi(metrics_asgi), methods=["GET"]))


class _Asgi:
    def __init__(self, app: Any):
        self._app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self._app(scope, receive, send)


# --- Spark and the herder ----------------------------------------------------------------------


def _start_spark(pairs: list[str]) -> Future:
    """The worker's one Spark session, started off the main thread so HTTP answers at once."""
    from connector.cli import _spark_conf
    from connector.spark.session import build_session

    starting = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-start")
    session = starting.submit(build_session, "icefloe-worker", _spark_conf(pairs))
    starting.shutdown(wait=False)
    return session


def _stop_spark(spark: Future) -> None:
    if spark.done() and spark.exception() is None:
        with contextlib.suppress(Exception):
            spark.result().stop()


def _herder(worker: dict[str, str], data_dir: Path, spark: Future, worker_id: str) -> Any:
    from connector.herder.herder import Herder

    providers_module = _optional("connector.config.providers")
    providers = providers_module.ConfigProviders.from_worker(worker) if providers_module is not None else None
    return Herder(worker, data_dir=data_dir, spark=spark, worker_id=worker_id, providers=providers)


def _start_herder(herder: Any, spark: Future, app: FastAPI) -> None:
    """Start the herder, then wait for Spark; a failure of either makes ``/health`` say unhealthy."""
    try:
        herder.start()
        spark.result()
    except Exception as exc:
        log.exception("The worker could not start")
        app.state.startup_error = f"{type(exc).__name__}: {exc}"


# --- serving -----------------------------------------------------------------------------------


class _ListenerServer(uvicorn.Server):
    """A uvicorn server that leaves signals to :func:`_serve_all` (several listeners share one stop)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _serve_all(servers: list[_ListenerServer], urls: list[str], data_dir: Path) -> None:
    def stop(signum: int, frame: Any) -> None:
        log.info("Received %s", signal.Signals(signum).name)
        for server in servers:
            server.force_exit = server.should_exit and signum == signal.SIGINT  # a second Ctrl-C: now
            server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        tasks = [asyncio.create_task(server.serve()) for server in servers]
        while not all(server.started for server in servers):
            if any(task.done() for task in tasks):
                break
            await asyncio.sleep(0.05)
        else:
            log.info("icefloe worker ready: REST API at %s (data in %s)", ", ".join(urls), data_dir.resolve())
        await asyncio.gather(*tasks)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
