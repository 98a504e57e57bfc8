"""HasHeaderKey: true for records with at least one header with the configured key."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, non_empty_string
from connector.api.record import SinkRecord
from smt.base import Predicate

NAME_CONFIG = "name"


class HasHeaderKey(Predicate):
    """A predicate which is true for records with at least one header with the configured name."""

    CONFIG_DEF = ConfigDef().define(NAME_CONFIG, ConfigType.STRING, validator=non_empty_string,
                                    importance="medium", doc="The header name.")

    name: str | None = None

    def _configure(self, config: dict[str, Any]) -> None:
        self.name = config[NAME_CONFIG]

    def test(self, record: SinkRecord) -> bool:
        return any(header.key == self.name for header in record.headers)

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{self.name}'}}"
