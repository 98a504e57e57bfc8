"""TimestampRouter: topic = ``topic.format`` with ``${topic}`` and ``${timestamp}`` filled in."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import ConfigException, DataException
from connector.api.java.dateformat import JavaDateFormat, UnsupportedPatternError
from connector.api.record import SinkRecord
from smt.base import Transformation

TOPIC_FORMAT = "topic.format"
TIMESTAMP_FORMAT = "timestamp.format"


class TimestampRouter(Transformation):
    """Update the record's topic field as a function of the original topic value and the record timestamp.

    This is mainly useful for sink connectors, since the topic field is often
    used to determine the equivalent entity name in the destination system
    (e.g. database table or search index name).
    """

    CONFIG_DEF = (
        ConfigDef()
        .define(TOPIC_FORMAT, ConfigType.STRING, "${topic}-${timestamp}", importance="high",
                doc="Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as "
                    "placeholders for the topic and timestamp, respectively.")
        .define(TIMESTAMP_FORMAT, ConfigType.STRING, "yyyyMMdd", importance="high",
                doc="Format string for the timestamp that is compatible with "
                    "<code>java.text.SimpleDateFormat</code>.")
    )

    topic_format: str = "${topic}-${timestamp}"

    def _configure(self, config: dict[str, Any]) -> None:
        self.topic_format = config[TOPIC_FORMAT]
        self.timestamp_format = None
        self._format_error: ValueError | None = None
        try:
            self.timestamp_format = JavaDateFormat(config[TIMESTAMP_FORMAT])
        except UnsupportedPatternError as exc:
            raise ConfigException(TIMESTAMP_FORMAT, config[TIMESTAMP_FORMAT], str(exc)) from exc
        except ValueError as exc:
            # Kafka builds its SimpleDateFormat on the first record, so a pattern Java rejects
            # fails there (IllegalArgumentException), not at configure time.
            self._format_error = exc

    def apply(self, record: SinkRecord) -> SinkRecord:
        if record.timestamp is None:
            raise DataException(f"Timestamp missing on record: {record}")
        if self._format_error is not None:
            raise ValueError(str(self._format_error))
        assert self.timestamp_format is not None  # set by _configure unless _format_error is
        formatted = self.timestamp_format.format_millis(record.timestamp)
        topic = self.topic_format.replace("${topic}", record.topic).replace("${timestamp}", formatted)
        return record.new_record(topic, record.kafka_partition, record.key_schema, record.key,
                                 record.value_schema, record.value, record.timestamp)
