"""Command-line arguments several ``icefloe`` commands take, each declared once."""

from __future__ import annotations

from typing import Any

CONFIG_HELP = "connector config JSON (REST body or flat map)"


def add_cluster_arguments(command: Any) -> None:
    """``--worker`` and ``--bootstrap-servers``: the worker properties a command reads, with its Kafka cluster."""
    command.add_argument("--worker", help="Kafka Connect worker properties file")
    command.add_argument("--bootstrap-servers", help="shortcut for the worker's bootstrap.servers")


def add_catalog_arguments(command: Any, verb: str) -> None:
    """A connector config read for its catalog alone (no Kafka cluster): the config, ``--worker`` for its config
    providers, and ``--table`` for tables to ``verb`` besides its static ones (``maintenance.offline.load_config``
    reads them)."""
    command.add_argument("config", help=CONFIG_HELP)
    command.add_argument("--worker", help="Kafka Connect worker properties file (for config providers)")
    command.add_argument("--table", action="append", default=[], metavar="NS.TABLE",
                         help=f"a table to {verb} besides the config's iceberg.tables (repeatable)")
