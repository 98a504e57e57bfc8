"""Which table(s) a record goes to: the Iceberg sink's static, route-regex and dynamic routing."""

from __future__ import annotations

from typing import Any

from connector.api.record import SinkRecord
from connector.api.struct import Struct
from connector.config.iceberg_config import IcebergConfig


def extract_path(value: Any, path: str) -> Any:
    """Walk a dotted path through nested Structs and dicts; a missing step gives None."""
    current = value
    for part in path.split("."):
        if current is None:
            return None
        if isinstance(current, Struct):
            field = current.schema.field(part)
            current = current.get(field) if field is not None else None
        elif isinstance(current, dict):
            current = current.get(part)
        else:
            return None
    return current


class RecordRouter:
    """Routes records to destination table names."""

    def __init__(self, config: IcebergConfig):
        self.config = config
        self.static_tables = config.tables
        self.route_field = config.route_field
        self.regexes = [(t, config.table_config(t).route_regex) for t in config.tables]

    @property
    def routes_everything_everywhere(self) -> bool:
        """Static tables and no route field: every record goes to every table."""
        return not self.config.dynamic_enabled and not self.route_field

    def route(self, record: SinkRecord) -> list[str]:
        if self.routes_everything_everywhere:
            return list(self.static_tables)
        route_value = extract_path(record.value, self.route_field)
        if self.config.dynamic_enabled:
            return [str(route_value).lower()] if route_value is not None else []
        if route_value is None:
            return []
        text = str(route_value)
        return [table for table, regex in self.regexes if regex is not None and regex.fullmatch(text)]
