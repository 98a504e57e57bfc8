"""The ``icefloe`` command.

    icefloe run CONFIG.json [--worker worker.properties] [--bootstrap-servers HOST:PORT]
                            [--spark-conf KEY=VALUE ...] [--until-caught-up] [--metrics-port PORT]
    icefloe validate CONFIG.json [--worker worker.properties] [--bootstrap-servers HOST:PORT] [--offline]
    icefloe serve [--worker worker.properties] [--data-dir DIR] [--spark-conf KEY=VALUE ...]
    icefloe dlq replay CONFIG.json [--worker worker.properties] [--bootstrap-servers HOST:PORT]
    icefloe maintain CONFIG.json [--worker worker.properties] [--table NS.TABLE ...]
    icefloe show CONFIG.json [--worker worker.properties] [--table NS.TABLE ...] [--snapshots N] [--rows N]
    icefloe broker [--port PORT] [--topic NAME[:PARTITIONS] ...]
    icefloe deploy [--url URL] [--user U --password P] [--dry-run] [--delete-missing] PATH...
    icefloe migrate --from-connect URL --connector NAME [--worker FILE] [--dry-run] [--to URL] ...

Exit codes: 0 success, 1 the job failed (the message names the record or
table; for validate: the Kafka cluster given could not be asked), 2 the
configuration is invalid (the message names the key).
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from typing import Any

from connector.api.errors import ConfigException, ConnectException
from connector.commands.arguments import CONFIG_HELP, add_catalog_arguments, add_cluster_arguments
from connector.commands.migrate import add_parser as migrate_parser
from connector.commands.run import run
from connector.commands.show_table import add_parser as show_parser
from connector.commands.show_table import show
from connector.config.java_properties import load_worker_properties
from connector.config.providers import ConfigProviders, resolve_worker_properties
from connector.config.sink_config import SinkConfig, load_connector_file, unknown_key_note, unknown_keys
from connector.config.worker_keys import not_used_notes
from connector.embedded.command import add_parser as broker_parser
from connector.herder.plugins import version
from connector.log_context import ConnectorFormatter

log = logging.getLogger("icefloe")

#: The commands a module of their own carries out, imported only when run (the REST worker brings FastAPI,
#: others the catalog libraries): command → (module, its function of the parsed arguments, whether icefloe's
#: logging is set up first; the others set up their own).
DELEGATED: dict[str, tuple[str, str, bool]] = {
    "serve": ("connector.rest.server", "serve", True),
    "deploy": ("connector.deploy", "deploy", False),
    "migrate": ("connector.commands.migrate", "migrate", True),
    "validate": ("connector.commands.validate", "validate", True),
    "broker": ("connector.embedded.command", "broker", False),
    "maintain": ("connector.maintenance.offline", "maintain", False),
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command in DELEGATED:
        module, function, logs = DELEGATED[args.command]
        if logs:
            _configure_logging(args, None)
        return getattr(importlib.import_module(module), function)(args)
    if args.command == "show":
        logging.basicConfig(level=logging.WARNING, handlers=[log_handler(None)])  # the output is the table
        return show(args)
    console = _terminal(args)
    _configure_logging(args, console)
    try:
        config = _load(args)
    except ConfigException as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    if args.command == "dlq":
        return _dlq(config)
    return run(config, args, console)


def _terminal(args) -> Any:
    """A rich console on stderr when progress bars are wanted: a terminal, a run, and not --quiet."""
    if args.command != "run" or args.quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console

    return Console(stderr=True)


def _configure_logging(args, console: Any) -> None:
    level = logging.DEBUG if getattr(args, "debug", False) else logging.INFO if not args.quiet else logging.WARNING
    logging.basicConfig(level=level, handlers=[log_handler(console)])
    logging.getLogger("py4j").setLevel(logging.WARNING)


#: What every log line carries, on a terminal and piped alike: time, level, logger, message.
#: (Piped lines add milliseconds: logging's default ``asctime``.)
LOG_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def log_handler(console: Any) -> logging.Handler:
    """Piped: one plain line per record. On a terminal (``console``): rich's lines, drawn above the
    progress bars instead of through them, with the same fields (no source path, which the piped
    format does not have either). A line logged by a connector's job names it (``[name]``)."""
    if console is None:
        handler: logging.Handler = logging.StreamHandler()
        handler.setFormatter(ConnectorFormatter("%(asctime)s %(levelname)s %(name)s: %(connector)s%(message)s"))
    else:
        from rich.logging import RichHandler

        handler = RichHandler(console=console, show_path=False, log_time_format=f"[{LOG_TIME_FORMAT}]")
        handler.setFormatter(ConnectorFormatter("%(name)s: %(connector)s%(message)s"))
    return handler


