"""``icefloe serve``: a Kafka Connect-compatible worker (Connect's ``ConnectDistributed`` entry point).

The worker reads its properties as Connect does, answers HTTP at once (``/health``
says ``starting`` until the herder is ready) while the one Spark session of the
worker starts in the background, its executors' Python workers warmed, and
serves every listener with uvicorn.
SIGTERM or Ctrl-C stops the listeners, lets the herder finish each job's
in-flight commit, and exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Iterator

import uvicorn
from fastapi import FastAPI
from starlette.routing import Route

from connector.api.errors import ConfigException
from connector.cluster.settings import is_distributed
from connector.config.java_properties import load_worker_properties
from connector.config.providers import ConfigProviders, resolve_worker_properties
from connector.config.worker_keys import not_used_notes
from connector.gc_tuning import freeze_startup_objects
from connector.metrics import metrics_app
from connector.rest.app import create_app
from connector.rest.forwarding import install_forwarding
from connector.rest.listeners import Listener, advertised_url, uvicorn_ssl_options, worker_id
from connector.rest.listeners import listeners as rest_listeners
from connector.rest.security import install_security

log = logging.getLogger("icefloe.worker")

DEFAULT_DATA_DIR = "./icefloe-worker"


def serve(args: Any) -> int:
    """Run the worker until SIGTERM/SIGINT; 0 on a clean stop, 2 on a bad worker config."""
    try:
        worker = _worker_properties(args)
        listeners = rest_listeners(worker)
        ssl_options = [_ssl_options(worker, listener) for listener in listeners]
    except ConfigException as exc:
        log.error("Invalid worker configuration: %s", exc)
        return 2
    if not is_distributed(worker):  # a worker of a group names these as it joins, with the group's own
        for note in not_used_notes(worker):
            log.warning("Worker property %s", note)
    data_dir = Path(args.data_dir or DEFAULT_DATA_DIR)
    data_dir.mkdir(parents=True, exist_ok=True)
    spark = _start_spark(getattr(args, "spark_conf", None) or [])
    try:
        herder = _herder(worker, data_dir, spark, listeners[0])
    except ConfigException as exc:
        log.error("Invalid worker configuration: %s", exc)
        _stop_spark(spark)
        return 2
    app = create_app(herder, worker)
    if is_distributed(worker):
        install_forwarding(app, herder)
    try:
        _install_extensions(app, worker)
    except ConfigException as exc:
        log.error("Invalid worker configuration: %s", exc)
        _stop_spark(spark)
        return 2
    freeze_startup_objects()  # jobs read records in this process too (cycles small enough for the driver)
    threading.Thread(target=_start_herder, args=(herder, spark, app), name="herder-start", daemon=True).start()
    servers = [_ListenerServer(uvicorn.Config(app, host=listener.bind_host, port=listener.port, log_config=None,
                                              lifespan="off", **ssl))
               for listener, ssl in zip(listeners, ssl_options)]
    try:
        asyncio.run(_serve_all(servers, [advertised_url(worker, listener) for listener in listeners], data_dir))
    finally:
        log.info("Stopping the worker: every job finishes its commit in flight")
        herder.shutdown()
        _stop_spark(spark)
    return 0


# --- worker properties -----------------------------------------------------------------------


def _worker_properties(args: Any) -> dict[str, str]:
    worker = load_worker_properties(args.worker) if getattr(args, "worker", None) else {}
    if getattr(args, "bootstrap_servers", None):
        worker["bootstrap.servers"] = args.bootstrap_servers
    worker = resolve_worker_properties(worker)
    if "bootstrap.servers" not in worker:
        raise ConfigException("No Kafka cluster given: pass --worker worker.properties (with bootstrap.servers) "
                              "or --bootstrap-servers HOST:PORT")
    return worker


def _ssl_options(worker: dict[str, str], listener: Listener) -> dict[str, Any]:
    return dict(uvicorn_ssl_options(worker, listener)) if listener.scheme == "https" else {}


# --- security and metrics --------------------------------------------------------------------------


def _install_extensions(app: FastAPI, worker: dict[str, str]) -> None:
    install_security(app, worker)
    mount_metrics(app, metrics_app())


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
    """The worker's one Spark context (its tasks are RDD jobs: no Spark SQL session), started off the
    main thread so HTTP answers at once, with its executors' Python workers started and warm: the
    first connector deployed does not wait for them in its first cycle."""
    from connector.spark.on_demand import start_in_background
    from connector.spark.runner import warm_up
    from connector.spark.session import build_context, spark_conf_pairs

    conf = spark_conf_pairs(pairs)
    return start_in_background(lambda: warm_up(build_context("icefloe-worker", conf)))


def _stop_spark(spark: Future) -> None:
    if spark.done() and spark.exception() is None:
        with contextlib.suppress(Exception):
            spark.result().stop()


def _herder(worker: dict[str, str], data_dir: Path, spark: Future, listener: Listener) -> Any:
    """Connect's choice: a worker with ``group.id`` is a member of that distributed group, else standalone."""
    providers = ConfigProviders.from_worker(worker)
    if is_distributed(worker):
        from connector.cluster.herder import DistributedHerder

        return DistributedHerder(worker, spark=spark, worker_id=worker_id(worker, listener),
                                 url=advertised_url(worker, listener), providers=providers)
    from connector.herder.herder import Herder

    return Herder(worker, data_dir=data_dir, spark=spark, worker_id=worker_id(worker, listener), providers=providers)


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
