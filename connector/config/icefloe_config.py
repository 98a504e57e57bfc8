"""icefloe's own connector keys (``icefloe.*``): what Kafka Connect and the Iceberg sink have no key for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigType, at_least

COMMIT_MAX_RECORDS = "icefloe.commit.max-records"
DEFAULT_COMMIT_MAX_RECORDS = 5_000_000

ICEFLOE_CONFIG = (
    ConfigDef()
    .define(COMMIT_MAX_RECORDS, ConfigType.LONG, DEFAULT_COMMIT_MAX_RECORDS, at_least(0), "medium",
            "most source offsets one commit cycle covers, over all partitions; a backlog larger than this "
            "is read and committed in several cycles, one after another, so a crash loses at most one "
            "cycle's work and progress is visible as it goes. `0`: no bound (one cycle reads everything "
            "up to the end offsets seen at its start)")
)


@dataclass(frozen=True)
class IcefloeConfig:
    commit_max_records: int  # 0: unbounded


def is_icefloe_key(key: str) -> bool:
    return key in ICEFLOE_CONFIG.config_keys


def parse_icefloe_config(props: Mapping[str, Any]) -> IcefloeConfig:
    values = ICEFLOE_CONFIG.parse(props)
    return IcefloeConfig(commit_max_records=values[COMMIT_MAX_RECORDS])
