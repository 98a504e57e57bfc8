"""Declared config keys and their parsing, in the spirit of Kafka's ``ConfigDef``.

Each connector setting is declared once (name, type, default, validator,
documentation); parsing turns the string map of a JSON connector config into
typed values and raises :class:`ConfigException` with Connect's wording
(``Invalid value <v> for configuration <key>: <reason>``) on bad input.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from connector.api.errors import ConfigException

NO_DEFAULT = object()


class ConfigType(enum.Enum):
    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    BOOLEAN = "BOOLEAN"
    LIST = "LIST"
    PASSWORD = "PASSWORD"


@dataclass(frozen=True)
class ConfigKey:
    """One declared setting."""

    name: str
    type: ConfigType
    default: Any = NO_DEFAULT
    doc: str = ""
    validator: Callable[[str, Any], None] | None = None

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT


def parse_value(key: ConfigKey, raw: Any) -> Any:
    """Parse one raw (string, or JSON scalar) value as ``key``'s type."""
    if raw is None:
        raise ConfigException(key.name, raw, "Null value can not be supplied as the configuration value.")
    text = raw if isinstance(raw, str) else str(raw).lower() if isinstance(raw, bool) else str(raw)
    value = _parse_typed(key, text.strip() if key.type is not ConfigType.PASSWORD else text)
    if key.validator is not None:
        key.validator(key.name, value)
    return value


def _parse_typed(key: ConfigKey, text: str) -> Any:
    if key.type in (ConfigType.STRING, ConfigType.PASSWORD):
        return text
    if key.type is ConfigType.BOOLEAN:
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise ConfigException(key.name, text, "Expected value to be either true or false")
    if key.type in (ConfigType.INT, ConfigType.LONG):
        try:
            number = int(text)
        except ValueError:
            raise ConfigException(key.name, text, f"Not a number of type {key.type.value}") from None
        bound = 2**31 if key.type is ConfigType.INT else 2**63
        if not -bound <= number < bound:
            raise ConfigException(key.name, text, f"Not a number of type {key.type.value}")
        return number
    return split_list(text)


def split_list(text: str | None) -> list[str]:
    """Connect's LIST parsing: comma-separated, trimmed, empty string → empty list."""
    if text is None or not text.strip():
        return []
    return [item.strip() for item in text.split(",")]


def parse_config(keys: Mapping[str, ConfigKey], props: Mapping[str, Any]) -> dict[str, Any]:
    """Typed values for every declared key: given, else default, else an error."""
    parsed: dict[str, Any] = {}
    for name, key in keys.items():
        if name in props:
            parsed[name] = parse_value(key, props[name])
        elif key.required:
            raise ConfigException(f'Missing required configuration "{name}" which has no default value.')
        else:
            parsed[name] = key.default
    return parsed


# --- validators ----------------------------------------------------------------------


def at_least(minimum: int) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        if value is not None and value < minimum:
            raise ConfigException(name, value, f"Value must be at least {minimum}")

    return check


def one_of(*choices: str, case_sensitive: bool = False) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        candidates = choices if case_sensitive else tuple(c.lower() for c in choices)
        probe = value if case_sensitive else str(value).lower()
        if probe not in candidates:
            raise ConfigException(name, value, f"String must be one of: {', '.join(choices)}")

    return check


def valid_regex(name: str, value: Any) -> None:
    if value:
        try:
            re.compile(value)
        except re.error as exc:
            raise ConfigException(name, value, f"Invalid regex: {exc}") from None


def non_empty_string(name: str, value: Any) -> None:
    if value is not None and not str(value).strip():
        raise ConfigException(name, value, "String may not be empty")
