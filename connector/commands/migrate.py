"""``icefloe migrate``: move a connector from a running Kafka Connect worker to icefloe.

    icefloe migrate --from-connect URL --connector NAME [--worker FILE | --bootstrap-servers HOST:PORT]
                    [--dry-run] [--to URL] [--until-caught-up] [--spark-conf KEY=VALUE ...]

1. reads the connector's config and status from the Connect worker's REST API
   and reports every key icefloe treats differently;
2. stops the connector (``PUT /connectors/NAME/stop``) and waits until its
   tasks are gone;
3. takes over (connector/takeover/replay.py): finishes the Java coordinator's
   complete commits from the control topic;
4. prints the offsets it resumes from, per partition;
5. starts the connector in icefloe: as a job here, or on an ``icefloe serve``
   worker (``--to URL``, the same config PUT there).

``--dry-run`` reads (the worker, the tables, the control topic, the groups),
prints the plan and changes nothing.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from connector.api.errors import ConfigException, ConnectException
from connector.commands.arguments import add_cluster_arguments

#: Keys the Java sinks honour that icefloe honours differently (the keys with no effect are in
#: connector.config.no_effect, the one table the startup warnings and `icefloe validate` also use).
DIFFERENT_KEYS = {
    "iceberg.control.topic": "read only to take over from the Java sink; icefloe commits without a control topic",
    "iceberg.control.group-id": "Tabular: where a takeover resumes first; icefloe then commits to the tables",
    "tasks.max": "bounds tasks in streaming mode; a backfill (--until-caught-up) uses all of Spark's parallelism",
}


def differences(config: dict[str, str]) -> list[str]:
    """One line per key of ``config`` that icefloe treats differently from the Java sink, set or not to its default."""
    from connector.config.no_effect import NO_EFFECT_KEYS, no_effect_prefixed

    lines = []
    for key in sorted(config):
        if key in DIFFERENT_KEYS:
            lines.append(f"{key}: {DIFFERENT_KEYS[key]}")
        elif key in NO_EFFECT_KEYS:
            lines.append(f"{key}: no effect in icefloe: {NO_EFFECT_KEYS[key]}")
    for keys, text in no_effect_prefixed(config):
        lines.append(f"{', '.join(keys)}: no effect in icefloe: {text}")
    return lines


def wait_until_stopped(client, name: str, timeout: float, poll: float = 0.5) -> dict[str, Any]:
    """Poll the status until the connector has no tasks (STOPPED); the last status."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.status(name) or {}
        if not status.get("tasks"):
            return status
        if time.monotonic() > deadline:
            raise ConnectException(f"Connector {name} still has tasks {timeout:.0f} s after the stop request: "
                                   f"{[t.get('state') for t in status['tasks']]}")
        time.sleep(poll)


def migrate(args) -> int:
    from connector.commit.coordinator import Coordinator
    from connector.config.java_properties import load_worker_properties
    from connector.config.providers import ConfigProviders, resolve_worker_properties
    from connector.config.sink_config import SinkConfig
    from connector.data.catalog import load_catalog
    from connector.deploy.client import ConnectClient, WorkerError, WorkerUnreachable
    from connector.kafka.client_config import consumer_config
    from connector.kafka.topics import resolve_partitions
    from connector.takeover.replay import plan, take_over_if_needed

    source = ConnectClient(args.from_connect)
    try:
        raw = source.connector_config(args.connector)
        status = source.status(args.connector) if raw is not None else None
    except (WorkerError, WorkerUnreachable) as exc:
        print(f"Cannot read connector {args.connector} from {args.from_connect}: {exc}", file=sys.stderr)
        return 1
    if raw is None:
        print(f"Connector {args.connector} not found on {args.from_connect}", file=sys.stderr)
        return 2
    raw = {**raw, "name": args.connector}
    try:
        worker = resolve_worker_properties(load_worker_properties(args.worker)) if args.worker else {}
        if args.bootstrap_servers:
            worker["bootstrap.servers"] = args.bootstrap_servers
        if "bootstrap.servers" not in worker:
            raise ConfigException("No Kafka cluster given: pass --worker or --bootstrap-servers")
        config = SinkConfig.parse(ConfigProviders.from_worker(worker).resolve(raw), worker)
    except ConfigException as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    tasks = (status or {}).get("tasks") or []
    state = ((status or {}).get("connector") or {}).get("state", "unknown")
    print(f"Connector {config.name} on {args.from_connect}: {state}, {len(tasks)} task(s)")
    for line in differences(raw):
        print(f"  differs: {line}")
    for key in config.unused_keys:
        print(f"  unknown to icefloe (ignored): {key}")
    for note in config.warnings:
        if " no effect in icefloe: " not in note:  # those keys are listed as differences above
            print(f"  note: {note}")

    catalog = load_catalog(config.props)
    client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
    partitions = resolve_partitions(client_conf, list(config.connect.topics), config.connect.topics_regex)
    try:
        if args.dry_run:
            takeover = plan(catalog, config, client_conf, partitions)
            print(f"Would stop {config.name} on {args.from_connect} and wait until its tasks are gone")
            print(takeover.describe() if takeover.found_events else
                  f"No events of this connector on control topic {config.iceberg.control_topic}")
            preview = Coordinator(config, catalog, client_conf, max_tasks=1, split_large=False)
            start = {**preview.start_offsets(partitions), **takeover.resume}
            _print_offsets("Would resume from", start)
            print(f"Would start {config.name} " + (f"on {args.to}" if args.to else "as a job here"))
            return 0
        source.stop(config.name)
        wait_until_stopped(source, config.name, args.timeout)
        print(f"Stopped {config.name} on {args.from_connect}")
        coordinator = Coordinator(config, catalog, client_conf, max_tasks=1, split_large=False)
        take_over_if_needed(catalog, config, client_conf, partitions)
        start = coordinator.start_offsets(partitions)
        _print_offsets("Resuming from", start)
    except ConnectException as exc:
        print(f"Migration failed: {exc}", file=sys.stderr)
        return 1
    if args.to:
        ConnectClient(args.to).put_config(config.name, {k: v for k, v in raw.items() if k != "name"})
        print(f"Started {config.name} on {args.to}")
        return 0
    from connector.commands.run import run

    return run(config, args)


def _print_offsets(title: str, offsets: dict) -> None:
    print(title + ": " + json.dumps({f"{t}[{p}]": o for (t, p), o in sorted(offsets.items())}))


def add_parser(sub) -> None:
    command = sub.add_parser("migrate", help="move a connector from a Kafka Connect worker to icefloe")
    command.add_argument("--from-connect", required=True, metavar="URL", help="the Connect worker's REST URL")
    command.add_argument("--connector", required=True, metavar="NAME", help="the connector's name")
    add_cluster_arguments(command)
    command.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    command.add_argument("--to", metavar="URL", help="start the connector on this icefloe serve worker")
    command.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the tasks to stop")
    command.add_argument("--until-caught-up", action="store_true", help="as `icefloe run --until-caught-up`")
    command.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                         help="a Spark setting (repeatable)")
    command.add_argument("--metrics-port", type=int, metavar="PORT", help="as `icefloe run --metrics-port`")
    command.add_argument("--quiet", action="store_true", help="only warnings and errors")
