"""The consumer groups a connector resumes from when its tables hold no icefloe offsets.

Apache's sink commits its source offsets to Connect's group ``connect-<name>``
(``iceberg.connect.group-id``). Tabular's sink
(``io.tabular.iceberg.connect.IcebergSinkConnector``) keeps them in its own
group, ``iceberg.control.group-id`` (default ``cg-control-<name>``), and on
start seeks there first, with ``connect-<name>`` as fallback; icefloe does the
same for Tabular's class name or when ``iceberg.control.group-id`` is set.
"""

from __future__ import annotations

from connector.config.sink_config import SinkConfig
from connector.iceberg.snapshot_offsets import tabular_control_group

TABULAR_CONNECTOR_CLASSES = ("io.tabular.iceberg.connect.IcebergSinkConnector",)


def is_tabular(config: SinkConfig) -> bool:
    return (config.connect.connector_class in TABULAR_CONNECTOR_CLASSES
            or config.iceberg.control_group_id is not None)


def resume_groups(config: SinkConfig) -> list[str]:
    """The groups to read, in order: Tabular's control group first (Tabular only), then the Connect group."""
    groups = [tabular_control_group(config)] if is_tabular(config) else []
    return list(dict.fromkeys([*groups, config.group_id]))
