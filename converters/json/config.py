"""``JsonConverterConfig``: the JsonConverter's settings, parsed as Kafka parses them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Mapping

from converters.base import ConverterType, config_bool, config_choice, config_int, converter_type

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"


class DecimalFormat(enum.Enum):
    """How Decimal values are written: base64 of the unscaled bytes, or a JSON number."""

    BASE64 = "BASE64"
    NUMERIC = "NUMERIC"


@dataclass(frozen=True)
class JsonConverterConfig:
    """Parsed settings; see :meth:`parse` for the keys and their defaults."""

    converter_type: ConverterType
    schemas_enable: bool = True
    schemas_cache_size: int = 1000
    decimal_format: DecimalFormat = DecimalFormat.BASE64
    replace_null_with_default: bool = True

    @staticmethod
    def parse(config: Mapping[str, Any]) -> "JsonConverterConfig":
        """Read ``converter.type`` (required), ``schemas.enable`` (true), ``schemas.cache.size``
        (1000), ``decimal.format`` (BASE64 or NUMERIC, any case) and
        ``replace.null.with.default`` (true).

        Raises ConfigException with Kafka's message for a bad value.
        """
        return JsonConverterConfig(
            converter_type=converter_type(config),
            schemas_enable=config_bool(config, SCHEMAS_ENABLE_CONFIG, True),
            schemas_cache_size=config_int(config, SCHEMAS_CACHE_SIZE_CONFIG, 1000),
            decimal_format=DecimalFormat(
                config_choice(config, DECIMAL_FORMAT_CONFIG, "BASE64", [f.value for f in DecimalFormat])
            ),
            replace_null_with_default=config_bool(config, REPLACE_NULL_WITH_DEFAULT_CONFIG, True),
        )
