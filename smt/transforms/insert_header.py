"""InsertHeader: append a header with a literal value, parsed like Kafka's ``Values.parseString``."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, non_null
from connector.api.record import SinkRecord
from smt.base import Transformation, checked_header

HEADER_FIELD = "header"
VALUE_LITERAL_FIELD = "value.literal"


def _parse_string(text: str):
    # Imported here: connector.api.values is the Connect ``Values`` port.
    from connector.api.values import parse_string

    return parse_string(text)


class InsertHeader(Transformation):
    """Add a header to each record (existing headers, even with the same key, are kept)."""

    CONFIG_DEF = (
        ConfigDef()
        .define(HEADER_FIELD, ConfigType.STRING, validator=non_null, importance="high",
                doc="The name of the header.")
        .define(VALUE_LITERAL_FIELD, ConfigType.STRING, validator=non_null, importance="high",
                doc="The literal value that is to be set as the header value on all records.")
    )

    header: str
    literal_schema: Any = None
    literal_value: Any = None

    def _configure(self, config: dict[str, Any]) -> None:
        self.header = config[HEADER_FIELD]
        parsed = _parse_string(config[VALUE_LITERAL_FIELD])
        self.literal_schema, self.literal_value = parsed.schema, parsed.value
        self._header = checked_header(self.header, self.literal_value, self.literal_schema)

    def apply(self, record: SinkRecord) -> SinkRecord:
        headers = record.headers + (self._header,)
        return record.new_record(record.topic, record.kafka_partition, record.key_schema, record.key,
                                 record.value_schema, record.value, record.timestamp, headers)
