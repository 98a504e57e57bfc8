"""icefloe's own connector keys (``icefloe.*``): what Kafka Connect and the Iceberg sink have no key for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigType, at_least, valid_string

COMMIT_MAX_RECORDS = "icefloe.commit.max-records"
DEFAULT_COMMIT_MAX_RECORDS = 5_000_000
TRANSIENT_RETRY_TIMEOUT = "icefloe.transient.retry-timeout-ms"
DRIVER_MAX_RECORDS = "icefloe.driver.max-records"
TAKEOVER = "icefloe.takeover"

ICEFLOE_CONFIG = (
    ConfigDef()
    .define(COMMIT_MAX_RECORDS, ConfigType.LONG, DEFAULT_COMMIT_MAX_RECORDS, at_least(0), "medium",
            "most source offsets one commit cycle covers, over all partitions; a backlog larger than this "
            "is read and committed in several cycles, one after another, so a crash loses at most one "
            "cycle's work and progress is visible as it goes. `0`: no bound (one cycle reads everything "
            "up to the end offsets seen at its start)")
    .define(TRANSIENT_RETRY_TIMEOUT, ConfigType.LONG, 300_000, at_least(-1), "medium",
            "how long a job rides out a transient fault (the broker, Schema Registry or the catalog "
            "unreachable, a retriable Kafka error) by running the failed cycle again, with backoff from "
            "300 ms up to `errors.retry.delay.max.ms`; past it without a success the job fails, naming "
            "the fault. `-1`: forever; `0`: fail at once. A re-run cycle resumes from the tables' "
            "offsets, so nothing is duplicated")
    .define(DRIVER_MAX_RECORDS, ConfigType.LONG, 20_000, at_least(0), "medium",
            "a commit cycle of at most this many source offsets runs its tasks in the driver process "
            "instead of on Spark: a small backlog (`icefloe run` on a quiet topic) is committed without "
            "waiting for the Spark session to start, and a quiet stream's cycles skip a Spark job's "
            "scheduling. Larger cycles run on Spark. `0`: every cycle on Spark")
    .define(TAKEOVER, ConfigType.STRING, "auto", valid_string("auto", "control-topic", "none"), "medium",
            "taking over from a Java Iceberg sink of the same connector (docs/migration.md). `auto`: when a "
            "table's newest offsets are a Java sink's control-topic key, or the tables hold no icefloe offsets "
            "yet, first commit the complete commits the Java coordinator left on `iceberg.control.topic` and "
            "resume from the source offsets they cover; `control-topic`: do that on every start; `none`: never "
            "read the control topic (resume from the tables, then the consumer groups)")
)


@dataclass(frozen=True)
class IcefloeConfig:
    commit_max_records: int  # 0: unbounded
    transient_retry_timeout_ms: int = 300_000  # -1: forever
    driver_max_records: int = 20_000  # 0: always on Spark
    takeover: str = "auto"


def is_icefloe_key(key: str) -> bool:
    return key in ICEFLOE_CONFIG.config_keys


def parse_icefloe_config(props: Mapping[str, Any]) -> IcefloeConfig:
    values = ICEFLOE_CONFIG.parse(props)
    return IcefloeConfig(commit_max_records=values[COMMIT_MAX_RECORDS],
                         transient_retry_timeout_ms=values[TRANSIENT_RETRY_TIMEOUT],
                         driver_max_records=values[DRIVER_MAX_RECORDS], takeover=values[TAKEOVER])
