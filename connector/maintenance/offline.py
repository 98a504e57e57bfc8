"""``icefloe maintain CONFIG.json``: one maintenance round, without a budget, for a stopped connector.

It needs no Kafka cluster: only the connector's catalog and tables (the static
``iceberg.tables`` and any ``--table``). Exit codes as ``icefloe run``: 0 done,
1 a table could not be maintained, 2 the configuration is invalid.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig, load_connector_file
from connector.data.catalog import load_catalog
from connector.maintenance.runner import STEPS, Maintainer

log = logging.getLogger("icefloe")


def load_config(args) -> SinkConfig:
    """The connector config of ``args.config``, placeholders resolved with ``args.worker``'s providers (if any);
    no Kafka cluster is needed."""
    from connector.config.java_properties import load_worker_properties
    from connector.config.providers import ConfigProviders, resolve_worker_properties

    worker = resolve_worker_properties(load_worker_properties(args.worker)) if args.worker else {}
    props = ConfigProviders.from_worker(worker).resolve(load_connector_file(args.config))
    return SinkConfig.parse(props, worker)


def maintain(args) -> int:
    quiet = bool(getattr(args, "quiet", False))
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = load_config(args)
    except ConfigException as exc:
        print(f"Invalid configuration: {exc}", file=sys.stderr)
        return 2
    maintainer = Maintainer(config, load_catalog(config.props))
    maintainer.note_tables(args.table or [])
    if not maintainer.tables:
        print("No table to maintain: the config names no static iceberg.tables; pass --table", file=sys.stderr)
        return 2
    bar = _bar(quiet)
    steps = len(maintainer.tables) * len(STEPS)
    if bar is not None:
        with bar:
            task = bar.add_task("maintenance", total=steps)

            def advance(table: str, step: str) -> None:
                bar.update(task, advance=1, description=f"{table}: {step}")

            report = maintainer.run_round(on_step=advance)
    else:
        report = maintainer.run_round()
    out: dict[str, Any] = {"connector": config.name, "seconds": round(report.seconds, 3), "tables": {}}
    for table, done in report.tables.items():
        out["tables"][table] = {
            "data_files": done.data_files, "average_file_size": round(done.average_file_size),
            "snapshots": done.snapshots,
            "files_compacted": done.compaction.files_removed if done.compaction else 0,
            "bytes_rewritten": done.compaction.bytes_rewritten if done.compaction else 0,
            "delete_files_applied": done.compaction.delete_files_removed if done.compaction else 0,
            "snapshots_expired": done.expiry.expired if done.expiry else 0,
            "files_deleted": (done.expiry.files_deleted if done.expiry else 0)
            + done.orphans_deleted,
        }
    out["errors"] = [{"table": f.table, "step": f.step, "error": f.error} for f in maintainer.failures]
    print(json.dumps(out))
    return 0 if not maintainer.failures else 1


def _bar(quiet: bool) -> Any:
    if quiet or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    console=Console(stderr=True))
