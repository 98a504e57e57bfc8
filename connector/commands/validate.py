"""``icefloe validate CONFIG.json``: the REST worker's ``config/validate`` answer, on the command line.

    icefloe validate CONFIG.json [--worker FILE] [--bootstrap-servers HOST:PORT] [--offline]

The config is checked by the same rule as ``PUT /connector-plugins/.../config/validate``
(connector/herder/validation.py): every key's parse and validator, each SMT,
predicate and converter class with its own keys, config-provider placeholders,
the per-table keys, and the catalog class (imported, never opened). No broker
is needed and nothing is written to disk. Without ``--offline``, the catalog is
asked where that writes nothing (connector/commands/catalog_contact.py: a REST, Hive,
Glue, ... catalog, a SQL catalog's database server; not a SQLite file), and with a
Kafka cluster known (``--worker`` with ``bootstrap.servers`` or
``--bootstrap-servers``) the topics are looked up on it, as ``icefloe run`` would;
each within 15 s.

Prints Connect's ``ConfigInfos`` (plus ``connector``, ``unused`` and
``warnings``) as JSON on stdout, and each error and warning as a line on
stderr. Exit codes: 0 valid, 2 invalid (the errors name their keys, a catalog's
refusal too), 1 the Kafka cluster or the catalog could not be asked.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from confluent_kafka import KafkaException

from connector.api.errors import ConfigException

BROKER_TIMEOUT_SECONDS = 15.0
CATALOG_TIMEOUT_SECONDS = 15.0


def validate(args: Any) -> int:
    """Run ``icefloe validate``; the exit code (see the module doc)."""
    from connector.config.java_properties import load_worker_properties
    from connector.config.providers import resolve_worker_properties
    from connector.config.sink_config import load_connector_file
    from connector.herder.validation import validation_report

    try:
        worker = resolve_worker_properties(load_worker_properties(args.worker)) if args.worker else {}
        props = load_connector_file(args.config)
    except (ConfigException, OSError) as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    if args.bootstrap_servers:
        worker["bootstrap.servers"] = args.bootstrap_servers
    report = validation_report(props, worker)
    reachable = True
    if report["error_count"] == 0 and not args.offline:
        reachable = _check_catalog(report, props, worker)
    if report["error_count"] == 0 and worker.get("bootstrap.servers") and not args.offline:
        reachable = _check_topics(report, props, worker) and reachable
    print(json.dumps(report, indent=2))
    _print_lines(report)
    if report["error_count"]:
        return 2
    return 0 if reachable else 1


def _check_topics(report: dict, props: dict[str, str], worker: dict[str, str]) -> bool:
    """Look the topics up on the cluster, as ``icefloe run`` does first; False when it cannot be asked.

    A listed topic that does not exist fails ``run``, so it is an error on ``topics``;
    a ``topics.regex`` that matches nothing yet is only a warning (the job waits for topics).
    """
    from connector.config.providers import ConfigProviders
    from connector.kafka.client_config import consumer_config
    from connector.kafka.topics import UnknownTopicError, resolve_partitions

    resolved = ConfigProviders.from_worker(worker).resolve(props)
    topics = [t.strip() for t in resolved.get("topics", "").split(",") if t.strip()]
    regex = resolved.get("topics.regex") or None
    try:
        conf = consumer_config(worker, resolved, connector_name=resolved.get("name", ""))
        partitions = resolve_partitions(conf, topics, regex, timeout=BROKER_TIMEOUT_SECONDS)
    except UnknownTopicError as exc:
        _add_error(report, "topics", str(exc))
        return True
    except ConfigException as exc:  # a worker or consumer.override.* setting librdkafka cannot use
        _add_error(report, None, str(exc))
        return True
    except KafkaException as exc:
        report["broker"] = {"bootstrap.servers": worker["bootstrap.servers"], "error": str(exc)}
        return False
    if regex and not partitions:
        report["warnings"].append(f"topics.regex={regex} matches no topic on the Kafka cluster yet")
    report["broker"] = {"bootstrap.servers": worker["bootstrap.servers"], "partitions": len(partitions)}
    return True


def _check_catalog(report: dict, props: dict[str, str], worker: dict[str, str]) -> bool:
    """Ask the catalog as ``icefloe run`` would first (where that writes nothing); False when it cannot be asked.

    A refusal (credentials, access, warehouse, a missing library) fails ``run``, so it is an error;
    an unreachable catalog is reported like an unreachable broker (exit 1).
    """
    from connector.commands.catalog_contact import contact_catalog
    from connector.config.providers import ConfigProviders
    from connector.tolerance.catalog_faults import CatalogRefused, CatalogUnavailable

    resolved = ConfigProviders.from_worker(worker).resolve(props)
    try:
        asked = contact_catalog(resolved, CATALOG_TIMEOUT_SECONDS)
    except CatalogRefused as exc:
        _add_error(report, "iceberg.catalog.uri", str(exc))
        return True
    except CatalogUnavailable as exc:
        report["catalog"] = {"error": str(exc)}
        return False
    except Exception as exc:  # noqa: BLE001 - the job would fail on it too: say it in one line
        _add_error(report, "iceberg.catalog.uri", f"Opening the catalog failed: {type(exc).__name__}: {exc}")
        return True
    if asked is not None:
        report["catalog"] = {"answered": asked}
    return True


def _add_error(report: dict, key: str | None, message: str) -> None:
    """Attach an error to ``key``'s entry of the ConfigInfos (or a new entry without a definition)."""
    for config in report["configs"]:
        if config["value"]["name"] == (key or ""):
            config["value"]["errors"].append(message)
            break
    else:
        report["configs"].append({"definition": None, "value": {
            "name": key or "", "value": None, "recommended_values": [], "errors": [message], "visible": True}})
    report["error_count"] += 1


def _print_lines(report: dict) -> None:
    """The errors (per key), warnings and unused keys, one line each, on stderr."""
    from connector.config.sink_config import unknown_key_note

    if report["error_count"]:
        print(f"Invalid configuration: {report['error_count']} error(s)", file=sys.stderr)
        for config in report["configs"]:
            for error in config["value"]["errors"]:
                print(f"  {config['value']['name'] or '(config)'}: {error}", file=sys.stderr)
    for note in report["warnings"]:
        print(f"Warning: {note}", file=sys.stderr)
    for key in report["unused"]:
        print(f"Warning: {unknown_key_note(key)}", file=sys.stderr)
    catalog = report.get("catalog") or {}
    if "error" in catalog:
        print(f"Could not reach the catalog: {catalog['error']}", file=sys.stderr)
    broker = report.get("broker") or {}
    if "error" in broker:
        print(f"Could not reach the Kafka cluster at {broker['bootstrap.servers']} to check the topics: "
              f"{broker['error']}", file=sys.stderr)
