"""RegexRouter: rename the topic with a Java regex and replacement (``$1``, ``${name}``)."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, valid_regex
from connector.api.java.regex import JavaReplacement, compile_java_regex
from connector.api.record import SinkRecord
from smt.base import Transformation

REGEX = "regex"
REPLACEMENT = "replacement"


class RegexRouter(Transformation):
    """Update the record topic using the configured regular expression and replacement string.

    Under the hood, the regex is compiled to a ``java.util.regex.Pattern``. If
    the pattern matches the whole input topic, ``java.util.regex.Matcher#replaceFirst()``
    is used with the replacement string to obtain the new topic.
    """

    CONFIG_DEF = (
        ConfigDef()
        .define(REGEX, ConfigType.STRING, validator=valid_regex, importance="high",
                doc="Regular expression to use for matching.")
        .define(REPLACEMENT, ConfigType.STRING, importance="high", doc="Replacement string.")
    )

    def _configure(self, config: dict[str, Any]) -> None:
        self.regex = compile_java_regex(config[REGEX])
        self.replacement = JavaReplacement(config[REPLACEMENT], self.regex)

    def route(self, topic: str) -> str:
        """The new topic for ``topic`` (unchanged when the regex does not match all of it)."""
        if self.regex.fullmatch(topic) is None:
            return topic
        return self.replacement.replace_first(self.regex, topic)

    def apply(self, record: SinkRecord) -> SinkRecord:
        topic = self.route(record.topic)
        if topic is record.topic:
            return record
        return record.new_record(topic, record.kafka_partition, record.key_schema, record.key,
                                 record.value_schema, record.value, record.timestamp)