def _load(args) -> SinkConfig:
    worker = resolve_worker_properties(load_worker_properties(args.worker)) if args.worker else {}
    if args.bootstrap_servers:
        worker["bootstrap.servers"] = args.bootstrap_servers
    if "bootstrap.servers" not in worker:
        raise ConfigException("No Kafka cluster given: pass --worker worker.properties (with bootstrap.servers) "
                              "or --bootstrap-servers HOST:PORT")
    for note in not_used_notes(worker):
        log.warning("Worker property %s", note)
    # Placeholders (${file:...}, ${env:...}) resolve in memory only: the files on disk keep them.
    props = ConfigProviders.from_worker(worker).resolve(load_connector_file(args.config))
    for key in unknown_keys(props):  # before parsing: a typo may be why the config is invalid
        log.warning(unknown_key_note(key))
    config = SinkConfig.parse(props, worker)
    for note in config.warnings:
        log.warning(note)
    return config


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icefloe", description="Run Kafka Connect Iceberg sink configs on Spark.")
    parser.add_argument("--version", action="version", version=f"icefloe {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("run", "run a connector config as a Spark job"),
                       ("validate", "check a connector config without running it (nothing written; the catalog and a "
                                    "given Kafka cluster are asked unless --offline)")):
        command = sub.add_parser(name, help=text)
        command.add_argument("config", help=CONFIG_HELP)
        add_cluster_arguments(command)
        command.add_argument("--quiet", action="store_true", help="only warnings and errors, no progress bars"
                             if name == "run" else "only warnings and errors")
        command.add_argument("--debug", action="store_true",
                             help="log at DEBUG (every retry attempt, librdkafka's lines) and print the traceback "
                                  "of a failure before its one-line message")
        if name == "validate":
            command.add_argument("--offline", action="store_true",
                                 help="contact neither the catalog nor the Kafka cluster (even if one is "
                                      "given): check the config alone")
        if name == "run":
            command.add_argument("--until-caught-up", action="store_true",
                                 help="read up to the end offsets seen at start, committing every "
                                      "icefloe.commit.max-records offsets, then exit (0 on success); without "
                                      "it the job runs until SIGTERM or Ctrl-C")
            command.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                                 help="a Spark setting (repeatable)")
            command.add_argument("--metrics-port", type=int, metavar="PORT",
                                 help="serve Prometheus metrics of this job on http://0.0.0.0:PORT/metrics")
    _serve_parser(sub)
    _deploy_parser(sub)
    _dlq_parser(sub)
    _migrate_parser(sub)
    _maintain_parser(sub)
    _try_it_parsers(sub)
    return parser


def _serve_parser(sub) -> None:
    serve = sub.add_parser("serve", help="run a Kafka Connect-compatible REST worker (distributed with group.id)")
    serve.add_argument("--worker", help="Kafka Connect worker properties file (listeners, bootstrap.servers, ...); "
                                        "with group.id set, the worker joins that distributed worker group")
    serve.add_argument("--bootstrap-servers", help="shortcut for the worker's bootstrap.servers")
    serve.add_argument("--data-dir", help="where a standalone worker's connector configs and states persist "
                                          "(default: ./icefloe-worker; a distributed worker keeps them in Kafka)")
    serve.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                       help="a Spark setting for the worker's session (repeatable)")
    serve.add_argument("--quiet", action="store_true", help="only warnings and errors")


def _deploy_parser(sub) -> None:
    deploy = sub.add_parser("deploy", help="deploy connector configs to a Connect REST worker, idempotently")
    deploy.add_argument("paths", nargs="+", metavar="PATH", help="connector config JSON files or directories")
    deploy.add_argument("--url", default="http://localhost:8083", help="the worker's REST URL (default: %(default)s)")
    deploy.add_argument("--user", help="HTTP basic auth user")
    deploy.add_argument("--password", help="HTTP basic auth password")
    deploy.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    deploy.add_argument("--delete-missing", action="store_true",
                        help="delete connectors on the worker that none of the PATHs defines")
    deploy.add_argument("--timeout", type=float, default=120.0,
                        help="seconds to wait for each connector and its tasks to be RUNNING (default: %(default)s)")


def _dlq_parser(sub) -> None:
    dlq = sub.add_parser("dlq", help="work with a connector's dead letter queue")
    actions = dlq.add_subparsers(dest="dlq_command", required=True)
    replay = actions.add_parser("replay", help="re-drive the DLQ's records (as it is now) through the connector's "
                                               "current config into its tables, exactly once, then exit")
    replay.add_argument("config", help=CONFIG_HELP)
    add_cluster_arguments(replay)
    replay.add_argument("--quiet", action="store_true", help="only warnings and errors")


def _dlq(config: SinkConfig) -> int:
    """``icefloe dlq replay``: prints what was replayed per table and what failed again (JSON)."""
    from connector.dlq_replay import DlqReplay, ReplayRefused

    try:
        report = DlqReplay(config).run()
    except ReplayRefused as exc:
        print(f"Cannot replay: {exc}", file=sys.stderr)
        return 2
    except ConnectException as exc:
        print(f"Replay failed: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report.as_dict()))
    return 0


def _migrate_parser(sub) -> None:
    migrate_parser(sub)


def _maintain_parser(sub) -> None:
    maintain = sub.add_parser("maintain", help="run table maintenance once (compaction, snapshot expiry, "
                                               "orphan files) for a stopped connector")
    add_catalog_arguments(maintain, "maintain")
    maintain.add_argument("--quiet", action="store_true", help="only warnings and errors, no progress bar")


def _try_it_parsers(sub) -> None:
    """``icefloe broker`` and ``icefloe show``: an embedded broker for your own data, and what landed."""
    broker_parser(sub)
    show_parser(sub)


if __name__ == "__main__":
    sys.exit(main())
