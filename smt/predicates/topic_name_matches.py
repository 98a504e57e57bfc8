"""TopicNameMatches: true for records whose whole topic name matches a Java regex."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import (
    ConfigDef,
    ConfigType,
    composite,
    non_empty_string,
    valid_regex,
)
from connector.api.errors import ConfigException
from connector.api.java.regex import compile_java_regex
from connector.api.record import SinkRecord
from smt.base import Predicate

PATTERN_CONFIG = "pattern"


class TopicNameMatches(Predicate):
    """A predicate which is true for records with a topic name that matches the configured regular expression."""

    CONFIG_DEF = ConfigDef().define(
        PATTERN_CONFIG, ConfigType.STRING, validator=composite(non_empty_string, valid_regex),
        importance="medium", doc="A Java regular expression for matching against the name of a record's topic.",
    )

    pattern: Any = None
    pattern_text: str | None = None

    def _configure(self, config: dict[str, Any]) -> None:
        value = self.pattern_text = config[PATTERN_CONFIG]
        try:
            self.pattern = compile_java_regex(value)
        except ValueError as exc:
            raise ConfigException(PATTERN_CONFIG, value,
                                  f"entry must be a Java-compatible regular expression: {exc}") from exc

    def test(self, record: SinkRecord) -> bool:
        return record.topic is not None and self.pattern.fullmatch(record.topic) is not None

    def __repr__(self) -> str:
        return f"TopicNameMatches{{pattern={self.pattern_text}}}"
