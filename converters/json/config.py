"""``JsonConverterConfig``: the JsonConverter's settings, declared and parsed as Kafka declares them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Mapping

from connector.api.config_def import ConfigType, case_insensitive_valid_string
from converters.base import CONVERTER_CONFIG, CONVERTER_TYPE_CONFIG, ConverterType

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"


class DecimalFormat(enum.Enum):
    """How Decimal values are written: base64 of the unscaled bytes, or a JSON number."""

    BASE64 = "BASE64"
    NUMERIC = "NUMERIC"


CONFIG_DEF = (
    CONVERTER_CONFIG.copy()
    .define(SCHEMAS_ENABLE_CONFIG, ConfigType.BOOLEAN, True, importance="high",
            doc="the value is a `{\"schema\": ..., \"payload\": ...}` envelope; `false`: plain JSON")
    .define(SCHEMAS_CACHE_SIZE_CONFIG, ConfigType.INT, 1000, importance="high",
            doc="size of each schema cache (JSON → Connect, Connect → JSON)")
    .define(DECIMAL_FORMAT_CONFIG, ConfigType.STRING, DecimalFormat.BASE64.value,
            case_insensitive_valid_string(*(f.value for f in DecimalFormat)), "low",
            "how Decimals are written; both are read")
    .define(REPLACE_NULL_WITH_DEFAULT_CONFIG, ConfigType.BOOLEAN, True, importance="low",
            doc="a null field that has a schema default reads as the default")
)


@dataclass(frozen=True)
class JsonConverterConfig:
    """Parsed settings; see ``CONFIG_DEF`` for the keys and their defaults."""

    converter_type: ConverterType
    schemas_enable: bool = True
    schemas_cache_size: int = 1000
    decimal_format: DecimalFormat = DecimalFormat.BASE64
    replace_null_with_default: bool = True

    @staticmethod
    def parse(config: Mapping[str, Any]) -> "JsonConverterConfig":
        """Raises ConfigException with Kafka's message for a bad or missing value."""
        values = CONFIG_DEF.parse(config)
        return JsonConverterConfig(
            converter_type=ConverterType(values[CONVERTER_TYPE_CONFIG]),
            schemas_enable=values[SCHEMAS_ENABLE_CONFIG],
            schemas_cache_size=values[SCHEMAS_CACHE_SIZE_CONFIG],
            decimal_format=DecimalFormat(values[DECIMAL_FORMAT_CONFIG].upper()),
            replace_null_with_default=values[REPLACE_NULL_WITH_DEFAULT_CONFIG],
        )
