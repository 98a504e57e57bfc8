"""DropHeaders: remove every header whose key is listed."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, non_empty_list
from connector.api.record import SinkRecord
from smt.base import Transformation

HEADERS_FIELD = "headers"


class DropHeaders(Transformation):
    """Removes one or more headers from each record."""

    CONFIG_DEF = ConfigDef().define(
        HEADERS_FIELD, ConfigType.LIST, validator=non_empty_list, importance="high",
        doc="The name of the headers to be removed.",
    )

    headers: frozenset[str] = frozenset()

    def _configure(self, config: dict[str, Any]) -> None:
        self.headers = frozenset(config[HEADERS_FIELD])

    def apply(self, record: SinkRecord) -> SinkRecord:
        kept = tuple(h for h in record.headers if h.key not in self.headers)
        return record.new_record(record.topic, record.kafka_partition, record.key_schema, record.key,
                                 record.value_schema, record.value, record.timestamp, kept)
