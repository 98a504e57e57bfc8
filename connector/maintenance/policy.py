"""A table's maintenance policy: its Iceberg table properties first, the connector's keys otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from connector.config.icefloe_config import (
    COMPACTION_MIN_INPUT_FILES,
    COMPACTION_SMALL_FILE_RATIO,
    DELETES_MIN_FILES,
    DELETES_MIN_RATIO,
    MANIFESTS_MIN_COUNT,
    ORPHAN_MIN_AGE_MS,
    SNAPSHOT_MAX_AGE_MS,
    SNAPSHOT_MIN_TO_KEEP,
    MaintenanceConfig,
)

TARGET_FILE_SIZE = "write.target-file-size-bytes"
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024  # Iceberg's default
MAX_SNAPSHOT_AGE = "history.expire.max-snapshot-age-ms"
MIN_SNAPSHOTS_TO_KEEP = "history.expire.min-snapshots-to-keep"
TABLE_ENABLED = "icefloe.maintenance.enabled"  # a table property: false leaves the table alone


@dataclass(frozen=True)
class TablePolicy:
    enabled: bool
    target_file_size: int
    min_input_files: int
    small_file_ratio: float
    max_snapshot_age_ms: int
    min_snapshots_to_keep: int
    orphan_min_age_ms: int
    manifests_min_count: int
    deletes_min_files: int  # a partition with this many delete files is rewritten with them applied
    deletes_min_ratio: float  # ... or with this fraction of its rows deleted

    @property
    def small_file_size(self) -> int:
        """Data files below this size are compaction candidates."""
        return int(self.target_file_size * self.small_file_ratio)


def _bool(text: str) -> bool:
    return text.strip().lower() == "true"


def table_policy(properties: Mapping[str, str], keys: MaintenanceConfig) -> TablePolicy:
    """The policy of a table with ``properties``, given the connector's keys.

    Per table, the ``icefloe.maintenance.*`` keys (but ``enabled``, ``interval-ms``,
    ``budget-ms`` and ``metadata.*``, which are the connector's) may also be set as table properties,
    e.g. through ``iceberg.tables.auto-create-props.*``; they win over the connector's.
    """
    def number(name: str, default: int) -> int:
        try:
            return int(properties[name]) if name in properties else default
        except ValueError:
            return default

    def ratio(name: str, default: float) -> float:
        try:
            return float(properties[name]) if name in properties else default
        except ValueError:
            return default

    keys = MaintenanceConfig(
        enabled=keys.enabled, interval_ms=keys.interval_ms, budget_ms=keys.budget_ms,
        min_input_files=max(2, number(COMPACTION_MIN_INPUT_FILES, keys.min_input_files)),
        small_file_ratio=ratio(COMPACTION_SMALL_FILE_RATIO, keys.small_file_ratio),
        snapshot_max_age_ms=number(SNAPSHOT_MAX_AGE_MS, keys.snapshot_max_age_ms),
        snapshot_min_to_keep=number(SNAPSHOT_MIN_TO_KEEP, keys.snapshot_min_to_keep),
        metadata_delete_old=keys.metadata_delete_old, metadata_delete_on_rest=keys.metadata_delete_on_rest,
        orphan_min_age_ms=number(ORPHAN_MIN_AGE_MS, keys.orphan_min_age_ms),
        manifests_min_count=max(2, number(MANIFESTS_MIN_COUNT, keys.manifests_min_count)),
        deletes_min_files=max(1, number(DELETES_MIN_FILES, keys.deletes_min_files)),
        deletes_min_ratio=ratio(DELETES_MIN_RATIO, keys.deletes_min_ratio))

    return TablePolicy(
        enabled=keys.enabled and _bool(properties.get(TABLE_ENABLED, "true")),
        target_file_size=max(1, number(TARGET_FILE_SIZE, DEFAULT_TARGET_FILE_SIZE)),
        min_input_files=keys.min_input_files,
        small_file_ratio=keys.small_file_ratio,
        max_snapshot_age_ms=number(MAX_SNAPSHOT_AGE, keys.snapshot_max_age_ms),
        min_snapshots_to_keep=max(1, number(MIN_SNAPSHOTS_TO_KEEP, keys.snapshot_min_to_keep)),
        orphan_min_age_ms=keys.orphan_min_age_ms,
        manifests_min_count=keys.manifests_min_count,
        deletes_min_files=keys.deletes_min_files,
        deletes_min_ratio=keys.deletes_min_ratio,
    )
